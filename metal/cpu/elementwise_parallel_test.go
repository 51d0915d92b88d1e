package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestElementwiseParallelMatchesSerial: the steps a two-worker backend
// hands to its pool (sizes past parallelMin, ragged ends) give the bits
// the one-worker backend computes serially, and do not allocate.
func TestElementwiseParallelMatchesSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	one, two := New(1), New(2)
	defer one.Close()
	defer two.Close()
	if !two.parallel(opAdd, addParallelMin) || !two.parallel(opRoPE, normParallelMin) || !two.parallel(opRMSNorm, normParallelMin) ||
		!two.parallel(opSiLUMul, parallelMin) || !two.parallel(opQuantize, quantParallelMin) || one.parallel(opAdd, 1<<30) {
		t.Fatal("the two backends do not take the two paths")
	}
	same := func(t *testing.T, what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: [%d] = %v in parallel, %v serially", what, i, got[i], want[i])
			}
		}
	}
	// each runs one step on a backend, from the same inputs, and returns
	// its output
	steps := []struct {
		name string
		run  func(be *Backend) []float32
	}{
		{"RMSNorm 17x1024", func(be *Backend) []float32 {
			x, w := randVecSeed(1, 17*1024), randVecSeed(2, 1024)
			out := make([]float32, len(x))
			be.RMSNorm(out, x, w, 1024, 1e-6)
			return out
		}},
		{"RMSNorm in place 150x128", func(be *Backend) []float32 {
			x, w := randVecSeed(3, 150*128), randVecSeed(4, 128)
			be.RMSNorm(x, x, w, 128, 1e-6)
			return x
		}},
		{"RoPE 9x16x128", func(be *Backend) []float32 {
			x := randVecSeed(5, 9*16*128)
			pos := []int32{0, 3, 9, 100, 5000, 7, 7, 1, 2}
			inv := make([]float32, 64)
			for i := range inv {
				inv[i] = float32(math.Pow(1e6, -float64(i)/64))
			}
			be.RoPE(x, pos, 16, 128, inv)
			return x
		}},
		{"SiLUMul 10003", func(be *Backend) []float32 {
			g, u := randVecSeed(6, 10003), randVecSeed(7, 10003)
			be.SiLUMul(g, u)
			return g
		}},
		{"Add 70001", func(be *Backend) []float32 {
			d, s := randVecSeed(8, 70001), randVecSeed(9, 70001)
			be.Add(d, s)
			return d
		}},
	}
	for _, d := range []metal.DType{metal.Q4, metal.Q8} {
		w, _ := metal.Quantize(d, randVec(rng, 96*1024), 96, 1024)
		for _, prepared := range []bool{false, true} {
			steps = append(steps, struct {
				name string
				run  func(be *Backend) []float32
			}{d.String() + " MatMul 7 rows", func(be *Backend) []float32 {
				if prepared {
					be.PrepareWeights(w)
				}
				x, out := randVecSeed(10, 7*1024), make([]float32, 7*96)
				be.MatMul(out, x, 7, w)
				return out
			}}, struct {
				name string
				run  func(be *Backend) []float32
			}{d.String() + " MatMul 131 rows (activations quantized in parallel)", func(be *Backend) []float32 {
				if prepared {
					be.PrepareWeights(w)
				}
				x, out := randVecSeed(11, 131*1024), make([]float32, 131*96)
				be.MatMul(out, x, 131, w)
				return out
			}})
		}
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			same(t, s.name, s.run(two), s.run(one))
		})
	}

	x, w, out := randVec(rng, 7*1024), randVec(rng, 1024), make([]float32, 7*1024)
	pos, inv := []int32{1, 2, 3, 4, 5, 6, 7}, randVec(rng, 64)
	qw, _ := metal.Quantize(metal.Q4, randVec(rng, 96*1024), 96, 1024)
	two.PrepareWeights(qw)
	call := func() {
		two.RMSNorm(out, x, w, 1024, 1e-6)
		two.RoPE(out, pos, 8, 128, inv)
		two.SiLUMul(out, x)
		two.Add(out, x)
		two.MatMul(out[:7*96], x, 7, qw)
	}
	call() // warm up the scratch
	if n := testing.AllocsPerRun(10, call); n != 0 {
		t.Fatalf("the parallel steps allocate %v times per call", n)
	}
}

// randVecSeed is randVec from a fixed seed, so two calls give equal inputs.
func randVecSeed(seed uint64, n int) []float32 {
	return randVec(rand.New(rand.NewPCG(seed, seed)), n)
}
