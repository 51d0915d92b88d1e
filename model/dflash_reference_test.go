package model

import (
	"fmt"
	"math"
	"sort"

	"github.com/splash-inference/splash/metal"
)

// This file holds an independent float64 reference of the DFlash and
// DFlash2 block pass, written from the sources' mathematics without the
// draft's code or the backend, and the random drafts the tests feed it.
//
// DFlash (z-lab/dflash dflash/model.py): the context c_s = hidden_norm(fc ·
// features_s) gives each layer keys k_norm(k_proj c_s) rotated at s and
// values v_proj c_s; the block [anchor, mask…] at positions start… runs
// Qwen3 layers whose queries attend to [context; block] (the block whole,
// or up to the query when causal); the masked positions' final norms go
// through the target's lm_head. DFlash2 (vLLM qwen3_dflash2.py) scales the
// embeddings, wraps attention and MLP in the grouped convolution and picks
// the path by the selector over the top-k candidates (its speculator's
// greedy walk over the full score tensor scores[l][p][c]).

// randomDFlash draws a random draft for dc over a target of hidden width
// targetHidden.
func randomDFlash(dc *DFlashConfig, targetHidden int, seed uint64) (memTensors, refWeights) {
	g := newWeightGen(metal.F32, seed)
	lc := &dc.Layers
	h, q, kv, in := lc.HiddenSize, lc.QDim(), lc.KVDim(), lc.IntermediateSize
	g.add("fc.weight", h, len(dc.TargetLayerIDs)*targetHidden, 0.1, false)
	g.add("hidden_norm.weight", 1, h, 0, true)
	g.add("norm.weight", 1, h, 0, true)
	for i := range lc.NumHiddenLayers {
		p := fmt.Sprintf("layers.%d.", i)
		g.add(p+"input_layernorm.weight", 1, h, 0, true)
		g.add(p+"self_attn.q_proj.weight", q, h, 0.3, false)
		g.add(p+"self_attn.k_proj.weight", kv, h, 0.3, false)
		g.add(p+"self_attn.v_proj.weight", kv, h, 0.3, false)
		g.add(p+"self_attn.o_proj.weight", h, q, 0.1, false)
		g.add(p+"self_attn.q_norm.weight", 1, lc.HeadDim, 0, true)
		g.add(p+"self_attn.k_norm.weight", 1, lc.HeadDim, 0, true)
		g.add(p+"post_attention_layernorm.weight", 1, h, 0, true)
		g.add(p+"mlp.gate_proj.weight", in, h, 0.2, false)
		g.add(p+"mlp.up_proj.weight", in, h, 0.2, false)
		g.add(p+"mlp.down_proj.weight", h, in, 0.1, false)
		if dc.Kind == DFlash2 {
			for _, c := range []string{"attention_conv.", "mlp_conv."} {
				g.add(p+c+"base_kernel", 2*dc.ConvTaps, h, 0.5, false)
				g.add(p+c+"kernel_projection.weight", 2*dc.ConvTaps*(h/dc.ConvGroupSize), h, 0.1, false)
			}
		}
	}
	if dc.Kind == DFlash2 {
		g.add("candidate_selector.predecessor_codebook", lc.VocabSize, dc.SelectorRank, 1, false)
		g.add("candidate_selector.successor_codebook", lc.VocabSize, dc.SelectorRank, 1, false)
		g.add("candidate_selector.hidden_projection.weight", dc.SelectorRank, h, 0.5, false)
	}
	return g.mt, g.rw
}

// refDFlashResult is the reference's proposal for one block and the
// masked positions' logits; for DFlash2 also each position's candidates
// and the full score tensor scores[l][predecessor index][candidate index]
// (the predecessor of position 0 is the anchor, index 0).
type refDFlashResult struct {
	tokens []int32
	logits [][]float64
	cands  [][]int
	scores [][][]float64
}

// refDFlash runs the block pass of draft dc (weights dw) after the
// context feats (positions 0…len(feats)−1), the anchor at position
// len(feats), with the target's embeddings E and head (vocab, hidden).
func refDFlash(dc *DFlashConfig, E, head []float64, dw refWeights, feats [][]float64, anchor int32) refDFlashResult {
	lc := &dc.Layers
	h, hd, nh, nkv, B := lc.HiddenSize, lc.HeadDim, lc.NumAttentionHeads, lc.NumKeyValueHeads, dc.BlockSize
	eps := lc.RMSNormEps
	S := len(feats)
	mul := func(W []float64, x []float64) []float64 {
		y := make([]float64, len(W)/len(x))
		for o := range y {
			for i, xi := range x {
				y[o] += W[o*len(x)+i] * xi
			}
		}
		return y
	}
	norm := func(x, g []float64) []float64 {
		m := 0.0
		for _, v := range x {
			m += v * v / float64(len(x))
		}
		y := make([]float64, len(x))
		for i := range x {
			y[i] = g[i] * x[i] / math.Sqrt(m+eps)
		}
		return y
	}
	perHead := func(x, g []float64) []float64 {
		var y []float64
		for i := 0; i < len(x); i += hd {
			y = append(y, norm(x[i:i+hd], g)...)
		}
		return y
	}
	rotate := func(x []float64, pos int) []float64 {
		y := append([]float64(nil), x...)
		for base := 0; base < len(y); base += hd {
			for i := range hd / 2 {
				theta := float64(pos) * float64(float32(math.Pow(lc.RopeTheta, -2*float64(i)/float64(hd))))
				a, b := y[base+i], y[base+i+hd/2]
				y[base+i] = a*math.Cos(theta) - b*math.Sin(theta)
				y[base+i+hd/2] = b*math.Cos(theta) + a*math.Sin(theta)
			}
		}
		return y
	}
	// the grouped convolution over the block's rows, side 0 or 1, with the
	// per-row offsets delta[t] = kernel_projection(input of side 0)
	conv := func(xs [][]float64, delta [][]float64, base []float64, side int) [][]float64 {
		taps, gs := dc.ConvTaps, dc.ConvGroupSize
		G := h / gs
		out := make([][]float64, len(xs))
		for t := range xs {
			out[t] = make([]float64, h)
			for s := 0; s < taps && s <= t; s++ {
				for c := range h {
					k := base[(side*taps+s)*h+c] + delta[t][side*taps*G+s*G+c/gs]
					out[t][c] += k * xs[t-s][c]
				}
			}
		}
		return out
	}
	// context
	ctx := make([][]float64, S)
	for s, f := range feats {
		ctx[s] = norm(mul(dw["fc.weight"], f), dw["hidden_norm.weight"])
	}
	// block embeddings
	xs := make([][]float64, B)
	for t := range B {
		tok := dc.MaskTokenID
		if t == 0 {
			tok = int(anchor)
		}
		xs[t] = make([]float64, h)
		for i := range h {
			xs[t][i] = E[tok*h+i] * dc.InputEmbeddingScale
		}
	}
	for l := range lc.NumHiddenLayers {
		p := fmt.Sprintf("layers.%d.", l)
		a := make([][]float64, B)
		for t := range xs {
			a[t] = norm(xs[t], dw[p+"input_layernorm.weight"])
		}
		var delta [][]float64
		if dc.Kind == DFlash2 {
			delta = make([][]float64, B)
			for t := range a {
				delta[t] = mul(dw[p+"attention_conv.kernel_projection.weight"], a[t])
			}
			a = conv(a, delta, dw[p+"attention_conv.base_kernel"], 0)
		}
		var keys, vals [][]float64
		for s := range ctx {
			keys = append(keys, rotate(perHead(mul(dw[p+"self_attn.k_proj.weight"], ctx[s]), dw[p+"self_attn.k_norm.weight"]), s))
			vals = append(vals, mul(dw[p+"self_attn.v_proj.weight"], ctx[s]))
		}
		qs := make([][]float64, B)
		for t := range a {
			qs[t] = rotate(perHead(mul(dw[p+"self_attn.q_proj.weight"], a[t]), dw[p+"self_attn.q_norm.weight"]), S+t)
			keys = append(keys, rotate(perHead(mul(dw[p+"self_attn.k_proj.weight"], a[t]), dw[p+"self_attn.k_norm.weight"]), S+t))
			vals = append(vals, mul(dw[p+"self_attn.v_proj.weight"], a[t]))
		}
		o := make([][]float64, B)
		for t := range qs {
			seen := S + B
			if dc.Causal {
				seen = S + t + 1
			}
			att := make([]float64, nh*hd)
			for head := range nh {
				kh := head * nkv / nh
				w := make([]float64, seen)
				total, top := 0.0, math.Inf(-1)
				for s := range seen {
					for i := range hd {
						w[s] += qs[t][head*hd+i] * keys[s][kh*hd+i] / math.Sqrt(float64(hd))
					}
					top = math.Max(top, w[s])
				}
				for s := range w {
					w[s] = math.Exp(w[s] - top)
					total += w[s]
				}
				for s := range w {
					for i := range hd {
						att[head*hd+i] += w[s] / total * vals[s][kh*hd+i]
					}
				}
			}
			o[t] = mul(dw[p+"self_attn.o_proj.weight"], att)
		}
		if dc.Kind == DFlash2 {
			o = conv(o, delta, dw[p+"attention_conv.base_kernel"], 1)
		}
		m := make([][]float64, B)
		for t := range xs {
			for i := range h {
				xs[t][i] += o[t][i]
			}
			m[t] = norm(xs[t], dw[p+"post_attention_layernorm.weight"])
		}
		if dc.Kind == DFlash2 {
			for t := range m {
				delta[t] = mul(dw[p+"mlp_conv.kernel_projection.weight"], m[t])
			}
			m = conv(m, delta, dw[p+"mlp_conv.base_kernel"], 0)
		}
		f := make([][]float64, B)
		for t := range m {
			gt, up := mul(dw[p+"mlp.gate_proj.weight"], m[t]), mul(dw[p+"mlp.up_proj.weight"], m[t])
			for i := range gt {
				gt[i] = gt[i] / (1 + math.Exp(-gt[i])) * up[i]
			}
			f[t] = mul(dw[p+"mlp.down_proj.weight"], gt)
		}
		if dc.Kind == DFlash2 {
			f = conv(f, delta, dw[p+"mlp_conv.base_kernel"], 1)
		}
		for t := range xs {
			for i := range h {
				xs[t][i] += f[t][i]
			}
		}
	}
	var res refDFlashResult
	var finals [][]float64
	for t := 1; t < B; t++ {
		y := norm(xs[t], dw["norm.weight"])
		finals = append(finals, y)
		res.logits = append(res.logits, mul(head, y))
	}
	if dc.Kind == DFlash {
		for _, lg := range res.logits {
			best := 0
			for i, v := range lg {
				if v > lg[best] {
					best = i
				}
			}
			res.tokens = append(res.tokens, int32(best))
		}
		return res
	}
	// DFlash2: candidates, unary scores, the full score tensor, the walk.
	K, R := dc.SelectorTopK, dc.SelectorRank
	pred, succ := dw["candidate_selector.predecessor_codebook"], dw["candidate_selector.successor_codebook"]
	cands := make([][]int, B-1)
	unary := make([][]float64, B-1)
	for l, lg := range res.logits {
		idx := make([]int, len(lg))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return lg[idx[i]] > lg[idx[j]] })
		cands[l] = idx[:K]
		for _, c := range cands[l] {
			u := lg[c] * dc.OutputMultiplier
			if dc.LogitSoftcap > 0 {
				u = math.Tanh(u/dc.LogitSoftcap) * dc.LogitSoftcap
			}
			unary[l] = append(unary[l], u)
		}
	}
	previous := 0
	for l := range B - 1 {
		hp := mul(dw["candidate_selector.hidden_projection.weight"], finals[l])
		scores := make([][]float64, K) // [predecessor index][candidate index]
		for pi := range K {
			pt := int(anchor)
			if l > 0 {
				pt = cands[l-1][pi]
			}
			scores[pi] = make([]float64, K)
			for c := range K {
				s := unary[l][c]
				for r := range R {
					s += pred[pt*R+r] * hp[r] * succ[cands[l][c]*R+r]
				}
				scores[pi][c] = s
			}
		}
		best := 0
		for c := range K {
			if scores[previous][c] > scores[previous][best] {
				best = c
			}
		}
		res.tokens = append(res.tokens, int32(cands[l][best]))
		res.scores = append(res.scores, scores)
		previous = best
	}
	res.cands = cands
	return res
}
