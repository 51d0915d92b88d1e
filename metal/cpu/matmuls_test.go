package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestMatMulsMatchMatMul: each output of MatMuls is bit-identical to its own
// MatMul, whether the products run as one call (prepared q4 matrices of
// whole tiles) or fall back to one call each (unprepared, a q8 matrix, a
// partial tile), on every kernel set.
func TestMatMulsMatchMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	const cols = 256
	mk := func(d metal.DType, r int) *metal.Tensor {
		w, err := metal.Quantize(d, randVec(rng, r*cols), r, cols)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	cases := []struct {
		name    string
		ws      []*metal.Tensor
		prepare bool
	}{
		{"qkv prepared", []*metal.Tensor{mk(metal.Q4, 64), mk(metal.Q4, 32), mk(metal.Q4, 32)}, true},
		{"gate up prepared", []*metal.Tensor{mk(metal.Q4, 48), mk(metal.Q4, 48)}, true},
		{"unprepared", []*metal.Tensor{mk(metal.Q4, 32), mk(metal.Q4, 32)}, false},
		{"q8 among q4", []*metal.Tensor{mk(metal.Q4, 32), mk(metal.Q8, 32)}, true},
		{"partial tile", []*metal.Tensor{mk(metal.Q4, 32), mk(metal.Q4, 40)}, true},
	}
	for _, ks := range availableKernels() {
		for _, c := range cases {
			for _, rows := range []int{1, 5, 16} {
				t.Run(fmt.Sprintf("%s/%s/rows=%d", ks.name, c.name, rows), func(t *testing.T) {
					be := NewWithOptions(Options{Threads: 2})
					defer be.Close()
					be.k = ks
					if c.prepare {
						for _, w := range c.ws {
							be.PrepareWeights(w)
						}
					}
					x := randVec(rng, rows*cols)
					ps := make([]metal.Product, len(c.ws))
					for i, w := range c.ws {
						ps[i] = metal.Product{Out: make([]float32, rows*w.Rows), W: w}
					}
					be.MatMuls(x, rows, ps)
					for i, p := range ps {
						want := make([]float32, len(p.Out))
						be.MatMul(want, x, rows, p.W)
						for j := range want {
							if math.Float32bits(p.Out[j]) != math.Float32bits(want[j]) {
								t.Fatalf("product %d: out[%d] = %v, MatMul %v", i, j, p.Out[j], want[j])
							}
						}
					}
					if n := testing.AllocsPerRun(10, func() { be.MatMuls(x, rows, ps) }); n != 0 {
						t.Fatalf("MatMuls allocates %v times per call", n)
					}
				})
			}
		}
	}
}
