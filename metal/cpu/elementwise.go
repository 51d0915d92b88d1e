package cpu

import (
	"math"
	"slices"
)

func (b *Backend) RMSNorm(out, x, weight []float32, dim int, eps float32) {
	b.runElementwise(elementwiseTask{op: opRMSNorm, out: out, x: x, weight: weight[:dim], dim: dim, eps: eps}, len(x)/dim, dim)
}

// rmsNormRows normalises rows lo..hi-1 of x into out.
func rmsNormRows(f *fusedKernels, out, x, weight []float32, dim int, eps float32, lo, hi int) {
	for r := lo * dim; r < hi*dim; r += dim {
		row, o := x[r:r+dim], out[r:r+dim]
		inv := float32(1 / math.Sqrt(sumSquares(row)/float64(dim)+float64(eps)))
		f.normScale(o, row, weight, inv)
	}
}

// sumSquares is Σ x² in float64 over four interleaved partial sums (lane l
// takes x[l], x[l+4], …), combined as (s0+s2)+(s1+s3): four independent
// chains of adds rather than one, which was a decode step's longest serial
// stretch (about 1 ms of a verify pass in Qwen3's q and k norms; 1.4×
// faster with four).
func sumSquares(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0]) * float64(v[0])
		s1 += float64(v[1]) * float64(v[1])
		s2 += float64(v[2]) * float64(v[2])
		s3 += float64(v[3]) * float64(v[3])
	}
	ss := (s0 + s2) + (s1 + s3)
	for _, v := range x[i:] {
		ss += float64(v) * float64(v)
	}
	return ss
}

// RoPE takes each row's cos and sin from a table built once per distinct
// (positions, frequencies) pair: a forward pass rotates the queries and
// keys of every layer at the same positions, so the table is built once
// per pass rather than 2·layers times.
func (b *Backend) RoPE(x []float32, pos []int32, heads, headDim int, invFreq []float32) {
	half := headDim / 2
	cos, sin := b.rope.lookup(pos, invFreq[:half])
	b.runElementwise(elementwiseTask{op: opRoPE, x: x, cos: cos, sin: sin, heads: heads, dim: headDim}, len(pos), heads*headDim)
}

// ropeRows rotates rows lo..hi-1 of x by their positions' cos and sin.
func ropeRows(f *fusedKernels, x, cos, sin []float32, heads, headDim, lo, hi int) {
	half := headDim / 2
	width := heads * headDim
	for r := lo; r < hi; r++ {
		c, s := cos[r*half:(r+1)*half], sin[r*half:(r+1)*half]
		row := x[r*width : (r+1)*width]
		for h := 0; h < heads; h++ {
			v := row[h*headDim : (h+1)*headDim]
			f.rotate(v[:half], v[half:headDim], c, s)
		}
	}
}

// ropeTable holds cos(p·f) and sin(p·f) for the positions and inverse
// frequencies of the last RoPE call, reused while they repeat.
type ropeTable struct {
	pos      []int32
	invFreq  []float32
	cos, sin []float32 // len(pos)×len(invFreq), row-major
}

// lookup returns the tables for pos and invFreq, rebuilding them when either
// differs (by value) from the previous call's.
func (t *ropeTable) lookup(pos []int32, invFreq []float32) (cos, sin []float32) {
	n := len(pos) * len(invFreq)
	if !slices.Equal(t.pos, pos) || !slices.Equal(t.invFreq, invFreq) {
		t.pos = append(t.pos[:0], pos...)
		t.invFreq = append(t.invFreq[:0], invFreq...)
		if cap(t.cos) < n {
			t.cos, t.sin = make([]float32, n), make([]float32, n)
		}
		t.cos, t.sin = t.cos[:n], t.sin[:n]
		for r, p := range pos {
			for i, f := range invFreq {
				s, c := math.Sincos(float64(p) * float64(f))
				t.cos[r*len(invFreq)+i], t.sin[r*len(invFreq)+i] = float32(c), float32(s)
			}
		}
	}
	return t.cos[:n], t.sin[:n]
}

// SiLUMul uses exp32 (fused_exp.go), whose error against math.Exp is
// about one ulp.
func (b *Backend) SiLUMul(gate, up []float32) {
	b.runElementwise(elementwiseTask{op: opSiLUMul, out: gate, x: up[:len(gate)]}, units(len(gate)), elemUnit)
}

func (b *Backend) Add(dst, src []float32) {
	b.runElementwise(elementwiseTask{op: opAdd, out: dst, x: src[:len(dst)]}, units(len(dst)), elemUnit)
}
