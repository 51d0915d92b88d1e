package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestMatMulKernelSetsMatchPortable runs whole MatMul calls (tiling,
// activation layout, tails) with every kernel set and compares bit for bit
// with the portable set.
func TestMatMulKernelSetsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const out = 600 // several tiles at every row count below
	for _, d := range []metal.DType{metal.Q4, metal.Q8} {
		for _, cols := range []int{64, 288, 1024} {
			w, _ := metal.Quantize(d, randVec(rng, out*cols), out, cols)
			for _, rows := range []int{1, 3, 70} {
				x := randVec(rng, rows*cols)
				ref := NewWithOptions(Options{Threads: 2, Portable: true})
				want := make([]float32, rows*out)
				ref.MatMul(want, x, rows, w)
				ref.Close()
				for _, k := range availableKernels() {
					be := New(2)
					be.k = k
					got := make([]float32, rows*out)
					be.MatMul(got, x, rows, w)
					be.Close()
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %s cols %d rows %d: out[%d] = %v, portable %v", k.name, d, cols, rows, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func TestPermuteQ4Layout(t *testing.T) {
	for _, cols := range []int{32, 128, 160, 256} {
		const rows = 2
		var a qacts
		a.q = make([]int8, rows*cols)
		for i := range a.q {
			a.q[i] = int8(i % 251)
		}
		a.permuteQ4(rows, cols)
		for r := 0; r < rows; r++ {
			src, dst := a.q[r*cols:(r+1)*cols], a.q4x[r*cols:(r+1)*cols]
			for i := range src {
				want := src[i] // groups after the last whole four are copied
				if c := i / 128 * 128; c+128 <= cols {
					half, k, j := (i-c)/64, (i-c)%64/16, (i-c)%16
					want = src[c+k*32+half*16+j]
				}
				if dst[i] != want {
					t.Fatalf("cols %d row %d: q4x[%d] = %d, want %d", cols, r, i, dst[i], want)
				}
			}
		}
	}
}

func TestFloatKernelsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ref := portableKernels()
	for _, k := range availableKernels() {
		for _, n := range []int{0, 1, 7, 8, 9, 64, 128, 131} {
			a, b := randVec(rng, n), randVec(rng, n)
			if want, got := ref.dotF32(a, b), k.dotF32(a, b); math.Float32bits(want) != math.Float32bits(got) {
				t.Fatalf("%s dot n=%d: %v, portable %v", k.name, n, got, want)
			}
			o1 := randVec(rng, n)
			o2 := append([]float32(nil), o1...)
			ref.axpy(o1, a, 0.37)
			k.axpy(o2, a, 0.37)
			for i := range o1 {
				if math.Float32bits(o1[i]) != math.Float32bits(o2[i]) {
					t.Fatalf("%s axpy n=%d: o[%d] = %v, portable %v", k.name, n, i, o2[i], o1[i])
				}
			}
		}
	}
}
