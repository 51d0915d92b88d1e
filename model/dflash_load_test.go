package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// dflashConfigJSON is the config.json of tinyDFlash's draft, as the
// checkpoints write it (block_size at the top level, as z-lab's DFlash
// checkpoints do; DFlash2's keys in dflash_config, as vLLM reads them).
func dflashConfigJSON(dc *DFlashConfig) map[string]any {
	lc := &dc.Layers
	sec := map[string]any{"mask_token_id": dc.MaskTokenID, "target_layer_ids": dc.TargetLayerIDs}
	if dc.Causal {
		sec["causal"] = true
	}
	if dc.Kind == DFlash2 {
		sec["conv_kernel_size"], sec["conv_group_size"] = dc.ConvTaps, dc.ConvGroupSize
		sec["selector_rank"], sec["selector_top_k"] = dc.SelectorRank, dc.SelectorTopK
		sec["input_embedding_scale"], sec["output_multiplier"] = dc.InputEmbeddingScale, dc.OutputMultiplier
		sec["final_logit_softcapping"] = dc.LogitSoftcap
	}
	return map[string]any{
		"architectures": []string{lc.Architecture}, "model_type": "qwen3",
		"hidden_size": lc.HiddenSize, "intermediate_size": lc.IntermediateSize,
		"num_hidden_layers": lc.NumHiddenLayers, "num_attention_heads": lc.NumAttentionHeads,
		"num_key_value_heads": lc.NumKeyValueHeads, "head_dim": lc.HeadDim, "vocab_size": lc.VocabSize,
		"rms_norm_eps": lc.RMSNormEps, "rope_theta": lc.RopeTheta, "max_position_embeddings": lc.MaxPositionEmbeddings,
		"block_size": dc.BlockSize, "num_target_layers": dc.NumTargetLayers, "dflash_config": sec,
	}
}

func TestParseDFlashConfig(t *testing.T) {
	tcfg := dflashTarget()
	for _, kind := range []DFlashKind{DFlash, DFlash2} {
		want := tinyDFlash(kind, kind == DFlash, tcfg)
		raw, _ := json.Marshal(dflashConfigJSON(want))
		got, err := ParseDFlashConfig(raw)
		if err != nil {
			t.Fatal(err)
		}
		want.Layers.ModelType = "qwen3"
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s parsed as\n%+v\nwant\n%+v", kind, got, want)
		}
	}
	for _, tc := range []struct {
		name   string
		edit   func(top, sec map[string]any)
		kind   DFlashKind
		errSub string
	}{
		{"not a draft", func(top, _ map[string]any) { top["architectures"] = []string{"Qwen3ForCausalLM"} }, DFlash, "not a DFlash draft"},
		{"no dflash_config", func(top, _ map[string]any) { delete(top, "dflash_config") }, DFlash, "no dflash_config"},
		{"no mask", func(_, sec map[string]any) { delete(sec, "mask_token_id") }, DFlash, "mask_token_id"},
		{"mask outside vocab", func(_, sec map[string]any) { sec["mask_token_id"] = 96 }, DFlash, "mask_token_id 96"},
		{"no block size", func(top, _ map[string]any) { delete(top, "block_size") }, DFlash, "block_size"},
		{"block of one", func(top, _ map[string]any) { top["block_size"] = 1 }, DFlash, "block_size 1"},
		{"sliding", func(top, _ map[string]any) { top["layer_types"] = []string{"full_attention", "sliding_attention"} }, DFlash, "sliding_attention"},
		{"swa", func(_, sec map[string]any) { sec["use_swa"] = true }, DFlash, "use_swa"},
		{"interleaved rope", func(top, _ map[string]any) { top["is_neox_style"] = false }, DFlash, "is_neox_style"},
		{"no layer ids", func(top, sec map[string]any) { delete(sec, "target_layer_ids"); delete(top, "num_target_layers") }, DFlash, "target_layer_ids"},
		{"bad heads", func(top, _ map[string]any) { top["num_key_value_heads"] = 3 }, DFlash, "num_key_value_heads"},
		{"conv group", func(_, sec map[string]any) { sec["conv_group_size"] = 24 }, DFlash2, "conv_group_size"},
		{"conv taps", func(_, sec map[string]any) { sec["conv_kernel_size"] = 0 }, DFlash2, "conv_kernel_size"},
		{"no rank", func(_, sec map[string]any) { delete(sec, "selector_rank") }, DFlash2, "selector_rank"},
		{"top-k", func(_, sec map[string]any) { sec["selector_top_k"] = 1000 }, DFlash2, "selector_top_k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := dflashConfigJSON(tinyDFlash(tc.kind, false, tcfg))
			tc.edit(top, top["dflash_config"].(map[string]any))
			raw, _ := json.Marshal(top)
			if _, err := ParseDFlashConfig(raw); err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error %v, want one containing %q", err, tc.errSub)
			}
		})
	}
}

// TestDefaultTargetLayerIDs checks the spread of z-lab's
// build_target_layer_ids, including Python's round-half-to-even.
func TestDefaultTargetLayerIDs(t *testing.T) {
	for _, tc := range []struct {
		target, draft int
		want          []int
	}{
		{36, 1, []int{18}},
		{36, 5, []int{1, 9, 17, 25, 33}},
		{28, 2, []int{1, 25}},
		{11, 3, []int{1, 4, 8}}, // 4.5 rounds to 4
		{9, 3, []int{1, 4, 6}},  // 3.5 rounds to 4
	} {
		got := defaultTargetLayerIDs(tc.target, tc.draft)
		if !slices.Equal(got, tc.want) {
			t.Errorf("target %d, draft %d: %v, want %v", tc.target, tc.draft, got, tc.want)
		}
	}
}

// TestNewDFlashDraftRejects checks that a draft that does not fit its
// weights or its target is refused with an error naming the problem.
func TestNewDFlashDraftRejects(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	tcfg := dflashTarget()
	target, _ := buildModel(t, tcfg, metal.F32, be)
	for _, tc := range []struct {
		name   string
		edit   func(dc *DFlashConfig, w memTensors)
		errSub string
	}{
		{"fc shape", func(_ *DFlashConfig, w memTensors) { w["fc.weight"] = w["norm.weight"] }, "tensor fc.weight has shape"},
		{"missing layer", func(_ *DFlashConfig, w memTensors) { delete(w, "layers.1.mlp.up_proj.weight") }, "layers.1.mlp.up_proj.weight"},
		{"missing conv", func(_ *DFlashConfig, w memTensors) { delete(w, "layers.0.mlp_conv.base_kernel") }, "layers.0.mlp_conv.base_kernel"},
		{"codebook", func(_ *DFlashConfig, w memTensors) {
			w["candidate_selector.successor_codebook"] = w["candidate_selector.hidden_projection.weight"]
		}, "successor_codebook"},
		{"mask embedding", func(_ *DFlashConfig, w memTensors) { w["mask_embedding"] = w["norm.weight"] }, "mask_embedding"},
		{"layer outside target", func(dc *DFlashConfig, _ memTensors) { dc.TargetLayerIDs = []int{1, 4} }, "layer 4"},
		{"hidden", func(dc *DFlashConfig, _ memTensors) { dc.Layers.HiddenSize = 32 }, "hidden_size 32"},
		{"vocab", func(dc *DFlashConfig, _ memTensors) { dc.Layers.VocabSize, dc.MaskTokenID = 90, 89 }, "vocab_size 90"},
		{"target depth", func(dc *DFlashConfig, _ memTensors) { dc.NumTargetLayers = 36 }, "36 layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc := tinyDFlash(DFlash2, false, tcfg)
			w, _ := randomDFlash(dc, tcfg.HiddenSize, 1)
			tc.edit(dc, w)
			if _, err := NewDFlashDraft(dc, w, target, be); err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("error %v, want one containing %q", err, tc.errSub)
			}
		})
	}
}

// writeDFlashCheckpoint writes draft dc with weights w as a checkpoint in
// dir: config.json and model.safetensors, base kernels as 3-D tensors.
func writeDFlashCheckpoint(t *testing.T, dir string, dc *DFlashConfig, w memTensors) {
	t.Helper()
	raw, _ := json.Marshal(dflashConfigJSON(dc))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var ts []STTensor
	for _, name := range w.Names() {
		tt := w[name]
		shape := []int{tt.Rows, tt.Cols}
		switch {
		case strings.HasSuffix(name, "base_kernel"):
			shape = []int{2, tt.Rows / 2, tt.Cols}
		case tt.Rows == 1:
			shape = []int{tt.Cols}
		}
		ts = append(ts, STTensor{Name: name, DType: tt.DType, Shape: shape, Data: tt.Data})
	}
	if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDFlashDraft checks that drafts written to disk load and propose
// what the same weights in memory propose.
func TestOpenDFlashDraft(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	tcfg := dflashTarget()
	target, _ := buildModel(t, tcfg, metal.F32, be)
	for _, kind := range []DFlashKind{DFlash, DFlash2} {
		t.Run(string(kind), func(t *testing.T) {
			dc := tinyDFlash(kind, false, tcfg)
			w, _ := randomDFlash(dc, tcfg.HiddenSize, 2)
			dir := t.TempDir()
			writeDFlashCheckpoint(t, dir, dc, w)
			disk, ts, err := OpenDFlashDraft(dir, target, be)
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			if disk.Config().Kind != kind {
				t.Fatalf("kind %q, want %q", disk.Config().Kind, kind)
			}
			mem, err := NewDFlashDraft(dc, w, target, be)
			if err != nil {
				t.Fatal(err)
			}
			feats := make([]float32, 6*mem.FeatureWidth())
			for i := range feats {
				feats[i] = float32(i%13) - 6
			}
			var outs [2][]int32
			for i, d := range []*DFlashDraft{disk, mem} {
				kv := d.NewKVCache(4, 4, metal.KVF16)
				ctx := []DFlashContext{{Features: feats, Blocks: []int32{2, 0, 3}}}
				if err := d.AddContext(ctx, kv); err != nil {
					t.Fatal(err)
				}
				outs[i] = make([]int32, dc.BlockSize-1)
				if err := d.Propose([]DFlashBlock{{Start: 6, Anchor: 17, Blocks: []int32{2, 0, 3}}}, kv, outs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(outs[0], outs[1]) {
				t.Errorf("from disk %v, in memory %v", outs[0], outs[1])
			}
		})
	}
}

// TestDFlashRejectsBadCalls checks the errors of AddContext and Propose.
func TestDFlashRejectsBadCalls(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	tcfg := dflashTarget()
	target, _ := buildModel(t, tcfg, metal.F32, be)
	dc := tinyDFlash(DFlash, false, tcfg)
	w, _ := randomDFlash(dc, tcfg.HiddenSize, 1)
	d, err := NewDFlashDraft(dc, w, target, be)
	if err != nil {
		t.Fatal(err)
	}
	kv := d.NewKVCache(4, 4, metal.KVF16)
	fw := d.FeatureWidth()
	for _, tc := range []struct {
		name   string
		err    error
		errSub string
	}{
		{"ragged features", d.AddContext([]DFlashContext{{Features: make([]float32, fw+1), Blocks: []int32{0}}}, kv), "multiple"},
		{"context past blocks", d.AddContext([]DFlashContext{{Start: 3, Features: make([]float32, 2*fw), Blocks: []int32{0}}}, kv), "dflash context row 0"},
		{"target cache", d.AddContext(nil, target.NewKVCache(4, 4, metal.KVF16)), "does not match"},
		{"block past blocks", d.Propose([]DFlashBlock{{Start: 0, Anchor: 1, Blocks: []int32{0}}}, kv, make([]int32, 4)), "dflash block 0"},
		{"anchor", d.Propose([]DFlashBlock{{Anchor: 96, Blocks: []int32{0, 1}}}, kv, make([]int32, 4)), "anchor token 96"},
		{"room", d.Propose([]DFlashBlock{{Anchor: 1, Blocks: []int32{0, 1}}}, kv, make([]int32, 3)), "room"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.errSub) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.errSub)
		}
	}
	if _, err := NewDFlashDraft(dc, w, notDense{target}, be); err == nil || !strings.Contains(err.Error(), "needs a dense") {
		t.Errorf("another model as target: error %v", err)
	}
}

// notDense is a Model that is neither the dense transformer nor a hybrid model.
type notDense struct{ Model }
