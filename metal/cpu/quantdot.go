package cpu

import (
	"encoding/binary"

	"github.com/splash-inference/splash/metal"
)

// Portable quantized dot products of one weight row with one int8
// activation row: the reference every SIMD kernel must match bit for bit.
//
// Per group of 32 the integer sum is exact, so SIMD kernels may add its
// products in any order. The float part is fixed: group g contributes
// p = (wscale·xscale)·float32(isum), each product rounded to float32 (no
// fused multiply-add), to lane g mod 8 of eight float32 accumulators, which
// are finally added as ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)). Eight lanes are
// one AVX2 register of groups, so the kernels convert and combine eight
// groups per step in vector registers, in exactly this order.

// groupLanes is the number of float32 accumulators groups are spread over.
const groupLanes = 8

// laneAcc holds the eight per-lane partial sums of one dot product.
type laneAcc [groupLanes]float32

// sum adds the lanes in the fixed pairwise order.
func (a *laneAcc) sum() float32 {
	return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}

// add accumulates group g's integer sum; the explicit float32 conversions
// forbid the compiler from fusing the multiply and add (Go fuses x*y+z on
// arm64, ppc64 and s390x otherwise).
func (a *laneAcc) add(g int, wscale, xscale float32, isum int32) {
	d := float32(wscale * xscale)
	a[g%groupLanes] += float32(d * float32(isum))
}

// dotQ4Ref is row o of a Q4 tensor dotted with x.
func dotQ4Ref(w []byte, ws []byte, x qrow) float32 {
	var acc laneAcc
	accumQ4(&acc, w, ws, x, 0)
	return acc.sum()
}

// accumQ4 adds groups from..end of a Q4 row dotted with x into acc. Weights
// are stored as u = q+8 in [0, 15]: Σ q·x = Σ u·x − 8·Σ x.
func accumQ4(acc *laneAcc, w []byte, ws []byte, x qrow, from int) {
	for g := from; g < len(x.scale); g++ {
		qb := w[g*16 : g*16+16 : g*16+16]
		xv := x.q[g*32 : g*32+32 : g*32+32]
		var isum int32
		for j := 0; j < 16; j++ {
			isum += int32(qb[j]&15)*int32(xv[j]) + int32(qb[j]>>4)*int32(xv[j+16])
		}
		isum -= 8 * x.sum[g]
		acc.add(g, metal.F16ToF32(binary.LittleEndian.Uint16(ws[2*g:])), x.scale[g], isum)
	}
}

// dotQ8Ref is row o of a Q8 tensor dotted with x.
func dotQ8Ref(w []byte, ws []byte, x qrow) float32 {
	var acc laneAcc
	accumQ8(&acc, w, ws, x, 0)
	return acc.sum()
}

// accumQ8 adds groups from..end of a Q8 row dotted with x into acc.
func accumQ8(acc *laneAcc, w []byte, ws []byte, x qrow, from int) {
	for g := from; g < len(x.scale); g++ {
		qb := w[g*32 : g*32+32 : g*32+32]
		xv := x.q[g*32 : g*32+32 : g*32+32]
		var isum int32
		for j := 0; j < 32; j++ {
			isum += int32(int8(qb[j])) * int32(xv[j])
		}
		acc.add(g, metal.F16ToF32(binary.LittleEndian.Uint16(ws[2*g:])), x.scale[g], isum)
	}
}

// quantRow returns the quant bytes and scale bytes of row o of t.
func quantRow(t *metal.Tensor, o int) (w, ws []byte) {
	n, g := t.Cols, t.Cols/metal.GroupSize
	so := t.ScaleOffset()
	ws = t.Data[so+2*o*g : so+2*(o+1)*g]
	if t.DType == metal.Q4 {
		return t.Data[o*n/2 : (o+1)*n/2], ws
	}
	return t.Data[o*n : (o+1)*n], ws
}
