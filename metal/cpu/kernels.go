package cpu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/splash-inference/splash/metal"
)

// quantRows sets out[r·t.Rows + o] to row o of the quantized tensor t
// dotted with int8 activation row r of a, for o0 <= o < o1 and r < rows.
// acc is scratch of at least (o1-o0)·rows entries.
type quantRows func(t *metal.Tensor, o0, o1 int, a *qacts, rows int, acc []laneAcc, out []float32)

// kernels are the implementations a Backend dispatches to, chosen once at
// New from the CPU's features.
type kernels struct {
	name           string
	rowsQ4, rowsQ8 quantRows
	// q4Layout: rowsQ4 reads the permuted activations (qacts.permuteQ4).
	q4Layout bool
	// q4Tile, when set, computes whole tiles of q4TileRows weight rows of
	// a q4 matrix product (quantdot_tiled.go) from matrices of
	// q4TileMinRows activation rows on.
	q4Tile     tileFunc
	q4TileRows int
	// q4Packed, when set, computes whole tiles of packHeight weight rows
	// of q4 matrices packed by Backend.PrepareWeights (packed.go), for any
	// number of activation rows; q8Packed, when set, the same for q8.
	q4Packed, q8Packed packedFunc
	packHeight         int
	// q8Signed: q8Packed reads its weights as signed bytes (SDOT), not as
	// q+128 (VPDPBUSD takes unsigned weights).
	q8Signed bool
	// fused names the attention set (fusedKernels) that goes with this
	// set when it is chosen by name: the one a CPU with no better set runs.
	fused string
	// packedFarRows: the packed kernels' calls for packedFarRows[0] to
	// packedFarRows[1] activation rows prefetch packedFarLead bytes ahead,
	// the others packedNearLead (packedLead; zero: all near).
	packedFarRows [2]int
	// quantGroups quantizes activations (quantGroupsRef, actquant.go).
	quantGroups quantGroupsFunc
	// dotF32 and axpy: the float32 loops of floatdot.go.
	dotF32 func(a, b []float32) float32
	axpy   func(o, v []float32, w float32)
	// axpyRows and deltaRow: the gated delta rule's combinations of rows
	// and its token loop's row update (floatdot.go).
	axpyRows func(o, m, c []float32, stride int)
	deltaRow func(row, u, o []float32, e, k, q float32)
	// dotPeak, when set, runs iters iterations of the set's integer
	// dot-product instruction at full rate, dotPeakOps operations each
	// (Backend.DotPeak).
	dotPeak    func(iters int)
	dotPeakOps int
	// quantSpeedup is how many multiply-adds the set's quantized matrix
	// kernels do in the time the attention kernels of the same CPU do one
	// (Backend.QuantSpeedup); 1 when zero.
	quantSpeedup float64
}

// rowsFor is the set's row kernel for quantized matrices of dtype d
// (q4 or q8).
func (k *kernels) rowsFor(d metal.DType) quantRows {
	if d == metal.Q4 {
		return k.rowsQ4
	}
	return k.rowsQ8
}

// packedFor is the set's packed kernel for matrices of dtype d, or nil.
func (k *kernels) packedFor(d metal.DType) packedFunc {
	switch d {
	case metal.Q4:
		return k.q4Packed
	case metal.Q8:
		return k.q8Packed
	}
	return nil
}

// packedLead is how far ahead of its reads the set's packed kernel
// prefetches for rows activation rows (packed.go).
func (k *kernels) packedLead(rows int) int {
	if rows >= k.packedFarRows[0] && rows <= k.packedFarRows[1] {
		return packedFarLead
	}
	return packedNearLead
}

func portableKernels() kernels {
	return kernels{name: "cpu/portable", rowsQ4: refRows(dotQ4Ref), rowsQ8: refRows(dotQ8Ref),
		quantGroups: quantGroupsRef, dotF32: dot, axpy: axpy, axpyRows: axpyRows, deltaRow: deltaRow}
}

// Options configure a Backend.
type Options struct {
	Threads int // worker threads; <= 0 means runtime.GOMAXPROCS(0)
	// Portable forces the pure-Go kernels even where faster ones exist
	// (SPLASH_KERNELS=portable on the command line).
	Portable bool
	// Kernels names the kernel set to use, one of KernelSets ("avx2" on a
	// CPU with AVX-512 runs what a CPU with AVX2 alone would run, the
	// attention loops included; Backend.Name says which set ran); empty
	// means the best. A name KernelSets does not list is ignored: callers
	// check it first (SPLASH_KERNELS on the command line).
	Kernels string
	// SmallPages keeps the packed weights and the KV caches in ordinary
	// pages rather than asking the OS for huge pages (weightArena,
	// KVBuffer; SPLASH_HUGEPAGES=off on the command line).
	SmallPages bool
}

func selectKernels(o Options) kernels {
	if o.Portable || o.Kernels == portableSet {
		return portableKernels()
	}
	for _, k := range availableKernels() {
		if setName(k.name) == o.Kernels {
			return k
		}
	}
	return bestKernels()
}

// portableSet is the portable set's name in KernelSets.
const portableSet = "portable"

// setName is a kernel set's name without its "cpu/" prefix.
func setName(name string) string { return strings.TrimPrefix(name, "cpu/") }

// CheckKernels is nil when name is empty (the best set) or names a set
// in KernelSets, else an error that lists them.
func CheckKernels(name string) error {
	sets := KernelSets()
	if name == "" || slices.Contains(sets, name) {
		return nil
	}
	return fmt.Errorf("no kernel set %q on this CPU (it runs %s)", name, strings.Join(sets, ", "))
}

// KernelSets names the kernel sets this CPU can run, best first, the
// portable one last: the values of Options.Kernels.
func KernelSets() []string {
	var names []string
	for _, k := range availableKernels() {
		names = append(names, setName(k.name))
	}
	return append(names, portableSet)
}

// bestKernels is the fastest kernel set this CPU can run.
func bestKernels() kernels {
	if ks := availableKernels(); len(ks) > 0 {
		return ks[0]
	}
	return portableKernels()
}

// refRows turns a one-row reference dot product into a quantRows.
func refRows(dot func(w, ws []byte, x qrow) float32) quantRows {
	return func(t *metal.Tensor, o0, o1 int, a *qacts, rows int, _ []laneAcc, out []float32) {
		for o := o0; o < o1; o++ {
			w, ws := quantRow(t, o)
			for r := 0; r < rows; r++ {
				out[r*t.Rows+o] = dot(w, ws, a.row(r, t.Cols))
			}
		}
	}
}
