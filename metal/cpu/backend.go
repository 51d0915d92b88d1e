package cpu

import (
	"runtime"

	"github.com/splash-inference/splash/metal"
)

// Backend is the portable CPU backend. Not safe for concurrent calls: one
// model runner owns it.
type Backend struct {
	pool    *pool
	k       kernels
	f       fusedKernels
	acts    qacts       // the current MatMul's activations, int8-quantized
	scratch [][]float32 // per worker: a dequantized weight row or attention scores
	accs    [][]laneAcc // per worker: lane accumulators, one per activation row
	heads   []headLists // per worker: attention's lists of query heads
	mm      matmulTask
	shared  sharedTask
	elem    elementwiseTask
	attn    attentionTask
	// attnRuns and attnShared: the current Attention call's runs and the
	// positions their sequences share (attention.go).
	attnRuns, attnShared []int32
	rope                 ropeTable
	linear               linearTasks   // the LinearAttention calls (gdn.go)
	packed               packedWeights // q4 matrices in the packed kernel's layout
}

var (
	_ metal.Backend        = (*Backend)(nil)
	_ metal.WeightPreparer = (*Backend)(nil)
)

// New starts a backend with the given number of worker threads
// (runtime.GOMAXPROCS(0), normally the CPU count, when threads <= 0) and the fastest kernels this CPU has.
func New(threads int) *Backend { return NewWithOptions(Options{Threads: threads}) }

// NewWithOptions starts a backend configured by o.
func NewWithOptions(o Options) *Backend {
	if o.Threads <= 0 {
		// GOMAXPROCS rather than NumCPU: it honours container CPU limits
		// and `go test -cpu`, so benchmarks can run on one core.
		o.Threads = runtime.GOMAXPROCS(0)
	}
	k := selectKernels(o)
	b := &Backend{pool: newPool(o.Threads), k: k, f: selectFused(o, k), scratch: make([][]float32, o.Threads), accs: make([][]laneAcc, o.Threads),
		heads: make([]headLists, o.Threads)}
	b.packed.arena.small = o.SmallPages
	return b
}

// Name is the kernel set in use, e.g. "cpu/avx2" or "cpu/portable".
func (b *Backend) Name() string { return b.k.name }

// Threads is the number of workers.
func (b *Backend) Threads() int { return b.pool.n }

// Close stops the workers; the backend must not be used afterwards.
func (b *Backend) Close() { b.pool.close() }

// workerScratch returns worker w's scratch slice of n floats, growing it on
// first use; each worker touches only its own entry. It grows at least
// twofold: attention asks a little more at every prompt chunk (its scores
// span the context), and growing to each size exactly left a trail of
// buffers, quadratic in the prompt, for the collector. ReserveAttention
// sizes it once for a served context instead.
func (b *Backend) workerScratch(w, n int) []float32 {
	if c := cap(b.scratch[w]); c < n {
		b.scratch[w] = make([]float32, max(n, 2*c))
	}
	return b.scratch[w][:n]
}

// workerAcc returns worker w's n lane accumulators, growing them on first
// use; each worker touches only its own entry.
func (b *Backend) workerAcc(w, n int) []laneAcc {
	if cap(b.accs[w]) < n {
		b.accs[w] = make([]laneAcc, n)
	}
	return b.accs[w][:n]
}
