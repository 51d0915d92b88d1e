package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/splash-inference/splash/metal"
)

// moeBlock is a mixture-of-experts MLP, Qwen3NextSparseMoeBlock
// (transformers, models/qwen3_next/modeling_qwen3_next.py; Qwen3.5-MoE's
// is the same block):
//
//	p = softmax(router · h); E = the num_experts_per_tok largest p_e
//	w_e = p_e, divided by Σ_{e∈E} p_e when norm_topk_prob (always for Qwen3.5-MoE)
//	out = Σ_{e∈E} w_e · down_e(silu(gate_e h) ⊙ up_e h) + sigmoid(shared_gate · h) · shared(h)
//
// where shared is a SwiGLU MLP of shared_expert_intermediate_size.
type moeBlock struct {
	router     *metal.Tensor // (experts, hidden)
	experts    []expert
	shared     expert
	sharedGate *metal.Tensor // (1, hidden)
}

// expert is one SwiGLU MLP's weights.
type expert struct {
	gate, up *metal.Tensor // (intermediate, hidden)
	down     *metal.Tensor // (hidden, intermediate)
}

// loadMoE reads a layer's experts, either one tensor per expert and
// projection (mlp.experts.N.gate_proj.weight: Qwen3-Next's checkpoints)
// or fused (mlp.experts.gate_up_proj (experts, 2·intermediate, hidden) and
// mlp.experts.down_proj (experts, hidden, intermediate): Qwen3.5-MoE's and
// transformers v5's), which each expert reads in place.
func loadMoE(l *weightLoader, cfg *Config, p string) *moeBlock {
	y, hidden := cfg.Hybrid, cfg.HiddenSize
	in, si := y.MoEIntermediateSize, y.SharedExpertIntermediateSize
	m := &moeBlock{
		router:     l.matrix(p+"gate.weight", y.NumExperts, hidden),
		shared:     loadExpert(l, p+"shared_expert.", si, hidden),
		sharedGate: l.matrix(p+"shared_expert_gate.weight", 1, hidden),
		experts:    make([]expert, y.NumExperts),
	}
	if !l.has(p + "experts.gate_up_proj") {
		for e := range m.experts {
			m.experts[e] = loadExpert(l, fmt.Sprintf("%sexperts.%d.", p, e), in, hidden)
		}
		return m
	}
	gateUp := l.matrix(p+"experts.gate_up_proj", y.NumExperts*2*in, hidden)
	down := l.matrix(p+"experts.down_proj", y.NumExperts*hidden, in)
	for e := range m.experts {
		x := &m.experts[e]
		x.gate = l.rows(p+"experts.gate_up_proj", gateUp, 2*e*in, (2*e+1)*in)
		x.up = l.rows(p+"experts.gate_up_proj", gateUp, (2*e+1)*in, (2*e+2)*in)
		x.down = l.rows(p+"experts.down_proj", down, e*hidden, (e+1)*hidden)
	}
	return m
}

func loadExpert(l *weightLoader, p string, inter, hidden int) expert {
	return expert{
		gate: l.matrix(p+"gate_proj.weight", inter, hidden),
		up:   l.matrix(p+"up_proj.weight", inter, hidden),
		down: l.matrix(p+"down_proj.weight", hidden, inter),
	}
}

// rows returns rows [r0, r1) of t, a matrix read as is from the named
// tensor, as a tensor over the same bytes. Quantized tensors keep their
// scales apart from their rows, so only float ones can be cut.
func (l *weightLoader) rows(name string, t *metal.Tensor, r0, r1 int) *metal.Tensor {
	if l.err != nil || t == nil {
		return nil
	}
	var size int
	switch t.DType {
	case metal.F32:
		size = 4
	case metal.F16, metal.BF16:
		size = 2
	default:
		l.err = fmt.Errorf("tensor %s is %s: fused experts must be f32, f16 or bf16", name, t.DType)
		return nil
	}
	row := size * t.Cols
	return &metal.Tensor{DType: t.DType, Rows: r1 - r0, Cols: t.Cols, Data: t.Data[r0*row : r1*row : r1*row]}
}

// matrices lists the block's weight matrices.
func (m *moeBlock) matrices() []*metal.Tensor {
	ws := []*metal.Tensor{m.router, m.sharedGate, m.shared.gate, m.shared.up, m.shared.down}
	for _, e := range m.experts {
		ws = append(ws, e.gate, e.up, e.down)
	}
	return ws
}

// moeRun is the scratch of a mixture-of-experts block.
type moeRun struct {
	probs    []float32       // (n, experts): router logits
	picks    []moePick       // (n·k), sorted by expert then row
	xe, ye   []float32       // (n, hidden): one expert's rows in, out
	ge, ue   []float32       // (n, max(moe, shared intermediate))
	acc      []float32       // (n, hidden)
	shGate   []float32       // (n)
	byScore  []int32         // (experts): a row's experts, best first
	products []metal.Product // (2·max(1, num_experts_per_tok)): one shared-input call's products
}

// grow makes the scratch hold a block's run over n rows of cfg's model.
func (r *moeRun) grow(cfg *Config, n int) {
	y := cfg.Hybrid
	inter := max(y.MoEIntermediateSize, y.SharedExpertIntermediateSize)
	for _, s := range []struct {
		buf *[]float32
		n   int
	}{
		{&r.probs, y.NumExperts}, {&r.xe, cfg.HiddenSize}, {&r.ye, cfg.HiddenSize}, {&r.acc, cfg.HiddenSize},
		{&r.shGate, 1},
	} {
		grow(s.buf, n*s.n)
	}
	// A one-row step holds all its experts' gates and ups at once.
	grow(&r.ge, max(n, y.NumExpertsPerTok)*inter)
	grow(&r.ue, max(n, y.NumExpertsPerTok)*inter)
	if len(r.products) < 2*max(1, y.NumExpertsPerTok) {
		r.products = make([]metal.Product, 2*max(1, y.NumExpertsPerTok))
	}
	if len(r.byScore) < y.NumExperts {
		r.byScore = make([]int32, y.NumExperts)
	}
}

// moePick is one (row, expert) routing choice with its weight.
type moePick struct {
	expert, row int32
	weight      float32
}

// moe runs the block on the n rows of h (normed input) and leaves the
// output in h. Each active expert runs once over the rows routed to it;
// a row's expert outputs are added in expert order, so a row's result
// does not depend on the other rows.
func (m *HybridModel) moe(b *moeBlock, h []float32, n int) {
	cfg, be, r := m.cfg, m.be, &m.run.moe
	y, hidden := cfg.Hybrid, cfg.HiddenSize
	ne, k := y.NumExperts, y.NumExpertsPerTok
	logits := r.probs[:n*ne]
	be.MatMul(logits, h, n, b.router)
	r.picks = r.picks[:0]
	for t := range n {
		r.picks = route(r.picks, logits[t*ne:(t+1)*ne], r.byScore[:ne], t, k, y.NormTopKProb)
	}
	slices.SortFunc(r.picks, func(a, c moePick) int {
		if a.expert != c.expert {
			return int(a.expert - c.expert)
		}
		return int(a.row - c.row)
	})
	acc := r.acc[:n*hidden]
	clear(acc)
	if n == 1 {
		m.oneRowExperts(b, h, acc)
	}
	for i := 0; n > 1 && i < len(r.picks); {
		e := r.picks[i].expert
		j := i
		for j < len(r.picks) && r.picks[j].expert == e {
			j++
		}
		rows := r.picks[i:j]
		xe := r.xe[:len(rows)*hidden]
		for q, p := range rows {
			copy(xe[q*hidden:(q+1)*hidden], h[int(p.row)*hidden:(int(p.row)+1)*hidden])
		}
		ye := m.swiGLU(&b.experts[e], xe, len(rows), y.MoEIntermediateSize)
		for q, p := range rows {
			o, src := acc[int(p.row)*hidden:(int(p.row)+1)*hidden], ye[q*hidden:(q+1)*hidden]
			for c := range o {
				o[c] += p.weight * src[c]
			}
		}
		i = j
	}
	sg := r.shGate[:n]
	be.MatMul(sg, h, n, b.sharedGate)
	sh := m.swiGLU(&b.shared, h, n, y.SharedExpertIntermediateSize)
	for t := range n {
		gate := float32(1 / (1 + math.Exp(-float64(sg[t]))))
		o, src := h[t*hidden:(t+1)*hidden], sh[t*hidden:(t+1)*hidden]
		for c := range o {
			o[c] = acc[t*hidden+c] + gate*src[c]
		}
	}
}

// oneRowExperts adds a one-row step's experts' outputs (r.picks, in
// expert order) to acc, as the grouped loop does, but with every expert's
// gate and up projection of the row in one shared-input call and one
// SiLUMul: a decode step of one sequence makes a few small products per
// expert, whose calls cost more than their weights' reading otherwise.
func (m *HybridModel) oneRowExperts(b *moeBlock, h, acc []float32) {
	r, inter := &m.run.moe, m.cfg.Hybrid.MoEIntermediateSize
	k := len(r.picks)
	g, u, ps := r.ge[:k*inter], r.ue[:k*inter], r.products[:2*k]
	for q, p := range r.picks {
		e := &b.experts[p.expert]
		ps[2*q] = metal.Product{Out: g[q*inter : (q+1)*inter], W: e.gate}
		ps[2*q+1] = metal.Product{Out: u[q*inter : (q+1)*inter], W: e.up}
	}
	if sm, ok := m.be.(metal.SharedInputMatMul); ok {
		sm.MatMuls(h, 1, ps)
	} else {
		for _, p := range ps {
			m.be.MatMul(p.Out, h, 1, p.W)
		}
	}
	m.be.SiLUMul(g, u)
	ye := r.ye[:m.cfg.HiddenSize]
	for q, p := range r.picks {
		m.be.MatMul(ye, g[q*inter:(q+1)*inter], 1, b.experts[p.expert].down)
		for c := range acc {
			acc[c] += p.weight * ye[c]
		}
	}
}

// swiGLU computes down(silu(gate x) ⊙ up x) for rows rows of x into the
// run's ye.
func (m *HybridModel) swiGLU(e *expert, x []float32, rows, inter int) []float32 {
	r := &m.run.moe
	g, u, out := r.ge[:rows*inter], r.ue[:rows*inter], r.ye[:rows*m.cfg.HiddenSize]
	sharedMatMuls(m.be, r.products, x, rows, metal.Product{Out: g, W: e.gate}, metal.Product{Out: u, W: e.up})
	m.be.SiLUMul(g, u)
	m.be.MatMul(out, g, rows, e.down)
	return out
}

// route appends row t's k picks: the softmax of its router logits (in
// float64), the k most probable experts (the lower index first among
// equals), renormalised to sum 1 when norm is set.
func route(picks []moePick, logits []float32, order []int32, t, k int, norm bool) []moePick {
	mx := float64(slices.Max(logits))
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	for e := range order {
		order[e] = int32(e)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case logits[a] > logits[b]:
			return -1
		case logits[a] < logits[b]:
			return 1
		}
		return 0
	})
	var kept float64
	for _, e := range order[:k] {
		kept += math.Exp(float64(logits[e])-mx) / sum
	}
	for _, e := range order[:k] {
		p := math.Exp(float64(logits[e])-mx) / sum
		if norm {
			p /= kept
		}
		picks = append(picks, moePick{expert: e, row: int32(t), weight: float32(p)})
	}
	return picks
}
