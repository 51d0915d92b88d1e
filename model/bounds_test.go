package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// patchedCheckpoint writes dir as a copy of the checkpoint in base whose
// config.json has the fields of patch replaced (the weights are linked).
func patchedCheckpoint(t *testing.T, base, dir string, patch map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(base, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for k, v := range patch {
		cfg[k] = v
	}
	raw, _ = json.Marshal(cfg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "model.safetensors"), filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
}

// TestAbsurdConfigsFailCleanly corrupts one config.json number at a time:
// opening and building must fail with an error naming the field, having
// allocated next to nothing (no layer table or RoPE table sized by the
// config). A large max_position_embeddings is legitimate and builds.
func TestAbsurdConfigsFailCleanly(t *testing.T) {
	bases := map[string]string{}
	for _, arch := range []string{"qwen3", "llama"} {
		s := testmodel.Tiny(arch)
		s.Vocab = 256
		bases[arch] = filepath.Join(t.TempDir(), arch)
		if err := testmodel.Write(bases[arch], s); err != nil {
			t.Fatal(err)
		}
	}
	const huge = 1 << 40
	for _, tc := range []struct {
		name  string
		arch  string
		patch map[string]any
		field string // "" for a config that must build
	}{
		{"layers 1e9", "qwen3", map[string]any{"num_hidden_layers": 1_000_000_000}, "num_hidden_layers"},
		{"layers 3", "llama", map[string]any{"num_hidden_layers": 3}, "num_hidden_layers"},
		{"layers negative", "qwen3", map[string]any{"num_hidden_layers": -1}, "num_hidden_layers"},
		{"head_dim 2^31 qwen3", "qwen3", map[string]any{"head_dim": 1 << 31}, "head_dim"},
		{"head_dim 2^31 llama", "llama", map[string]any{"head_dim": 1 << 31}, "head_dim"},
		{"head_dim 2^62", "llama", map[string]any{"head_dim": 1 << 62}, "head_dim"},
		{"vocab", "qwen3", map[string]any{"vocab_size": huge}, "vocab_size"},
		{"hidden", "llama", map[string]any{"hidden_size": huge}, "hidden_size"},
		{"intermediate", "qwen3", map[string]any{"intermediate_size": huge}, "intermediate_size"},
		{"heads", "llama", map[string]any{"num_attention_heads": huge}, "num_attention_heads"},
		{"kv heads divisible", "llama", map[string]any{"num_key_value_heads": 4}, "num_key_value_heads"},
		{"kv heads huge", "qwen3", map[string]any{"num_key_value_heads": huge}, "num_key_value_heads"},
		{"context 2^40", "qwen3", map[string]any{"max_position_embeddings": huge}, "max_position_embeddings"},
		{"rope_theta", "llama", map[string]any{"rope_theta": 0.5}, "rope_theta"},
		{"rms_norm_eps", "llama", map[string]any{"rms_norm_eps": 1e30}, "rms_norm_eps"},
		{"rope scaling factor", "llama", map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3", "factor": 1e-300,
			"low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}}, "rope_scaling.factor"},
		{"rope scaling context", "llama", map[string]any{"rope_scaling": map[string]any{"rope_type": "llama3", "factor": 8,
			"low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": huge}}, "original_max_position_embeddings"},
		{"context 2^30 builds", "llama", map[string]any{"max_position_embeddings": 1 << 30}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			patchedCheckpoint(t, bases[tc.arch], dir, tc.patch)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			src, err := model.Open(dir, model.OpenOptions{})
			if err == nil {
				_, err = src.Build(nil)
				src.Close()
			}
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
				t.Errorf("opening and building allocated %d bytes", grew)
			}
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("build failed: %v", err)
			case tc.field != "" && err == nil:
				t.Fatalf("build succeeded, want an error naming %s", tc.field)
			case tc.field != "" && !strings.Contains(err.Error(), tc.field):
				t.Fatalf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

// TestAbsurdPackageConfigFailsCleanly corrupts a package's manifest: its
// config is checked against the tensors the manifest lists, as a
// checkpoint's is against its safetensors headers.
func TestAbsurdPackageConfigFailsCleanly(t *testing.T) {
	s := testmodel.Tiny("llama")
	s.Vocab = 256
	dir, err := testmodel.Package(t.TempDir(), s, metal.F32)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, model.ManifestName)
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ field, value string }{
		{"num_hidden_layers", "1000000000"}, {"head_dim", "2147483648"}, {"vocab_size", "1099511627776"},
		{"intermediate_size", "1099511627776"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(pristine, &m); err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal([]byte(tc.value), &v); err != nil {
				t.Fatal(err)
			}
			m["target"].(map[string]any)["config"].(map[string]any)[tc.field] = v
			raw, _ := json.Marshal(m)
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := model.Open(dir, model.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if _, err := src.Build(nil); err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("build error %v, want one naming %s", err, tc.field)
			}
		})
	}
}
