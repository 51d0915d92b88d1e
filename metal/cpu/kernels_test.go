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
//
// Output sizes: 600 is whole 8-row tiles and a partial 16- and 32-row
// tile, 604 partial tiles of all. Columns: 2 groups, 9 (odd, not a
// multiple of the 8 lanes) and 32. Rows: the one-row path, a few rows,
// one past a 32-row tile kernel's call (packed32RowChunk), exactly one
// chunk of tileRowChunk, one row past it, and a chunk and a call and more.
func TestMatMulKernelSetsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		d         metal.DType
		out, cols int
	}{
		{metal.Q4, 600, 64}, {metal.Q4, 604, 288}, {metal.Q4, 600, 1024}, {metal.Q4, 604, 1024},
		{metal.Q8, 600, 64}, {metal.Q8, 604, 288}, {metal.Q8, 600, 1024},
	} {
		d, out, cols := c.d, c.out, c.cols
		w, _ := metal.Quantize(d, randVec(rng, out*cols), out, cols)
		for _, rows := range []int{1, 2, 3, 5, packed32RowChunk + 1, tileRowChunk, tileRowChunk + 1, tileRowChunk + packed32RowChunk + 3} {
			x := randVec(rng, rows*cols)
			ref := NewWithOptions(Options{Threads: 2, Portable: true})
			want := make([]float32, rows*out)
			ref.MatMul(want, x, rows, w)
			ref.Close()
			for _, k := range availableKernels() {
				// prepared: the matrix packed for the kernel set's packed
				// kernel, where it has one (packed.go).
				for _, prepared := range []bool{false, true} {
					if prepared && k.q4Packed == nil {
						continue
					}
					be := New(2)
					be.k = k
					if prepared {
						be.PrepareWeights(w)
					}
					got := make([]float32, rows*out)
					be.MatMul(got, x, rows, w)
					be.Close()
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s prepared=%v %s %dx%d rows %d: out[%d] = %v, portable %v", k.name, prepared, d, out, cols, rows, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func TestTiledActsLayout(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{1, 32}, {3, 96}, {tileRowChunk + 2, 64}} {
		rows, cols := c.rows, c.cols
		groups := cols / 32
		rng := rand.New(rand.NewPCG(15, 16))
		var a qacts
		x := randVec(rng, rows*cols)
		a.quantize(x, rows, cols, quantGroupsRef)
		a.tiled.quantize(x, rows, cols, quantGroupsRef, 3)
		for r := 0; r < rows; r++ {
			r0 := r / tileRowChunk * tileRowChunk
			n := min(tileRowChunk, rows-r0)
			for g := 0; g < groups; g++ {
				s := r0*groups + g*n + r - r0
				if got, want := a.tiled.scale[s], a.scale[r*groups+g]; got != want {
					t.Fatalf("%dx%d: scale of row %d group %d = %v, want %v", rows, cols, r, g, got, want)
				}
				if got, want := a.tiled.bias[s], -8*a.sum[r*groups+g]; got != want {
					t.Fatalf("%dx%d: bias of row %d group %d = %d, want %d", rows, cols, r, g, got, want)
				}
				for j := 0; j < 32; j++ {
					if got, want := a.tiled.q[r0*cols+(g*n+r-r0)*32+j], a.q[r*cols+g*32+j]; got != want {
						t.Fatalf("%dx%d: q of row %d group %d [%d] = %d, want %d", rows, cols, r, g, j, got, want)
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
		for _, n := range []int{0, 1, 7, 8, 9, 64, 128, 131, 200} {
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
			row1, out1 := randVec(rng, n), randVec(rng, n)
			row2, out2 := append([]float32(nil), row1...), append([]float32(nil), out1...)
			ref.deltaRow(row1, a, out1, 0.93, -0.41, 0.29)
			k.deltaRow(row2, a, out2, 0.93, -0.41, 0.29)
			for i := range row1 {
				if math.Float32bits(row1[i]) != math.Float32bits(row2[i]) || math.Float32bits(out1[i]) != math.Float32bits(out2[i]) {
					t.Fatalf("%s deltaRow n=%d: [%d] = %v, %v, portable %v, %v", k.name, n, i, row2[i], out2[i], row1[i], out1[i])
				}
			}
			for _, rows := range []int{1, 7} {
				stride := n + 5
				m, c := randVec(rng, rows*stride), randVec(rng, rows)
				u1 := randVec(rng, n)
				u2 := append([]float32(nil), u1...)
				ref.axpyRows(u1, m, c, stride)
				k.axpyRows(u2, m, c, stride)
				for i := range u1 {
					if math.Float32bits(u1[i]) != math.Float32bits(u2[i]) {
						t.Fatalf("%s axpyRows n=%d rows=%d: o[%d] = %v, portable %v", k.name, n, rows, i, u2[i], u1[i])
					}
				}
			}
		}
	}
}

// TestQuantGroupsMatchReference: every kernel set quantizes activations to
// the reference's bits, including all-zero groups, values that round to
// exact halves, and magnitudes from tiny to huge.
func TestQuantGroupsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const groups = 64
	x := randVec(rng, 32*groups)
	for j := 0; j < 32; j++ {
		x[32*3+j] = 0               // a zero group: scale 0, quants 0
		x[32*4+j] = float32(j) - 16 // amax 16: many products land on halves
		x[32*5+j] *= 1e-30
		x[32*6+j] *= 1e30
	}
	for _, k := range append(availableKernels(), portableKernels()) {
		for _, n := range []int{1, 7, groups} {
			wq, ws, wsum := make([]int8, 32*n), make([]float32, n), make([]int32, n)
			gq, gs, gsum := make([]int8, 32*n), make([]float32, n), make([]int32, n)
			quantGroupsRef(x[:32*n], wq, ws, wsum, 32, 1, 1)
			k.quantGroups(x[:32*n], gq, gs, gsum, 32, 1, 1)
			for g := 0; g < n; g++ {
				if math.Float32bits(gs[g]) != math.Float32bits(ws[g]) || gsum[g] != wsum[g] {
					t.Fatalf("%s groups %d: group %d scale %v sum %d, reference %v %d", k.name, n, g, gs[g], gsum[g], ws[g], wsum[g])
				}
			}
			for i := range wq {
				if gq[i] != wq[i] {
					t.Fatalf("%s groups %d: q[%d] = %d, reference %d", k.name, n, i, gq[i], wq[i])
				}
			}
			// The tiled layout's steps: groups three slots apart, the sums
			// as q4 biases (−8·Σq), and nothing written between them.
			const qstep, sstep, sentinel = 96, 3, 99
			sq, ss, sb := make([]int8, qstep*n), make([]float32, sstep*n), make([]int32, sstep*n)
			for i := range sq {
				sq[i] = sentinel
			}
			for i := range ss {
				ss[i], sb[i] = sentinel, sentinel
			}
			k.quantGroups(x[:32*n], sq, ss, sb, qstep, sstep, -8)
			for g := 0; g < n; g++ {
				if math.Float32bits(ss[g*sstep]) != math.Float32bits(ws[g]) || sb[g*sstep] != -8*wsum[g] {
					t.Fatalf("%s groups %d strided: group %d scale %v bias %d, reference %v %d", k.name, n, g, ss[g*sstep], sb[g*sstep], ws[g], -8*wsum[g])
				}
				for j := 1; j < sstep; j++ {
					if ss[g*sstep+j] != sentinel || sb[g*sstep+j] != sentinel {
						t.Fatalf("%s groups %d strided: wrote between group %d's scales", k.name, n, g)
					}
				}
				for j := range qstep {
					want := int8(sentinel)
					if j < 32 {
						want = wq[g*32+j]
					}
					if sq[g*qstep+j] != want {
						t.Fatalf("%s groups %d strided: q[%d] = %d, want %d", k.name, n, g*qstep+j, sq[g*qstep+j], want)
					}
				}
			}
		}
	}
}
