package cpu

import "sync"

// task is a unit of parallel work over an index range. Implementations are
// structs owned by the Backend and reused across calls, so dispatching one
// allocates nothing.
type task interface {
	// run processes indices [lo, hi) on the given worker (0..threads-1).
	run(lo, hi, worker int)
}

type span struct {
	t      task
	lo, hi int
}

// pool is a fixed set of worker goroutines. Worker 0 is the calling
// goroutine itself; workers 1..n-1 wait on their own channels.
type pool struct {
	n    int
	work []chan span
	wg   sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{n: n, work: make([]chan span, n)}
	for w := 1; w < n; w++ {
		p.work[w] = make(chan span, 1)
		go p.loop(w)
	}
	return p
}

func (p *pool) loop(w int) {
	for s := range p.work[w] {
		s.t.run(s.lo, s.hi, w)
		p.wg.Done()
	}
}

// run splits [0, n) into one contiguous range per worker and waits for all.
// Ranges smaller than minGrain are not worth a hand-off and run on fewer
// workers.
func (p *pool) run(t task, n, minGrain int) {
	workers := p.n
	if minGrain < 1 {
		minGrain = 1
	}
	if most := (n + minGrain - 1) / minGrain; most < workers {
		workers = most
	}
	if workers <= 1 {
		if n > 0 {
			t.run(0, n, 0)
		}
		return
	}
	per := (n + workers - 1) / workers
	for w := 1; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, n)
		if lo >= hi {
			continue
		}
		p.wg.Add(1)
		p.work[w] <- span{t, lo, hi}
	}
	t.run(0, min(per, n), 0)
	p.wg.Wait()
}

func (p *pool) close() {
	for w := 1; w < p.n; w++ {
		close(p.work[w])
	}
}
