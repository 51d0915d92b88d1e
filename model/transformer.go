package model

import (
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// transformer is the dense decoder-only transformer shared by Llama and
// Qwen3: pre-norm blocks of grouped-query attention with rotary positions and
// a SwiGLU MLP. Qwen3 adds an RMSNorm over each query and key head (qkNorm).
type transformer struct {
	cfg     *Config
	be      metal.Backend
	qkNorm  bool
	embed   *metal.Tensor // (vocab, hidden)
	layers  []layer
	norm    []float32     // (hidden)
	lmHead  *metal.Tensor // (vocab, hidden); the embedding when tied
	invFreq []float32     // (head_dim/2)
	run     runState
}

type layer struct {
	attnNorm []float32     // (hidden)
	wq       *metal.Tensor // (heads*head_dim, hidden)
	wk, wv   *metal.Tensor // (kv_heads*head_dim, hidden)
	wo       *metal.Tensor // (hidden, heads*head_dim)
	qNorm    []float32     // (head_dim), Qwen3 only
	kNorm    []float32     // (head_dim), Qwen3 only
	mlpNorm  []float32     // (hidden)
	gate, up *metal.Tensor // (intermediate, hidden)
	down     *metal.Tensor // (hidden, intermediate)
}

// runState is the scratch of one forward pass, grown to the largest batch
// seen and reused, so steady-state decoding does not allocate.
type runState struct {
	tokens   []int32
	pos      []int32
	slots    []int32
	attnRows []metal.AttnRow
	want     []int32 // indices (into the flattened batch) whose logits are returned

	x, h, att []float32 // (n, hidden), (n, hidden), (n, q_dim)
	q, k, v   []float32 // (n, q_dim), (n, kv_dim), (n, kv_dim)
	gate, up  []float32 // (n, intermediate)
	y         []float32 // (len(want), hidden)
	logits    []float32 // (len(want), vocab)
	products  [3]metal.Product
}

var _ Model = (*transformer)(nil)

func newQwen3(cfg *Config, w Tensors, be metal.Backend) (Model, error) {
	return newTransformer(cfg, w, be, true)
}

func newLlama(cfg *Config, w Tensors, be metal.Backend) (Model, error) {
	return newTransformer(cfg, w, be, false)
}

func newTransformer(cfg *Config, w Tensors, be metal.Backend, qkNorm bool) (*transformer, error) {
	if err := checkDims(cfg, w); err != nil {
		return nil, fmt.Errorf("model: %s: %w", cfg.Architecture, err)
	}
	l := weightLoader{w: w}
	hidden := cfg.HiddenSize
	m := &transformer{cfg: cfg, be: be, qkNorm: qkNorm, invFreq: ropeInvFreq(cfg)}
	m.embed = l.matrix("model.embed_tokens.weight", cfg.VocabSize, hidden)
	m.norm = l.vector("model.norm.weight", hidden)
	m.lmHead = m.embed
	if !cfg.TieWordEmbeddings || l.has("lm_head.weight") {
		m.lmHead = l.matrix("lm_head.weight", cfg.VocabSize, hidden)
	}
	m.layers = make([]layer, cfg.NumHiddenLayers)
	for i := range m.layers {
		m.layers[i] = l.layer(fmt.Sprintf("model.layers.%d.", i), cfg, qkNorm)
	}
	if l.err != nil {
		return nil, fmt.Errorf("model: %s: %w", cfg.Architecture, l.err)
	}
	if p, ok := be.(metal.WeightPreparer); ok {
		for _, w := range m.matrices() {
			p.PrepareWeights(w)
		}
	}
	return m, nil
}

// layer reads the weights of one decoder layer whose tensor names start
// with p.
func (l *weightLoader) layer(p string, cfg *Config, qkNorm bool) layer {
	hidden, inter, q, kv := cfg.HiddenSize, cfg.IntermediateSize, cfg.QDim(), cfg.KVDim()
	ly := layer{
		attnNorm: l.vector(p+"input_layernorm.weight", hidden),
		wq:       l.matrix(p+"self_attn.q_proj.weight", q, hidden),
		wk:       l.matrix(p+"self_attn.k_proj.weight", kv, hidden),
		wv:       l.matrix(p+"self_attn.v_proj.weight", kv, hidden),
		wo:       l.matrix(p+"self_attn.o_proj.weight", hidden, q),
		mlpNorm:  l.vector(p+"post_attention_layernorm.weight", hidden),
		gate:     l.matrix(p+"mlp.gate_proj.weight", inter, hidden),
		up:       l.matrix(p+"mlp.up_proj.weight", inter, hidden),
		down:     l.matrix(p+"mlp.down_proj.weight", hidden, inter),
	}
	if qkNorm {
		ly.qNorm = l.vector(p+"self_attn.q_norm.weight", cfg.HeadDim)
		ly.kNorm = l.vector(p+"self_attn.k_norm.weight", cfg.HeadDim)
	}
	return ly
}

// matrices lists the weight matrices Forward passes to MatMul.
func (m *transformer) matrices() []*metal.Tensor {
	ws := []*metal.Tensor{m.lmHead}
	for i := range m.layers {
		ly := &m.layers[i]
		ws = append(ws, ly.wq, ly.wk, ly.wv, ly.wo, ly.gate, ly.up, ly.down)
	}
	return ws
}

func (m *transformer) Config() *Config { return m.cfg }

// CacheSpec declares every layer paged attention.
func (m *transformer) CacheSpec() CacheSpec { return DenseCache(m.cfg) }

func (m *transformer) NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache {
	layers, kvHeads, hd := m.cfg.NumHiddenLayers, m.cfg.NumKeyValueHeads, m.cfg.HeadDim
	if err := t.Check(blockSize, hd); err != nil {
		panic(err)
	}
	if km, ok := m.be.(metal.KVMemory); ok {
		buf := km.KVBuffer(metal.KVCacheElems(t, layers, numBlocks, blockSize, kvHeads, hd))
		return metal.NewKVCacheIn(buf, t, layers, numBlocks, blockSize, kvHeads, hd)
	}
	return metal.NewKVCache(t, layers, numBlocks, blockSize, kvHeads, hd)
}

// Forward runs the batch through every layer. All rows are flattened into
// one list of n tokens: the projections and the MLP run as n-row matrix
// products, attention runs per token over its own sequence's cached keys.
func (m *transformer) Forward(b *Batch, kv *metal.KVCache) ([]float32, error) {
	n, err := m.prepare(b, kv)
	if err != nil {
		return nil, err
	}
	if len(b.StateCopies) > 0 {
		return nil, fmt.Errorf("model: %s has no state layers to copy", m.cfg.Architecture)
	}
	if err := b.Features.prepare(b, m.cfg.NumHiddenLayers, m.cfg.HiddenSize); err != nil {
		return nil, err
	}
	if err := kv.CopyBlocks(b.Copies); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	cfg, be, r := m.cfg, m.be, &m.run
	hidden, qd, kvd, inter := cfg.HiddenSize, cfg.QDim(), cfg.KVDim(), cfg.IntermediateSize
	eps := float32(cfg.RMSNormEps)
	x, h, att := r.x[:n*hidden], r.h[:n*hidden], r.att[:n*qd]
	q, k, v := r.q[:n*qd], r.k[:n*kvd], r.v[:n*kvd]
	gate, up := r.gate[:n*inter], r.up[:n*inter]

	be.Embed(x, m.embed, r.tokens)
	for i := range m.layers {
		ly := &m.layers[i]
		// attention block: x += Wo · attn(rope(norm(Wq h)), rope(norm(Wk h)), Wv h), h = norm(x)
		be.RMSNorm(h, x, ly.attnNorm, hidden, eps)
		m.matMuls(h, n, metal.Product{Out: q, W: ly.wq}, metal.Product{Out: k, W: ly.wk}, metal.Product{Out: v, W: ly.wv})
		if m.qkNorm {
			be.RMSNorm(q, q, ly.qNorm, cfg.HeadDim, eps)
			be.RMSNorm(k, k, ly.kNorm, cfg.HeadDim, eps)
		}
		be.RoPE(q, r.pos, cfg.NumAttentionHeads, cfg.HeadDim, m.invFreq)
		be.RoPE(k, r.pos, cfg.NumKeyValueHeads, cfg.HeadDim, m.invFreq)
		be.WriteKV(&kv.Layers[i], k, v, r.slots)
		be.Attention(att, q, &kv.Layers[i], r.attnRows, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim)
		be.MatMul(h, att, n, ly.wo)
		be.Add(x, h)
		// MLP block: x += Wdown · (silu(Wgate h) ⊙ Wup h), h = norm(x)
		be.RMSNorm(h, x, ly.mlpNorm, hidden, eps)
		m.matMuls(h, n, metal.Product{Out: gate, W: ly.gate}, metal.Product{Out: up, W: ly.up})
		be.SiLUMul(gate, up)
		be.MatMul(h, gate, n, ly.down)
		be.Add(x, h)
		if b.Features != nil {
			b.Features.record(i, x, hidden)
		}
	}
	nw := len(r.want)
	if nw == 0 {
		return r.logits[:0], nil
	}
	y := r.y[:nw*hidden]
	for j, t := range r.want {
		copy(y[j*hidden:(j+1)*hidden], x[int(t)*hidden:(int(t)+1)*hidden])
	}
	be.RMSNorm(y, y, m.norm, hidden, eps)
	logits := r.logits[:nw*cfg.VocabSize]
	be.MatMul(logits, y, nw, m.lmHead)
	return logits, nil
}

// matMuls computes the products of one input (a layer's q, k and v; its
// gate and up) in one backend call where the backend can share their work.
func (m *transformer) matMuls(x []float32, rows int, ps ...metal.Product) {
	sharedMatMuls(m.be, m.run.products[:], x, rows, ps...)
}

// prepare validates the batch, flattens it into the run state and returns
// the number of tokens.
func (m *transformer) prepare(b *Batch, kv *metal.KVCache) (int, error) {
	if kv == nil || len(kv.Layers) != m.cfg.NumHiddenLayers ||
		kv.Layers[0].KVHeads != m.cfg.NumKeyValueHeads || kv.Layers[0].HeadDim != m.cfg.HeadDim {
		return 0, fmt.Errorf("model: KV cache does not match the model's layers and KV heads")
	}
	r := &m.run
	r.tokens, r.pos, r.slots, r.attnRows, r.want = r.tokens[:0], r.pos[:0], r.slots[:0], r.attnRows[:0], r.want[:0]
	for ri, row := range b.Rows {
		if len(row.Tokens) == 0 {
			return 0, fmt.Errorf("model: batch row %d has no tokens", ri)
		}
		if row.Logits < 0 || row.Logits > len(row.Tokens) {
			return 0, fmt.Errorf("model: batch row %d asks logits for %d of %d tokens", ri, row.Logits, len(row.Tokens))
		}
		if row.Start < 0 {
			return 0, fmt.Errorf("model: batch row %d starts at negative position %d", ri, row.Start)
		}
		if len(row.Images) > 0 {
			return 0, fmt.Errorf("model: batch row %d has images, but %s has no vision tower", ri, m.cfg.Architecture)
		}
		for j, tok := range row.Tokens {
			if tok < 0 || int(tok) >= m.cfg.VocabSize {
				return 0, fmt.Errorf("model: batch row %d: token %d out of vocabulary [0, %d)", ri, tok, m.cfg.VocabSize)
			}
			p := row.Start + j
			slot, err := kv.Slot(row.Blocks, p)
			if err != nil {
				return 0, fmt.Errorf("model: batch row %d: %w", ri, err)
			}
			if j >= len(row.Tokens)-row.Logits {
				r.want = append(r.want, int32(len(r.tokens)))
			}
			r.tokens = append(r.tokens, tok)
			r.pos = append(r.pos, int32(p))
			r.slots = append(r.slots, slot)
			r.attnRows = append(r.attnRows, metal.AttnRow{Pos: int32(p), Blocks: row.Blocks})
		}
	}
	n := len(r.tokens)
	c := m.cfg
	grow(&r.x, n*c.HiddenSize)
	grow(&r.h, n*c.HiddenSize)
	grow(&r.att, n*c.QDim())
	grow(&r.q, n*c.QDim())
	grow(&r.k, n*c.KVDim())
	grow(&r.v, n*c.KVDim())
	grow(&r.gate, n*c.IntermediateSize)
	grow(&r.up, n*c.IntermediateSize)
	grow(&r.y, len(r.want)*c.HiddenSize)
	grow(&r.logits, len(r.want)*c.VocabSize)
	return n, nil
}

// grow makes *s at least n long, reallocating only when it must.
func grow(s *[]float32, n int) {
	if cap(*s) < n {
		*s = make([]float32, n)
	}
	*s = (*s)[:cap(*s)]
}
