package cpu

import "unsafe"

// KVBuffer implements metal.KVMemory: n zeroed float16 elements, from a
// few megabytes on in memory advised onto huge pages (unless
// Options.SmallPages). The cache's pages are mapped as requests first
// write them, and each first write to a page is a page fault: on this
// machine (a virtual machine) about 10 µs per 4 KiB page, so a 1024-token
// prefill into unused cache spent 0.27-0.33 s storing its keys and values,
// against 0.02-0.03 s into mapped pages (554 against 667 tokens/s), and
// every request paid it for the stretch of cache it was first to use. In
// huge pages it is a fault per 2 MiB: 0.03-0.04 s (in one run of six 0.12
// s, the kernel compacting memory for its huge pages). The cache is not
// mapped ahead of use: the memory plan gives it whatever the budget
// leaves, and the process's resident memory should grow with the context
// actually served. (Huge pages did not change how fast attention reads the
// cache; see weightArena.)
func (b *Backend) KVBuffer(n int) []uint16 {
	if n <= 0 {
		return nil
	}
	var buf []byte
	if b.packed.arena.small || 2*n < kvHugeMin {
		buf = make([]byte, 2*n)
	} else {
		buf = hugeAligned(2 * n)
		preferHugePages(buf)
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&buf[0])), n)
}

// kvHugeMin is the size from which a KV cache is put in huge pages: a
// smaller one (a test's) would round up to whole huge pages.
const kvHugeMin = 8 << 20
