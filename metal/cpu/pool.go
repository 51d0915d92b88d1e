package cpu

import (
	"sync"
	"sync/atomic"
)

// task is a unit of parallel work over an index range. Implementations are
// structs owned by the Backend and reused across calls, so dispatching one
// allocates nothing.
type task interface {
	// run processes indices [lo, hi) on the given worker (0..threads-1).
	run(lo, hi, worker int)
}

// job is one pool.run call: [0, n) cut into chunks of grain indices that
// the workers claim in order from next until none is left.
type job struct {
	t     task
	n     int
	grain int
	next  atomic.Int64
}

// chunksPerWorker: a range is cut into this many chunks per worker so that
// a worker the OS deschedules (other processes share the cores) delays the
// call by one chunk rather than by its whole share.
const chunksPerWorker = 4

// spinChecks is how many times an idle worker polls for the next job
// (tens of microseconds) before it parks. A forward pass issues hundreds of
// short parallel calls back to back; waking a parked goroutine costs more
// than many of them take, so workers wait actively for a little while.
const spinChecks = 20000

// pool is a fixed set of worker goroutines. Worker 0 is the calling
// goroutine itself; workers 1..n-1 join every job. A job is published by
// storing it in job and incrementing gen; a worker spins on gen, then parks
// on its wake channel after setting its sleeping flag (whoever clears the
// flag owns the wake-up, so none is lost).
type pool struct {
	n        int
	gen      atomic.Uint64
	closed   atomic.Bool
	sleeping []atomic.Bool
	wake     []chan struct{}
	wg       sync.WaitGroup
	job      job // the current call's job, reused; written only between calls
}

func newPool(n int) *pool {
	p := &pool{n: n, sleeping: make([]atomic.Bool, n), wake: make([]chan struct{}, n)}
	for w := 1; w < n; w++ {
		p.wake[w] = make(chan struct{}, 1)
		go p.loop(w)
	}
	return p
}

func (p *pool) loop(w int) {
	seen := p.gen.Load()
	for {
		p.await(w, seen)
		seen = p.gen.Load()
		if p.closed.Load() {
			return
		}
		p.job.drain(w)
		p.wg.Done()
	}
}

// await returns once gen differs from seen.
func (p *pool) await(w int, seen uint64) {
	for i := 0; i < spinChecks; i++ {
		if p.gen.Load() != seen {
			return
		}
	}
	p.sleeping[w].Store(true)
	if p.gen.Load() != seen && p.sleeping[w].CompareAndSwap(true, false) {
		return // published meanwhile, and no one will send
	}
	<-p.wake[w]
}

// publish starts the current job (or the shutdown) on every worker.
func (p *pool) publish() {
	p.gen.Add(1)
	for w := 1; w < p.n; w++ {
		if p.sleeping[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
}

// drain runs chunks of j on worker w until all are claimed. Which worker
// runs a chunk never changes what it computes: each index's result depends
// only on its own inputs (batch invariance).
func (j *job) drain(w int) {
	for {
		c := int(j.next.Add(1) - 1)
		lo := c * j.grain
		if lo >= j.n {
			return
		}
		j.t.run(lo, min(lo+j.grain, j.n), w)
	}
}

// run processes [0, n) on the workers and waits for all. Chunks are at
// least minGrain indices (smaller ones are not worth a hand-off); a range of
// one chunk runs on the caller alone.
func (p *pool) run(t task, n, minGrain int) {
	if n <= 0 {
		return
	}
	minGrain = max(minGrain, 1)
	workers := min(p.n, (n+minGrain-1)/minGrain)
	if workers <= 1 {
		t.run(0, n, 0)
		return
	}
	j := &p.job
	j.t, j.n = t, n
	j.grain = max(minGrain, (n+workers*chunksPerWorker-1)/(workers*chunksPerWorker))
	j.next.Store(0)
	p.wg.Add(p.n - 1)
	p.publish()
	j.drain(0)
	p.wg.Wait()
	j.t = nil
}

func (p *pool) close() {
	p.closed.Store(true)
	p.publish()
}
