package model

import (
	"fmt"
	"math"

	"github.com/splash-inference/splash/metal"
)

// hybridRun is the scratch of one HybridModel.Forward, grown to the
// longest run seen and reused.
type hybridRun struct {
	tokens, pos, slots []int32
	posH, posW         []int32 // M-RoPE's height and width positions (pos is the temporal one), when mrope
	mrope              bool    // some token is an image's: the three positions differ
	attnRows           []metal.AttnRow
	want               []int32        // indices (into the flattened batch) whose logits are returned
	ends               []int          // each row's end in the flattened batch
	states             []*HybridState // each row's sequence state, during a call
	one                [1]Row         // ForwardState's batch
	oneState           [1]*HybridState
	oneBatch           Batch
	views              []HybridState // Forward's rows' states: views of their slots
	viewPtrs           []*HybridState

	x, h           []float32 // (n, hidden)
	qg             []float32 // (n, 2·q_dim): q_proj's interleaved queries and gates
	q, gate, att   []float32 // (n, q_dim)
	k, v           []float32 // (n, kv_dim)
	rot, rotK      []float32 // (n, heads·rotary_dim), (n, kv_heads·rotary_dim): the rotated parts of q and k
	qkvz, ba       []float32 // (n, qkv_dim+vh·dv), (n, 2·vh): Qwen3-Next's fused projections
	qkv            []float32 // (n, qkv_dim)
	z, core        []float32 // (n, vh·dv)
	b, a           []float32 // (n, vh)
	mlpGate, mlpUp []float32 // (n, intermediate)
	y, logits      []float32 // (logits, hidden), (logits, vocab)
	moe            moeRun
}

// ForwardState runs row's tokens of one sequence through the model: their keys
// and values go to kv (the full-attention layers' cache) through
// row.Blocks, and st, the sequence's linear-layer state, must be at
// row.Start; it is left at row.Start+len(row.Tokens). It returns the
// logits of the row's last row.Logits tokens, reused by the next call.
func (m *HybridModel) ForwardState(row Row, st *HybridState, kv *metal.KVCache) ([]float32, error) {
	r := &m.run
	r.one[0], r.oneState[0] = row, st
	r.oneBatch.Rows = r.one[:]
	logits, err := m.ForwardBatch(&r.oneBatch, r.oneState[:], kv)
	r.one[0], r.oneState[0] = Row{}, nil
	return logits, err
}

// ForwardBatch runs rows of different sequences in one pass, as
// Model.Forward does: states[i] is row i's sequence's state (at
// b.Rows[i].Start, one row per sequence), left after the row's tokens.
// The projections, attention and MLPs run over all the rows' tokens at
// once, the convolution and the delta rule row by row on each state, so a
// row's logits do not depend on the other rows. The logits come in row
// order, each row's positions in order, and are reused by the next call.
func (m *HybridModel) ForwardBatch(b *Batch, states []*HybridState, kv *metal.KVCache) ([]float32, error) {
	n, err := m.prepare(b, states, kv)
	if err != nil {
		return nil, err
	}
	defer clear(m.run.states)
	if err := b.Features.prepare(b, m.cfg.NumHiddenLayers, m.cfg.HiddenSize); err != nil {
		return nil, err
	}
	cfg, be, r := m.cfg, m.be, &m.run
	hidden, eps := cfg.HiddenSize, float32(cfg.RMSNormEps)
	x, h := r.x[:n*hidden], r.h[:n*hidden]
	be.Embed(x, m.embed, r.tokens)
	m.placeImages(x, b)
	for i := range m.layers {
		ly := &m.layers[i]
		be.RMSNorm(h, x, ly.inNorm, hidden, eps)
		if ly.attn != nil {
			m.attention(ly.attn, &kv.Layers[ly.slot], h, n)
		} else {
			m.deltaNet(ly.delta, ly.slot, h, n)
		}
		be.Add(x, h)
		// MLP block: x += Wdown · (silu(Wgate h) ⊙ Wup h), h = norm(x), or the experts'
		be.RMSNorm(h, x, ly.mlpNorm, hidden, eps)
		if ly.moe != nil {
			m.moe(ly.moe, h, n)
		} else {
			gate, up := r.mlpGate[:n*cfg.IntermediateSize], r.mlpUp[:n*cfg.IntermediateSize]
			be.MatMul(gate, h, n, ly.gate)
			be.MatMul(up, h, n, ly.up)
			be.SiLUMul(gate, up)
			be.MatMul(h, gate, n, ly.down)
		}
		be.Add(x, h)
		if b.Features != nil {
			b.Features.record(i, x, hidden)
		}
	}
	for i, row := range b.Rows {
		states[i].Pos += len(row.Tokens)
	}
	nl := len(r.want)
	if nl == 0 {
		return r.logits[:0], nil
	}
	y := r.y[:nl*hidden]
	for j, t := range r.want {
		copy(y[j*hidden:(j+1)*hidden], x[int(t)*hidden:(int(t)+1)*hidden])
	}
	be.RMSNorm(y, y, m.norm, hidden, eps)
	logits := r.logits[:nl*cfg.VocabSize]
	be.MatMul(logits, y, nl, m.lmHead)
	return logits, nil
}

// attention is Qwen3NextAttention.forward: q_proj gives each head's
// queries and output gate side by side; queries and keys get a
// zero-centred RMSNorm per head and partial RoPE; the attention output is
// multiplied by sigmoid(gate) before o_proj. h is the normed input and
// receives the output.
func (m *HybridModel) attention(a *gatedAttention, kv *metal.KVLayer, h []float32, n int) {
	cfg, be, r := m.cfg, m.be, &m.run
	heads, hd, qd, kvd := cfg.NumAttentionHeads, cfg.HeadDim, cfg.QDim(), cfg.KVDim()
	eps := float32(cfg.RMSNormEps)
	qg, q, gate, att := r.qg[:2*n*qd], r.q[:n*qd], r.gate[:n*qd], r.att[:n*qd]
	k, v := r.k[:n*kvd], r.v[:n*kvd]
	be.MatMul(qg, h, n, a.wq)
	be.MatMul(k, h, n, a.wk)
	be.MatMul(v, h, n, a.wv)
	for t := range n {
		for hh := range heads {
			src := qg[(t*heads+hh)*2*hd:]
			copy(q[(t*heads+hh)*hd:(t*heads+hh+1)*hd], src[:hd])
			copy(gate[(t*heads+hh)*hd:(t*heads+hh+1)*hd], src[hd:2*hd])
		}
	}
	be.RMSNorm(q, q, a.qNorm, hd, eps)
	be.RMSNorm(k, k, a.kNorm, hd, eps)
	m.partialRoPE(q, k, n)
	be.WriteKV(kv, k, v, r.slots)
	be.Attention(att, q, kv, r.attnRows, heads, cfg.NumKeyValueHeads, hd)
	for i, g := range gate {
		att[i] *= float32(1 / (1 + math.Exp(-float64(g))))
	}
	be.MatMul(h, att, n, a.wo)
}

// partialRoPE rotates the first rotary_dim dimensions of each head of q
// and k (n rows of heads×head_dim and kv_heads×head_dim) with the
// backend's RoPE, the rest unchanged: by the run's positions, or with
// images in the batch by each M-RoPE section's positions in turn (the
// other sections' frequencies zero), q and k alike per section so the
// backend's table of angles serves both.
func (m *HybridModel) partialRoPE(q, k []float32, n int) {
	cfg, r := m.cfg, &m.run
	hd, rd := cfg.HeadDim, 2*len(m.invFreq)
	heads, kvHeads := cfg.NumAttentionHeads, cfg.NumKeyValueHeads
	qr, kr := q, k
	if rd != hd {
		qr, kr = r.rot[:n*heads*rd], r.rotK[:n*kvHeads*rd]
		gatherRotary(qr, q, n*heads, hd, rd)
		gatherRotary(kr, k, n*kvHeads, hd, rd)
	}
	if !r.mrope {
		m.be.RoPE(qr, r.pos, heads, rd, m.invFreq)
		m.be.RoPE(kr, r.pos, kvHeads, rd, m.invFreq)
	} else {
		for s, pos := range [3][]int32{r.pos, r.posH, r.posW} {
			m.be.RoPE(qr, pos, heads, rd, m.mropeFreq[s])
			m.be.RoPE(kr, pos, kvHeads, rd, m.mropeFreq[s])
		}
	}
	if rd != hd {
		scatterRotary(q, qr, n*heads, hd, rd)
		scatterRotary(k, kr, n*kvHeads, hd, rd)
	}
}

// gatherRotary copies the first rd of each hd-wide head of x into rot.
func gatherRotary(rot, x []float32, heads, hd, rd int) {
	for i := range heads {
		copy(rot[i*rd:(i+1)*rd], x[i*hd:i*hd+rd])
	}
}

// scatterRotary is gatherRotary's inverse.
func scatterRotary(x, rot []float32, heads, hd, rd int) {
	for i := range heads {
		copy(x[i*hd:i*hd+rd], rot[i*rd:(i+1)*rd])
	}
}

// placeImages writes the images' embeddings over the pad tokens'
// embeddings in x, the batch's flattened rows.
func (m *HybridModel) placeImages(x []float32, b *Batch) {
	hidden, at := m.cfg.HiddenSize, 0
	for ri := range b.Rows {
		row := &b.Rows[ri]
		end := row.Start + len(row.Tokens)
		for i := range row.Images {
			s := &row.Images[i]
			lo, hi := max(s.Start, row.Start), min(s.End(), end)
			if lo < hi {
				copy(x[(at+lo-row.Start)*hidden:(at+hi-row.Start)*hidden], s.Embeds[(lo-s.Start)*hidden:(hi-s.Start)*hidden])
			}
		}
		at += len(row.Tokens)
	}
}

// deltaNet is Qwen3_5GatedDeltaNet.forward (Qwen3NextGatedDeltaNet's for
// the fused projections): project h to the mixed queries, keys and values,
// the output gate z and the gates' inputs b and a; convolve the mixed
// projection (causal conv1d + SiLU, conv carrying the last tokens'
// inputs); run the gated delta rule from state; normalise each value
// head gated by silu(z); out_proj into h.
func (m *HybridModel) deltaNet(d *deltaNet, slot int, h []float32, n int) {
	y, be, r := m.cfg.Hybrid, m.be, &m.run
	dims := y.DeltaDims()
	qd, vh, vd := dims.QKVDim(), dims.ValueHeads, dims.ValueHeads*dims.ValueDim
	qkv, z, b, a, core := r.qkv[:n*qd], r.z[:n*vd], r.b[:n*vh], r.a[:n*vh], r.core[:n*vd]
	if d.inQKVZ != nil {
		qkvz, ba := r.qkvz[:n*(qd+vd)], r.ba[:n*2*vh]
		be.MatMul(qkvz, h, n, d.inQKVZ)
		be.MatMul(ba, h, n, d.inBA)
		splitQKVZ(qkv, z, qkvz, n, dims)
		splitBA(b, a, ba, n, dims)
	} else {
		be.MatMul(qkv, h, n, d.inQKV)
		be.MatMul(z, h, n, d.inZ)
		be.MatMul(b, h, n, d.inB)
		be.MatMul(a, h, n, d.inA)
	}
	m.la.DeltaGates(a, b, a, b, d.aLog, d.dtBias, n, vh)
	start := 0
	for i, end := range r.ends {
		st, rows := r.states[i], end-start
		x := qkv[start*qd : end*qd]
		m.la.CausalConv1D(x, x, st.Conv[slot], d.conv, rows, qd, y.LinearConvKernelDim)
		m.la.GatedDeltaRule(core[start*vd:end*vd], x, a[start*vh:end*vh], b[start*vh:end*vh], st.Delta[slot], rows, dims)
		start = end
	}
	m.la.GatedRMSNorm(core, core, z, d.norm, dims.ValueDim, float32(m.cfg.RMSNormEps))
	be.MatMul(h, core, n, d.out)
}

// splitQKVZ undoes Qwen3-Next's grouping of in_proj_qkvz
// (fix_query_key_value_ordering): each row holds, per key head g, its
// query and key (KeyDim each), then the values and z of its
// ValueHeads/KeyHeads value heads; qkv gets every query, every key and
// every value head in order, z every value head's gate.
func splitQKVZ(qkv, z, qkvz []float32, n int, d metal.DeltaDims) {
	kd, r := d.KeyDim, d.ValueHeads/d.KeyHeads
	rv := r * d.ValueDim
	group, qd, vd := 2*kd+2*rv, d.QKVDim(), d.ValueHeads*d.ValueDim
	for t := range n {
		src, dst, zt := qkvz[t*(qd+vd):(t+1)*(qd+vd)], qkv[t*qd:(t+1)*qd], z[t*vd:(t+1)*vd]
		for g := range d.KeyHeads {
			s := src[g*group : (g+1)*group]
			copy(dst[g*kd:(g+1)*kd], s[:kd])
			copy(dst[(d.KeyHeads+g)*kd:(d.KeyHeads+g+1)*kd], s[kd:2*kd])
			copy(dst[2*d.KeyHeads*kd+g*rv:][:rv], s[2*kd:2*kd+rv])
			copy(zt[g*rv:(g+1)*rv], s[2*kd+rv:])
		}
	}
}

// splitBA undoes in_proj_ba's grouping: per key head, the b then the a of
// its ValueHeads/KeyHeads value heads.
func splitBA(b, a, ba []float32, n int, d metal.DeltaDims) {
	r, vh := d.ValueHeads/d.KeyHeads, d.ValueHeads
	for t := range n {
		src := ba[t*2*vh : (t+1)*2*vh]
		for g := range d.KeyHeads {
			copy(b[t*vh+g*r:t*vh+(g+1)*r], src[2*g*r:(2*g+1)*r])
			copy(a[t*vh+g*r:t*vh+(g+1)*r], src[(2*g+1)*r:(2*g+2)*r])
		}
	}
}

// prepare validates a ForwardBatch call, fills the run's tokens,
// positions, cache slots, row ends and states and returns the number of
// tokens.
func (m *HybridModel) prepare(b *Batch, states []*HybridState, kv *metal.KVCache) (int, error) {
	cfg, r := m.cfg, &m.run
	y := cfg.Hybrid
	if len(states) != len(b.Rows) {
		return 0, fmt.Errorf("model: hybrid batch of %d rows with %d states", len(b.Rows), len(states))
	}
	if m.kvLayers > 0 && (kv == nil || len(kv.Layers) != m.kvLayers ||
		kv.Layers[0].KVHeads != cfg.NumKeyValueHeads || kv.Layers[0].HeadDim != cfg.HeadDim) {
		return 0, fmt.Errorf("model: KV cache does not match the model's %d attention layers and KV heads", m.kvLayers)
	}
	r.tokens, r.pos, r.slots, r.attnRows = r.tokens[:0], r.pos[:0], r.slots[:0], r.attnRows[:0]
	r.posH, r.posW, r.mrope = r.posH[:0], r.posW[:0], false
	r.want, r.ends, r.states = r.want[:0], r.ends[:0], r.states[:0]
	for ri, row := range b.Rows {
		st := states[ri]
		if err := m.checkRow(row, st); err != nil {
			return 0, fmt.Errorf("model: hybrid batch row %d: %w", ri, err)
		}
		for _, other := range states[:ri] {
			if other == st {
				return 0, fmt.Errorf("model: hybrid batch row %d: its state is another row's (one row per sequence)", ri)
			}
		}
		r.pos, r.posH, r.posW = m.rowPositions(&b.Rows[ri])
		for j, tok := range row.Tokens {
			p := row.Start + j
			if m.kvLayers > 0 {
				slot, err := kv.Slot(row.Blocks, p)
				if err != nil {
					return 0, fmt.Errorf("model: hybrid batch row %d: %w", ri, err)
				}
				r.slots = append(r.slots, slot)
			}
			if j >= len(row.Tokens)-row.Logits {
				r.want = append(r.want, int32(len(r.tokens)))
			}
			r.tokens = append(r.tokens, tok)
			r.attnRows = append(r.attnRows, metal.AttnRow{Pos: int32(p), Blocks: row.Blocks})
		}
		r.ends = append(r.ends, len(r.tokens))
		r.states = append(r.states, st)
	}
	n := len(r.tokens)
	if n == 0 {
		return 0, fmt.Errorf("model: hybrid batch has no tokens")
	}
	d := y.DeltaDims()
	qd, vd, vh := d.QKVDim(), d.ValueHeads*d.ValueDim, d.ValueHeads
	for _, s := range []struct {
		buf *[]float32
		n   int
	}{
		{&r.x, cfg.HiddenSize}, {&r.h, cfg.HiddenSize}, {&r.qg, 2 * cfg.QDim()}, {&r.q, cfg.QDim()},
		{&r.gate, cfg.QDim()}, {&r.att, cfg.QDim()}, {&r.k, cfg.KVDim()}, {&r.v, cfg.KVDim()},
		{&r.rot, cfg.NumAttentionHeads * y.RotaryDim(cfg.HeadDim)}, {&r.rotK, cfg.NumKeyValueHeads * y.RotaryDim(cfg.HeadDim)}, {&r.qkvz, qd + vd}, {&r.ba, 2 * vh},
		{&r.qkv, qd}, {&r.z, vd}, {&r.core, vd}, {&r.b, vh}, {&r.a, vh},
		{&r.mlpGate, cfg.IntermediateSize}, {&r.mlpUp, cfg.IntermediateSize},
	} {
		grow(s.buf, n*s.n)
	}
	grow(&r.y, len(r.want)*cfg.HiddenSize)
	grow(&r.logits, len(r.want)*cfg.VocabSize)
	r.moe.grow(cfg, n)
	return n, nil
}

// checkRow checks one row of a batch against its sequence's state.
func (m *HybridModel) checkRow(row Row, st *HybridState) error {
	y, n := m.cfg.Hybrid, len(row.Tokens)
	switch {
	case n == 0:
		return fmt.Errorf("no tokens")
	case row.Logits < 0 || row.Logits > n:
		return fmt.Errorf("asks logits for %d of %d tokens", row.Logits, n)
	case st == nil || len(st.Conv) != m.linearLayers || len(st.Delta) != m.linearLayers:
		return fmt.Errorf("state does not match the model's %d linear layers", m.linearLayers)
	case row.Start != st.Pos:
		return fmt.Errorf("starts at position %d, its state is at %d (a linear layer's state cannot be rewound)", row.Start, st.Pos)
	}
	for i := range st.Conv {
		if len(st.Conv[i]) != y.ConvStateLen() || len(st.Delta[i]) != y.DeltaDims().StateLen() {
			return fmt.Errorf("state of linear layer %d has %d+%d floats, want %d+%d",
				i, len(st.Conv[i]), len(st.Delta[i]), y.ConvStateLen(), y.DeltaDims().StateLen())
		}
	}
	for _, tok := range row.Tokens {
		if tok < 0 || int(tok) >= m.cfg.VocabSize {
			return fmt.Errorf("token %d out of vocabulary [0, %d)", tok, m.cfg.VocabSize)
		}
	}
	if len(row.Images) == 0 {
		return nil
	}
	if m.cfg.Vision == nil {
		return fmt.Errorf("has images, but %s has no vision tower", m.cfg.Architecture)
	}
	return checkImages(&row, m.cfg.HiddenSize, int32(m.cfg.Vision.ImageTokenID))
}

// rowPositions appends row's rotary positions to the run's: its sequence
// positions, or with images the M-RoPE ones (ropePositions).
func (m *HybridModel) rowPositions(row *Row) (t, h, w []int32) {
	r := &m.run
	if len(row.Images) == 0 {
		for j := range row.Tokens {
			p := int32(row.Start + j)
			r.pos, r.posH, r.posW = append(r.pos, p), append(r.posH, p), append(r.posW, p)
		}
		return r.pos, r.posH, r.posW
	}
	t, h, w, image := ropePositions(r.pos, r.posH, r.posW, row)
	r.mrope = r.mrope || image
	return t, h, w
}
