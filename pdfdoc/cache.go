package pdfdoc

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// docCache keeps recently read documents by content and limits, so an
// agent that resends a PDF with every turn of its conversation pays for
// reading it once. It is bounded by the bytes of text and images it holds,
// least recently used dropped first; safe for concurrent use.
type docCache struct {
	max int // bytes

	mu    sync.Mutex // guards the fields below
	size  int
	order *list.List // of *cacheEntry, most recent first
	byKey map[cacheKey]*list.Element
}

type cacheKey struct {
	sum [sha256.Size]byte
	lim Limits
}

type cacheEntry struct {
	key  cacheKey
	doc  *Document
	size int
}

func newDocCache(maxBytes int) *docCache {
	return &docCache{max: maxBytes, order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

func (c *docCache) get(k cacheKey) (*Document, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).doc, true
}

// put keeps doc unless it alone is over the bound.
func (c *docCache) put(k cacheKey, doc *Document) {
	size := docSize(doc)
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&cacheEntry{key: k, doc: doc, size: size})
	c.size += size
	for c.size > c.max {
		last := c.order.Back()
		ent := last.Value.(*cacheEntry)
		c.order.Remove(last)
		delete(c.byKey, ent.key)
		c.size -= ent.size
	}
}

// docSize is what a document holds in memory, roughly: its text and
// pixels, and a little per page.
func docSize(d *Document) int {
	n := 0
	for _, p := range d.Pages {
		n += 64 + len(p.Text)
		if p.Image != nil {
			n += len(p.Image.Pix)
		}
	}
	return n
}
