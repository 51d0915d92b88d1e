package cpu

import "testing"

// countTask counts how often each index is visited; each worker writes
// only the indices of the chunks it claimed.
type countTask struct{ seen []int }

func (t *countTask) run(lo, hi, worker int) {
	for i := lo; i < hi; i++ {
		t.seen[i]++
	}
}

func TestPoolCoversEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		p := newPool(threads)
		for _, tc := range []struct{ n, grain int }{{0, 1}, {1, 1}, {5, 16}, {7, 1}, {100, 3}, {1000, 16}} {
			ct := &countTask{seen: make([]int, tc.n)}
			for rep := 0; rep < 3; rep++ { // the reused job must reset
				p.run(ct, tc.n, tc.grain)
			}
			for i, c := range ct.seen {
				if c != 3 {
					t.Fatalf("threads %d n %d grain %d: index %d visited %d times in 3 runs", threads, tc.n, tc.grain, i, c)
				}
			}
		}
		p.close()
	}
}
