package model

import (
	"math"
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// The vision tower's portable operations: transformers' nn.LayerNorm, the
// GELUs, a bias add, 2-D rotary and full (non-causal) attention over one
// image's patches.

// layerNorm normalises each dim-sized row of x in place:
// (x − mean)/√(var + eps)·w + b, with the biased variance (nn.LayerNorm).
// Sums are taken in float64.
func layerNorm(x, w, b []float32, dim int, eps float64) {
	for r := 0; r+dim <= len(x); r += dim {
		row := x[r : r+dim]
		var sum float64
		for _, v := range row {
			sum += float64(v)
		}
		mean := sum / float64(dim)
		var sq float64
		for _, v := range row {
			d := float64(v) - mean
			sq += d * d
		}
		inv := 1 / math.Sqrt(sq/float64(dim)+eps)
		for i, v := range row {
			row[i] = float32((float64(v)-mean)*inv)*w[i] + b[i]
		}
	}
}

// geluTanh is GELU's tanh approximation (PyTorch's approximate="tanh",
// transformers' gelu_pytorch_tanh), in place.
func geluTanh(x []float32) {
	const c = 0.7978845608028654 // √(2/π)
	for i, v := range x {
		f := float64(v)
		x[i] = float32(0.5 * f * (1 + math.Tanh(c*(f+0.044715*f*f*f))))
	}
}

// geluErf is exact GELU, x·Φ(x) (nn.GELU()), in place.
func geluErf(x []float32) {
	for i, v := range x {
		f := float64(v)
		x[i] = float32(0.5 * f * (1 + math.Erf(f/math.Sqrt2)))
	}
}

// addBias adds b to each len(b)-sized row of x.
func addBias(x, b []float32) {
	for r := 0; r+len(b) <= len(x); r += len(b) {
		row := x[r : r+len(b)]
		for i, v := range b {
			row[i] += v
		}
	}
}

// f32Tensor views v as a rows×cols F32 tensor without copying, so
// activations can be the weight operand of Backend.MatMul.
func f32Tensor(v []float32, rows, cols int) *metal.Tensor {
	v = v[:rows*cols]
	return &metal.Tensor{DType: metal.F32, Rows: rows, Cols: cols,
		Data: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))}
}

// rope2D rotates, in place, each headDim-sized head of each row of x in
// the "rotate half" convention (pairs (i, i+headDim/2)), pair i by the
// angle rows[r]·invFreq[i] for i < headDim/4 and cols[r]·invFreq[i −
// headDim/4] after: transformers' Qwen3-VL vision rotary, whose per-patch
// frequencies are its row's then its column's, concatenated and repeated
// (emb = cat(freqs, freqs)). invFreq has headDim/4 entries.
func rope2D(x []float32, rows, cols []int, heads, headDim int, invFreq []float32) {
	half, quarter := headDim/2, headDim/4
	cos, sin := make([]float32, half), make([]float32, half)
	for r := range rows {
		for i := range half {
			pos, f := rows[r], invFreq[i%quarter]
			if i >= quarter {
				pos = cols[r]
			}
			a := float32(pos) * f
			cos[i], sin[i] = float32(math.Cos(float64(a))), float32(math.Sin(float64(a)))
		}
		for h := range heads {
			v := x[(r*heads+h)*headDim:][:headDim]
			for i := range half {
				a, b := v[i], v[i+half]
				v[i] = a*cos[i] - b*sin[i]
				v[i+half] = b*cos[i] + a*sin[i]
			}
		}
	}
}

// fullAttention is softmax(q·kᵀ/√headDim)·v over all n rows (no mask:
// every patch of an image sees every other), per head. q, k and v are
// n×(heads·headDim) rows (the columns of one head contiguous); out too.
// The products run as Backend.MatMul over blocks of query rows, so the
// scores take block×n floats.
func fullAttention(be metal.Backend, out, q, k, v []float32, n, heads, headDim int) {
	const block = 256
	width := heads * headDim
	kh := make([]float32, n*headDim) // one head's keys, n×headDim
	vt := make([]float32, headDim*n) // one head's values transposed, headDim×n
	qb := make([]float32, block*headDim)
	scores := make([]float32, block*n)
	ob := make([]float32, block*headDim)
	scale := float32(1 / math.Sqrt(float64(headDim)))
	for h := range heads {
		for r := range n {
			copy(kh[r*headDim:(r+1)*headDim], k[r*width+h*headDim:])
			for d := range headDim {
				vt[d*n+r] = v[r*width+h*headDim+d]
			}
		}
		kt, vtt := f32Tensor(kh, n, headDim), f32Tensor(vt, headDim, n)
		for r0 := 0; r0 < n; r0 += block {
			rows := min(block, n-r0)
			for r := range rows {
				copy(qb[r*headDim:(r+1)*headDim], q[(r0+r)*width+h*headDim:])
			}
			be.MatMul(scores, qb, rows, kt)
			for r := range rows {
				softmaxScaled(scores[r*n:(r+1)*n], scale)
			}
			be.MatMul(ob, scores, rows, vtt)
			for r := range rows {
				copy(out[(r0+r)*width+h*headDim:][:headDim], ob[r*headDim:(r+1)*headDim])
			}
		}
	}
}

// softmaxScaled replaces s with softmax(s·scale).
func softmaxScaled(s []float32, scale float32) {
	m := float32(math.Inf(-1))
	for _, v := range s {
		m = max(m, v*scale)
	}
	var sum float64
	for i, v := range s {
		e := math.Exp(float64(v*scale - m))
		s[i] = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for i := range s {
		s[i] *= inv
	}
}
