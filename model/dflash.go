package model

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/splash-inference/splash/metal"
)

// DFlashDraft is a block-diffusion draft (DFlash or DFlash2) bound to its
// target, dense or hybrid. It has no embeddings or head: it embeds with the target's
// embed_tokens and scores with the target's lm_head. Its context is the
// target's hidden states at the committed positions (FeatureCapture), fused
// by fc and hidden_norm and kept as keys and values in the draft's own
// paged KV cache, addressed by the same positions (and block tables) as the
// target's; see AddContext and Propose.
//
// Sources: z-lab/dflash dflash/model.py (DFlashDraftModel,
// Qwen3DFlashAttention) and dflash/model_mlx.py; vLLM
// vllm/model_executor/models/qwen3_dflash.py and qwen3_dflash2.py
// (DFlash2: DFlashGroupedConv, CandidateSelector) and
// vllm/v1/worker/gpu/spec_decode/dflash2/speculator.py (the selector's
// walk).
type DFlashDraft struct {
	cfg     *DFlashConfig
	be      metal.Backend
	target  draftTarget
	fc      *metal.Tensor // (hidden, len(TargetLayerIDs)·hidden)
	hidNorm []float32     // hidden_norm (hidden)
	layers  []dflashLayer
	norm    []float32 // (hidden)
	invFreq []float32
	sel     *dflashSelector // DFlash2 only
	run     dflashRun
}

// draftTarget is what a draft takes from its target: the dimensions, the
// embeddings and the head.
type draftTarget struct {
	cfg    *Config
	embed  *metal.Tensor // (vocab, hidden)
	lmHead *metal.Tensor // (vocab, hidden)
}

// targetOf returns the parts of target a draft uses; only the dense
// transformer and HybridModel capture features (FeatureCapture).
func targetOf(target Model) (draftTarget, error) {
	switch m := target.(type) {
	case *transformer:
		return draftTarget{cfg: m.cfg, embed: m.embed, lmHead: m.lmHead}, nil
	case *HybridModel:
		return draftTarget{cfg: m.cfg, embed: m.embed, lmHead: m.lmHead}, nil
	}
	return draftTarget{}, fmt.Errorf("model: a DFlash draft needs a dense (Qwen3, Llama) or hybrid (Qwen3.5, Qwen3-Next) target, not %T", target)
}

// dflashLayer is a Qwen3 decoder layer; DFlash2 wraps its attention and its
// MLP each in a dynamic grouped convolution.
type dflashLayer struct {
	layer
	attnConv, mlpConv *dflashConv // DFlash2 only
}

// dflashConv is DFlash2's DFlashGroupedConv: base kernels for the input
// (side 0) and the output (side 1) of the wrapped block, and a projection
// giving each token per-group offsets to them.
type dflashConv struct {
	base []float32     // (2, taps, hidden)
	proj *metal.Tensor // kernel_projection (2·taps·groups, hidden)
}

// dflashSelector is DFlash2's CandidateSelector: a low-rank bilinear score
// between consecutive candidates, modulated by the draft's hidden state.
type dflashSelector struct {
	pred, succ *metal.Tensor // predecessor/successor codebooks (vocab, rank)
	proj       *metal.Tensor // hidden_projection (rank, hidden)
}

// OpenDFlashDraft opens the DFlash or DFlash2 checkpoint in dir (config.json
// and safetensors, as OpenCheckpoint) and binds it to target. Close the
// returned Tensors when done with the draft.
func OpenDFlashDraft(dir string, target Model, be metal.Backend) (*DFlashDraft, Tensors, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("model: %s is not a DFlash checkpoint: %w", dir, err)
	}
	cfg, err := ParseDFlashConfig(raw)
	if err != nil {
		return nil, nil, err
	}
	_, ts, err := OpenCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	d, err := NewDFlashDraft(cfg, ts, target, be)
	if err != nil {
		ts.Close()
		return nil, nil, err
	}
	return d, ts, nil
}

// NewDFlashDraft builds the draft of cfg from its weights w, bound to
// target, which must be a dense model (Qwen3 or Llama) or a hybrid one
// (Qwen3.5, Qwen3-Next) whose dimensions fit the draft
// (DFlashConfig.CheckTarget). Tensor names are those of the
// checkpoints (fc.weight, hidden_norm.weight, layers.N.…, norm.weight;
// DFlash2 adds layers.N.{attention,mlp}_conv.{base_kernel,
// kernel_projection.weight} and candidate_selector.{predecessor_codebook,
// successor_codebook, hidden_projection.weight}), optionally under
// "model.". Every shape is checked and the first bad tensor named.
func NewDFlashDraft(cfg *DFlashConfig, w Tensors, target Model, be metal.Backend) (*DFlashDraft, error) {
	tm, err := targetOf(target)
	if err != nil {
		return nil, err
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if err := cfg.CheckTarget(tm.cfg); err != nil {
		return nil, err
	}
	lc := &cfg.Layers
	h := lc.HiddenSize
	l := weightLoader{w: w}
	p := ""
	if l.has("model.fc.weight") {
		p = "model."
	}
	if l.has(p + "mask_embedding") {
		// vLLM substitutes it for the mask token's embedding (MiMo drafts)
		return nil, fmt.Errorf("model: dflash draft: a separate mask_embedding tensor is not supported")
	}
	d := &DFlashDraft{cfg: cfg, be: be, target: tm, invFreq: ropeInvFreq(lc)}
	d.fc = l.matrix(p+"fc.weight", h, len(cfg.TargetLayerIDs)*tm.cfg.HiddenSize)
	d.hidNorm = l.vector(p+"hidden_norm.weight", h)
	d.norm = l.vector(p+"norm.weight", h)
	d.layers = make([]dflashLayer, lc.NumHiddenLayers)
	for i := range d.layers {
		lp := fmt.Sprintf("%slayers.%d.", p, i)
		d.layers[i].layer = l.layer(lp, lc, true)
		if cfg.Kind == DFlash2 {
			d.layers[i].attnConv = l.conv(lp+"attention_conv.", cfg)
			d.layers[i].mlpConv = l.conv(lp+"mlp_conv.", cfg)
		}
	}
	if cfg.Kind == DFlash2 {
		sp, r := p+"candidate_selector.", cfg.SelectorRank
		d.sel = &dflashSelector{
			pred: l.matrix(sp+"predecessor_codebook", lc.VocabSize, r),
			succ: l.matrix(sp+"successor_codebook", lc.VocabSize, r),
			proj: l.matrix(sp+"hidden_projection.weight", r, h),
		}
	}
	if l.err != nil {
		return nil, fmt.Errorf("model: dflash draft: %w", l.err)
	}
	if wp, ok := be.(metal.WeightPreparer); ok {
		for _, m := range d.matrices() {
			wp.PrepareWeights(m)
		}
	}
	return d, nil
}

// conv reads one DFlashGroupedConv whose tensor names start with p.
func (l *weightLoader) conv(p string, cfg *DFlashConfig) *dflashConv {
	h, taps := cfg.Layers.HiddenSize, cfg.ConvTaps
	c := &dflashConv{proj: l.matrix(p+"kernel_projection.weight", 2*taps*(h/cfg.ConvGroupSize), h)}
	if b := l.matrix(p+"base_kernel", 2*taps, h); b != nil {
		c.base = b.Dequantize()
	}
	return c
}

// matrices lists the weight matrices the draft passes to MatMul (the
// target's are prepared by the target).
func (d *DFlashDraft) matrices() []*metal.Tensor {
	ws := []*metal.Tensor{d.fc}
	for i := range d.layers {
		ly := &d.layers[i]
		ws = append(ws, ly.wq, ly.wk, ly.wv, ly.wo, ly.gate, ly.up, ly.down)
		if ly.attnConv != nil {
			ws = append(ws, ly.attnConv.proj, ly.mlpConv.proj)
		}
	}
	if d.sel != nil {
		ws = append(ws, d.sel.proj)
	}
	return ws
}

// Config returns the draft's configuration.
func (d *DFlashDraft) Config() *DFlashConfig { return d.cfg }

// FeatureLayers returns the target layers the draft reads, for
// FeatureCapture.Layers.
func (d *DFlashDraft) FeatureLayers() []int { return d.cfg.TargetLayerIDs }

// FeatureWidth is the width of one position's captured features.
func (d *DFlashDraft) FeatureWidth() int { return len(d.cfg.TargetLayerIDs) * d.target.cfg.HiddenSize }

// CacheSpec declares the draft's context cache: one paged K/V layer per
// draft layer, addressed by the target's positions (NewKVCache), so a
// memory plan counts it per token beside the target's.
func (d *DFlashDraft) CacheSpec() CacheSpec {
	lc := &d.cfg.Layers
	s := CacheSpec{Layers: make([]LayerCache, lc.NumHiddenLayers)}
	for i := range s.Layers {
		s.Layers[i] = PagedLayer(lc.NumKeyValueHeads, lc.HeadDim)
	}
	return s
}

// ScratchBytes is the float32 scratch of a block pass over rows sequences
// (Propose: the block's activations, every masked position's logits) and
// a proposer's sampled distributions of as many (spec.DFlash), the most a
// step of rows drafting sequences holds.
func (d *DFlashDraft) ScratchBytes(rows int) int64 {
	lc, B := &d.cfg.Layers, int64(d.cfg.BlockSize)
	n, nw := int64(rows)*B, int64(rows)*(B-1)
	perToken := int64(3*lc.HiddenSize + 2*lc.QDim() + 2*lc.KVDim() + 2*lc.IntermediateSize)
	if d.cfg.Kind == DFlash2 {
		perToken += int64(2 * d.cfg.ConvTaps * (lc.HiddenSize / d.cfg.ConvGroupSize))
	}
	perWanted := int64(lc.HiddenSize + 2*lc.VocabSize + d.cfg.SelectorRank)
	return 4 * (n*perToken + nw*perWanted)
}

// DFlashKVType is the type of a DFlash draft's context cache beside a
// target cache of type t: t, except that a q8 cache keeps the draft's in
// f16. The context is the target's fused features, from which every
// proposal is read at once; quantised draft keys and values collapsing
// acceptance is a pitfall the DFlash projects' issues report, and keeping
// them costs little memory (the draft has few layers).
func DFlashKVType(t metal.KVType) metal.KVType {
	if t == metal.KVQ8 {
		return metal.KVF16
	}
	return t
}

// NewKVCache allocates the draft's paged cache: one layer per draft layer,
// addressed by sequence positions like the target's, so a sequence can use
// the same block table in both. It panics when t cannot hold the heads.
func (d *DFlashDraft) NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache {
	lc := &d.cfg.Layers
	if err := t.Check(blockSize, lc.HeadDim); err != nil {
		panic(err)
	}
	if km, ok := d.be.(metal.KVMemory); ok {
		buf := km.KVBuffer(metal.KVCacheElems(t, lc.NumHiddenLayers, numBlocks, blockSize, lc.NumKeyValueHeads, lc.HeadDim))
		return metal.NewKVCacheIn(buf, t, lc.NumHiddenLayers, numBlocks, blockSize, lc.NumKeyValueHeads, lc.HeadDim)
	}
	return metal.NewKVCache(t, lc.NumHiddenLayers, numBlocks, blockSize, lc.NumKeyValueHeads, lc.HeadDim)
}
