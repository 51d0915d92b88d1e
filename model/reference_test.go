package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/splash-inference/splash/metal"
)

// This file holds an independent, obviously-correct float64 forward pass
// over a contiguous (non-paged) cache, written without the backend, and the
// random weights the tests feed to both it and the real model.

// memTensors is an in-memory Tensors.
type memTensors map[string]*metal.Tensor

func (m memTensors) Tensor(name string) (*metal.Tensor, error) {
	t, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	return t, nil
}

func (m memTensors) Names() []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (m memTensors) Close() error { return nil }

// refWeights are the same weights as float64 matrices, row-major.
type refWeights map[string][]float64

// randomModel returns random weights for cfg stored as dtype d (norm vectors
// always f32), and their exact float64 values (dequantized, so the reference
// sees precisely what the model sees).
func randomModel(cfg *Config, d metal.DType, seed uint64, qkNorm bool) (memTensors, refWeights) {
	g := newWeightGen(d, seed)
	add := g.add
	h, q, kv, in := cfg.HiddenSize, cfg.QDim(), cfg.KVDim(), cfg.IntermediateSize
	add("model.embed_tokens.weight", cfg.VocabSize, h, 1, false)
	add("model.norm.weight", 1, h, 0, true)
	if !cfg.TieWordEmbeddings {
		add("lm_head.weight", cfg.VocabSize, h, 0.2, false)
	}
	for i := 0; i < cfg.NumHiddenLayers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		add(p+"input_layernorm.weight", 1, h, 0, true)
		add(p+"self_attn.q_proj.weight", q, h, 0.3, false)
		add(p+"self_attn.k_proj.weight", kv, h, 0.3, false)
		add(p+"self_attn.v_proj.weight", kv, h, 0.3, false)
		add(p+"self_attn.o_proj.weight", h, q, 0.1, false)
		if qkNorm {
			add(p+"self_attn.q_norm.weight", 1, cfg.HeadDim, 0, true)
			add(p+"self_attn.k_norm.weight", 1, cfg.HeadDim, 0, true)
		}
		add(p+"post_attention_layernorm.weight", 1, h, 0, true)
		add(p+"mlp.gate_proj.weight", in, h, 0.2, false)
		add(p+"mlp.up_proj.weight", in, h, 0.2, false)
		add(p+"mlp.down_proj.weight", h, in, 0.1, false)
	}
	return g.mt, g.rw
}

// weightGen draws random weights stored as dtype d (norm vectors always
// f32, near 1) and keeps their exact float64 values.
type weightGen struct {
	rng *rand.Rand
	d   metal.DType
	mt  memTensors
	rw  refWeights
}

func newWeightGen(d metal.DType, seed uint64) *weightGen {
	return &weightGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), d: d, mt: memTensors{}, rw: refWeights{}}
}

// add draws the named rows×cols tensor: N(0, std²) entries, or 1+N(0, 0.01)
// for a norm.
func (g *weightGen) add(name string, rows, cols int, std float64, norm bool) {
	if norm {
		g.put(name, rows, cols, metal.F32, func() float64 { return 1 + 0.1*g.rng.NormFloat64() })
		return
	}
	g.put(name, rows, cols, g.d, func() float64 { return std * g.rng.NormFloat64() })
}

// put draws the named rows×cols tensor from draw, stored as d, and keeps
// the exact values it holds.
func (g *weightGen) put(name string, rows, cols int, d metal.DType, draw func() float64) {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = float32(draw())
	}
	t, err := metal.Quantize(d, v, rows, cols)
	if err != nil {
		panic(err)
	}
	g.mt[name] = t
	deq := t.Dequantize()
	f := make([]float64, len(deq))
	for i, x := range deq {
		f[i] = float64(x)
	}
	g.rw[name] = f
}

// kvExact is refForward's kvType for keys and values kept exact.
const kvExact metal.KVType = 255

// refForward returns the logits (float64) at every position of tokens, run
// from position 0 with a contiguous cache whose keys and values are
// rounded as a cache of type kvType rounds them (kvExact: not at all).
func refForward(cfg *Config, w refWeights, qkNorm bool, tokens []int32, kvType metal.KVType) [][]float64 {
	logits, _ := refForwardFeatures(cfg, w, qkNorm, tokens, kvType, nil)
	return logits
}

// refForwardFeatures is refForward that also returns, at every position,
// the outputs of the given layers concatenated in their order (the
// features a DFlash draft reads).
func refForwardFeatures(cfg *Config, w refWeights, qkNorm bool, tokens []int32, kvType metal.KVType, layers []int) (logits, feats [][]float64) {
	h, hd, nh, nkv := cfg.HiddenSize, cfg.HeadDim, cfg.NumAttentionHeads, cfg.NumKeyValueHeads
	eps := cfg.RMSNormEps
	n := len(tokens)
	lin := func(name string, x []float64, out int) []float64 {
		W := w[name]
		in := len(x)
		y := make([]float64, out)
		for o := range y {
			s := 0.0
			for i := 0; i < in; i++ {
				s += W[o*in+i] * x[i]
			}
			y[o] = s
		}
		return y
	}
	rms := func(x, g []float64) []float64 {
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
		y := make([]float64, len(x))
		for i := range x {
			y[i] = x[i] * inv * g[i]
		}
		return y
	}
	// inverse frequencies, recomputed here independently of rope.go
	invf := make([]float64, hd/2)
	for i := range invf {
		f := math.Pow(cfg.RopeTheta, -float64(2*i)/float64(hd))
		if s := cfg.RopeScaling; s != nil && s.RopeType == "llama3" {
			wl := 2 * math.Pi / f
			lo, hi := float64(s.OriginalMaxPositionEmbeddings)/s.LowFreqFactor, float64(s.OriginalMaxPositionEmbeddings)/s.HighFreqFactor
			if wl > lo {
				f /= s.Factor
			} else if wl >= hi {
				sm := (float64(s.OriginalMaxPositionEmbeddings)/wl - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
				f = (1-sm)*f/s.Factor + sm*f
			}
		}
		invf[i] = float64(float32(f)) // the model stores float32 frequencies
	}
	rope := func(x []float64, pos int) {
		for hh := 0; hh < len(x)/hd; hh++ {
			v := x[hh*hd : (hh+1)*hd]
			for i := 0; i < hd/2; i++ {
				a := float64(pos) * invf[i]
				c, s := math.Cos(a), math.Sin(a)
				x0, x1 := v[i], v[i+hd/2]
				v[i], v[i+hd/2] = x0*c-x1*s, x0*s+x1*c
			}
		}
	}
	headNorm := func(x, g []float64) {
		for hh := 0; hh < len(x)/hd; hh++ {
			copy(x[hh*hd:(hh+1)*hd], rms(x[hh*hd:(hh+1)*hd], g))
		}
	}
	// The KV cache stores float16, bfloat16 or q8 (metal.KVLayer): keys
	// and values are rounded as the cache rounds them (q8's groups of 32
	// lie within a head, as the model's heads are whole groups). A float32
	// cache rounds nothing the model's float32 arithmetic has not: its
	// reference is the exact one.
	f16 := func(x []float64) []float64 {
		if kvType == metal.KVQ8 {
			x32 := make([]float32, len(x))
			for i, v := range x {
				x32[i] = float32(v)
			}
			q, sc := make([]int8, len(x)), make([]uint16, len(x)/metal.KVGroup)
			metal.QuantizeKV(q, sc, x32)
			metal.DequantizeKV(x32, q, sc)
			for i, v := range x32 {
				x[i] = float64(v)
			}
			return x
		}
		if kvType == kvExact || kvType == metal.KVF32 {
			return x
		}
		for i, v := range x {
			if kvType == metal.KVBF16 {
				x[i] = float64(metal.BF16ToF32(metal.F32ToBF16DAZ(float32(v))))
				continue
			}
			x[i] = float64(metal.F16ToF32(metal.F32ToF16(float32(v))))
		}
		return x
	}
	xs, feats := make([][]float64, n), make([][]float64, n)
	E := w["model.embed_tokens.weight"]
	for t, tok := range tokens {
		xs[t] = append([]float64(nil), E[int(tok)*h:(int(tok)+1)*h]...)
	}
	for l := 0; l < cfg.NumHiddenLayers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		keys, vals := make([][]float64, n), make([][]float64, n)
		qs := make([][]float64, n)
		for t := range xs {
			a := rms(xs[t], w[p+"input_layernorm.weight"])
			q := lin(p+"self_attn.q_proj.weight", a, nh*hd)
			k := lin(p+"self_attn.k_proj.weight", a, nkv*hd)
			if qkNorm {
				headNorm(q, w[p+"self_attn.q_norm.weight"])
				headNorm(k, w[p+"self_attn.k_norm.weight"])
			}
			rope(q, t)
			rope(k, t)
			if kvType == metal.KVBF16 { // its attention rounds the queries too
				q = f16(q)
			}
			qs[t], keys[t], vals[t] = q, f16(k), f16(lin(p+"self_attn.v_proj.weight", a, nkv*hd))
		}
		for t := range xs {
			att := make([]float64, nh*hd)
			for hh := 0; hh < nh; hh++ {
				kh := hh / (nh / nkv)
				sc := make([]float64, t+1)
				mx := math.Inf(-1)
				for s := 0; s <= t; s++ {
					d := 0.0
					for i := 0; i < hd; i++ {
						d += qs[t][hh*hd+i] * keys[s][kh*hd+i]
					}
					sc[s] = d / math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[s])
				}
				sum := 0.0
				for s := range sc {
					sc[s] = math.Exp(sc[s] - mx)
					sum += sc[s]
				}
				for s := range sc {
					w := sc[s] / sum
					if kvType == metal.KVBF16 { // and the softmax weights
						w = float64(metal.BF16ToF32(metal.F32ToBF16DAZ(float32(w))))
					}
					for i := 0; i < hd; i++ {
						att[hh*hd+i] += w * vals[s][kh*hd+i]
					}
				}
			}
			o := lin(p+"self_attn.o_proj.weight", att, h)
			for i := range o {
				xs[t][i] += o[i]
			}
			m := rms(xs[t], w[p+"post_attention_layernorm.weight"])
			g := lin(p+"mlp.gate_proj.weight", m, cfg.IntermediateSize)
			u := lin(p+"mlp.up_proj.weight", m, cfg.IntermediateSize)
			for i := range g {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
			d := lin(p+"mlp.down_proj.weight", g, h)
			for i := range d {
				xs[t][i] += d[i]
			}
		}
		for _, c := range layers {
			if c == l {
				for t := range xs {
					feats[t] = append(feats[t], xs[t]...)
				}
			}
		}
	}
	head := "lm_head.weight"
	if cfg.TieWordEmbeddings {
		head = "model.embed_tokens.weight"
	}
	out := make([][]float64, n)
	for t := range xs {
		out[t] = lin(head, rms(xs[t], w["model.norm.weight"]), cfg.VocabSize)
	}
	return out, feats
}
