package kvcache

import (
	"errors"
	"fmt"
)

// Check verifies the pool's invariants given every live block table: each
// block's reference count equals the number of live tables holding it;
// exactly the unreferenced blocks are on the free list, which is well
// linked; every index entry names a cached block under its own hash; the
// children lists hold exactly the listed blocks, each once under its
// parent, cached ones full and partial ones unshared; and each table's
// committed prefix is indexed or at least hashed consistently; and each
// state slot is either free or held by exactly one live table.
func (m *Manager) Check(live ...*Blocks) error {
	want := make([]int32, len(m.blocks))
	for _, b := range live {
		if len(b.hashes) > len(b.table) {
			return fmt.Errorf("kvcache: table has %d hashes for %d blocks", len(b.hashes), len(b.table))
		}
		for _, id := range b.table {
			if id < 0 || int(id) >= len(m.blocks) {
				return fmt.Errorf("kvcache: table holds block %d outside the pool", id)
			}
			want[id]++
		}
	}
	var errs []error
	for id, blk := range m.blocks {
		if blk.ref != want[id] {
			errs = append(errs, fmt.Errorf("kvcache: block %d has reference count %d, live tables hold it %d times", id, blk.ref, want[id]))
		}
		if blk.onFree != (blk.ref == 0) {
			errs = append(errs, fmt.Errorf("kvcache: block %d with reference count %d: on free list = %v", id, blk.ref, blk.onFree))
		}
		if blk.cached && m.index[blk.hash] != int32(id) {
			errs = append(errs, fmt.Errorf("kvcache: cached block %d is not indexed under its hash", id))
		}
		if err := m.checkListed(int32(id)); err != nil {
			errs = append(errs, err)
		}
	}
	listed := 0
	for parent, kids := range m.children {
		for _, id := range kids {
			if blk := m.blocks[id]; !blk.listed || blk.parent != parent {
				errs = append(errs, fmt.Errorf("kvcache: block %d is a child of %x but listed %v under %x", id, parent, blk.listed, blk.parent))
			}
		}
		listed += len(kids)
	}
	for _, blk := range m.blocks {
		if blk.listed {
			listed--
		}
	}
	if listed != 0 {
		errs = append(errs, fmt.Errorf("kvcache: children lists and listed blocks differ by %d", listed))
	}
	for h, id := range m.index {
		if !m.blocks[id].cached || m.blocks[id].hash != h {
			errs = append(errs, fmt.Errorf("kvcache: index entry %x names block %d, which is not cached under it", h, id))
		}
	}
	n, prev := 0, none
	for id := m.free.head; id != none; id = m.blocks[id].next {
		if m.blocks[id].prev != prev || n > len(m.blocks) {
			errs = append(errs, fmt.Errorf("kvcache: free list broken at block %d", id))
			break
		}
		prev = id
		n++
	}
	if n != m.free.n || prev != m.free.tail {
		errs = append(errs, fmt.Errorf("kvcache: free list walks %d blocks, count says %d", n, m.free.n))
	}
	if err := m.checkSlots(live); err != nil {
		errs = append(errs, err)
	}
	if err := m.checkSnapshots(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckLeaks reports any block or state slot still held, plus any broken invariant:
// call it when every sequence has been freed, e.g. at the end of a test.
func (m *Manager) CheckLeaks() error { return m.Check() }

// checkListed checks one block's listing against its state.
func (m *Manager) checkListed(id int32) error {
	blk := &m.blocks[id]
	switch {
	case blk.cached && (!blk.listed || int(blk.fill) != m.blockSize):
		return fmt.Errorf("kvcache: cached block %d: listed %v with %d positions", id, blk.listed, blk.fill)
	case blk.listed && !blk.cached && (blk.fill <= 0 || int(blk.fill) >= m.blockSize || blk.ref > 1):
		return fmt.Errorf("kvcache: partial block %d lists %d positions with %d references", id, blk.fill, blk.ref)
	case !blk.listed && blk.fill != 0:
		return fmt.Errorf("kvcache: unlisted block %d has %d positions", id, blk.fill)
	}
	return nil
}
