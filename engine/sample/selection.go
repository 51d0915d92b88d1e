package sample

import (
	"math"
	"slices"

	"github.com/splash-inference/splash/metal/vec"
)

// before orders token ids by logit, highest first, ties by lower id, so
// every selection below is deterministic.
func before(vals []float32, a, b int32) bool {
	va, vb := vals[a], vals[b]
	return va > vb || va == vb && a < b
}

// selectTop permutes idx so that idx[:k] are the k best by before (in no
// particular order): quickselect with a median-of-three pivot, O(len(idx)).
func selectTop(idx []int32, vals []float32, k int) {
	lo, hi := 0, len(idx)-1
	for lo < hi {
		p := partition(idx, vals, lo, hi)
		switch {
		case p == k || p == k-1:
			return
		case p < k:
			lo = p + 1
		default:
			hi = p - 1
		}
	}
}

// partition places a pivot at its final position p within idx[lo..hi],
// better elements before it, and returns p.
func partition(idx []int32, vals []float32, lo, hi int) int {
	mid := lo + (hi-lo)/2
	// median of three to hi
	if before(vals, idx[mid], idx[lo]) {
		idx[mid], idx[lo] = idx[lo], idx[mid]
	}
	if before(vals, idx[hi], idx[lo]) {
		idx[hi], idx[lo] = idx[lo], idx[hi]
	}
	if before(vals, idx[mid], idx[hi]) {
		idx[mid], idx[hi] = idx[hi], idx[mid]
	}
	pivot := idx[hi]
	p := lo
	for i := lo; i < hi; i++ {
		if before(vals, idx[i], pivot) {
			idx[i], idx[p] = idx[p], idx[i]
			p++
		}
	}
	idx[p], idx[hi] = idx[hi], idx[p]
	return p
}

// sortBest sorts idx best first.
func sortBest(idx []int32, vals []float32) {
	slices.SortFunc(idx, func(a, b int32) int {
		if before(vals, a, b) {
			return -1
		}
		if before(vals, b, a) {
			return 1
		}
		return 0
	})
}

// argmax returns the index of the largest value, the lowest on ties (0
// when there is none, e.g. all NaN). It runs over the whole vocabulary for
// every greedy token, so it is vec.Argmax (AVX2 where the CPU has it;
// BenchmarkArgmax).
func argmax(vals []float32) int32 { return int32(vec.Argmax(vals)) }

// topKScan appends to dst the ids of the k best entries of vals that are at
// least floor, by one pass with a size-k heap whose root is the worst kept:
// for small k nearly every entry costs one comparison, against several
// passes of quickselect. The result is in heap order, not sorted.
func topKScan(dst []int32, vals []float32, k int, floor float64) []int32 {
	h := dst[:0]
	rootV := float32(math.Inf(-1))
	for t, v := range vals {
		if len(h) == k && v <= rootV || float64(v) < floor {
			continue // ties lose: t is larger than any kept id
		}
		if len(h) < k {
			h = append(h, int32(t))
			for i := len(h) - 1; i > 0; { // sift up: worse goes up
				parent := (i - 1) / 2
				if !before(vals, h[parent], h[i]) {
					break
				}
				h[parent], h[i] = h[i], h[parent]
				i = parent
			}
		} else {
			h[0] = int32(t)
			siftDown(h, vals)
		}
		if len(h) == k {
			rootV = vals[h[0]]
		}
	}
	return h
}

// siftDown restores the worst-at-root heap after its root changed.
func siftDown(h []int32, vals []float32) {
	i := 0
	for {
		worst := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h) && before(vals, h[worst], h[c]) {
				worst = c
			}
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
