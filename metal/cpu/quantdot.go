package cpu

import (
	"encoding/binary"

	"github.com/splash-inference/splash/metal"
)

// The quantized dot products read the weights in place, without widening a
// whole row first: per group of 32, Σ q[j]·x[j] is accumulated in float32 in
// a fixed order, multiplied by the group's scale, and the groups are summed
// in order. Every caller uses the same function for a given dtype, so the
// result depends only on the row's own data (batch invariance).

// dotQ8 is row o of a Q8 tensor dotted with x.
func dotQ8(t *metal.Tensor, o int, x []float32) float32 {
	n := t.Cols
	q := t.Data[o*n : (o+1)*n]
	scales := t.Data[t.ScaleOffset()+2*o*(n/metal.GroupSize):]
	x = x[:n]
	var sum float32
	for g := 0; g < n/metal.GroupSize; g++ {
		qb := q[g*32 : g*32+32 : g*32+32]
		xv := x[g*32 : g*32+32 : g*32+32]
		var a0, a1, a2, a3 float32
		for j := 0; j < 32; j += 4 {
			a0 += float32(int8(qb[j])) * xv[j]
			a1 += float32(int8(qb[j+1])) * xv[j+1]
			a2 += float32(int8(qb[j+2])) * xv[j+2]
			a3 += float32(int8(qb[j+3])) * xv[j+3]
		}
		sum += metal.F16ToF32(binary.LittleEndian.Uint16(scales[2*g:])) * ((a0 + a2) + (a1 + a3))
	}
	return sum
}

// dotQ4 is row o of a Q4 tensor dotted with x.
func dotQ4(t *metal.Tensor, o int, x []float32) float32 {
	n := t.Cols
	q := t.Data[o*n/2 : (o+1)*n/2]
	scales := t.Data[t.ScaleOffset()+2*o*(n/metal.GroupSize):]
	x = x[:n]
	// nibble value table: avoids an int-to-float conversion per weight
	lut := [16]float32{-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7}
	var sum float32
	for g := 0; g < n/metal.GroupSize; g++ {
		qb := q[g*16 : g*16+16 : g*16+16]
		xv := x[g*32 : g*32+32 : g*32+32]
		var a0, a1, a2, a3 float32
		for j := 0; j < 16; j += 2 {
			b0, b1 := qb[j], qb[j+1]
			a0 += lut[b0&15] * xv[j]
			a1 += lut[b0>>4] * xv[j+16]
			a2 += lut[b1&15] * xv[j+1]
			a3 += lut[b1>>4] * xv[j+17]
		}
		sum += metal.F16ToF32(binary.LittleEndian.Uint16(scales[2*g:])) * ((a0 + a2) + (a1 + a3))
	}
	return sum
}
