package testmodel

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/tokenizer"
)

// Spec describes a random model.
type Spec struct {
	Arch         string // "qwen3" or "llama"
	Hidden       int
	Intermediate int
	Layers       int
	Heads        int
	KVHeads      int
	HeadDim      int
	Vocab        int // defaults to 151936 (the Qwen3 tokenizer's size)
	Tied         bool
	DType        metal.DType // F32 (default), BF16 or F16
	Seed         uint64
	RopeTheta    float64
	Llama3Rope   bool   // llama only: add a llama3 rope_scaling
	Shards       int    // > 1 writes a sharded checkpoint with an index
	Tokenizer    string // "qwen3" (default) or "llama3"
	MaxContext   int    // max_position_embeddings, default 4096
}

// Tiny is a small model of the given architecture with the real Qwen3
// vocabulary: a forward pass takes well under a millisecond per token.
func Tiny(arch string) Spec {
	return Spec{Arch: arch, Hidden: 64, Intermediate: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, Tied: true, Seed: 1}
}

// Qwen3_0_6B has the real Qwen3-0.6B dimensions, for benchmarks.
func Qwen3_0_6B() Spec {
	return Spec{Arch: "qwen3", Hidden: 1024, Intermediate: 3072, Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128,
		Tied: true, Seed: 1, RopeTheta: 1000000, MaxContext: 40960, DType: metal.BF16}
}

func (s Spec) withDefaults() Spec {
	if s.Vocab == 0 {
		s.Vocab = 151936
		if s.Tokenizer == "llama3" {
			s.Vocab = 128256
		}
	}
	if s.RopeTheta == 0 {
		s.RopeTheta = 1000000
	}
	if s.MaxContext == 0 {
		s.MaxContext = 4096
	}
	if s.Tokenizer == "" {
		s.Tokenizer = "qwen3"
	}
	return s
}

// Config returns the config.json contents of a checkpoint of s.
func (s Spec) Config() map[string]any {
	s = s.withDefaults()
	arch, mt := "Qwen3ForCausalLM", "qwen3"
	if s.Arch == "llama" {
		arch, mt = "LlamaForCausalLM", "llama"
	}
	c := map[string]any{
		"architectures": []string{arch}, "model_type": mt,
		"hidden_size": s.Hidden, "intermediate_size": s.Intermediate, "num_hidden_layers": s.Layers,
		"num_attention_heads": s.Heads, "num_key_value_heads": s.KVHeads, "head_dim": s.HeadDim,
		"vocab_size": s.Vocab, "rms_norm_eps": 1e-6, "rope_theta": s.RopeTheta,
		"max_position_embeddings": s.MaxContext, "tie_word_embeddings": s.Tied,
		"torch_dtype": map[metal.DType]string{metal.F32: "float32", metal.BF16: "bfloat16", metal.F16: "float16"}[s.DType],
	}
	if s.Tokenizer == "qwen3" {
		c["bos_token_id"], c["eos_token_id"] = 151643, 151645
	} else {
		c["bos_token_id"], c["eos_token_id"] = 128000, []int{128001, 128008, 128009}
	}
	if s.Llama3Rope {
		c["rope_scaling"] = map[string]any{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
			"high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
	}
	return c
}

// Write writes the checkpoint of s into dir (created if needed).
func Write(dir string, s Spec) error {
	s = s.withDefaults()
	if s.Arch != "qwen3" && s.Arch != "llama" {
		return fmt.Errorf("testmodel: unknown arch %q", s.Arch)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg, _ := json.MarshalIndent(s.Config(), "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		return err
	}
	if err := writeWeights(dir, s); err != nil {
		return err
	}
	return CopyTokenizer(dir, s.Tokenizer)
}

// tensorShape is a weight's name, shape and the standard deviation of its
// random values (0 marks a norm: values near 1).
type tensorShape struct {
	name  string
	shape []int
	std   float64
}

// tensorShapes lists every weight of s with its shape and the standard
// deviation of its random values (0 marks a norm: values near 1).
func tensorShapes(s Spec) []tensorShape {
	type ts = tensorShape
	h, q, kv := s.Hidden, s.Heads*s.HeadDim, s.KVHeads*s.HeadDim
	out := []ts{{"model.embed_tokens.weight", []int{s.Vocab, h}, 0.05}, {"model.norm.weight", []int{h}, 0}}
	if !s.Tied {
		out = append(out, ts{"lm_head.weight", []int{s.Vocab, h}, 1 / math.Sqrt(float64(h))})
	}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		out = append(out,
			ts{p + "input_layernorm.weight", []int{h}, 0},
			ts{p + "self_attn.q_proj.weight", []int{q, h}, 1 / math.Sqrt(float64(h))},
			ts{p + "self_attn.k_proj.weight", []int{kv, h}, 1 / math.Sqrt(float64(h))},
			ts{p + "self_attn.v_proj.weight", []int{kv, h}, 1 / math.Sqrt(float64(h))},
			ts{p + "self_attn.o_proj.weight", []int{h, q}, 0.5 / math.Sqrt(float64(q))},
			ts{p + "post_attention_layernorm.weight", []int{h}, 0},
			ts{p + "mlp.gate_proj.weight", []int{s.Intermediate, h}, 1 / math.Sqrt(float64(h))},
			ts{p + "mlp.up_proj.weight", []int{s.Intermediate, h}, 1 / math.Sqrt(float64(h))},
			ts{p + "mlp.down_proj.weight", []int{h, s.Intermediate}, 0.5 / math.Sqrt(float64(s.Intermediate))},
		)
		if s.Arch == "qwen3" {
			out = append(out, ts{p + "self_attn.q_norm.weight", []int{s.HeadDim}, 0}, ts{p + "self_attn.k_norm.weight", []int{s.HeadDim}, 0})
		}
	}
	return out
}

// randomTensors generates every weight of s (deterministic for s.Seed),
// converted to dtype d, calling add for each in order.
func randomTensors(s Spec, d metal.DType, add func(name string, shape []int, t *metal.Tensor) error) error {
	return randomShapes(tensorShapes(s), s.Seed, d, add)
}

// randomShapes generates the tensors of shapes (deterministic for seed),
// converted to dtype d, calling add for each in order.
func randomShapes(shapes []tensorShape, seed uint64, d metal.DType, add func(name string, shape []int, t *metal.Tensor) error) error {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for _, ts := range shapes {
		n := 1
		for _, dim := range ts.shape {
			n *= dim
		}
		v := make([]float32, n)
		for j := range v {
			if ts.std == 0 {
				v[j] = float32(1 + 0.05*rng.NormFloat64())
			} else {
				v[j] = float32(ts.std * rng.NormFloat64())
			}
		}
		rows, cols := 1, n
		if len(ts.shape) == 2 {
			rows, cols = ts.shape[0], ts.shape[1]
		}
		dt := d
		if dt.Quantized() && (rows == 1 || cols%metal.GroupSize != 0) {
			dt = metal.F32
		}
		t, err := metal.Quantize(dt, v, rows, cols)
		if err != nil {
			return err
		}
		if err := add(ts.name, ts.shape, t); err != nil {
			return err
		}
	}
	return nil
}

// Random builds the model of s in memory, its weights quantized to d, with
// no file written: the config as a checkpoint of s would parse to, and the
// tensors.
func Random(s Spec, d metal.DType) (*model.Config, model.Tensors, error) {
	s = s.withDefaults()
	raw, _ := json.Marshal(s.Config())
	cfg, err := model.ParseHFConfig(raw)
	if err != nil {
		return nil, nil, err
	}
	m := map[string]*metal.Tensor{}
	err = randomTensors(s, d, func(name string, _ []int, t *metal.Tensor) error {
		m[name] = t
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return cfg, model.NewMemTensors(m), nil
}

func writeWeights(dir string, s Spec) error {
	shards := max(s.Shards, 1)
	files := make([][]model.STTensor, shards)
	weightMap := map[string]string{}
	i := 0
	err := randomTensors(s, s.DType, func(name string, shape []int, t *metal.Tensor) error {
		k := i % shards
		i++
		files[k] = append(files[k], model.STTensor{Name: name, DType: s.DType, Shape: shape, Data: t.Data})
		weightMap[name] = shardName(k, shards)
		return nil
	})
	if err != nil {
		return err
	}
	for k, f := range files {
		if err := model.WriteSafetensors(filepath.Join(dir, shardName(k, shards)), f); err != nil {
			return err
		}
	}
	if shards == 1 {
		return nil
	}
	idx, _ := json.MarshalIndent(map[string]any{"metadata": map[string]any{}, "weight_map": weightMap}, "", "  ")
	return os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
}

func shardName(k, n int) string {
	if n == 1 {
		return "model.safetensors"
	}
	return fmt.Sprintf("model-%05d-of-%05d.safetensors", k+1, n)
}

// CopyTokenizer writes tokenizer.json and tokenizer_config.json of the
// vendored tokenizer ("qwen3" or "llama3") into dir, uncompressed.
func CopyTokenizer(dir, name string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if err := gunzip(filepath.Join(root, "testdata", name+"-tokenizer", f+".gz"), filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("testmodel: %w", err)
		}
	}
	return nil
}

// LoadTokenizer copies the named tokenizer into dir (CopyTokenizer) and
// loads it.
func LoadTokenizer(dir, name string) (*tokenizer.Tokenizer, error) {
	if err := CopyTokenizer(dir, name); err != nil {
		return nil, err
	}
	return tokenizer.Load(dir)
}

func gunzip(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RepoRoot finds the repository root by walking up from the working
// directory to the directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testmodel: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Package returns a Splash package of spec quantized to quant, built (from a
// checkpoint written beside it, then removed) under cacheDir the first time
// and reused afterwards. Benchmarks use it for full-size random models.
func Package(cacheDir string, s Spec, quant metal.DType) (string, error) {
	s = s.withDefaults()
	key := fmt.Sprintf("%s-h%d-i%d-l%d-q%dkv%dx%d-v%d-t%v-%s-%s-seed%d", s.Arch, s.Hidden, s.Intermediate, s.Layers,
		s.Heads, s.KVHeads, s.HeadDim, s.Vocab, s.Tied, s.DType, quant, s.Seed)
	dst := filepath.Join(cacheDir, "splash-testmodel-"+key)
	if _, err := os.Stat(filepath.Join(dst, model.ManifestName)); err == nil {
		return dst, nil
	}
	ckpt, err := os.MkdirTemp(cacheDir, "splash-testmodel-ckpt-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(ckpt)
	if err := Write(ckpt, s); err != nil {
		return "", err
	}
	if _, err := model.Pack(ckpt, dst, model.PackOptions{Quant: quant, Name: "random-" + s.Arch}); err != nil {
		return "", err
	}
	return dst, nil
}
