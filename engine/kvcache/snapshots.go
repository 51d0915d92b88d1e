package kvcache

import (
	"errors"
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// snapshotPool keeps state snapshots: state slots StateSlots ..
// StateSlots+Snapshots-1, each held by at most one cached block (block.snap)
// whose end it is the sequence's state at. A manager without snapshots has
// an empty pool.
type snapshotPool struct {
	base   int32 // first snapshot slot
	n      int
	every  int // positions between snapshots, a multiple of the block size
	free   []int32
	copies []metal.StateCopy // owed since the last TakeStateCopies, in order
}

func newSnapshotPool(base, n, every int) snapshotPool {
	p := snapshotPool{base: int32(base), n: n, every: every, free: make([]int32, n)}
	for i := range p.free {
		p.free[i] = int32(base + n - 1 - i)
	}
	return p
}

// snapshotting reports whether a model with state layers keeps snapshots,
// which make its prefix hits possible.
func (m *Manager) snapshotting() bool { return m.slots.n > 0 && m.snaps.n > 0 }

// Snapshot keeps the state that the last forward pass left in b's slot,
// the sequence's state after its first n positions, under the indexed block
// that ends at n, when n is a multiple of Config.SnapshotEvery (or, with
// last, any block's end: the last point of a prompt, or of an answer,
// where the caller can vouch for the state, below) and that block holds
// none yet: a later sequence with that prefix resumes there (Admit). The caller vouches that the state's bits are what any sequence
// with the same first n tokens would compute (for a hybrid model, its
// positions were computed in prompt chunks cut at the delta rule's
// chunks). The copy into the snapshot is owed (TakeStateCopies) and must
// run before the slot changes, that is, at the start of the next forward
// pass. With every snapshot held, the least recently used unreferenced
// block's is taken over; without one, nothing is kept.
func (m *Manager) Snapshot(b *Blocks, n int, last bool) {
	if !m.snapshotting() || b.slot == 0 || n <= 0 || n%m.blockSize != 0 || n%m.snaps.every != 0 && !last {
		return
	}
	i := n/m.blockSize - 1
	if i >= len(b.hashes) {
		return // not committed
	}
	id, ok := m.index[b.hashes[i]]
	if !ok || m.blocks[id].snap != 0 {
		return
	}
	s, ok := m.takeSnapshotSlot()
	if !ok {
		return
	}
	m.blocks[id].snap = s + 1
	m.snaps.copies = append(m.snaps.copies, metal.StateCopy{Src: b.Slot(), Dst: s})
}

// takeSnapshotSlot pops a free snapshot slot, or takes the one of the
// least recently used free block that holds one.
func (m *Manager) takeSnapshotSlot() (int32, bool) {
	if f := m.snaps.free; len(f) > 0 {
		s := f[len(f)-1]
		m.snaps.free = f[:len(f)-1]
		return s, true
	}
	for id := m.free.head; id != none; id = m.blocks[id].next {
		if blk := &m.blocks[id]; blk.snap != 0 {
			s := blk.snap - 1
			blk.snap = 0
			return s, true
		}
	}
	return 0, false
}

// dropSnapshot frees the snapshot of a block leaving the index.
func (m *Manager) dropSnapshot(id int32) {
	if blk := &m.blocks[id]; blk.snap != 0 {
		m.snaps.free = append(m.snaps.free, blk.snap-1)
		blk.snap = 0
	}
}

// snapshotPrefix walks the cached prefix of tokens and returns how many
// of its blocks lead up to the deepest one holding a snapshot, and that
// snapshot's slot + 1 (0: none).
func (m *Manager) snapshotPrefix(tokens []int32) (int, int32) {
	depth, snap, i := 0, int32(0), 0
	m.walkPrefix(tokens, func(id int32, _ uint64) {
		i++
		if s := m.blocks[id].snap; s != 0 {
			depth, snap = i, s
		}
	})
	return depth, snap
}

// attachSnapshot attaches to the empty table b the cached prefix of tokens
// up to its deepest snapshot and returns the positions it covers and the
// snapshot's slot + 1.
func (m *Manager) attachSnapshot(b *Blocks, tokens []int32) (int, int32) {
	depth, snap := m.snapshotPrefix(tokens)
	if depth == 0 {
		return 0, 0
	}
	m.walkPrefix(tokens[:depth*m.blockSize+1], func(id int32, h uint64) {
		m.acquire(id)
		b.table = append(b.table, id)
		b.hashes = append(b.hashes, h)
	})
	return depth * m.blockSize, snap
}

// TakeStateCopies appends the state copies owed since the last call
// (snapshots kept, then restored into admitted sequences' slots, in the
// order they must run) to dst and forgets them. The next forward pass
// must make them before its rows, and only a pass that runs may take
// them.
func (m *Manager) TakeStateCopies(dst []metal.StateCopy) []metal.StateCopy {
	dst = append(dst, m.snaps.copies...)
	m.snaps.copies = m.snaps.copies[:0]
	return dst
}

// checkSnapshots verifies that each snapshot slot is either free or held
// by exactly one cached block.
func (m *Manager) checkSnapshots() error {
	var errs []error
	held := make([]int, m.snaps.n)
	mark := func(s int32, what string) {
		if i := s - m.snaps.base; i < 0 || int(i) >= m.snaps.n {
			errs = append(errs, fmt.Errorf("kvcache: %s snapshot slot %d outside [%d, %d)", what, s, m.snaps.base, int(m.snaps.base)+m.snaps.n))
		} else {
			held[i]++
		}
	}
	for id, blk := range m.blocks {
		if blk.snap == 0 {
			continue
		}
		if !blk.cached {
			errs = append(errs, fmt.Errorf("kvcache: block %d holds a snapshot but is not cached", id))
		}
		mark(blk.snap-1, "held")
	}
	for _, s := range m.snaps.free {
		mark(s, "free")
	}
	for i, n := range held {
		if n != 1 {
			errs = append(errs, fmt.Errorf("kvcache: snapshot slot %d is free or held %d times, want once", int(m.snaps.base)+i, n))
		}
	}
	return errors.Join(errs...)
}
