package model_test

import (
	"math"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// TestHybridModelSlots runs HybridModel as a Model (Architectures().Build,
// NewCache): two sequences in state slots, interleaved in batches, the
// first slot then reused by a third sequence without any reset, each
// row's logits bit-identical to ForwardState with a state of its own.
func TestHybridModelSlots(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, cfg := range []*model.Config{hybridref.Tiny("qwen3_5", true), hybridref.TinyMoE("qwen3_5_moe"), hybridref.TinyMoE("qwen3_next")} {
		t.Run(cfg.ModelType, func(t *testing.T) {
			c := *cfg
			c.Architecture = map[string]string{"qwen3_5": "Qwen3_5ForConditionalGeneration",
				"qwen3_5_moe": "Qwen3_5MoeForConditionalGeneration", "qwen3_next": "Qwen3NextForCausalLM"}[cfg.ModelType]
			mt, _ := hybridref.Random(&c, metal.F32, 21)
			built, err := model.Architectures().Build(&c, mt, be)
			if err != nil {
				t.Fatal(err)
			}
			spec := built.CacheSpec()
			if spec.KVLayers() != 2 || spec.StateLayers() != 3 || spec.StateChunk != metal.DeltaChunk {
				t.Fatalf("cache spec %+v", spec)
			}
			ref, err := model.NewHybridModel(&c, mt, be)
			if err != nil {
				t.Fatal(err)
			}
			a, b, d := model.RandomTokens(12, c.VocabSize, 1), model.RandomTokens(9, c.VocabSize, 2), model.RandomTokens(7, c.VocabSize, 3)
			want := func(toks []int32, cuts ...int) []float32 {
				kv, st := ref.NewKVCache(8, 4, metal.KVF32), ref.NewState()
				var out []float32
				for i := 1; i < len(cuts); i++ {
					l, err := ref.ForwardState(model.Row{Start: cuts[i-1], Tokens: toks[cuts[i-1]:cuts[i]], Blocks: []int32{0, 1, 2, 3}, Logits: 1}, st, kv)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, l...)
				}
				return out
			}
			kv := model.NewCache(built, 16, 4, 2, metal.KVF32)
			ta, tb, td := []int32{0, 1, 2}, []int32{5, 6, 7}, []int32{10, 11}
			var got []float32
			for _, batch := range [][]model.Row{
				{{Tokens: a[:8], Blocks: ta, State: 0, Logits: 1}, {Tokens: b[:5], Blocks: tb, State: 1, Logits: 1}},
				{{Start: 5, Tokens: b[5:], Blocks: tb, State: 1, Logits: 1}, {Start: 8, Tokens: a[8:], Blocks: ta, State: 0, Logits: 1}},
				{{Tokens: d, Blocks: td, State: 0, Logits: 1}}, // a's slot, not reset by anyone but Forward
			} {
				l, err := built.Forward(&model.Batch{Rows: batch}, kv)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, l...)
			}
			v := c.VocabSize
			wa, wb, wd := want(a, 0, 8, 12), want(b, 0, 5, 9), want(d, 0, 7)
			for i, w := range [][]float32{wa[:v], wb[:v], wb[v:], wa[v:], wd} {
				g := got[i*v : (i+1)*v]
				for j := range w {
					if math.Float32bits(w[j]) != math.Float32bits(g[j]) {
						t.Fatalf("logits %d, %d: %v in slots, %v alone", i, j, g[j], w[j])
					}
				}
			}
			for _, tc := range []struct {
				name string
				rows []model.Row
				kv   *metal.KVCache
				want string
			}{
				{"shared slot", []model.Row{{Tokens: a[:1], Blocks: ta}, {Tokens: b[:1], Blocks: tb}}, kv, "another row's"},
				{"slot out of range", []model.Row{{Tokens: a[:1], Blocks: ta, State: 2}}, kv, "out of range"},
				{"cache without states", []model.Row{{Tokens: a[:1], Blocks: ta}}, built.NewKVCache(16, 4, metal.KVF32), "no state layers"},
			} {
				if _, err := built.Forward(&model.Batch{Rows: tc.rows}, tc.kv); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
				}
			}
		})
	}
}
