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
		inv := float32(1 / math.Sqrt(f.sumSquares(row)/float64(dim)+float64(eps)))
		f.normScale(o, row, weight, inv)
	}
}

// sumSquaresRef is Σ x² in float64 over sixteen interleaved partial sums
// (lane l takes x[l], x[l+16], …), folded by foldSquares, then the
// elements after the last sixteen in order. Each square of a float32 is
// exact in float64, so only the order of the adds matters, and sixteen
// independent chains let SIMD kernels keep their adders busy: with one
// chain this was a decode step's longest serial stretch (Qwen3's q and k
// norms are 24 rows of 128 per token and layer).
func sumSquaresRef(x []float32) float64 {
	var s [16]float64
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		v := x[i : i+16 : i+16]
		for l := range s {
			s[l] += float64(v[l]) * float64(v[l])
		}
	}
	ss := foldSquares(&s)
	for _, v := range x[n:] {
		ss += float64(v) * float64(v)
	}
	return ss
}

// foldSquares adds lane l+8 to lane l, then the eight sums as
// ((t0+t4)+(t2+t6))+((t1+t5)+(t3+t7)).
func foldSquares(s *[16]float64) float64 {
	var t [8]float64
	for l := range t {
		t[l] = s[l] + s[l+8]
	}
	return ((t[0] + t[4]) + (t[2] + t[6])) + ((t[1] + t[5]) + (t[3] + t[7]))
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
