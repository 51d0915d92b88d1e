package backendtest

import (
	"math"
	"math/rand/v2"

	"github.com/splash-inference/splash/metal"
)

// randVec is n standard normal values.
func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// matMulBound is the float64 product x·Wᵀ of rows×in activations and the
// dequantized out×in weights, and for each output the error a conforming
// backend may make: float32 accumulation (a relative 1e-5 of Σ|x·w|), plus
// for quantized weights the rounding of each activation group to int8.
// That rounding errs by at most half a step, s_g/2 with s_g = max|x_g|/127,
// uniformly and independently, so its sum has a variance of
// Σ_g s_g²/12·Σ_{i∈g} w_i²; six standard deviations of it are allowed. (The
// worst case, Σ_g s_g/2·Σ|w|, is so loose that it would pass a group read
// with a wrong scale.)
func matMulBound(x []float32, rows int, w *metal.Tensor) (want, bound []float64) {
	deq := w.Dequantize()
	in, out := w.Cols, w.Rows
	want, bound = make([]float64, rows*out), make([]float64, rows*out)
	for r := 0; r < rows; r++ {
		xr := x[r*in : (r+1)*in]
		for o := 0; o < out; o++ {
			wo := deq[o*in : (o+1)*in]
			var sum, abs, quant float64
			for g := 0; g < in; g += metal.GroupSize {
				end := min(g+metal.GroupSize, in)
				var maxX, sumW2 float64
				for i := g; i < end; i++ {
					p := float64(xr[i]) * float64(wo[i])
					sum += p
					abs += math.Abs(p)
					maxX = math.Max(maxX, math.Abs(float64(xr[i])))
					sumW2 += float64(wo[i]) * float64(wo[i])
				}
				step := maxX / 127
				quant += step * step / 12 * sumW2
			}
			want[r*out+o] = sum
			bound[r*out+o] = 1e-5*abs + 1e-30
			if w.DType.Quantized() {
				bound[r*out+o] += 6 * math.Sqrt(quant)
			}
		}
	}
	return want, bound
}

// attention is causal scaled-dot-product attention in float64 for one
// query row at position pos, over contiguous keys and values of dim =
// kvHeads·headDim per position: out[h] = Σ_s softmax_s(q_h·k_s/√d)·v_s with
// query head h reading KV head h/(heads/kvHeads). roundWeight, when not nil,
// rounds each softmax weight as the cache type's kernels do.
func attention(out []float64, q, keys, vals []float32, pos, heads, kvHeads, headDim int, roundWeight func(float64) float64) {
	dim := kvHeads * headDim
	sc := make([]float64, pos+1)
	for h := 0; h < heads; h++ {
		kh := h / (heads / kvHeads)
		qh := q[h*headDim : (h+1)*headDim]
		mx := math.Inf(-1)
		for s := range sc {
			d := 0.0
			for i, qi := range qh {
				d += float64(qi) * float64(keys[s*dim+kh*headDim+i])
			}
			sc[s] = d / math.Sqrt(float64(headDim))
			mx = math.Max(mx, sc[s])
		}
		sum := 0.0
		for s := range sc {
			sc[s] = math.Exp(sc[s] - mx)
			sum += sc[s]
		}
		o := out[h*headDim : (h+1)*headDim]
		for s := range sc {
			p := sc[s] / sum
			if roundWeight != nil {
				p = roundWeight(p)
			}
			for i := range o {
				o[i] += p * float64(vals[s*dim+kh*headDim+i])
			}
		}
	}
}

// asStored is what a cache of type t gives back for x: x rounded to
// float16 or bfloat16, or quantized to int8 groups and back.
func asStored(t metal.KVType, x []float32) []float32 {
	y := make([]float32, len(x))
	switch t {
	case metal.KVF16:
		for i, v := range x {
			y[i] = metal.F16ToF32(metal.F32ToF16(v))
		}
	case metal.KVBF16:
		for i, v := range x {
			y[i] = metal.BF16ToF32(metal.F32ToBF16DAZ(v))
		}
	case metal.KVQ8:
		q, sc := make([]int8, len(x)), make([]uint16, len(x)/metal.KVGroup)
		metal.QuantizeKV(q, sc, x)
		metal.DequantizeKV(y, q, sc)
	default:
		copy(y, x)
	}
	return y
}

// maxScaledErr is max_i |got_i − want_i| / bound_i.
func maxScaledErr(got []float32, want, bound []float64) float64 {
	e := 0.0
	for i := range want {
		e = math.Max(e, math.Abs(float64(got[i])-want[i])/bound[i])
	}
	return e
}

// maxRelErr is max_i |got_i − want_i| / max_i |want_i|: an error relative
// to the output's scale, which a near-zero element cannot inflate.
func maxRelErr(got []float32, want []float64) float64 {
	d, m := 0.0, 1e-30
	for i := range want {
		d = math.Max(d, math.Abs(float64(got[i])-want[i]))
		m = math.Max(m, math.Abs(want[i]))
	}
	return d / m
}

// sameBits reports the first index where a and b differ bit for bit, or -1.
func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
