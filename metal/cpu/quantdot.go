package cpu

import (
	"encoding/binary"

	"github.com/splash-inference/splash/metal"
)

// Portable quantized dot products of one weight row with one int8
// activation row. Per group of 32 the integer sum is exact; the groups are
// combined in order as sum += (wscale·xscale)·float32(isum), in float32.
// The assembly kernels compute exactly the same operations in the same
// order, so every path gives bit-identical results.

// dotQ4Ref is row o of a Q4 tensor dotted with x. Weights are stored as
// u = q+8 in [0, 15]: Σ q·x = Σ u·x − 8·Σ x.
func dotQ4Ref(w []byte, ws []byte, x qrow) float32 {
	var sum float32
	for g := range x.scale {
		qb := w[g*16 : g*16+16 : g*16+16]
		xv := x.q[g*32 : g*32+32 : g*32+32]
		var isum int32
		for j := 0; j < 16; j++ {
			isum += int32(qb[j]&15)*int32(xv[j]) + int32(qb[j]>>4)*int32(xv[j+16])
		}
		isum -= 8 * x.sum[g]
		d := metal.F16ToF32(binary.LittleEndian.Uint16(ws[2*g:])) * x.scale[g]
		sum += d * float32(isum)
	}
	return sum
}

// dotQ8Ref is row o of a Q8 tensor dotted with x.
func dotQ8Ref(w []byte, ws []byte, x qrow) float32 {
	var sum float32
	for g := range x.scale {
		qb := w[g*32 : g*32+32 : g*32+32]
		xv := x.q[g*32 : g*32+32 : g*32+32]
		var isum int32
		for j := 0; j < 32; j++ {
			isum += int32(int8(qb[j])) * int32(xv[j])
		}
		d := metal.F16ToF32(binary.LittleEndian.Uint16(ws[2*g:])) * x.scale[g]
		sum += d * float32(isum)
	}
	return sum
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
