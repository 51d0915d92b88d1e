package cpu

import (
	"math"
)

func (b *Backend) RMSNorm(out, x, weight []float32, dim int, eps float32) {
	weight = weight[:dim]
	for r := 0; r+dim <= len(x); r += dim {
		row, o := x[r:r+dim], out[r:r+dim]
		var ss float64
		for _, v := range row {
			ss += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(ss/float64(dim)+float64(eps)))
		for i, v := range row {
			o[i] = v * inv * weight[i]
		}
	}
}

func (b *Backend) RoPE(x []float32, pos []int32, heads, headDim int, invFreq []float32) {
	half := headDim / 2
	if cap(b.rope) < 2*half {
		b.rope = make([]float32, 2*half)
	}
	cos, sin := b.rope[:half], b.rope[half:2*half]
	width := heads * headDim
	for r, p := range pos {
		for i, f := range invFreq[:half] {
			s, c := math.Sincos(float64(p) * float64(f))
			cos[i], sin[i] = float32(c), float32(s)
		}
		row := x[r*width : (r+1)*width]
		for h := 0; h < heads; h++ {
			v := row[h*headDim : (h+1)*headDim]
			lo, hi := v[:half], v[half:headDim]
			for i := range lo {
				x0, x1 := lo[i], hi[i]
				lo[i] = x0*cos[i] - x1*sin[i]
				hi[i] = x0*sin[i] + x1*cos[i]
			}
		}
	}
}

func (b *Backend) SiLUMul(gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		gate[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}

func (b *Backend) Add(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
