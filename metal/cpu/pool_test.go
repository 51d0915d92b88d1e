package cpu

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// countTask counts how often each index is visited; each worker writes
// only the indices of the chunks it claimed, and marks the chunk's start.
type countTask struct{ seen, starts []int }

func (t *countTask) run(lo, hi, worker int) {
	for i := lo; i < hi; i++ {
		t.seen[i]++
	}
	if t.starts != nil {
		t.starts[lo]++
	}
}

func TestPoolCoversEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		p := newPool(threads)
		for _, tc := range []struct{ n, grain int }{{0, 1}, {1, 1}, {5, 16}, {7, 1}, {100, 3}, {1000, 16}} {
			ct := &countTask{seen: make([]int, tc.n), starts: make([]int, tc.n)}
			for rep := 0; rep < 3; rep++ { // the reused job must reset
				p.run(ct, tc.n, tc.grain)
			}
			for i, c := range ct.seen {
				if c != 3 {
					t.Fatalf("threads %d n %d grain %d: index %d visited %d times in 3 runs", threads, tc.n, tc.grain, i, c)
				}
				if ct.starts[i] > 0 && i%tc.grain != 0 {
					t.Fatalf("threads %d n %d grain %d: a chunk starts at %d, not a multiple of the grain", threads, tc.n, tc.grain, i)
				}
			}
		}
		p.close()
	}
}

// TestPoolHandOffStress drives the hand-off through its races: jobs
// published before a helper goroutine has first run (a fresh pool), back to
// back (helpers still polling), and after pauses longer than the spin time
// (helpers and caller parked), with varying numbers of helpers per job. A
// lost wake-up hangs the test; a job run twice or not at all miscounts.
// Run it with -race and -count to shake out rare interleavings.
func TestPoolHandOffStress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		threads int
		pools   int // fresh pools, each used for jobs runs
		jobs    int
		pauseN  int // pause every pauseN-th job (0: never)
	}{
		{"fresh-pools", 3, 300, 2, 0},
		{"back-to-back", 4, 1, 3000, 0},
		{"park-and-wake", 3, 1, 60, 3},
		{"fresh-then-park", 2, 20, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := &countTask{seen: make([]int, 64)}
			runs := 0
			for i := 0; i < tc.pools; i++ {
				p := newPool(tc.threads)
				for j := 0; j < tc.jobs; j++ {
					if tc.pauseN > 0 && j%tc.pauseN == 0 {
						time.Sleep(2 * spinTime)
					}
					// 1..64 indices with grain 1: from one worker to all.
					n := 1 + (i*7+j*13)%64
					p.run(ct, n, 1)
					for k := 0; k < n; k++ {
						ct.seen[k]--
					}
					runs++
				}
				p.close()
			}
			for k, c := range ct.seen {
				if c != 0 {
					t.Fatalf("index %d: %d visits unaccounted for after %d runs", k, c, runs)
				}
			}
		})
	}
}

// TestParkerNeverLosesAWakeUp races a sleeper going back to sleep against
// a waker raising its condition, many thousands of times in a tight loop;
// a wake-up lost between the sleeper's last check and its sleep would leave
// it asleep for good.
func TestParkerNeverLosesAWakeUp(t *testing.T) {
	const rounds = 5000
	var k parker
	k.init()
	var level, acked atomic.Int64
	go func() {
		for i := int64(1); i <= rounds; i++ {
			reached := func() bool { return level.Load() >= i }
			for !reached() {
				k.sleepUnless(reached)
			}
			acked.Store(i)
			// Vary how long the sleeper takes to come back, so that the
			// waker's next store lands at every point of its way to sleep.
			for j := int64(0); j < i%32; j++ {
				cpuRelax()
			}
		}
	}()
	for i := int64(1); i <= rounds; i++ {
		level.Store(i)
		k.wakeUp()
		// generous: under qemu on a loaded machine a round can take long
		deadline := time.Now().Add(30 * time.Second)
		for acked.Load() < i {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the sleeper missed its wake-up", i)
			}
			// The woken sleeper may be queued on this goroutine's P (as
			// the pool's spinUntil does, yield so it can run there).
			runtime.Gosched()
		}
	}
}

// TestPoolParksWhenIdle: once no job has come for a while, every helper
// sleeps in the runtime (an idle server burns no CPU).
func TestPoolParksWhenIdle(t *testing.T) {
	p := newPool(3)
	defer p.close()
	p.run(&countTask{seen: make([]int, 10)}, 10, 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		parked := 0
		for w := 1; w < p.n; w++ {
			parked += int(p.workers[w].parked.Load())
		}
		if parked == p.n-1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d helpers parked 5 s after the last job", parked, p.n-1)
		}
		time.Sleep(time.Millisecond)
	}
}

// nopTask does nothing: the cost of a run is the hand-off alone.
type nopTask struct{}

func (nopTask) run(lo, hi, worker int) {}

func TestPoolRunDoesNotAllocate(t *testing.T) {
	p := newPool(2)
	defer p.close()
	var nt nopTask
	if n := testing.AllocsPerRun(100, func() { p.run(nt, 64, 1) }); n != 0 {
		t.Fatalf("pool.run allocates %v times per call", n)
	}
}

// BenchmarkPoolHandOff is the cost of one parallel call that does no work,
// back to back (helpers polling) and after an idle pause (helpers parked).
//
// The thresholds of elementwise_parallel.go weigh it against the steps'
// own cost, measured when they were set: a hot hand-off about 0.2 µs, a
// step of parallelMin elements about 4 µs on one core. Quantizing
// activations on two threads took 3.8 µs for 5 rows of 1024 against
// 1.7-1.9 µs on one, 52 µs against 21 µs for 64 rows, and gained only from
// about 256 rows (73 µs against 87 µs). A verify pass of five tokens spent
// 0.31 ms in norms and 0.16 ms in RoPE on two threads, 0.21 and 0.06 on
// one (min of 40 passes). A residual add of 16 rows of 1024 took 0.77 µs
// on one thread, 0.93 µs on two. Run by the calling goroutine alone, the
// elementwise steps were about a quarter of a 256-token prefill chunk.
func BenchmarkPoolHandOff(b *testing.B) {
	p := newPool(2)
	defer p.close()
	var nt nopTask
	b.Run("hot", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			p.run(nt, 2, 1)
		}
	})
	b.Run("parked", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			time.Sleep(3 * spinTime)
			b.StartTimer()
			p.run(nt, 2, 1)
		}
	})
}
