package model_test

import (
	"fmt"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// TestHybridCheckpointLoads opens Qwen3.5, Qwen3-Next (dense and with
// one tensor per expert) and Qwen3.5-MoE (fused 3-D expert tensors)
// checkpoints written to disk and checks that their logits match the float64
// reference of the same weights, over a prompt chunk and decode steps.
func TestHybridCheckpointLoads(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		arch string
		cfg  *model.Config
	}{
		{"Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true)},
		{"Qwen3NextForCausalLM", hybridref.Tiny("qwen3_next", true)},
		{"Qwen3NextForCausalLM", hybridref.TinyMoE("qwen3_next")},
		{"Qwen3_5MoeForConditionalGeneration", hybridref.TinyMoE("qwen3_5_moe")},
	} {
		t.Run(fmt.Sprintf("%s/experts%d", tc.arch, tc.cfg.Hybrid.NumExperts), func(t *testing.T) {
			dir := t.TempDir()
			rw, err := hybridref.WriteCheckpoint(dir, tc.cfg, tc.arch, metal.BF16, 3)
			if err != nil {
				t.Fatal(err)
			}
			src, err := model.Open(dir, model.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Tensors.Close()
			cfg := src.Config
			if cfg.Architecture != tc.arch || cfg.Hybrid == nil {
				t.Fatalf("config %+v", cfg)
			}
			m, err := model.NewHybridModel(cfg, src.Tensors, be)
			if err != nil {
				t.Fatal(err)
			}
			tokens := model.RandomTokens(20, cfg.VocabSize, 8)
			want := hybridref.Forward(cfg, rw, tokens, metal.KVF16)
			kv, st := m.NewKVCache(8, 4, metal.KVF16), m.NewState()
			blocks := []int32{3, 1, 4, 0, 6}
			for _, s := range [][3]int{{0, 17, 17}, {17, 18, 1}, {18, 19, 1}, {19, 20, 1}} {
				logits, err := m.ForwardState(model.Row{Start: s[0], Tokens: tokens[s[0]:s[1]], Blocks: blocks, Logits: s[2]}, st, kv)
				if err != nil {
					t.Fatal(err)
				}
				for j := range s[2] {
					pos := s[1] - s[2] + j
					if e := model.RelErr(logits[j*cfg.VocabSize:(j+1)*cfg.VocabSize], want[pos]); e > 1e-4 {
						t.Errorf("position %d: relative error %.3g > 1e-4", pos, e)
					}
				}
			}
		})
	}
}
