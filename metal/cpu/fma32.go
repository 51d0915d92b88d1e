package cpu

import "math"

// fma32 returns a·b + c rounded once to float32, as VFMADD231PS and FMLA
// compute it. Go has no float32 fused multiply-add, and rounding
// math.FMA's float64 result again to float32 can differ from one
// rounding: when the float64 result falls exactly halfway between two
// float32s though the exact sum does not. So the sum is formed in float64
// with its rounding error (a·b is exact in float64, and TwoSum recovers
// the error of the addition exactly), rounded to odd (the last bit of an
// inexact result set), which a second rounding to the 24 bits of float32
// cannot get wrong (53 ≥ 2·24 + 2).
func fma32(a, b, c float32) float32 {
	p, z := float64(a)*float64(b), float64(c)
	s := p + z
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	t := s - p
	e := (p - (s - t)) + (z - t) // s + e = p + z exactly
	if e != 0 {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			// Move s one ulp toward the exact sum: its last bit becomes 1.
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}
