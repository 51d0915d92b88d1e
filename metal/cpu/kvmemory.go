package cpu

import "unsafe"

// KVBuffer implements metal.KVMemory: n zeroed float16 elements, from a
// few megabytes on in memory advised onto huge pages (unless
// Options.SmallPages). The cache's pages are mapped as requests first
// write them, and each first write to a page is a page fault, paid by
// whichever request is first to use that stretch of cache (and with the
// free list handing out the least recently used block, every request is,
// until the whole cache has been used once): a 1024-token prefill into
// unused cache spent 0.27-0.33 s storing its keys and values against
// 0.02-0.03 s into mapped pages (554 against 667 tokens/s). In huge pages
// it is one fault per 2 MiB rather than 512, and the same prefill spent
// 0.03-0.04 s. A huge page costs more to fault in than a small one, so
// the model lays a block of every layer out as one stretch
// (metal.NewKVCacheIn): with each layer's keys and values apart, a resent
// conversation's first new block faulted 56 huge pages in and its cached
// time to first token went from 24 to 190-200 ms (1024-token prompt);
// interleaved, 10 ms, its cold one 2.09 → 1.62 s. How much a fault costs
// depends on the machine: on this one (a virtual machine) writing a byte
// into each page of 470 MB took 1.1-1.3 s in 4 KiB pages and 0.03-0.76 s
// in huge pages, the slow end when the host had to back memory the guest
// had not used lately; on bare metal a fault is far cheaper.
//
// The cache is not mapped ahead of use: the memory plan gives it whatever
// the budget leaves, which could take seconds to map at start, and the
// process's resident memory grows with the cache actually used (all of
// it, in time: freed blocks go to the back of the free list so that their
// cached prefixes live longest). (Huge pages did not change how fast
// attention reads the cache; see weightArena.)
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
