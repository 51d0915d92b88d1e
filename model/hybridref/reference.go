// Package hybridref is the tests' float64 reference of the hybrid text
// models (Qwen3.5, Qwen3-Next, Qwen3.5-MoE): a forward pass over a whole
// sequence written from transformers' modeling_qwen3_next.py and
// modular_qwen3_5.py without the backend or the model's code, random
// weights to feed both, small configs of each layout, and random
// checkpoints on disk, so that the model package's tests and the command
// line's can compare against one reference.
package hybridref

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// Tensors is a set of weights in memory (model.Tensors).
type Tensors map[string]*metal.Tensor

// Tensor returns the named tensor.
func (m Tensors) Tensor(name string) (*metal.Tensor, error) {
	t, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s not found", name)
	}
	return t, nil
}

// Names lists the tensors, in no particular order.
func (m Tensors) Names() []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	return names
}

// Close does nothing.
func (m Tensors) Close() error { return nil }

// Weights are the exact values of the same weights, in float64.
type Weights map[string][]float64

// hybridWeights draws random weights for a hybrid cfg: matrices stored as
// d, the vectors (norms, A_log, dt_bias) and the convolution in float32.
// The reference gets their exact values.
type hybridWeights struct {
	rng *rand.Rand
	d   metal.DType
	mt  Tensors
	rw  Weights // nil: the exact values are not kept
}

func (g *hybridWeights) put(name string, rows, cols int, d metal.DType, draw func() float64) {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = float32(draw())
	}
	t, err := metal.Quantize(d, v, rows, cols)
	if err != nil {
		panic(err)
	}
	g.mt[name] = t
	if g.rw == nil {
		return
	}
	exact := t.Dequantize()
	g.rw[name] = make([]float64, len(exact))
	for i, x := range exact {
		g.rw[name][i] = float64(x)
	}
}

func (g *hybridWeights) matrix(name string, rows, cols int, std float64) {
	g.put(name, rows, cols, g.d, func() float64 { return std * g.rng.NormFloat64() })
}

func (g *hybridWeights) vector(name string, n int, draw func() float64) {
	g.put(name, 1, n, metal.F32, draw)
}

// Random draws weights for cfg, matrices stored as d, vectors and the
// convolution as float32: the tensors a model loads and their exact
// values for Forward.
func Random(cfg *model.Config, d metal.DType, seed uint64) (Tensors, Weights) {
	g := &hybridWeights{rng: rand.New(rand.NewPCG(seed, 77)), d: d, mt: Tensors{}, rw: Weights{}}
	g.draw(cfg)
	return g.mt, g.rw
}

// RandomTensors is Random's tensors without their exact values: for
// models too large to hold in float64 (the benchmarks' real shapes).
func RandomTensors(cfg *model.Config, d metal.DType, seed uint64) Tensors {
	g := &hybridWeights{rng: rand.New(rand.NewPCG(seed, 77)), d: d, mt: Tensors{}}
	g.draw(cfg)
	return g.mt
}

// draw draws every tensor of cfg.
func (g *hybridWeights) draw(cfg *model.Config) {
	y, p := cfg.Hybrid, cfg.Hybrid.TextPrefix
	h, hd, in := cfg.HiddenSize, cfg.HeadDim, cfg.IntermediateSize
	dims := y.DeltaDims()
	qkv, vd, vh := dims.QKVDim(), dims.ValueHeads*dims.ValueDim, dims.ValueHeads
	centred := func() float64 { return 0.2 * g.rng.NormFloat64() } // zero-centred norms: scale 1+w
	g.matrix(p+"embed_tokens.weight", cfg.VocabSize, h, 1)
	g.vector(p+"norm.weight", h, centred)
	if !cfg.TieWordEmbeddings {
		g.matrix("lm_head.weight", cfg.VocabSize, h, 0.2)
	}
	for i := range cfg.NumHiddenLayers {
		lp := fmt.Sprintf("%slayers.%d.", p, i)
		g.vector(lp+"input_layernorm.weight", h, centred)
		g.vector(lp+"post_attention_layernorm.weight", h, centred)
		if y.IsMoE(i) {
			g.experts(cfg, lp+"mlp.")
		} else {
			g.matrix(lp+"mlp.gate_proj.weight", in, h, 0.2)
			g.matrix(lp+"mlp.up_proj.weight", in, h, 0.2)
			g.matrix(lp+"mlp.down_proj.weight", h, in, 0.1)
		}
		if !y.IsLinear(i) {
			a := lp + "self_attn."
			g.matrix(a+"q_proj.weight", 2*cfg.QDim(), h, 0.3)
			g.matrix(a+"k_proj.weight", cfg.KVDim(), h, 0.3)
			g.matrix(a+"v_proj.weight", cfg.KVDim(), h, 0.3)
			g.matrix(a+"o_proj.weight", h, cfg.QDim(), 0.2)
			g.vector(a+"q_norm.weight", hd, centred)
			g.vector(a+"k_norm.weight", hd, centred)
			continue
		}
		l := lp + "linear_attn."
		if y.ModelType == "qwen3_next" {
			g.matrix(l+"in_proj_qkvz.weight", qkv+vd, h, 0.3)
			g.matrix(l+"in_proj_ba.weight", 2*vh, h, 0.5)
		} else {
			g.matrix(l+"in_proj_qkv.weight", qkv, h, 0.3)
			g.matrix(l+"in_proj_z.weight", vd, h, 0.3)
			g.matrix(l+"in_proj_b.weight", vh, h, 0.5)
			g.matrix(l+"in_proj_a.weight", vh, h, 0.5)
		}
		g.put(l+"conv1d.weight", qkv, y.LinearConvKernelDim, metal.F32, func() float64 { return 0.5 * g.rng.NormFloat64() })
		// A = e^A_log in [0.5, 8]: decays from strong to weak across heads.
		g.vector(l+"A_log", vh, func() float64 { return math.Log(0.5 + 7.5*g.rng.Float64()) })
		g.vector(l+"dt_bias", vh, func() float64 { return -1 + 0.5*g.rng.NormFloat64() })
		g.vector(l+"norm.weight", dims.ValueDim, func() float64 { return 1 + 0.2*g.rng.NormFloat64() })
		g.matrix(l+"out_proj.weight", h, vd, 0.3)
	}
}

// experts draws a mixture-of-experts block: router, shared expert and its
// gate, and the experts, fused (gate_up_proj, down_proj: Qwen3.5-MoE's
// layout) or one tensor per expert and projection (Qwen3-Next's, and
// Qwen3.5-MoE's quantized, as splash pack stores them: a quantized
// tensor's rows cannot be cut apart in place).
func (g *hybridWeights) experts(cfg *model.Config, p string) {
	y, h := cfg.Hybrid, cfg.HiddenSize
	in, si := y.MoEIntermediateSize, y.SharedExpertIntermediateSize
	g.matrix(p+"gate.weight", y.NumExperts, h, 0.5)
	g.matrix(p+"shared_expert.gate_proj.weight", si, h, 0.2)
	g.matrix(p+"shared_expert.up_proj.weight", si, h, 0.2)
	g.matrix(p+"shared_expert.down_proj.weight", h, si, 0.1)
	g.matrix(p+"shared_expert_gate.weight", 1, h, 0.3)
	if y.ModelType == "qwen3_5_moe" && !g.d.Quantized() {
		g.matrix(p+"experts.gate_up_proj", y.NumExperts*2*in, h, 0.2)
		g.matrix(p+"experts.down_proj", y.NumExperts*h, in, 0.2)
		return
	}
	for e := range y.NumExperts {
		ep := fmt.Sprintf("%sexperts.%d.", p, e)
		g.matrix(ep+"gate_proj.weight", in, h, 0.2)
		g.matrix(ep+"up_proj.weight", in, h, 0.2)
		g.matrix(ep+"down_proj.weight", h, in, 0.2)
	}
}

// refMoE is Qwen3NextSparseMoeBlock on one normed row m: softmax over the
// router's logits, the top-k experts' SwiGLU outputs weighted by their
// probabilities (divided by the top-k's sum when norm_topk_prob), plus
// the shared expert's output times sigmoid of its gate. Fused expert
// tensors are read as transformers' Qwen3NextExperts does: expert e's
// gate is rows [2eI, 2eI+I) of gate_up_proj, its up the next I rows, its
// down rows [eH, eH+H) of down_proj.
func refMoE(cfg *model.Config, w Weights, p string, m []float64) []float64 {
	y, hsz := cfg.Hybrid, cfg.HiddenSize
	in, si := y.MoEIntermediateSize, y.SharedExpertIntermediateSize
	row := func(W []float64, r int, x []float64) float64 {
		var s float64
		for i, xi := range x {
			s += W[r*len(x)+i] * xi
		}
		return s
	}
	// mlp computes down(silu(gate·x) ⊙ up·x) from rows g0.., u0.., d0.. of G, U, D.
	mlp := func(G, U, D []float64, g0, u0, d0, inter int, x []float64) []float64 {
		act := make([]float64, inter)
		for i := range act {
			a := row(G, g0+i, x)
			act[i] = a / (1 + math.Exp(-a)) * row(U, u0+i, x)
		}
		o := make([]float64, hsz)
		for c := range o {
			o[c] = row(D, d0+c, act)
		}
		return o
	}
	probs := make([]float64, y.NumExperts)
	var sum float64
	for e := range probs {
		probs[e] = math.Exp(row(w[p+"gate.weight"], e, m))
		sum += probs[e]
	}
	chosen := make([]bool, y.NumExperts)
	var picked []int
	var kept float64
	for range y.NumExpertsPerTok {
		best := -1
		for e := range probs {
			if !chosen[e] && (best < 0 || probs[e] > probs[best]) {
				best = e
			}
		}
		chosen[best] = true
		picked = append(picked, best)
		kept += probs[best] / sum
	}
	out := make([]float64, hsz)
	for _, e := range picked {
		wt := probs[e] / sum
		if y.NormTopKProb {
			wt /= kept
		}
		var o []float64
		if gu, ok := w[p+"experts.gate_up_proj"]; ok {
			o = mlp(gu, gu, w[p+"experts.down_proj"], 2*e*in, 2*e*in+in, e*hsz, in, m)
		} else {
			ep := fmt.Sprintf("%sexperts.%d.", p, e)
			o = mlp(w[ep+"gate_proj.weight"], w[ep+"up_proj.weight"], w[ep+"down_proj.weight"], 0, 0, 0, in, m)
		}
		for c := range out {
			out[c] += wt * o[c]
		}
	}
	sh := mlp(w[p+"shared_expert.gate_proj.weight"], w[p+"shared_expert.up_proj.weight"], w[p+"shared_expert.down_proj.weight"], 0, 0, 0, si, m)
	gate := 1 / (1 + math.Exp(-row(w[p+"shared_expert_gate.weight"], 0, m)))
	for c := range out {
		out[c] += gate * sh[c]
	}
	return out
}

// Forward returns the logits (float64) at every position of tokens, run
// from position 0; the full-attention layers' keys and values are rounded
// as a cache of type kv stores them (f32 or f16).
func Forward(cfg *model.Config, w Weights, tokens []int32, kv metal.KVType) [][]float64 {
	logits, _ := forward(cfg, w, tokens, nil, kv, nil)
	return logits
}

// ForwardFeatures is Forward that also returns, at every position, the
// outputs of layers (the residual stream after each one's MLP, Hugging
// Face's hidden_states[layer+1]) concatenated in their order: a DFlash
// draft's context features.
func ForwardFeatures(cfg *model.Config, w Weights, tokens []int32, kv metal.KVType, layers []int) (logits, feats [][]float64) {
	return forward(cfg, w, tokens, nil, kv, layers)
}

// ForwardImages is Forward for a prompt with images, as
// Qwen3_5Model.forward takes them: the image pad tokens' embeddings
// replaced by the images' (masked_scatter: the pad tokens in order take
// the images' rows in order) and 3-D M-RoPE positions (RopeIndex).
func ForwardImages(cfg *model.Config, w Weights, tokens []int32, images []Image, kv metal.KVType) [][]float64 {
	logits, _ := forward(cfg, w, tokens, images, kv, nil)
	return logits
}

// forward runs the model over tokens with their images, returning the
// logits and the features of layers at every position.
func forward(cfg *model.Config, w Weights, tokens []int32, images []Image, kv metal.KVType, layers []int) (logits, feats [][]float64) {
	var round func(float32) float32
	switch kv {
	case metal.KVF32:
		round = func(v float32) float32 { return v }
	case metal.KVF16:
		round = func(v float32) float32 { return metal.F16ToF32(metal.F32ToF16(v)) }
	default:
		panic(fmt.Sprintf("hybridref: no reference for a %s cache", kv))
	}
	y, p := cfg.Hybrid, cfg.Hybrid.TextPrefix
	hsz, eps := cfg.HiddenSize, cfg.RMSNormEps
	n := len(tokens)
	lin, rmsNorm := refLinearOf(w), refNormOf(eps)
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	xs := make([][]float64, n)
	feats = make([][]float64, n)
	E := w[p+"embed_tokens.weight"]
	for t, tok := range tokens {
		xs[t] = append([]float64(nil), E[int(tok)*hsz:(int(tok)+1)*hsz]...)
	}
	var embeds []float64
	for _, img := range images {
		embeds = append(embeds, img.Embeds...)
	}
	for t, tok := range tokens {
		if len(images) > 0 && int(tok) == cfg.Vision.ImageTokenID {
			copy(xs[t], embeds[:hsz])
			embeds = embeds[hsz:]
		}
	}
	positions := RopeIndex(cfg, tokens, images)
	for l := range cfg.NumHiddenLayers {
		lp := fmt.Sprintf("%slayers.%d.", p, l)
		normed := make([][]float64, n)
		for t := range xs {
			normed[t] = rmsNorm(xs[t], w[lp+"input_layernorm.weight"], true)
		}
		var mixed [][]float64
		if y.IsLinear(l) {
			mixed = refGatedDeltaNet(cfg, w, lp+"linear_attn.", normed, rmsNorm)
		} else {
			mixed = refGatedAttention(cfg, w, lp+"self_attn.", normed, positions, lin, rmsNorm, round)
		}
		for t := range xs {
			for i := range xs[t] {
				xs[t][i] += mixed[t][i]
			}
			m := rmsNorm(xs[t], w[lp+"post_attention_layernorm.weight"], true)
			if y.IsMoE(l) {
				for i, v := range refMoE(cfg, w, lp+"mlp.", m) {
					xs[t][i] += v
				}
				continue
			}
			g := lin(lp+"mlp.gate_proj.weight", m, cfg.IntermediateSize)
			u := lin(lp+"mlp.up_proj.weight", m, cfg.IntermediateSize)
			for i := range g {
				g[i] = g[i] * sigmoid(g[i]) * u[i]
			}
			d := lin(lp+"mlp.down_proj.weight", g, hsz)
			for i := range d {
				xs[t][i] += d[i]
			}
		}
		captureLayer(feats, xs, l, layers)
	}
	head := "lm_head.weight"
	if cfg.TieWordEmbeddings {
		head = p + "embed_tokens.weight"
	}
	logits = make([][]float64, n)
	for t := range xs {
		logits[t] = lin(head, rmsNorm(xs[t], w[p+"norm.weight"], true), cfg.VocabSize)
	}
	return logits, feats
}

// refLinearOf multiplies by the named weight matrix of w (no bias).
func refLinearOf(w Weights) refLinear {
	return func(name string, x []float64, out int) []float64 {
		W, in := w[name], len(x)
		o := make([]float64, out)
		for r := range o {
			for i, xi := range x {
				o[r] += W[r*in+i] * xi
			}
		}
		return o
	}
}

// refNormOf scales x/sqrt(mean(x²)+eps) by g, or by 1+g when centred
// (Qwen3NextRMSNorm); the Gated DeltaNet's norm is not centred.
func refNormOf(eps float64) refNorm {
	return func(x, g []float64, centred bool) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
		o := make([]float64, len(x))
		for i := range x {
			s := g[i]
			if centred {
				s++
			}
			o[i] = x[i] * inv * s
		}
		return o
	}
}

// captureLayer appends layer l's outputs xs to feats when layers holds l,
// in layers' order (so a later layer listed first comes first).
func captureLayer(feats, xs [][]float64, l int, layers []int) {
	for j, id := range layers {
		if id != l {
			continue
		}
		hsz := len(xs[0])
		for t := range xs {
			if len(feats[t]) == 0 {
				feats[t] = make([]float64, len(layers)*hsz)
			}
			copy(feats[t][j*hsz:(j+1)*hsz], xs[t])
		}
	}
}

type (
	refLinear func(name string, x []float64, out int) []float64
	refNorm   func(x, g []float64, centred bool) []float64
)

// refGatedAttention is Qwen3NextAttention over the whole sequence: per
// head, q_proj's first head_dim outputs are the query and the next
// head_dim its gate; q and k get the centred per-head norm, then RoPE on
// their first rotary_dim dimensions (pairs (i, i+rotary_dim/2), frequency
// theta^(-2i/rotary_dim), at the M-RoPE position its section picks,
// mropeAngles); causal softmax attention with key heads shared
// by heads/kv_heads query heads, scaled 1/sqrt(head_dim); the output times
// sigmoid(gate), then o_proj.
func refGatedAttention(cfg *model.Config, w Weights, ap string, xs [][]float64, positions [][3]int, lin refLinear, norm refNorm, round func(float32) float32) [][]float64 {
	hd, nh, nkv := cfg.HeadDim, cfg.NumAttentionHeads, cfg.NumKeyValueHeads
	rot := int(float64(hd) * cfg.Hybrid.PartialRotaryFactor)
	n := len(xs)
	rope := func(v []float64, pos [3]int) {
		angles := mropeAngles(cfg, rot, pos)
		for i := range rot / 2 {
			c, s := math.Cos(angles[i]), math.Sin(angles[i])
			a, b := v[i], v[i+rot/2]
			v[i], v[i+rot/2] = a*c-b*s, a*s+b*c
		}
	}
	half := func(v []float64) []float64 {
		for i := range v {
			v[i] = float64(round(float32(v[i])))
		}
		return v
	}
	qs, gates, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n), make([][]float64, n)
	for t, x := range xs {
		qg := lin(ap+"q_proj.weight", x, 2*nh*hd)
		k := lin(ap+"k_proj.weight", x, nkv*hd)
		qs[t], gates[t] = make([]float64, nh*hd), make([]float64, nh*hd)
		for h := range nh {
			q := norm(qg[h*2*hd:h*2*hd+hd], w[ap+"q_norm.weight"], true)
			rope(q, positions[t])
			copy(qs[t][h*hd:], q)
			copy(gates[t][h*hd:], qg[h*2*hd+hd:(h+1)*2*hd])
		}
		for h := range nkv {
			kh := norm(k[h*hd:(h+1)*hd], w[ap+"k_norm.weight"], true)
			rope(kh, positions[t])
			copy(k[h*hd:], kh)
		}
		ks[t], vs[t] = half(k), half(lin(ap+"v_proj.weight", x, nkv*hd))
	}
	out := make([][]float64, n)
	for t := range xs {
		att := make([]float64, nh*hd)
		for h := range nh {
			kh := h / (nh / nkv)
			attend(att[h*hd:(h+1)*hd], qs[t][h*hd:(h+1)*hd], t+1,
				func(s int) []float64 { return ks[s][kh*hd:] }, func(s int) []float64 { return vs[s][kh*hd:] })
		}
		for i := range att {
			att[i] /= 1 + math.Exp(-gates[t][i])
		}
		out[t] = lin(ap+"o_proj.weight", att, cfg.HiddenSize)
	}
	return out
}

// refGatedDeltaNet is the Gated DeltaNet over the whole sequence from a
// zero state: the projections (Qwen3-Next's fused ones indexed per key
// head as fix_query_key_value_ordering reshapes them), the causal
// depthwise convolution of the queries, keys and values with SiLU, the
// gates g = −e^{A_log}·softplus(a+dt_bias) and β = sigmoid(b), the delta
// rule token by token on L2-normalised q and k (q also scaled by
// 1/sqrt(dk)), each value head normalised and gated by silu(z), out_proj.
func refGatedDeltaNet(cfg *model.Config, w Weights, lp string, xs [][]float64, norm refNorm) [][]float64 {
	p := refDeltaProjections(cfg, w, lp, xs)
	convolved := refCausalConv(cfg, w[lp+"conv1d.weight"], p.mix)
	return refDeltaRule(cfg, w, lp, convolved, p, norm)
}

// refDeltaInputs are a Gated DeltaNet's projections per token: the mixed
// channels (every query, every key, every value head), z, b and a.
type refDeltaInputs struct {
	mix, z, b, a [][]float64
}

// refDot is row row of the row-major matrix W times x.
func refDot(W []float64, row int, x []float64) float64 {
	var s float64
	for i, xi := range x {
		s += W[row*len(x)+i] * xi
	}
	return s
}

// refDeltaProjections projects every token: Qwen3-Next's fused
// in_proj_qkvz and in_proj_ba indexed per key head, as
// fix_query_key_value_ordering reshapes them, or the separate projections.
func refDeltaProjections(cfg *model.Config, w Weights, lp string, xs [][]float64) refDeltaInputs {
	y := cfg.Hybrid
	kh, vh, dk, dv := y.LinearNumKeyHeads, y.LinearNumValueHeads, y.LinearKeyHeadDim, y.LinearValueHeadDim
	r, C, n := vh/kh, 2*kh*dk+vh*dv, len(xs)
	p := refDeltaInputs{make([][]float64, n), make([][]float64, n), make([][]float64, n), make([][]float64, n)}
	for t, x := range xs {
		p.mix[t], p.z[t], p.b[t], p.a[t] = make([]float64, C), make([]float64, vh*dv), make([]float64, vh), make([]float64, vh)
		if y.ModelType == "qwen3_next" {
			Wq, Wb := w[lp+"in_proj_qkvz.weight"], w[lp+"in_proj_ba.weight"]
			G := 2*dk + 2*r*dv // one key head's group of rows
			for c := range kh * dk {
				g, i := c/dk, c%dk
				p.mix[t][c] = refDot(Wq, g*G+i, x)
				p.mix[t][kh*dk+c] = refDot(Wq, g*G+dk+i, x)
			}
			for c := range vh * dv {
				j, i := c/dv, c%dv
				g, jj := j/r, j%r
				p.mix[t][2*kh*dk+c] = refDot(Wq, g*G+2*dk+jj*dv+i, x)
				p.z[t][c] = refDot(Wq, g*G+2*dk+r*dv+jj*dv+i, x)
			}
			for j := range vh {
				g, jj := j/r, j%r
				p.b[t][j] = refDot(Wb, g*2*r+jj, x)
				p.a[t][j] = refDot(Wb, g*2*r+r+jj, x)
			}
			continue
		}
		for c := range C {
			p.mix[t][c] = refDot(w[lp+"in_proj_qkv.weight"], c, x)
		}
		for c := range vh * dv {
			p.z[t][c] = refDot(w[lp+"in_proj_z.weight"], c, x)
		}
		for j := range vh {
			p.b[t][j] = refDot(w[lp+"in_proj_b.weight"], j, x)
			p.a[t][j] = refDot(w[lp+"in_proj_a.weight"], j, x)
		}
	}
	return p
}

// refCausalConv is the causal depthwise convolution of every channel
// over the tokens (kernel conv, channel-major), with SiLU.
func refCausalConv(cfg *model.Config, conv []float64, mix [][]float64) [][]float64 {
	K := cfg.Hybrid.LinearConvKernelDim
	out := make([][]float64, len(mix))
	for t := range mix {
		out[t] = make([]float64, len(mix[t]))
		for c := range out[t] {
			var s float64
			for j := range K {
				if src := t - (K - 1) + j; src >= 0 {
					s += conv[c*K+j] * mix[src][c]
				}
			}
			out[t][c] = s / (1 + math.Exp(-s))
		}
	}
	return out
}

// refUnit is v scaled to unit L2 norm (ε 1e-6), times scale.
func refUnit(v []float64, scale float64) []float64 {
	var ss float64
	for _, e := range v {
		ss += e * e
	}
	o := make([]float64, len(v))
	for i, e := range v {
		o[i] = e / math.Sqrt(ss+1e-6) * scale
	}
	return o
}

// refDeltaRule runs the delta rule token by token from a zero state over
// the convolved channels, then normalises each value head, gates it by
// silu(z) and applies out_proj.
func refDeltaRule(cfg *model.Config, w Weights, lp string, convolved [][]float64, p refDeltaInputs, norm refNorm) [][]float64 {
	y := cfg.Hybrid
	kh, vh, dk, dv := y.LinearNumKeyHeads, y.LinearNumValueHeads, y.LinearKeyHeadDim, y.LinearValueHeadDim
	r := vh / kh
	S := make([][]float64, vh) // per value head, dk×dv
	for j := range S {
		S[j] = make([]float64, dk*dv)
	}
	aLog, dt, gw := w[lp+"A_log"], w[lp+"dt_bias"], w[lp+"norm.weight"]
	out := make([][]float64, len(convolved))
	for t := range convolved {
		core := make([]float64, vh*dv)
		for j := range vh {
			g := j / r
			q := refUnit(convolved[t][g*dk:(g+1)*dk], 1/math.Sqrt(float64(dk)))
			k := refUnit(convolved[t][(kh+g)*dk:(kh+g+1)*dk], 1)
			v := convolved[t][2*kh*dk+j*dv : 2*kh*dk+(j+1)*dv]
			decay := math.Exp(-math.Exp(aLog[j]) * math.Log1p(math.Exp(p.a[t][j]+dt[j])))
			beta := 1 / (1 + math.Exp(-p.b[t][j]))
			Sj := S[j]
			for i := range Sj {
				Sj[i] *= decay
			}
			o := make([]float64, dv)
			for c := range dv {
				var kv float64
				for i := range dk {
					kv += Sj[i*dv+c] * k[i]
				}
				delta := beta * (v[c] - kv)
				for i := range dk {
					Sj[i*dv+c] += k[i] * delta
					o[c] += Sj[i*dv+c] * q[i]
				}
			}
			o = norm(o, gw, false)
			for c := range o {
				z := p.z[t][j*dv+c]
				core[j*dv+c] = o[c] * z / (1 + math.Exp(-z))
			}
		}
		out[t] = make([]float64, cfg.HiddenSize)
		for o := range out[t] {
			out[t][o] = refDot(w[lp+"out_proj.weight"], o, core)
		}
	}
	return out
}

// attend adds to out one query's attention over n keys and values:
// softmax over j of q·key(j)/sqrt(len(q)), weighting value(j).
func attend(out, q []float64, n int, key, value func(j int) []float64) {
	sc := make([]float64, n)
	mx := math.Inf(-1)
	for j := range sc {
		k := key(j)
		for i := range q {
			sc[j] += q[i] * k[i]
		}
		sc[j] /= math.Sqrt(float64(len(q)))
		mx = math.Max(mx, sc[j])
	}
	var sum float64
	for j := range sc {
		sc[j] = math.Exp(sc[j] - mx)
		sum += sc[j]
	}
	for j := range sc {
		v := value(j)
		for i := range out {
			out[i] += sc[j] / sum * v[i]
		}
	}
}
