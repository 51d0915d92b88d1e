package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCausalConv1DMatchesReference runs sequences through CausalConv1D
// in calls of various lengths, the state carried between them, against
// the convolution of the whole sequence in float64 (zeros before its
// first token); afterwards the state must hold the last kernel-1 inputs.
func TestCausalConv1DMatchesReference(t *testing.T) {
	splits := [][]int{{1}, {1, 1, 1, 1, 1}, {7}, {2, 9, 1, 30}}
	for _, threads := range []int{1, 2} {
		be := New(threads)
		for _, shape := range [][2]int{{1, 2}, {5, 4}, {1500, 4}, {3, 1}, {9, 6}} {
			channels, kernel := shape[0], shape[1]
			for _, split := range splits {
				for _, inPlace := range []bool{false, true} {
					t.Run(fmt.Sprintf("threads%d/c%d/k%d/%v/inplace=%v", threads, channels, kernel, split, inPlace), func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(channels), uint64(kernel)))
						rows := 0
						for _, n := range split {
							rows += n
						}
						x, w := randVec(rng, rows*channels), randVec(rng, channels*kernel)
						want := make([]float64, rows*channels)
						for r := range rows {
							for c := range channels {
								var s float64
								for j := range kernel {
									if p := r - (kernel - 1) + j; p >= 0 {
										s += float64(w[c*kernel+j]) * float64(x[p*channels+c])
									}
								}
								want[r*channels+c] = s / (1 + math.Exp(-s))
							}
						}
						state := make([]float32, (kernel-1)*channels)
						got := make([]float32, rows*channels)
						in := append([]float32(nil), x...)
						r0 := 0
						for _, n := range split {
							seg := in[r0*channels : (r0+n)*channels]
							out := got[r0*channels : (r0+n)*channels]
							if inPlace {
								out = seg
							}
							be.CausalConv1D(out, seg, state, w, n, channels, kernel)
							r0 += n
						}
						if inPlace {
							got = in
						}
						if e := maxRelErr(got, want); e > 1e-6 {
							t.Errorf("output: max error %.3g of the largest value", e)
						}
						for j := range kernel - 1 {
							for c := range channels {
								var wantState float32
								if p := rows - (kernel - 1) + j; p >= 0 {
									wantState = x[p*channels+c]
								}
								if s := state[j*channels+c]; s != wantState {
									t.Fatalf("state[%d][%d] = %v, want input %v", j, c, s, wantState)
								}
							}
						}
					})
				}
			}
		}
		be.Close()
	}
}
