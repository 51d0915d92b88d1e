package metal

import "math"

// BF16ToF32 widens a bfloat16 (the top 16 bits of a float32).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 narrows to bfloat16 with round-to-nearest-even, keeping NaN a NaN.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and non-zero
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// F32ToBF16DAZ is F32ToBF16 with values below float32's normal range
// (which bfloat16 shares) becoming zero of their sign, as VCVTNEPS2BF16
// narrows: what a KVBF16 cache stores, and what attention rounds its
// queries and softmax weights to there, so that no product sees a
// subnormal (VDPBF16PS would take it as zero).
func F32ToBF16DAZ(f float32) uint16 {
	if math.Float32bits(f)&0x7f800000 == 0 {
		return uint16(math.Float32bits(f)>>16) & 0x8000
	}
	return F32ToBF16(f)
}

// F16ToF32 widens an IEEE 754 half-precision float. The magnitude bits
// shifted into a float32 are the value scaled by 2^-112 (subnormal halves
// land on float32 subnormals), so one exact multiply widens every finite
// half; exponent 31 (Inf, NaN) is set directly. Small enough to inline
// into the float16 loops of the portable kernels.
func F16ToF32(h uint16) float32 {
	b := uint32(h&0x7fff) << 13
	f := math.Float32frombits(b) * 0x1p112
	if h&0x7c00 == 0x7c00 {
		f = math.Float32frombits(b | 0x7f800000)
	}
	return math.Float32frombits(math.Float32bits(f) | uint32(h&0x8000)<<16)
}

// F32ToF16 narrows to IEEE half precision with round-to-nearest-even;
// values beyond the half range become ±Inf.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // subnormal or zero in half precision
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		rem := man & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is still correct (up to Inf)
	}
	return sign | uint16(r)
}
