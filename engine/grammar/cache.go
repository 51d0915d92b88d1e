package grammar

import "unsafe"

// MaskCache remembers masks by matcher position. Positions repeat a lot in
// constrained generation (every character of a free string is the same
// position), so most steps cost a hash and a comparison instead of a trie
// walk. A cache may serve many matchers of any grammar over its Vocab, but
// is not safe for concurrent use.
type MaskCache struct {
	v        *Vocab
	byHash   map[uint64][]*cacheEntry
	ring     []*cacheEntry // insertion order, for evicting the oldest
	next     int
	capacity int
	track    bool // record each mask's reach (see budget.go)

	Hits, Misses int // counters for metrics and benchmarks
}

type cacheEntry struct {
	hash   uint64
	states []state // immutable, like every states slice a Matcher stores
	mask   Mask
	reach  int // with track: the longest shortest finish after an allowed token
}

// NewMaskCache returns a cache of at most capacity masks (each is
// Vocab.Size()/8 bytes: about 19 KB for Qwen3's 151,936 tokens).
func NewMaskCache(v *Vocab, capacity int) *MaskCache {
	return &MaskCache{v: v, byHash: map[uint64][]*cacheEntry{}, capacity: max(capacity, 1)}
}

// Mask returns the tokens allowed at the matcher's position, as Vocab.Mask
// does. The mask belongs to the cache: it must not be modified, and stays
// valid only until the next call.
func (c *MaskCache) Mask(m *Matcher) Mask {
	mask, _ := c.maskReach(m)
	return mask
}

// maskReach is Mask with the mask's reach, which is recorded only when
// the cache tracks it.
func (c *MaskCache) maskReach(m *Matcher) (Mask, int) {
	h := hashStates(m.states)
	for _, e := range c.byHash[h] {
		if statesEqual(e.states, m.states) {
			c.Hits++
			return e.mask, e.reach
		}
	}
	c.Misses++
	var e *cacheEntry
	if len(c.ring) < c.capacity {
		e = &cacheEntry{}
		c.ring = append(c.ring, e)
	} else {
		e = c.ring[c.next]
		c.next = (c.next + 1) % c.capacity
		c.forget(e)
	}
	e.hash, e.states = h, m.states
	w := walker{v: c.v, track: c.track}
	e.mask = w.run(m, e.mask, stayAll)
	e.reach = w.reach
	c.byHash[h] = append(c.byHash[h], e)
	return e.mask, e.reach
}

func (c *MaskCache) forget(e *cacheEntry) {
	list := c.byHash[e.hash]
	for i, x := range list {
		if x == e {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.byHash, e.hash)
	} else {
		c.byHash[e.hash] = list
	}
}

// hashStates hashes whole stacks, so that equal positions reached along
// different paths (with different but equal links) meet in the cache.
func hashStates(states []state) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x uint64) {
		h ^= x
		h *= 1099511628211
		h ^= h >> 29
	}
	hashFrame := func(f frame) {
		mix(uint64(uintptr(unsafe.Pointer(f.n))))
		mix(uint64(f.phase) | uint64(f.cur)<<8 | uint64(f.off)<<16 | uint64(f.count)<<32)
		mix(f.set)
		mix(f.cand)
	}
	for _, s := range states {
		mix(uint64(s.depth))
		if s.depth == 0 {
			continue
		}
		hashFrame(s.top)
		for l := s.rest; l != nil; l = l.next {
			hashFrame(l.f)
		}
	}
	return h
}

func statesEqual(a, b []state) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].depth != b[i].depth || a[i].top != b[i].top {
			return false
		}
		la, lb := a[i].rest, b[i].rest
		for la != lb {
			if la == nil || lb == nil || la.f != lb.f {
				return false
			}
			la, lb = la.next, lb.next
		}
	}
	return true
}
