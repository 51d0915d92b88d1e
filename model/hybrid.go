package model

import (
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// HybridModel is the text model of a Qwen3.5 or Qwen3-Next checkpoint
// (Config.Hybrid): pre-norm blocks whose token mixer is either gated
// full attention (paged KV cache) or a Gated DeltaNet (a fixed-size state
// per sequence), each followed by a SwiGLU MLP. The specification is
// transformers' models/qwen3_next/modeling_qwen3_next.py and
// models/qwen3_5/modular_qwen3_5.py:
//
//	x = embed(tokens)
//	per layer: x += mixer(norm₁(x)); x += mlp(norm₂(x))
//	logits = lm_head(norm(x))
//
// where every norm but the Gated DeltaNet's is zero-centred,
// x/sqrt(mean(x²)+eps)·(1+w) (Qwen3NextRMSNorm), so the loader stores 1+w.
//
// A layer's MLP is a mixture of experts where Hybrid.IsMoE says so
// (moeBlock). As a Model (hybrid_cache.go) it keeps each sequence's
// linear-layer state in the cache's state slots; ForwardState and
// ForwardBatch take HybridStates directly.
type HybridModel struct {
	cfg                    *Config
	be                     metal.Backend
	la                     metal.LinearAttention
	embed                  *metal.Tensor // (vocab, hidden)
	layers                 []hybridLayer
	norm                   []float32     // (hidden), 1+w
	lmHead                 *metal.Tensor // (vocab, hidden); the embedding when tied
	invFreq                []float32     // (rotary_dim/2)
	mropeFreq              [3][]float32  // invFreq split among M-RoPE's sections (mropeFreqs); with a vision tower
	kvLayers, linearLayers int
	run                    hybridRun
}

// hybridLayer is one decoder layer: exactly one of attn and delta is set,
// and either moe or the dense MLP (gate, up, down).
type hybridLayer struct {
	inNorm, mlpNorm []float32 // (hidden), 1+w
	attn            *gatedAttention
	delta           *deltaNet
	slot            int // index of the layer among its kind: its KV layer or its state
	moe             *moeBlock
	gate, up        *metal.Tensor // (intermediate, hidden)
	down            *metal.Tensor // (hidden, intermediate)
}

// gatedAttention is Qwen3NextAttention's weights.
type gatedAttention struct {
	wq           *metal.Tensor // (heads*2*head_dim, hidden): per head, head_dim query rows then head_dim gate rows
	wk, wv       *metal.Tensor // (kv_heads*head_dim, hidden)
	wo           *metal.Tensor // (hidden, heads*head_dim)
	qNorm, kNorm []float32     // (head_dim), 1+w
}

// deltaNet is a Gated DeltaNet layer's weights (Qwen3NextGatedDeltaNet,
// Qwen3_5GatedDeltaNet). Qwen3.5 stores the input projections split
// (qkv, z, b, a); Qwen3-Next fused and grouped by key head (qkvz, ba),
// which splitQKVZ and splitBA undo per token.
type deltaNet struct {
	inQKV, inZ, inB, inA *metal.Tensor // (qkv_dim | vh*dv | vh | vh, hidden), Qwen3.5
	inQKVZ, inBA         *metal.Tensor // (qkv_dim+vh*dv | 2*vh, hidden), Qwen3-Next
	conv                 []float32     // (qkv_dim, kernel): conv1d.weight (qkv_dim, 1, kernel)
	aLog, dtBias         []float32     // (vh)
	norm                 []float32     // (dv), used as is
	out                  *metal.Tensor // (hidden, vh*dv)
}

// HybridState is one sequence's state in a HybridModel's Gated DeltaNet
// layers: for each, the convolution's last kernel-1 inputs and the
// recurrent matrices (Hybrid.ConvStateLen and DeltaDims().StateLen floats).
// Pos is how many tokens it has consumed: a linear layer's state cannot
// be rewound, so the next Forward must start there.
type HybridState struct {
	Pos   int
	Conv  [][]float32
	Delta [][]float32
}

// NewHybridModel builds a hybrid model from cfg and its weights, checking
// every tensor's shape against the config. With a nil backend it only
// checks (Pack): the model cannot run.
func NewHybridModel(cfg *Config, w Tensors, be metal.Backend) (*HybridModel, error) {
	if cfg.Hybrid == nil {
		return nil, fmt.Errorf("model: %s is not a hybrid model", cfg.Architecture)
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	la, ok := be.(metal.LinearAttention)
	if !ok && be != nil {
		return nil, fmt.Errorf("model: backend %s has no linear attention kernels (metal.LinearAttention)", be.Name())
	}
	y := cfg.Hybrid
	m := &HybridModel{cfg: cfg, be: be, la: la, invFreq: hybridInvFreq(cfg)}
	if cfg.Vision != nil {
		m.mropeFreq = mropeFreqs(m.invFreq, y.MRopeSection, y.MRopeInterleaved)
	}
	l := weightLoader{w: w}
	hidden, p := cfg.HiddenSize, y.TextPrefix
	m.embed = l.matrix(p+"embed_tokens.weight", cfg.VocabSize, hidden)
	m.norm = zeroCentred(l.vector(p+"norm.weight", hidden))
	m.lmHead = m.embed
	if !cfg.TieWordEmbeddings || l.has("lm_head.weight") {
		m.lmHead = l.matrix("lm_head.weight", cfg.VocabSize, hidden)
	}
	m.layers = make([]hybridLayer, cfg.NumHiddenLayers)
	for i := range m.layers {
		lp := fmt.Sprintf("%slayers.%d.", p, i)
		ly := &m.layers[i]
		ly.inNorm = zeroCentred(l.vector(lp+"input_layernorm.weight", hidden))
		if y.IsLinear(i) {
			ly.delta, ly.slot = loadDeltaNet(&l, cfg, lp+"linear_attn."), m.linearLayers
			m.linearLayers++
		} else {
			ly.attn, ly.slot = loadGatedAttention(&l, cfg, lp+"self_attn."), m.kvLayers
			m.kvLayers++
		}
		ly.mlpNorm = zeroCentred(l.vector(lp+"post_attention_layernorm.weight", hidden))
		if y.IsMoE(i) {
			ly.moe = loadMoE(&l, cfg, lp+"mlp.")
			continue
		}
		ly.gate = l.matrix(lp+"mlp.gate_proj.weight", cfg.IntermediateSize, hidden)
		ly.up = l.matrix(lp+"mlp.up_proj.weight", cfg.IntermediateSize, hidden)
		ly.down = l.matrix(lp+"mlp.down_proj.weight", hidden, cfg.IntermediateSize)
	}
	if l.err != nil {
		return nil, fmt.Errorf("model: %s: %w", cfg.Architecture, l.err)
	}
	if wp, ok := be.(metal.WeightPreparer); ok {
		for _, t := range m.matrices() {
			wp.PrepareWeights(t)
		}
	}
	return m, nil
}

func loadGatedAttention(l *weightLoader, cfg *Config, p string) *gatedAttention {
	hidden, hd := cfg.HiddenSize, cfg.HeadDim
	return &gatedAttention{
		wq:    l.matrix(p+"q_proj.weight", 2*cfg.QDim(), hidden),
		wk:    l.matrix(p+"k_proj.weight", cfg.KVDim(), hidden),
		wv:    l.matrix(p+"v_proj.weight", cfg.KVDim(), hidden),
		wo:    l.matrix(p+"o_proj.weight", hidden, cfg.QDim()),
		qNorm: zeroCentred(l.vector(p+"q_norm.weight", hd)),
		kNorm: zeroCentred(l.vector(p+"k_norm.weight", hd)),
	}
}

func loadDeltaNet(l *weightLoader, cfg *Config, p string) *deltaNet {
	y, hidden := cfg.Hybrid, cfg.HiddenSize
	d := y.DeltaDims()
	qkv, vd := d.QKVDim(), d.ValueHeads*d.ValueDim
	dn := &deltaNet{
		aLog:   l.vector(p+"A_log", d.ValueHeads),
		dtBias: l.vector(p+"dt_bias", d.ValueHeads),
		norm:   l.vector(p+"norm.weight", d.ValueDim),
		out:    l.matrix(p+"out_proj.weight", hidden, vd),
	}
	if t := l.matrix(p+"conv1d.weight", qkv, y.LinearConvKernelDim); t != nil {
		dn.conv = t.Dequantize()
	}
	if y.ModelType == "qwen3_next" {
		dn.inQKVZ = l.matrix(p+"in_proj_qkvz.weight", qkv+vd, hidden)
		dn.inBA = l.matrix(p+"in_proj_ba.weight", 2*d.ValueHeads, hidden)
		return dn
	}
	dn.inQKV = l.matrix(p+"in_proj_qkv.weight", qkv, hidden)
	dn.inZ = l.matrix(p+"in_proj_z.weight", vd, hidden)
	dn.inB = l.matrix(p+"in_proj_b.weight", d.ValueHeads, hidden)
	dn.inA = l.matrix(p+"in_proj_a.weight", d.ValueHeads, hidden)
	return dn
}

// zeroCentred returns 1+w, the scale of a zero-centred RMSNorm.
func zeroCentred(w []float32) []float32 {
	for i := range w {
		w[i]++
	}
	return w
}

// hybridInvFreq is the rotary_dim/2 inverse frequencies of partial RoPE:
// theta^(-2i/rotary_dim), rotating pairs (i, i+rotary_dim/2) of each head's
// first rotary_dim dimensions (Qwen3NextRotaryEmbedding; Qwen3.5's M-RoPE
// gives text tokens the same position in its three sections, which is
// this).
func hybridInvFreq(cfg *Config) []float32 {
	rot := cfg.Hybrid.RotaryDim(cfg.HeadDim)
	c := *cfg
	c.HeadDim, c.RopeScaling = rot, nil
	return ropeInvFreq(&c)
}

// matrices lists the weight matrices Forward passes to MatMul.
func (m *HybridModel) matrices() []*metal.Tensor {
	ws := []*metal.Tensor{m.lmHead}
	for i := range m.layers {
		ly := &m.layers[i]
		if ly.moe != nil {
			ws = append(ws, ly.moe.matrices()...)
		} else {
			ws = append(ws, ly.gate, ly.up, ly.down)
		}
		if a := ly.attn; a != nil {
			ws = append(ws, a.wq, a.wk, a.wv, a.wo)
		}
		if d := ly.delta; d != nil {
			for _, t := range []*metal.Tensor{d.inQKV, d.inZ, d.inB, d.inA, d.inQKVZ, d.inBA, d.out} {
				if t != nil {
					ws = append(ws, t)
				}
			}
		}
	}
	return ws
}

// Config returns the model's configuration.
func (m *HybridModel) Config() *Config { return m.cfg }

// NewKVCache allocates a paged cache for the full-attention layers only.
func (m *HybridModel) NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache {
	if err := t.Check(blockSize, m.cfg.HeadDim); err != nil {
		panic(err)
	}
	return metal.NewKVCache(t, m.kvLayers, numBlocks, blockSize, m.cfg.NumKeyValueHeads, m.cfg.HeadDim)
}

// NewState returns a zeroed state for a new sequence (position 0).
func (m *HybridModel) NewState() *HybridState {
	y := m.cfg.Hybrid
	s := &HybridState{Conv: make([][]float32, m.linearLayers), Delta: make([][]float32, m.linearLayers)}
	for i := range s.Conv {
		s.Conv[i] = make([]float32, y.ConvStateLen())
		s.Delta[i] = make([]float32, y.DeltaDims().StateLen())
	}
	return s
}
