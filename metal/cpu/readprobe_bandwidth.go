package cpu

import "time"

// ReadProbe times reads of a buffer well beyond the last-level cache on
// all of a backend's workers: the memory read bandwidth that benchmarks
// divide their weight traffic by, to report the fraction of the bandwidth
// bound they reach. Not for use while serving.
type ReadProbe struct {
	b    *Backend
	task bandwidthTask
	next int // the MiB the next Read starts at
}

// NewReadProbe allocates a probe of size bytes (at least 1 MiB; make it
// well beyond the last-level cache) and writes the buffer, so its pages
// are real memory rather than the shared zero page. The buffer is in
// huge pages where the packed weights are (Options.SmallPages), so that
// the probe reads memory as the kernels do.
func (b *Backend) NewReadProbe(size int) *ReadProbe {
	mib := max(size>>20, 1)
	buf := hugeBuffer(mib<<20, !b.packed.arena.small)[:mib<<20]
	p := &ReadProbe{b: b, task: bandwidthTask{buf: buf, sums: make([]uint64, b.pool.n)}}
	words := u64s(p.task.buf)
	for i := range words {
		words[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	return p
}

// Best returns the best of three timed reads of the whole buffer, in bytes
// per second: what the machine delivers when other processes leave it
// alone the most.
func (p *ReadProbe) Best() float64 {
	best := 0.0
	for i := 0; i < 3; i++ {
		start := time.Now()
		p.b.pool.run(&p.task, len(p.task.buf)>>20, 1)
		best = max(best, float64(len(p.task.buf))/time.Since(start).Seconds())
	}
	return best
}

// Read reads the next n bytes of the buffer (rounded up to whole MiB, at
// most the buffer; after the end it starts again from the front) and
// returns the bytes read and how long they took. A benchmark that calls it
// after each timed pass of its own gets both rates as means over the same
// stretch of time: on a machine shared with other work the bandwidth left
// to a process moves by tens of percent within seconds, and comparing a
// mean rate with the probe's Best counts that against the code measured.
func (p *ReadProbe) Read(n int) (int, time.Duration) {
	total := len(p.task.buf) >> 20
	mib := min(max((n+1<<20-1)>>20, 1), total)
	if p.next+mib > total {
		p.next = 0
	}
	p.task.lo = p.next
	p.next += mib
	start := time.Now()
	p.b.pool.run(&p.task, mib, 1)
	d := time.Since(start)
	p.task.lo = 0
	return mib << 20, d
}

// ReadBandwidth is NewReadProbe(size).Best().
func (b *Backend) ReadBandwidth(size int) float64 {
	return b.NewReadProbe(size).Best()
}

// bandwidthTask reads its share of buf, 1 MiB per index from MiB lo on, on
// every worker.
type bandwidthTask struct {
	buf  []byte
	lo   int
	sums []uint64 // per worker, only so the reads are not optimised away
}

func (t *bandwidthTask) run(lo, hi, worker int) {
	t.sums[worker] += readProbe(t.buf[(t.lo+lo)<<20 : (t.lo+hi)<<20])
}
