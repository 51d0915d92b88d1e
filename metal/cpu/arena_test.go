package cpu

import (
	"testing"
	"unsafe"
)

// TestWeightArenaAlloc checks the arena's buffers: the lengths asked for,
// 64-byte aligned, zeroed, never overlapping, chunks on huge-page
// boundaries, large ones in chunks of their own, and every chunk counted.
func TestWeightArenaAlloc(t *testing.T) {
	for _, small := range []bool{false, true} {
		a := weightArena{small: small}
		type span struct{ lo, hi uintptr }
		var spans []span
		var keep [][]byte // the buffers stay reachable, as packed matrices keep theirs
		var want int64
		chunks := map[uintptr]bool{}
		for i, n := range []int{1, 100, 64, 3 << 20, 5, maxChunk/2 + 1, 7 << 20, 1 << 20, 40 << 20, 129} {
			b := a.alloc(n)
			if len(b) != n || cap(b) != n {
				t.Fatalf("alloc %d (%d bytes): len %d cap %d", i, n, len(b), cap(b))
			}
			p := uintptr(unsafe.Pointer(&b[0]))
			if p%64 != 0 {
				t.Errorf("alloc %d (%d bytes) at %#x: not 64-byte aligned", i, n, p)
			}
			for _, j := range sampled(n) {
				if b[j] != 0 {
					t.Fatalf("alloc %d: byte %d is %d, not zero", i, j, b[j])
				}
				b[j] = byte(i + 1)
			}
			for _, s := range spans {
				if p < s.hi && s.lo < p+uintptr(n) {
					t.Errorf("alloc %d [%#x, %#x) overlaps [%#x, %#x)", i, p, p+uintptr(n), s.lo, s.hi)
				}
			}
			spans = append(spans, span{p, p + uintptr(n)})
			keep = append(keep, b)
			if n > maxChunk/2 && p%hugePage != 0 {
				t.Errorf("alloc %d (%d bytes): a chunk of its own should start on a huge page, at %#x", i, n, p)
			}
			if c := uintptr(unsafe.Pointer(&a.chunk[0])); !chunks[c] {
				chunks[c] = true
				want += int64(len(a.chunk))
				if c%hugePage != 0 {
					t.Errorf("chunk at %#x: not on a huge-page boundary", c)
				}
			}
		}
		want += int64((maxChunk/2+1+hugePage-1)&^(hugePage-1)) + 40<<20 // the two chunks of their own
		if got := a.bytes(); got != want {
			t.Errorf("small=%v: bytes() = %d, want %d", small, got, want)
		}
		for i, b := range keep {
			for _, j := range sampled(len(b)) {
				if b[j] != byte(i+1) {
					t.Fatalf("alloc %d: byte %d is %d after the other allocations, want %d", i, j, b[j], i+1)
				}
			}
		}
	}
}

// sampled is the indices of a buffer of n bytes the test writes and reads
// back: all of a small one, the first and last 4 KiB of a large one.
func sampled(n int) []int {
	var ix []int
	for j := 0; j < n; j++ {
		if j == 4096 && n > 8192 {
			j = n - 4096
		}
		ix = append(ix, j)
	}
	return ix
}
