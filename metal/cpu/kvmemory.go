package cpu

import "unsafe"

// KVBuffer implements metal.KVMemory: n zeroed float16 elements, from a
// few megabytes on in memory advised onto huge pages (unless
// Options.SmallPages). The cache's pages are mapped as requests first
// write them, and each first write to a page is a page fault, paid by
// whichever request is first to use that stretch of cache (and with the
// free list handing out the least recently used block, every request is,
// until the whole cache has been used once): on a virtual machine the
// faults can cost a cold prefill more than its attention. In huge pages
// it is one fault per 2 MiB rather than 512. A huge page costs more to
// fault in than a small one, so the model lays a block of every layer out
// as one stretch (metal.NewKVCacheIn): a sequence's new block then faults
// in one or two huge pages rather than two per layer. How much a fault
// costs depends on the machine (far less on bare metal than in a virtual
// machine whose host must back memory the guest has not used lately).
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
