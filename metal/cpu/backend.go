package cpu

import (
	"runtime"

	"github.com/splash-inference/splash/metal"
)

// Backend is the portable CPU backend. Not safe for concurrent calls: one
// model runner owns it.
type Backend struct {
	pool    *pool
	scratch [][]float32 // per worker: a dequantized weight row or attention scores
	mm      matmulTask
	attn    attentionTask
	rope    []float32 // cos and sin table of one row, grown as needed
}

var _ metal.Backend = (*Backend)(nil)

// New starts a backend with the given number of worker threads
// (runtime.NumCPU() when threads <= 0).
func New(threads int) *Backend {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return &Backend{pool: newPool(threads), scratch: make([][]float32, threads)}
}

func (b *Backend) Name() string { return "cpu/portable" }

// Threads is the number of workers.
func (b *Backend) Threads() int { return b.pool.n }

// Close stops the workers; the backend must not be used afterwards.
func (b *Backend) Close() { b.pool.close() }

// workerScratch returns worker w's scratch slice of n floats, growing it on
// first use; each worker touches only its own entry.
func (b *Backend) workerScratch(w, n int) []float32 {
	if cap(b.scratch[w]) < n {
		b.scratch[w] = make([]float32, n)
	}
	return b.scratch[w][:n]
}
