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

// pool is a fixed set of worker goroutines. Worker 0 is the calling
// goroutine itself; workers 1..n-1 wait on their own channels.
type pool struct {
	n    int
	work []chan *job
	wg   sync.WaitGroup
	job  job // the current call's job, reused
}

func newPool(n int) *pool {
	p := &pool{n: n, work: make([]chan *job, n)}
	for w := 1; w < n; w++ {
		p.work[w] = make(chan *job, 1)
		go p.loop(w)
	}
	return p
}

func (p *pool) loop(w int) {
	for j := range p.work[w] {
		j.drain(w)
		p.wg.Done()
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
// least minGrain indices (smaller ones are not worth a hand-off), so short
// ranges run on fewer workers.
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
	grain := max(minGrain, (n+workers*chunksPerWorker-1)/(workers*chunksPerWorker))
	j := &p.job
	j.t, j.n, j.grain = t, n, grain
	j.next.Store(0)
	p.wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		p.work[w] <- j
	}
	j.drain(0)
	p.wg.Wait()
	j.t = nil
}

func (p *pool) close() {
	for w := 1; w < p.n; w++ {
		close(p.work[w])
	}
}
