package metal

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestQuantizeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 5, 96
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	src[7] = 0 // a zero inside a group
	for i := 2 * cols; i < 2*cols+32; i++ {
		src[i] = 0 // an all-zero group: scale 0, values 0
	}
	for _, tc := range []struct {
		d DType
		// bound on |x - deq(x)| relative to the group's max |x|
		bound float64
	}{
		{F32, 0}, {BF16, 1.0 / 256}, {F16, 1.0 / 1024}, {Q8, 0.5/127 + 1e-3}, {Q4, 0.5/8*1.01 + 1e-3},
	} {
		t.Run(tc.d.String(), func(t *testing.T) {
			q, err := Quantize(tc.d, src, rows, cols)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Validate(); err != nil {
				t.Fatal(err)
			}
			if tc.d.Quantized() && q.ScaleOffset()%64 != 0 {
				t.Fatalf("scales at offset %d, not 64-byte aligned", q.ScaleOffset())
			}
			got := q.Dequantize()
			for g := 0; g < len(src)/GroupSize; g++ {
				amax := 0.0
				for _, v := range src[g*GroupSize : (g+1)*GroupSize] {
					amax = math.Max(amax, math.Abs(float64(v)))
				}
				for i := g * GroupSize; i < (g+1)*GroupSize; i++ {
					if d := math.Abs(float64(got[i] - src[i])); d > tc.bound*amax {
						t.Fatalf("element %d: %g -> %g (|Δ| %g > %g)", i, src[i], got[i], d, tc.bound*amax)
					}
				}
			}
		})
	}
}

func TestQ4UsesFullRange(t *testing.T) {
	src := make([]float32, 32)
	for i := range src {
		src[i] = float32(i) - 16 // -16..15: the largest magnitude is -16
	}
	q, _ := Quantize(Q4, src, 1, 32)
	got := q.Dequantize()
	if got[0] != -16 || got[31] != 14 { // scale 2: 15 rounds to 14 (q=7)
		t.Fatalf("got %v", got)
	}
}

func TestQuantizeErrors(t *testing.T) {
	if _, err := Quantize(Q8, make([]float32, 40), 1, 40); err == nil {
		t.Error("q8 with 40 columns accepted")
	}
	if _, err := Quantize(F32, make([]float32, 3), 2, 2); err == nil {
		t.Error("wrong length accepted")
	}
	bad := &Tensor{DType: Q4, Rows: 2, Cols: 32, Data: make([]byte, 10)}
	if bad.Validate() == nil {
		t.Error("short tensor validated")
	}
	if _, err := ParseDType("q3"); err == nil {
		t.Error("q3 parsed")
	}
}
