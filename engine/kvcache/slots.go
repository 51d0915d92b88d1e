package kvcache

import (
	"errors"
	"fmt"
)

// ErrOutOfSlots is returned (wrapped) by Admit when every state slot is held
// by a sequence.
var ErrOutOfSlots = errors.New("kvcache: out of state slots")

// ErrStateRollback is returned (wrapped) by Settle when a sequence holding
// a state slot would keep fewer positions than its state has absorbed.
var ErrStateRollback = errors.New("kvcache: a state cannot be rolled back")

// slotPool hands out the state slots of a model with state layers: ids
// 0..n-1, the free ones on a stack. A manager without state layers has an
// empty pool and never touches it.
type slotPool struct {
	n    int
	free []int32
}

func newSlotPool(n int) slotPool {
	p := slotPool{n: n, free: make([]int32, n)}
	for i := range p.free {
		p.free[i] = int32(n - 1 - i) // slot 0 on top
	}
	return p
}

// Slot returns the state slot b holds, or -1 when it holds none.
func (b *Blocks) Slot() int32 { return b.slot - 1 }

// HasStateSlots reports whether the manager keeps state slots, that is,
// whether the model has state layers.
func (m *Manager) HasStateSlots() bool { return m.slots.n > 0 }

// FreeSlots returns how many state slots Admit can still hand out; for a
// manager without state slots, 1 (it never runs out).
func (m *Manager) FreeSlots() int {
	if m.slots.n == 0 {
		return 1
	}
	return len(m.slots.free)
}

// takeSlot gives b a free slot; the caller has checked there is one.
func (m *Manager) takeSlot(b *Blocks) {
	f := m.slots.free
	b.slot, m.slots.free = f[len(f)-1]+1, f[:len(f)-1]
}

// releaseSlot returns b's slot, if any, to the pool.
func (m *Manager) releaseSlot(b *Blocks) {
	if b.slot == 0 {
		return
	}
	m.slots.free = append(m.slots.free, b.slot-1)
	b.slot = 0
}

// Settle ends a forward pass over b that wrote positions up to written
// (exclusive), of which the sequence keeps the first n (rejected draft
// tokens are the rest): the table is truncated to n (Truncate). It returns
// the positions the sequence now has computed: n. A sequence holding a
// state slot cannot keep fewer positions than it wrote, since its state
// has absorbed them: Settle refuses with ErrStateRollback. (With state
// snapshots it would restore the deepest one at or before n and return its
// position, for the caller to recompute the rest; see the package doc.)
func (m *Manager) Settle(b *Blocks, written, n int) (int, error) {
	if b.slot != 0 && n < written {
		return 0, fmt.Errorf("%w: keep %d of %d positions written", ErrStateRollback, n, written)
	}
	return n, m.Truncate(b, n)
}

// checkSlots verifies the slot pool against the live tables: every slot
// is either free or held by exactly one table, never both.
func (m *Manager) checkSlots(live []*Blocks) error {
	var errs []error
	held := make([]int, m.slots.n)
	for _, b := range live {
		if b.slot == 0 {
			continue
		}
		if s := b.Slot(); int(s) >= m.slots.n {
			errs = append(errs, fmt.Errorf("kvcache: table holds state slot %d of %d", s, m.slots.n))
		} else {
			held[s]++
		}
	}
	for _, s := range m.slots.free {
		if s < 0 || int(s) >= m.slots.n {
			errs = append(errs, fmt.Errorf("kvcache: free state slot %d of %d", s, m.slots.n))
			continue
		}
		held[s]++
	}
	for s, n := range held {
		if n != 1 {
			errs = append(errs, fmt.Errorf("kvcache: state slot %d is free or held %d times, want once", s, n))
		}
	}
	return errors.Join(errs...)
}
