package cpu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Exact is a·b + c rounded once to float32, computed exactly with
// big.Float.
func fma32Exact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(0).SetMode(big.ToNearestEven)
	x.Mul(big.NewFloat(float64(a)).SetPrec(200), big.NewFloat(float64(b)).SetPrec(200))
	x.Add(x, big.NewFloat(float64(c)).SetPrec(200))
	f, _ := x.Float32()
	return f
}

func TestFMA32RoundsOnce(t *testing.T) {
	cases := [][3]float32{
		// The double-rounding trap: a·b = 1 + 2⁻²⁴ (2²⁴+1 = 97·257·673),
		// halfway between two float32s and exact in float64, and a c too
		// small to move the float64 sum that decides the rounding.
		{97 * 257, 673 * 0x1p-24, 0x1p-60},
		{97 * 257, 673 * 0x1p-24, -0x1p-60},
		{-97 * 257, 673 * 0x1p-24, 0x1p-60},
		{3, 1.0 / 3, -1},
		{0x1p-140, 0x1p-10, 0}, // a subnormal result
		{-2, 0.5, 1},           // an exact zero
		{float32(math.Inf(1)), 1, 1},
	}
	rng := rand.New(rand.NewPCG(20, 21))
	for range 200000 {
		a, b := float32(rng.NormFloat64()), float32(rng.NormFloat64())
		c := float32(rng.NormFloat64()) * float32(math.Pow(2, float64(rng.IntN(80)-40)))
		cases = append(cases, [3]float32{a, b, c})
		// c = −(a·b) rounded: the sum is the product's rounding error.
		cases = append(cases, [3]float32{a, b, -a * b})
	}
	for _, c := range cases {
		got := fma32(c[0], c[1], c[2])
		if math.IsInf(float64(c[0]), 0) {
			if !math.IsInf(float64(got), 1) {
				t.Fatalf("fma32(%v) = %v, want +Inf", c, got)
			}
			continue
		}
		if want := fma32Exact(c[0], c[1], c[2]); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, exactly rounded %g", c[0], c[1], c[2], got, want)
		}
	}
}
