package cpu

import "math"

// A float32 exponential for softmax and SiLU, written so the AVX2 version
// (fused_amd64.s) performs exactly the same IEEE operations in the same
// order and returns the same bits. Against math.Exp its relative error is
// below 1e-7 (about one float32 ulp; TestExp32Accuracy holds it to 2.5e-7)
// for x in [-87, 88], and it is 5-10x faster than float32(math.Exp); inputs
// outside are clamped to that range, so exp32 of a very negative number is
// about 1.6e-38 instead of 0 and never overflows to +Inf. NaN inputs give
// unspecified results.
//
// Method: x = n·ln2 + r with n = round(x·log2e) and |r| <= ln2/2 (the
// product n·ln2 split in a high part exact in float32 and a low part);
// exp(r) by its Taylor polynomial of degree 7 (truncation error < 6e-9);
// 2^n built directly in the exponent bits.
const (
	expLo    float32 = -87 // exp(-87) is still a normal float32
	expHi    float32 = 88  // round(88·log2e) = 127: 2^n stays finite
	expLog2e float32 = 1.44269504088896341
	expMagic float32 = 12582912 // 1.5·2^23: adding it rounds to an integer
	expLn2Hi float32 = 0.693359375
	expLn2Lo float32 = -2.12194440e-4
)

// expCoeffs are 1/7!, 1/6!, ..., 1/1!, 1/0!: Horner's order.
var expCoeffs = [8]float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1, 1}

// exp32 approximates e^x; see the constants above. The float32(…)
// conversions forbid fused multiply-adds, which the SIMD code does not use.
func exp32(x float32) float32 {
	x = min(max(x, expLo), expHi)
	t := float32(x*expLog2e) + expMagic
	n := t - expMagic
	r := x - float32(n*expLn2Hi)
	r -= float32(n * expLn2Lo)
	p := expCoeffs[0]
	for _, c := range expCoeffs[1:] {
		p = float32(p*r) + c
	}
	// t's low mantissa bits hold n + 0x400000; move n + 127 into the exponent.
	scale := math.Float32frombits((math.Float32bits(t) - 0x4B400000 + 127) << 23)
	return p * scale
}

// expShift sets x[i] = exp32(x[i] - m) and returns their sum, added in
// eight lanes (element i into lane i mod 8), the lanes combined as
// ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)), then the tail in order — the order
// of dot, so SIMD code can keep one register of lanes.
func expShift(x []float32, m float32) float32 {
	var s [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		for j := range v {
			v[j] = exp32(v[j] - m)
			s[j] += v[j]
		}
	}
	sum := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
	return expShiftTail(sum, x[i:], m)
}

// expShiftTail is expShift's loop over the elements after the last eight.
func expShiftTail(sum float32, x []float32, m float32) float32 {
	for i, v := range x {
		x[i] = exp32(v - m)
		sum += x[i]
	}
	return sum
}

// siluMul sets gate[i] = silu(gate[i])·up[i] = gate[i]/(1+e^-gate[i])·up[i].
func siluMul(gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		gate[i] = float32(g/(1+exp32(-g))) * up[i]
	}
}
