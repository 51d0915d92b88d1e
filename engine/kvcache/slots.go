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
// 0..n-1, the free ones on a stack, per of them to a sequence (its slot,
// and its spare with Config.Spares). A manager without state layers has
// an empty pool and never touches it.
type slotPool struct {
	n, per int
	free   []int32
}

func newSlotPool(seqs int, spares bool) slotPool {
	per := 1
	if spares {
		per = 2
	}
	n := seqs * per
	p := slotPool{n: n, per: per, free: make([]int32, n)}
	for i := range p.free {
		p.free[i] = int32(n - 1 - i) // slot 0 on top
	}
	return p
}

// Slot returns the state slot b holds, or -1 when it holds none.
func (b *Blocks) Slot() int32 { return b.slot - 1 }

// Spare returns b's spare state slot (Config.Spares), where a verify pass
// saves the state before its drafts, or -1 when it holds none.
func (b *Blocks) Spare() int32 { return b.spare - 1 }

// HasStateSlots reports whether the manager keeps state slots, that is,
// whether the model has state layers.
func (m *Manager) HasStateSlots() bool { return m.slots.n > 0 }

// FreeSlots returns how many state slots Admit can still hand out; for a
// manager without state slots, 1 (it never runs out).
func (m *Manager) FreeSlots() int {
	if m.slots.n == 0 {
		return 1
	}
	return len(m.slots.free) / m.slots.per
}

// takeSlot gives b a free slot, and a spare with Config.Spares; the
// caller has checked there are enough.
func (m *Manager) takeSlot(b *Blocks) {
	f := m.slots.free
	b.slot, f = f[len(f)-1]+1, f[:len(f)-1]
	if m.slots.per == 2 {
		b.spare, f = f[len(f)-1]+1, f[:len(f)-1]
	}
	m.slots.free = f
}

// releaseSlot returns b's slot and spare, if any, to the pool.
func (m *Manager) releaseSlot(b *Blocks) {
	for _, s := range []*int32{&b.spare, &b.slot} {
		if *s != 0 {
			m.slots.free = append(m.slots.free, *s-1)
			*s = 0
		}
	}
}

// Settle ends a forward pass over b that wrote positions up to written
// (exclusive), of which the sequence keeps the first n (rejected draft
// tokens are the rest): the table is truncated to n (Truncate). It returns
// the positions the sequence now has computed: n, except for a sequence
// holding a state slot that keeps fewer positions than it wrote, whose
// state has absorbed the rejected ones. Such a sequence goes back to the
// state its spare holds, which the pass saved there before it ran (at
// position saved; -1: not saved), by swapping its slot and spare, and
// Settle returns saved: the caller recomputes positions saved..n-1 (the
// table still covers them) on top of it. Without a saved state Settle
// refuses with ErrStateRollback.
func (m *Manager) Settle(b *Blocks, saved, written, n int) (int, error) {
	kept := n
	if b.slot != 0 && n < written {
		if b.spare == 0 || saved < 0 || saved > n {
			return 0, fmt.Errorf("%w: keep %d of %d positions written, with no state saved at or before %d", ErrStateRollback, n, written, n)
		}
		b.slot, b.spare = b.spare, b.slot
		kept = saved
	}
	return kept, m.Truncate(b, n)
}

// checkSlots verifies the slot pool against the live tables: every slot
// is either free or held by exactly one table, never both.
func (m *Manager) checkSlots(live []*Blocks) error {
	var errs []error
	held := make([]int, m.slots.n)
	for _, b := range live {
		if (b.spare != 0) != (b.slot != 0 && m.slots.per == 2) {
			errs = append(errs, fmt.Errorf("kvcache: table holds state slot %d and spare %d, with %d slots a sequence", b.Slot(), b.Spare(), m.slots.per))
		}
		for _, s := range []int32{b.slot, b.spare} {
			if s == 0 {
				continue
			}
			if int(s-1) >= m.slots.n {
				errs = append(errs, fmt.Errorf("kvcache: table holds state slot %d of %d", s-1, m.slots.n))
			} else {
				held[s-1]++
			}
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
