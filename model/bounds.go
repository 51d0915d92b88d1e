package model

import (
	"fmt"
	"strconv"
	"strings"
)

// checkDims checks the config's dimensions against the shapes of the
// weights a transformer reads, before anything is allocated in proportion to
// a config number: a corrupted config.json (num_hidden_layers: 1e9, head_dim:
// 2^31) then fails with an error naming the field instead of exhausting
// memory. The weights' shapes are bounded by the files that hold them, so
// every size checked here is too.
func checkDims(cfg *Config, w Tensors) error {
	shape := func(name string) (rows, cols int, err error) {
		t, err := w.Tensor(name)
		if err != nil {
			return 0, 0, fmt.Errorf("missing tensor %s: %w", name, err)
		}
		return t.Rows, t.Cols, nil
	}
	const embed = "model.embed_tokens.weight"
	vocab, hidden, err := shape(embed)
	if err != nil {
		return err
	}
	if err := fieldIs("vocab_size", cfg.VocabSize, vocab, embed+" rows"); err != nil {
		return err
	}
	if err := fieldIs("hidden_size", cfg.HiddenSize, hidden, embed+" columns"); err != nil {
		return err
	}
	if n := layersIn(w); cfg.NumHiddenLayers > n {
		return fmt.Errorf("config num_hidden_layers = %d, but the weights hold %d layers (model.layers.N.*)", cfg.NumHiddenLayers, n)
	}
	const layer0 = "model.layers.0."
	if t, err := w.Tensor(layer0 + "self_attn.q_norm.weight"); err == nil {
		if err := fieldIs("head_dim", cfg.HeadDim, t.Cols, layer0+"self_attn.q_norm.weight length"); err != nil {
			return err
		}
	}
	q, _, err := shape(layer0 + "self_attn.q_proj.weight")
	if err != nil {
		return err
	}
	if err := productIs("num_attention_heads", cfg.NumAttentionHeads, cfg.HeadDim, q, layer0+"self_attn.q_proj.weight rows"); err != nil {
		return err
	}
	kv, _, err := shape(layer0 + "self_attn.k_proj.weight")
	if err != nil {
		return err
	}
	if err := productIs("num_key_value_heads", cfg.NumKeyValueHeads, cfg.HeadDim, kv, layer0+"self_attn.k_proj.weight rows"); err != nil {
		return err
	}
	inter, _, err := shape(layer0 + "mlp.gate_proj.weight")
	if err != nil {
		return err
	}
	return fieldIs("intermediate_size", cfg.IntermediateSize, inter, layer0+"mlp.gate_proj.weight rows")
}

func fieldIs(field string, v, want int, what string) error {
	if v != want {
		return fmt.Errorf("config %s = %d, but %s is %d", field, v, what, want)
	}
	return nil
}

// productIs checks heads × head_dim against a projection's rows without
// overflowing on absurd values.
func productIs(field string, heads, headDim, rows int, what string) error {
	if headDim > rows || heads > rows/headDim || heads*headDim != rows {
		return fmt.Errorf("config %s × head_dim = %d × %d, but %s is %d", field, heads, headDim, what, rows)
	}
	return nil
}

// layersIn counts the distinct N of the model.layers.N.* tensors in w, so
// the count is bounded by the tensors that exist (a missing layer below it
// is then reported by name when the layers are loaded).
func layersIn(w Tensors) int {
	seen := map[int]bool{}
	for _, name := range w.Names() {
		rest, ok := strings.CutPrefix(name, "model.layers.")
		if !ok {
			continue
		}
		idx, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(idx); err == nil && i >= 0 {
			seen[i] = true
		}
	}
	return len(seen)
}
