package cpu

import (
	"sync"
	"unsafe"
)

// weightArena hands out the packed weights' buffers from a few large
// chunks that the OS is asked to back with huge pages (2 MiB on x86-64
// Linux, adviseHugePages). A decode step streams every weight once: in
// ordinary 4 KiB pages that is a TLB miss every 4 KiB and a hardware
// prefetcher that stops at every page boundary, and a kernel whose
// instruction window covers little memory beyond its loads (a matrix
// product does work between them) cannot hide either. Packing many small
// matrices into one chunk lets them share huge pages too: most of a
// 0.6B model's matrices are under 2 MiB (BenchmarkHugePages0_6BQ4
// measures the gain). Attention gains nothing from huge pages, since it
// touches each cache stretch ahead of its kernel (decodeLead); the KV
// cache is in huge pages for its page faults (KVBuffer).
//
// Chunks are ordinary Go memory, so the garbage collector frees a chunk
// once no packed matrix in it is reachable; huge pages are only advice,
// and where the OS does not take it the chunks behave like any buffer.
type weightArena struct {
	mu       sync.Mutex
	chunk    []byte // the chunk being filled; free from off on
	off      int
	reserved int64 // bytes of every chunk made
	small    bool  // ordinary pages: no advice (Options.SmallPages), for KV caches too
}

const (
	// hugePage is the size and alignment chunks are made in.
	hugePage = 2 << 20
	// maxChunk bounds a chunk's size (a larger matrix gets a chunk of its
	// own); chunks grow from hugePage by doubling, so a small model
	// reserves little beyond what it packs.
	maxChunk = 64 << 20
)

// alloc returns n zeroed bytes starting on a 64-byte boundary, so a
// kernel's vector loads never straddle cache lines.
func (a *weightArena) alloc(n int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	need := (n + 63) &^ 63
	if need > maxChunk/2 {
		// A matrix this large fills its own huge pages; the current
		// chunk stays open for the smaller ones.
		c := a.newChunk(need)
		return c[:n:n]
	}
	if a.off+need > len(a.chunk) {
		a.chunk, a.off = a.newChunk(min(max(2*len(a.chunk), need), maxChunk)), 0
	}
	b := a.chunk[a.off : a.off+n : a.off+n]
	a.off += need
	return b
}

// newChunk makes a chunk of at least n bytes (hugeBuffer).
func (a *weightArena) newChunk(n int) []byte {
	c := hugeBuffer(n, !a.small)
	a.reserved += int64(len(c))
	return c
}

// hugeBuffer returns at least n zeroed bytes, whole huge pages starting on
// a huge-page boundary, backed by huge pages where the OS grants them if
// huge is set.
func hugeBuffer(n int, huge bool) []byte {
	b := hugeAligned(n)
	if huge {
		adviseHugePages(b)
	}
	return b
}

// hugeAligned returns at least n zeroed bytes, whole huge pages starting
// on a huge-page boundary.
func hugeAligned(n int) []byte {
	n = (n + hugePage - 1) &^ (hugePage - 1)
	buf := make([]byte, n+hugePage)
	off := (hugePage - int(uintptr(unsafe.Pointer(&buf[0]))%hugePage)) % hugePage
	return buf[off : off+n : off+n]
}

// bytes is the memory the arena's chunks hold, used or not.
func (a *weightArena) bytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reserved
}
