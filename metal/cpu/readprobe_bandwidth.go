package cpu

import "time"

// ReadBandwidth measures the memory read bandwidth of the backend's
// workers together, in bytes per second: the best of three timed reads of
// a buffer of size bytes (at least 1 MiB; make it well beyond the
// last-level cache) split among the workers. Benchmarks divide their
// weight traffic by it to report the fraction of the bandwidth bound they
// reach, measured in the same run. It allocates and writes the buffer
// (so its pages are real memory, not the shared zero page); not for use
// while serving.
func (b *Backend) ReadBandwidth(size int) float64 {
	mib := max(size>>20, 1)
	t := &bandwidthTask{buf: make([]byte, mib<<20), sums: make([]uint64, b.pool.n)}
	words := u64s(t.buf)
	for i := range words {
		words[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	best := 0.0
	for i := 0; i < 3; i++ {
		start := time.Now()
		b.pool.run(t, mib, 1)
		best = max(best, float64(len(t.buf))/time.Since(start).Seconds())
	}
	return best
}

// bandwidthTask reads its share of buf, 1 MiB per index, on every worker.
type bandwidthTask struct {
	buf  []byte
	sums []uint64 // per worker, only so the reads are not optimised away
}

func (t *bandwidthTask) run(lo, hi, worker int) {
	t.sums[worker] += readProbe(t.buf[lo<<20 : hi<<20])
}
