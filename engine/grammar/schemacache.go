package grammar

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"sync"
)

// SchemaCache remembers compiled schemas by a hash of their exact bytes, so
// a schema sent again (an agent resends its tools every turn) costs one
// hash and a lookup. Failures are remembered too, so a rejected schema sent
// again is rejected as cheaply; only a cancelled compilation is not kept.
// It holds at most its capacity of entries, dropping the least recently
// used. Safe for concurrent use.
type SchemaCache struct {
	limits   Limits
	capacity int

	mu      sync.Mutex // guards entries and order
	entries map[[sha256.Size]byte]*list.Element
	order   *list.List // of *schemaEntry, most recently used first
}

type schemaEntry struct {
	key [sha256.Size]byte
	g   *Grammar
	err error
}

// NewSchemaCache returns a cache of up to capacity compiled schemas, each
// compiled under limits.
func NewSchemaCache(capacity int, limits Limits) *SchemaCache {
	return &SchemaCache{limits: limits, capacity: max(capacity, 1),
		entries: map[[sha256.Size]byte]*list.Element{}, order: list.New()}
}

// Compile returns the grammar of schema, compiling it under the cache's
// limits (see CompileContext) unless it was compiled before. The schema's
// size is checked before it is hashed.
func (c *SchemaCache) Compile(ctx context.Context, schema []byte) (*Grammar, error) {
	limits := c.limits.withDefaults()
	if len(schema) > limits.SchemaBytes {
		return CompileContext(ctx, schema, limits) // the size error, without hashing
	}
	key := sha256.Sum256(schema)
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*schemaEntry)
		c.mu.Unlock()
		return e.g, e.err
	}
	c.mu.Unlock()
	g, err := CompileContext(ctx, schema, limits)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		c.entries[key] = c.order.PushFront(&schemaEntry{key: key, g: g, err: err})
		for c.order.Len() > c.capacity {
			old := c.order.Back()
			delete(c.entries, old.Value.(*schemaEntry).key)
			c.order.Remove(old)
		}
	}
	return g, err
}

// Len returns the number of schemas cached.
func (c *SchemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
