package model_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// logitsOf opens dir, builds its model and returns the logits of every
// position of a fixed prompt.
func logitsOf(t *testing.T, dir string, be metal.Backend) ([]float32, int) {
	t.Helper()
	src, err := model.Open(dir, model.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, err := src.Build(be)
	if err != nil {
		t.Fatal(err)
	}
	prompt := logitsPrompt(m.Config().VocabSize)
	kv := model.NewCache(m, 4, 16, 1, metal.KVF32) // a hybrid model's one sequence in state slot 0
	l, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: []int32{0}, Logits: len(prompt)}}}, kv)
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), l...), m.Config().VocabSize
}

// logitsPrompt is logitsOf's prompt for a vocabulary of vocab tokens.
func logitsPrompt(vocab int) []int32 {
	prompt := []int32{9707, 11, 1879, 0, 151643, 42, 7, 100}
	for i := range prompt {
		prompt[i] %= int32(vocab)
	}
	return prompt
}

func TestCheckpointsLoad(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	for _, tc := range []struct {
		name string
		spec testmodel.Spec
	}{
		{"qwen3 f32", testmodel.Tiny("qwen3")},
		{"qwen3 bf16 sharded", func() testmodel.Spec { s := testmodel.Tiny("qwen3"); s.DType = metal.BF16; s.Shards = 3; return s }()},
		{"llama f16 untied llama3 rope", func() testmodel.Spec {
			s := testmodel.Tiny("llama")
			s.DType, s.Tied, s.Llama3Rope, s.Tokenizer = metal.F16, false, true, "llama3"
			return s
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := testmodel.Write(dir, tc.spec); err != nil {
				t.Fatal(err)
			}
			l, vocab := logitsOf(t, dir, be)
			if len(l) != 8*vocab {
				t.Fatalf("%d logits", len(l))
			}
			for _, v := range l {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatal("non-finite logit")
				}
			}
		})
	}
}

func TestCheckpointErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(dir string)
		want   string
	}{
		{"unknown architecture", func(d string) { editConfig(d, "architectures", []string{"MambaForCausalLM"}) }, "MambaForCausalLM"},
		{"shape mismatch", func(d string) { editConfig(d, "intermediate_size", 96) }, "mlp.gate_proj.weight"},
		{"missing shard", func(d string) { os.Remove(filepath.Join(d, "model-00002-of-00002.safetensors")) }, "missing"},
		{"no weights", func(d string) { os.Remove(filepath.Join(d, "model.safetensors.index.json")) }, "neither model.safetensors"},
		{"truncated shard", func(d string) { os.Truncate(filepath.Join(d, "model-00001-of-00002.safetensors"), 1000) }, "truncated"},
		{"missing config", func(d string) { os.Remove(filepath.Join(d, "config.json")) }, "neither a Splash package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := testmodel.Tiny("qwen3")
			s.Shards = 2
			if err := testmodel.Write(dir, s); err != nil {
				t.Fatal(err)
			}
			tc.mutate(dir)
			src, err := model.Open(dir, model.OpenOptions{})
			if err == nil {
				_, err = src.Build(nil)
				src.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func editConfig(dir, key string, v any) {
	p := filepath.Join(dir, "config.json")
	raw, _ := os.ReadFile(p)
	var m map[string]any
	json.Unmarshal(raw, &m)
	m[key] = v
	raw, _ = json.Marshal(m)
	os.WriteFile(p, raw, 0o644)
}

// TestPackRoundTrip packs a checkpoint at each quantization and compares the
// package's logits with the checkpoint's: bit-identical for f32 (same values,
// same kernels), and within the documented error for the lossy types.
func TestPackRoundTrip(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	src := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	spec.Hidden, spec.Intermediate = 128, 256
	if err := testmodel.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	want, vocab := logitsOf(t, src, be)
	for _, tc := range []struct {
		quant     metal.DType
		maxRelErr float64 // max |Δlogit| / max |logit|
		minTop1   float64 // fraction of positions whose argmax agrees
	}{
		{metal.F32, 0, 1},
		{metal.BF16, 0.05, 0.75},
		{metal.Q8, 0.05, 0.75},
		{metal.Q4, 0.4, 0.25},
	} {
		t.Run(tc.quant.String(), func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "pkg")
			if _, err := model.Pack(src, dst, model.PackOptions{Quant: tc.quant}); err != nil {
				t.Fatal(err)
			}
			got, _ := logitsOf(t, dst, be)
			rel, top1 := compareLogits(got, want, vocab)
			t.Logf("%s: max|Δlogit|/max|logit| = %.4f, top-1 agreement %.2f", tc.quant, rel, top1)
			if rel > tc.maxRelErr || top1 < tc.minTop1 {
				t.Fatalf("%s: relative error %.4f (max %.4f), top-1 agreement %.2f (min %.2f)", tc.quant, rel, tc.maxRelErr, top1, tc.minTop1)
			}
			for _, f := range []string{"tokenizer.json", "tokenizer_config.json", "splash.json", "target/weights.bin"} {
				if _, err := os.Stat(filepath.Join(dst, f)); err != nil {
					t.Errorf("package lacks %s", f)
				}
			}
		})
	}
}

func compareLogits(got, want []float32, vocab int) (rel, top1 float64) {
	maxDiff, maxRef := 0.0, 0.0
	agree, n := 0, len(want)/vocab
	for p := 0; p < n; p++ {
		g, w := got[p*vocab:(p+1)*vocab], want[p*vocab:(p+1)*vocab]
		if argmax(g) == argmax(w) {
			agree++
		}
		for i := range w {
			maxDiff = math.Max(maxDiff, math.Abs(float64(g[i]-w[i])))
			maxRef = math.Max(maxRef, math.Abs(float64(w[i])))
		}
	}
	return maxDiff / maxRef, float64(agree) / float64(n)
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func TestPackageCorruption(t *testing.T) {
	src := t.TempDir()
	if err := testmodel.Write(src, testmodel.Tiny("llama")); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "pkg")
	if _, err := model.Pack(src, base, model.PackOptions{Quant: metal.Q8}); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Pack(src, base, model.PackOptions{Quant: metal.Q8}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("packing over an existing package: %v", err)
	}
	editManifest := func(f func(m map[string]any)) func(string) {
		return func(dir string) {
			p := filepath.Join(dir, "splash.json")
			raw, _ := os.ReadFile(p)
			var m map[string]any
			json.Unmarshal(raw, &m)
			f(m)
			raw, _ = json.Marshal(m)
			os.WriteFile(p, raw, 0o644)
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(dir string)
		opts   model.OpenOptions
		want   string
	}{
		{"flipped byte", func(d string) { flipByte(filepath.Join(d, "target/weights.bin"), 5000) }, model.OpenOptions{}, "SHA-256"},
		{"truncated weights", func(d string) { os.Truncate(filepath.Join(d, "target/weights.bin"), 4096) }, model.OpenOptions{}, "truncated"},
		{"missing tokenizer", func(d string) { os.Remove(filepath.Join(d, "tokenizer.json")) }, model.OpenOptions{}, "tokenizer.json"},
		{"bad manifest json", func(d string) { os.WriteFile(filepath.Join(d, "splash.json"), []byte("{"), 0o644) }, model.OpenOptions{}, "bad splash.json"},
		{"unknown version", editManifest(func(m map[string]any) { m["format_version"] = 99 }), model.OpenOptions{}, "format version 99"},
		{"tensor outside file", editManifest(func(m map[string]any) {
			ts := m["target"].(map[string]any)["tensors"].([]any)
			ts[0].(map[string]any)["offset"] = int64(1) << 40
		}), model.OpenOptions{}, "outside"},
		{"wrong tensor size", editManifest(func(m map[string]any) {
			ts := m["target"].(map[string]any)["tensors"].([]any)
			ts[0].(map[string]any)["rows"] = 3
		}), model.OpenOptions{}, "bytes, want"},
		{"path escape", editManifest(func(m map[string]any) {
			m["files"].(map[string]any)["../x"] = map[string]any{"size": 1, "sha256": ""}
		}), model.OpenOptions{}, "outside the package"},
		{"flipped byte unchecked still loads", func(d string) { flipByte(filepath.Join(d, "target/weights.bin"), 5000) }, model.OpenOptions{SkipChecksums: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pkg")
			copyDir(t, base, dir)
			tc.mutate(dir)
			p, err := model.OpenPackage(dir, tc.opts)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				p.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func flipByte(path string, off int64) {
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	defer f.Close()
	b := make([]byte, 1)
	f.ReadAt(b, off)
	b[0] ^= 0x40
	f.WriteAt(b, off)
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
