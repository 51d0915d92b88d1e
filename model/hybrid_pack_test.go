package model_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
)

// TestPackHybrid packs checkpoints of the three hybrid layouts (f32
// matrices) at each quantization. An f32 package gives the checkpoint's
// logits bit for bit; f32 and bf16 ones match the float64 reference of
// their own (dequantized) weights to 1e-4 (f32 KV cache), which checks the
// layout they were written in. The q8 and q4 kernels round their inputs
// too, and random hybrid weights are chaotic (rounding f32 weights to bf16
// alone moves the logits by 0.12-0.29 of their range, q8's input
// rounding by up to 0.65 against the reference), so those packages are
// only checked to run to finite logits. In every package
// A_log, dt_bias, the norms and the convolution stay f32, the router and
// shared-expert gate are q8 in a q4 package, fused experts are written
// one tensor per expert, and mtp.* is left out.
func TestPackHybrid(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		arch string
		cfg  *model.Config
	}{
		{"Qwen3_5ForConditionalGeneration", hybridref.Tiny("qwen3_5", true)},
		{"Qwen3NextForCausalLM", hybridref.TinyMoE("qwen3_next")},
		{"Qwen3_5MoeForConditionalGeneration", hybridref.TinyMoE("qwen3_5_moe")},
	} {
		t.Run(tc.cfg.ModelType, func(t *testing.T) {
			src := t.TempDir()
			if _, err := hybridref.WriteCheckpoint(src, tc.cfg, tc.arch, metal.F32, 5); err != nil {
				t.Fatal(err)
			}
			if err := testmodel.CopyTokenizer(src, "qwen3"); err != nil {
				t.Fatal(err)
			}
			ckpt, vocab := logitsOf(t, src, be)
			for _, q := range []struct {
				quant     metal.DType
				maxRelErr float64 // against the reference of the package's weights
			}{{metal.F32, 1e-4}, {metal.BF16, 1e-4}, {metal.Q8, math.Inf(1)}, {metal.Q4, math.Inf(1)}} {
				dst := filepath.Join(t.TempDir(), "pkg")
				if _, err := model.Pack(src, dst, model.PackOptions{Quant: q.quant}); err != nil {
					t.Fatal(err)
				}
				got, _ := logitsOf(t, dst, be)
				if q.quant == metal.F32 && !slices.Equal(got, ckpt) {
					t.Errorf("f32 package's logits differ from the checkpoint's")
				}
				for p, want := range packageReference(t, dst) {
					row := got[p*vocab : (p+1)*vocab]
					if e := model.RelErr(row, want); !(e <= q.maxRelErr) {
						t.Errorf("%s: position %d: relative error %.3g against its weights' reference, want ≤ %g", q.quant, p, e, q.maxRelErr)
					}
				}
				checkHybridDTypes(t, dst, q.quant, tc.cfg.Hybrid.NumExperts)
			}
		})
	}
}

// packageReference is the float64 reference's logits for logitsOf's
// prompt, from the dequantized weights of the package in dir.
func packageReference(t *testing.T, dir string) [][]float64 {
	t.Helper()
	src, err := model.Open(dir, model.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := hybridref.Weights{}
	for _, n := range src.Tensors.Names() {
		tt, err := src.Tensors.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		v := tt.Dequantize()
		w[n] = make([]float64, len(v))
		for i, x := range v {
			w[n][i] = float64(x)
		}
	}
	return hybridref.Forward(src.Config, w, logitsPrompt(src.Config.VocabSize), metal.KVF32)
}

// checkHybridDTypes reads a hybrid package's manifest and checks the
// dtype of each tensor that packedType keeps apart.
func checkHybridDTypes(t *testing.T, dir string, quant metal.DType, experts int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, model.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m model.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	perExpert := 0
	for _, e := range m.Target.Tensors {
		want := ""
		switch {
		case strings.HasPrefix(e.Name, "mtp.") || strings.HasSuffix(e.Name, "gate_up_proj") || strings.HasSuffix(e.Name, "experts.down_proj"):
			t.Errorf("%s: package holds %s", quant, e.Name)
		case strings.HasSuffix(e.Name, "A_log") || strings.HasSuffix(e.Name, "dt_bias") || strings.HasSuffix(e.Name, "norm.weight") ||
			strings.HasSuffix(e.Name, "conv1d.weight"):
			want = "f32"
		case quant == metal.Q4 && (strings.HasSuffix(e.Name, "mlp.gate.weight") || strings.HasSuffix(e.Name, "shared_expert_gate.weight")):
			want = "q8"
			if e.Rows == 1 {
				want = "f32"
			}
		}
		if want != "" && e.DType != want {
			t.Errorf("%s: %s is %s, want %s", quant, e.Name, e.DType, want)
		}
		if strings.Contains(e.Name, ".experts.") && strings.HasSuffix(e.Name, "_proj.weight") {
			perExpert++
		}
	}
	if perExpert != 0 && perExpert%(3*experts) != 0 {
		t.Errorf("%s: %d expert tensors, not 3 per expert of %d", quant, perExpert, experts)
	}
	if experts > 0 && perExpert == 0 {
		t.Errorf("%s: no per-expert tensors", quant)
	}
}
