package model_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// TestHybridForwardMatchesReference runs a sequence through model.HybridModel in
// the shapes a scheduler would use (prompt chunks with and without logits,
// one of 70 tokens that the gated delta rule runs in chunks of 64 and 6,
// single decode tokens, a verify-sized row), and token by token, the state
// carried between calls, and compares every logit vector with the float64
// reference, whose keys and values are rounded to float16 as the cache's.
func TestHybridForwardMatchesReference(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	const total = 81
	chunked := [][3]int{{0, 5, 0}, {5, 75, 70}, {75, 76, 1}, {76, 77, 1}, {77, 81, 4}}
	var oneByOne [][3]int
	for p := range total {
		oneByOne = append(oneByOne, [3]int{p, p + 1, 1})
	}
	for _, tc := range []struct {
		modelType string
		tied, moe bool
		d         metal.DType
	}{
		{"qwen3_5", true, false, metal.F32},
		{"qwen3_5", false, false, metal.BF16},
		{"qwen3_next", false, false, metal.F32},
		{"qwen3_next", true, false, metal.BF16},
		{"qwen3_next", false, true, metal.F32},
		{"qwen3_5_moe", false, true, metal.BF16},
		{"wide", false, false, metal.BF16},
	} {
		cfg := hybridref.Tiny(tc.modelType, tc.tied)
		if tc.moe {
			cfg = hybridref.TinyMoE(tc.modelType)
		}
		if tc.modelType == "wide" {
			cfg = hybridref.Wide()
		}
		mt, rw := hybridref.Random(cfg, tc.d, 9)
		tokens := model.RandomTokens(total, cfg.VocabSize, 4)
		want := hybridref.Forward(cfg, rw, tokens, metal.KVF16)
		for pi, plan := range [][][3]int{chunked, oneByOne} {
			t.Run(fmt.Sprintf("%s/tied=%v/moe=%v/%s/plan%d", tc.modelType, tc.tied, tc.moe, tc.d, pi), func(t *testing.T) {
				m, err := model.NewHybridModel(cfg, mt, be)
				if err != nil {
					t.Fatal(err)
				}
				kv := m.NewKVCache(24, 4, metal.KVF16)
				blocks := model.ShuffledBlocks(21, 24, 5)
				st := m.NewState()
				for _, s := range plan {
					start, end, nl := s[0], s[1], s[2]
					logits, err := m.ForwardState(model.Row{Start: start, Tokens: tokens[start:end], Blocks: blocks, Logits: nl}, st, kv)
					if err != nil {
						t.Fatal(err)
					}
					if len(logits) != nl*cfg.VocabSize {
						t.Fatalf("step %v: %d logits, want %d", s, len(logits), nl*cfg.VocabSize)
					}
					for j := range nl {
						pos := end - nl + j
						if e := model.RelErr(logits[j*cfg.VocabSize:(j+1)*cfg.VocabSize], want[pos]); e > 1e-4 {
							t.Errorf("step %v position %d: relative error %.3g > 1e-4", s, pos, e)
						}
					}
				}
				if st.Pos != total {
					t.Errorf("state at position %d after %d tokens", st.Pos, total)
				}
			})
		}
	}
}

// plainBackend hides every optional kernel of the backend it wraps.
type plainBackend struct{ metal.Backend }

// TestNewHybridModelRefuses: a checkpoint that does not fit its config, a
// model with experts, or a backend without the linear-attention kernels
// is refused with an error naming what is wrong.
func TestNewHybridModelRefuses(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	for _, tc := range []struct {
		name      string
		modelType string
		mutate    func(c *model.Config, m hybridref.Tensors)
		be        metal.Backend
		want      string
	}{
		{"missing conv", "qwen3_5", func(c *model.Config, m hybridref.Tensors) {
			delete(m, "model.language_model.layers.0.linear_attn.conv1d.weight")
		}, nil,
			"model.language_model.layers.0.linear_attn.conv1d.weight"},
		{"conv of another width", "qwen3_5", func(c *model.Config, m hybridref.Tensors) { c.Hybrid.LinearConvKernelDim = 3 }, nil, "conv1d.weight has shape [96 4], the config implies [96 3]"},
		{"split projections for qwen3_next", "qwen3_5", func(c *model.Config, m hybridref.Tensors) {
			c.Hybrid.ModelType = "qwen3_next"
		}, nil, "in_proj_qkvz.weight"},
		{"value head size", "qwen3_next", func(c *model.Config, m hybridref.Tensors) { c.Hybrid.LinearValueHeadDim = 4 }, nil,
			"linear_attn.norm.weight has shape [1 8], the config implies [1 4]"},
		{"grouped projection", "qwen3_next", func(c *model.Config, m hybridref.Tensors) {
			n := "model.layers.3.linear_attn.in_proj_qkvz.weight"
			m[n] = &metal.Tensor{DType: metal.F32, Rows: 96, Cols: 64, Data: make([]byte, 4*96*64)}
		}, nil, "in_proj_qkvz.weight has shape [96 64], the config implies [128 64]"},
		{"ungated q_proj", "qwen3_5", func(c *model.Config, m hybridref.Tensors) {
			n := "model.language_model.layers.2.self_attn.q_proj.weight"
			m[n] = &metal.Tensor{DType: metal.F32, Rows: 64, Cols: 64, Data: make([]byte, 4*64*64)}
		}, nil, "q_proj.weight has shape [64 64], the config implies [128 64]"},
		{"experts", "qwen3_next", func(c *model.Config, m hybridref.Tensors) {
			c.Hybrid.NumExperts, c.Hybrid.NumExpertsPerTok, c.Hybrid.MoEIntermediateSize, c.Hybrid.SharedExpertIntermediateSize = 4, 2, 32, 32
		}, nil, "missing tensor model.layers.0.mlp.gate.weight"},
		{"unknown layer type", "qwen3_5", func(c *model.Config, m hybridref.Tensors) { c.Hybrid.LayerTypes[1] = "mamba" }, nil, `layer_types[1] = "mamba"`},
		{"no linear attention kernels", "qwen3_5", func(*model.Config, hybridref.Tensors) {}, plainBackend{be}, "metal.LinearAttention"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := hybridref.Tiny(tc.modelType, true)
			mt, _ := hybridref.Random(cfg, metal.F32, 1)
			y := *cfg.Hybrid
			y.LayerTypes = append([]string(nil), y.LayerTypes...)
			cfg.Hybrid = &y
			tc.mutate(cfg, mt)
			b := tc.be
			if b == nil {
				b = be
			}
			_, err := model.NewHybridModel(cfg, mt, b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestHybridForwardRefuses: rows the state or cache cannot serve are
// refused, and the state is left where it was.
func TestHybridForwardRefuses(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	cfg := hybridref.Tiny("qwen3_5", true)
	mt, _ := hybridref.Random(cfg, metal.F32, 2)
	m, err := model.NewHybridModel(cfg, mt, be)
	if err != nil {
		t.Fatal(err)
	}
	kv := m.NewKVCache(4, 4, metal.KVF16)
	st := m.NewState()
	if _, err := m.ForwardState(model.Row{Start: 0, Tokens: []int32{1, 2}, Blocks: []int32{0}, Logits: 1}, st, kv); err != nil {
		t.Fatal(err)
	}
	other := metal.NewKVCache(metal.KVF16, 1, 4, 4, cfg.NumKeyValueHeads, cfg.HeadDim)
	for _, tc := range []struct {
		name string
		row  model.Row
		st   *model.HybridState
		kv   *metal.KVCache
		want string
	}{
		{"rewind", model.Row{Start: 1, Tokens: []int32{3}, Blocks: []int32{0}}, st, kv, "cannot be rewound"},
		{"skip ahead", model.Row{Start: 3, Tokens: []int32{3}, Blocks: []int32{0}}, st, kv, "its state is at 2"},
		{"empty", model.Row{Start: 2, Blocks: []int32{0}}, st, kv, "no tokens"},
		{"token beyond vocabulary", model.Row{Start: 2, Tokens: []int32{96}, Blocks: []int32{0}}, st, kv, "out of vocabulary"},
		{"too many logits", model.Row{Start: 2, Tokens: []int32{3}, Blocks: []int32{0}, Logits: 2}, st, kv, "logits for 2 of 1"},
		{"table too short", model.Row{Start: 2, Tokens: []int32{3, 4, 5}, Blocks: []int32{0}}, st, kv, "beyond the 1 blocks"},
		{"cache of other layers", model.Row{Start: 2, Tokens: []int32{3}, Blocks: []int32{0}}, st, other, "2 attention layers"},
		{"state of another model", model.Row{Start: 0, Tokens: []int32{3}, Blocks: []int32{0}}, &model.HybridState{}, kv, "3 linear layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.ForwardState(tc.row, tc.st, tc.kv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if st.Pos != 2 {
		t.Errorf("state moved to %d by refused rows", st.Pos)
	}
}

// TestHybridVerifyMatchesDecode: a verify-sized row of tokens gives, bit
// for bit, the logits and state of the same tokens decoded one at a time
// (speculative decoding must not change a greedy answer).
func TestHybridVerifyMatchesDecode(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, cfg := range []*model.Config{hybridref.Tiny("qwen3_5", false), hybridref.TinyMoE("qwen3_next")} {
		t.Run(cfg.ModelType, func(t *testing.T) {
			mt, _ := hybridref.Random(cfg, metal.BF16, 6)
			tokens := model.RandomTokens(25, cfg.VocabSize, 7)
			blocks := []int32{5, 2, 7, 0, 3, 6, 1}
			run := func(steps [][2]int) ([]float32, *model.HybridState) {
				m, err := model.NewHybridModel(cfg, mt, be)
				if err != nil {
					t.Fatal(err)
				}
				kv, st := m.NewKVCache(8, 4, metal.KVF16), m.NewState()
				var all []float32
				for _, s := range steps {
					n := s[1] - s[0]
					logits, err := m.ForwardState(model.Row{Start: s[0], Tokens: tokens[s[0]:s[1]], Blocks: blocks, Logits: min(n, s[1]-20)}, st, kv)
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, logits...)
				}
				return all, st
			}
			verify, vs := run([][2]int{{0, 20}, {20, 25}})
			decode, ds := run([][2]int{{0, 20}, {20, 21}, {21, 22}, {22, 23}, {23, 24}, {24, 25}})
			if len(verify) != 5*cfg.VocabSize || len(decode) != len(verify) {
				t.Fatalf("%d and %d logits", len(verify), len(decode))
			}
			for i := range verify {
				if math.Float32bits(verify[i]) != math.Float32bits(decode[i]) {
					t.Fatalf("logit %d: %v verified, %v decoded", i, verify[i], decode[i])
				}
			}
			for l := range vs.Delta {
				for i := range vs.Delta[l] {
					if math.Float32bits(vs.Delta[l][i]) != math.Float32bits(ds.Delta[l][i]) {
						t.Fatalf("linear layer %d state %d differs", l, i)
					}
				}
			}
		})
	}
}

// TestHybridSplitAtChunks: a prompt run in calls split at multiples of
// metal.DeltaChunk gives the logits of one call bit for bit (where a
// prefix cache would resume from a state snapshot).
func TestHybridSplitAtChunks(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	cfg := hybridref.TinyMoE("qwen3_5_moe")
	mt, _ := hybridref.Random(cfg, metal.BF16, 10)
	const total, nl = 2*metal.DeltaChunk + 12, 12
	tokens := model.RandomTokens(total, cfg.VocabSize, 11)
	blocks := model.ShuffledBlocks(total/4, total/4+4, 12)
	run := func(cuts ...int) []float32 {
		m, err := model.NewHybridModel(cfg, mt, be)
		if err != nil {
			t.Fatal(err)
		}
		kv, st := m.NewKVCache(total/4+4, 4, metal.KVF16), m.NewState()
		start := 0
		var logits []float32
		for _, end := range append(cuts, total) {
			logits, err = m.ForwardState(model.Row{Start: start, Tokens: tokens[start:end], Blocks: blocks, Logits: max(0, end-(total-nl))}, st, kv)
			if err != nil {
				t.Fatal(err)
			}
			start = end
		}
		return append([]float32(nil), logits...)
	}
	want := run()
	got := run(metal.DeltaChunk, 2*metal.DeltaChunk)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("logit %d: %v in three calls, %v in one", i, got[i], want[i])
		}
	}
}

// TestHybridDecodeDoesNotAllocate: once a step of each size has run, a
// decode step allocates nothing (mixture of experts included).
func TestHybridDecodeDoesNotAllocate(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	for _, cfg := range []*model.Config{hybridref.Tiny("qwen3_next", false), hybridref.TinyMoE("qwen3_5_moe")} {
		mt, _ := hybridref.Random(cfg, metal.F32, 13)
		m, err := model.NewHybridModel(cfg, mt, be)
		if err != nil {
			t.Fatal(err)
		}
		kv, st := m.NewKVCache(32, 4, metal.KVF16), m.NewState()
		blocks := make([]int32, 32)
		for i := range blocks {
			blocks[i] = int32(i)
		}
		tokens := model.RandomTokens(120, cfg.VocabSize, 14)
		if _, err := m.ForwardState(model.Row{Start: 0, Tokens: tokens[:20], Blocks: blocks, Logits: 1}, st, kv); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(50, func() {
			p := st.Pos
			if _, err := m.ForwardState(model.Row{Start: p, Tokens: tokens[p : p+1], Blocks: blocks, Logits: 1}, st, kv); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations a decode step", cfg.ModelType, allocs)
		}
	}
}

// TestHybridBatchInvariant: a sequence's logits are bit-identical run
// alone and in batches beside other sequences' prompt chunks and decode
// rows, with scattered cache blocks and two threads.
func TestHybridBatchInvariant(t *testing.T) {
	for _, cfg := range []*model.Config{hybridref.Tiny("qwen3_5", true), hybridref.TinyMoE("qwen3_next")} {
		t.Run(cfg.ModelType, func(t *testing.T) {
			be1, be2 := cpu.New(1), cpu.New(2)
			defer be1.Close()
			defer be2.Close()
			mt, _ := hybridref.Random(cfg, metal.BF16, 15)
			a, other := model.RandomTokens(30, cfg.VocabSize, 16), model.RandomTokens(40, cfg.VocabSize, 17)
			alone, err := model.NewHybridModel(cfg, mt, be1)
			if err != nil {
				t.Fatal(err)
			}
			kv1, st1 := alone.NewKVCache(16, 4, metal.KVF16), alone.NewState()
			contig := []int32{0, 1, 2, 3, 4, 5, 6, 7}
			if _, err := alone.ForwardState(model.Row{Tokens: a[:20], Blocks: contig}, st1, kv1); err != nil {
				t.Fatal(err)
			}
			l1, err := alone.ForwardState(model.Row{Start: 20, Tokens: a[20:], Blocks: contig, Logits: 10}, st1, kv1)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]float32(nil), l1...)

			batched, err := model.NewHybridModel(cfg, mt, be2)
			if err != nil {
				t.Fatal(err)
			}
			kv2 := batched.NewKVCache(32, 4, metal.KVF16)
			sa, sb, sc := batched.NewState(), batched.NewState(), batched.NewState()
			pa, pb, pc := []int32{9, 2, 14, 5, 20, 11, 30, 1}, []int32{0, 3, 4, 6, 7, 8, 10, 12, 13, 15}, []int32{16, 17, 18, 19, 21}
			if _, err := batched.ForwardBatch(&model.Batch{Rows: []model.Row{
				{Tokens: other[:17], Blocks: pc}, {Tokens: a[:20], Blocks: pa}, {Tokens: other[:3], Blocks: pb},
			}}, []*model.HybridState{sc, sa, sb}, kv2); err != nil {
				t.Fatal(err)
			}
			l2, err := batched.ForwardBatch(&model.Batch{Rows: []model.Row{
				{Start: 3, Tokens: other[3:], Blocks: pb, Logits: 2},
				{Start: 20, Tokens: a[20:], Blocks: pa, Logits: 10},
				{Start: 17, Tokens: other[17:18], Blocks: pc, Logits: 1},
			}}, []*model.HybridState{sb, sa, sc}, kv2)
			if err != nil {
				t.Fatal(err)
			}
			got := l2[2*cfg.VocabSize : 12*cfg.VocabSize]
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					t.Fatalf("logit %d: %v alone, %v batched", i, want[i], got[i])
				}
			}
			if sa.Pos != 30 || sb.Pos != 40 || sc.Pos != 18 {
				t.Errorf("states at %d, %d, %d", sa.Pos, sb.Pos, sc.Pos)
			}
			// A batch whose states do not fit its rows is refused whole.
			for _, bad := range []struct {
				states []*model.HybridState
				want   string
			}{{[]*model.HybridState{sb}, "2 rows with 1 states"}, {[]*model.HybridState{sb, sb}, "another row's"}} {
				longer := []int32{0, 3, 4, 6, 7, 8, 10, 12, 13, 15, 22}
				_, err := batched.ForwardBatch(&model.Batch{Rows: []model.Row{
					{Start: 40, Tokens: other[:1], Blocks: longer}, {Start: 40, Tokens: other[:1], Blocks: longer},
				}}, bad.states, kv2)
				if err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("error %v, want it to mention %q", err, bad.want)
				}
			}
			if sb.Pos != 40 {
				t.Errorf("a refused batch moved a state to %d", sb.Pos)
			}
		})
	}
}
