package metal

import (
	"math"
	"testing"
)

func TestF16(t *testing.T) {
	for _, tc := range []struct {
		f float32
		h uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {0.5, 0x3800},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{6.097555160522461e-05, 0x03ff}, // largest subnormal
		{6.103515625e-05, 0x0400},       // smallest normal
		{1e6, 0x7c00},                   // overflow to +Inf
		{1e-9, 0},                       // underflow to 0
		{1.0009765625, 0x3c01},          // 1 + 2^-10
		{1.00048828125, 0x3c00},         // halfway between 1 and 1+2^-10: ties to even
		{1.00146484375, 0x3c02},         // halfway between 1+2^-10 and 1+2^-9: ties to even
	} {
		if got := F32ToF16(tc.f); got != tc.h {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.f, got, tc.h)
		}
	}
	// every finite half round-trips exactly
	for h := 0; h < 0x10000; h++ {
		f := F16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("%#04x decoded to NaN", h)
			}
			if g := F32ToF16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x re-encoded as %#04x", h, g)
			}
			continue
		}
		if g := F32ToF16(f); g != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, g)
		}
	}
}

func TestBF16(t *testing.T) {
	for _, tc := range []struct {
		f float32
		h uint16
	}{
		{1, 0x3f80}, {-1, 0xbf80}, {0, 0},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie
	} {
		if got := F32ToBF16(tc.f); got != tc.h {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", math.Float32bits(tc.f), got, tc.h)
		}
	}
	if h := F32ToBF16(float32(math.NaN())); !math.IsNaN(float64(BF16ToF32(h))) {
		t.Error("NaN did not stay NaN")
	}
}
