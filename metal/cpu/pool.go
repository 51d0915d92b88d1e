package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// task is a unit of parallel work over an index range. Implementations are
// structs owned by the Backend and reused across calls, so dispatching one
// allocates nothing.
type task interface {
	// run processes indices [lo, hi) on the given worker (0..threads-1).
	run(lo, hi, worker int)
}

// job is one pool.run call: [0, n) cut into chunks that the workers claim
// in order from next until none is left. Chunks shrink as the range runs
// out (guided self-scheduling): each claim takes 1/workers of what is left,
// rounded up to a multiple of grain, so early claims are few and large and
// the last ones are a single grain, which keeps the workers' finishing
// times within about one grain of each other. A worker the OS deschedules
// (other processes share the cores) holds up the call by at most the one
// chunk it holds; the others take the rest.
//
// Every claim of a matrix product starts a new stream of weight reads,
// which the hardware prefetchers take a while to follow, and a decode
// step's products are small (a 0.6B model's: 0.6-3.5 MB), so claims are
// 1/workers of the rest rather than smaller: fewer, longer streams read
// closer to the bandwidth bound (BenchmarkDecode0_6BQ4's frac; its doc has
// the numbers). The price: a worker the OS deschedules early may hold half
// the range rather than a quarter.
type job struct {
	t       task
	n       int
	grain   int
	workers int
	next    atomic.Int64

	// state is the job's generation (high 32 bits), jobClosed, and the
	// number of helpers inside the job (low bits). A helper joins by
	// incrementing the count, and only while the generation is the one it
	// was handed and the job is open; the caller closes the job once its
	// own share is done and then waits for the count to drain to zero. A
	// helper the OS had not yet run when the work ran out therefore never
	// joins, and the caller does not wait for it.
	state atomic.Uint64
}

const (
	jobClosed = 1 << 31
	jobCount  = jobClosed - 1 // mask of the helper count
)

// join enters the job of generation gen if it is still open.
func (j *job) join(gen uint64) bool {
	for {
		s := j.state.Load()
		if s>>32 != gen&0xffffffff || s&jobClosed != 0 {
			return false
		}
		if j.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// leave exits the job and reports whether the caller is now waiting for
// nobody (the job is closed and empty).
func (j *job) leave() bool {
	s := j.state.Add(^uint64(0))
	return s&jobClosed != 0 && s&jobCount == 0
}

// close stops helpers from joining and reports whether none is inside.
func (j *job) close() bool {
	for {
		s := j.state.Load()
		if j.state.CompareAndSwap(s, s|jobClosed) {
			return s&jobCount == 0
		}
	}
}

// spinTime is how long a waiting goroutine (a worker between jobs, or the
// caller waiting for the workers) polls before it parks. A decode step
// issues a parallel call every few tens of microseconds, so workers that
// poll this long never park inside a step and no call pays a futex wake;
// an idle pool parks after this long and then uses no CPU.
const spinTime = 50 * time.Microsecond

// quitGen is the generation that tells a worker to exit.
const quitGen = ^uint64(0)

// pool is a fixed set of worker goroutines. Worker 0 is the calling
// goroutine itself; workers 1..n-1 each wait for a generation number of
// their own to change.
//
// Hand-off protocol: run writes p.job (its state last, with the new
// generation), then for each helper stores that generation in its slot and,
// if the helper has parked, wakes it. A helper remembers the last
// generation it saw (0 before the first), so it cannot miss a job published
// before it first looked, nor see one twice; it then joins the job if it
// still can (see job.state). The caller does not touch p.job again until
// the job is closed and every helper that joined has left.
type pool struct {
	n       int
	workers []workerSlot // index 0 unused: worker 0 is the caller
	job     job          // the current call's job, reused; see protocol above
	gen     uint64       // the last generation published; caller-only
	caller  parker       // where the caller sleeps if the helpers are slow
}

// workerSlot is one helper's mailbox, padded to its own cache lines so that
// polling it does not contend with the other helpers' slots.
type workerSlot struct {
	gen atomic.Uint64 // the generation assigned to this helper; quitGen to exit
	parker
	_ [64]byte
}

// parker lets one goroutine sleep until its condition holds, woken by the
// goroutine that makes it hold. It is the textbook condition variable with
// one lock-free shortcut: a waker first makes the condition true, then
// looks at parked and takes the lock only when the sleeper has announced
// itself. Because the sleeper announces itself (under the lock) before it
// checks the condition, either the waker sees the announcement and signals
// under the lock — reaching a sleeper that is in Wait, or one that will
// find the condition true before it waits — or the sleeper's check comes
// after the waker's write and sees it. No wake-up is lost; the hot path
// (workers that spin and never park) never touches the lock.
type parker struct {
	parked atomic.Int32 // 1 from the sleeper's announcement until it wakes
	mu     sync.Mutex
	cond   sync.Cond
}

// init readies k in place (a parker must not be copied).
func (k *parker) init() { k.cond.L = &k.mu }

// sleepUnless parks until ready holds (it returns at once if it already
// does).
func (k *parker) sleepUnless(ready func() bool) {
	k.mu.Lock()
	k.parked.Store(1)
	for !ready() {
		k.cond.Wait()
	}
	k.parked.Store(0)
	k.mu.Unlock()
}

// wakeUp wakes the goroutine if it is parked; call it after making its
// condition true.
func (k *parker) wakeUp() {
	if k.parked.Load() == 0 {
		return
	}
	k.mu.Lock()
	k.cond.Signal()
	k.mu.Unlock()
}

func newPool(n int) *pool {
	p := &pool{n: n, workers: make([]workerSlot, n)}
	p.caller.init()
	for w := 1; w < n; w++ {
		p.workers[w].init()
		go p.loop(w)
	}
	return p
}

// loop is helper w: wait for a new generation, run its part, report.
func (p *pool) loop(w int) {
	slot := &p.workers[w]
	seen := uint64(0)
	for {
		g := awaitChange(&slot.gen, seen, &slot.parker)
		if g == quitGen {
			return
		}
		seen = g
		if !p.job.join(g) {
			continue // the caller finished the job alone
		}
		p.job.drain(w)
		if p.job.leave() {
			p.caller.wakeUp()
		}
	}
}

// awaitChange returns the value of v once it differs from old: polling for
// spinTime, then parked on k.
func awaitChange(v *atomic.Uint64, old uint64, k *parker) uint64 {
	changed := func() bool { return v.Load() != old }
	for !changed() {
		if !spinUntil(changed) {
			k.sleepUnless(changed)
		}
	}
	return v.Load()
}

// spinUntil polls done for up to spinTime and reports whether it became
// true. It yields the processor now and then, so that a goroutine it waits
// for can run even when there are fewer Ps than workers.
func spinUntil(done func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		switch {
		case i&255 == 255:
			runtime.Gosched()
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinTime {
				return done()
			}
		default:
			cpuRelax()
		}
	}
}

// drain runs chunks of j on worker w until all are claimed. Which worker
// runs a chunk never changes what it computes: each index's result depends
// only on its own inputs (batch invariance).
func (j *job) drain(w int) {
	n, g := int64(j.n), int64(j.grain)
	div := int64(j.workers)
	for {
		lo := j.next.Load()
		if lo >= n {
			return
		}
		size := ((n-lo+div-1)/div + g - 1) / g * g
		hi := min(lo+size, n)
		if j.next.CompareAndSwap(lo, hi) {
			j.t.run(int(lo), int(hi), w)
		}
	}
}

// run processes [0, n) on the workers and waits for all. Chunks are
// multiples of minGrain indices (smaller ones are not worth a claim), and
// ranges of fewer than workers·minGrain indices run on fewer workers.
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
	j.t, j.n, j.grain, j.workers = t, n, minGrain, workers
	j.next.Store(0)
	p.gen++
	j.state.Store((p.gen & 0xffffffff) << 32)
	for w := 1; w < workers; w++ {
		s := &p.workers[w]
		s.gen.Store(p.gen)
		s.wakeUp()
	}
	j.drain(0)
	if !j.close() {
		helpersOut := func() bool { return j.state.Load()&jobCount == 0 }
		for !helpersOut() {
			if !spinUntil(helpersOut) {
				p.caller.sleepUnless(helpersOut)
			}
		}
	}
	j.t = nil
}

// close stops the helpers; the pool must not be used afterwards.
func (p *pool) close() {
	for w := 1; w < p.n; w++ {
		s := &p.workers[w]
		s.gen.Store(quitGen)
		s.wakeUp()
	}
}
