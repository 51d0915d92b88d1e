package kvcache

import (
	"errors"
	"strings"
	"testing"
)

func newStateManager(t testing.TB, blocks, size, slots int) *Manager {
	t.Helper()
	m, err := New(Config{NumBlocks: blocks, BlockSize: size, StateSlots: slots})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// admit admits tokens, allocating all of them.
func admit(m *Manager, b *Blocks, tokens []int32) (int, error) {
	return m.Admit(b, tokens, func(int) int { return len(tokens) })
}

// TestAdmitTakesStateSlots: each admitted table holds its own slot until
// freed; with every slot held Admit fails with ErrOutOfSlots and leaves no
// trace (no block, no slot, no statistics); a failure for want of blocks
// takes no slot either; a freed slot is admitted again.
func TestAdmitTakesStateSlots(t *testing.T) {
	m := newStateManager(t, 8, 4, 2)
	var a, b, c Blocks
	for _, x := range []*Blocks{&a, &b} {
		if _, err := admit(m, x, seq(5, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if a.Slot() < 0 || b.Slot() < 0 || a.Slot() == b.Slot() {
		t.Fatalf("slots %d and %d, want two different ones", a.Slot(), b.Slot())
	}
	before := m.Stats()
	if _, err := admit(m, &c, seq(5, 1)); !errors.Is(err, ErrOutOfSlots) {
		t.Fatalf("third Admit of two slots: %v, want ErrOutOfSlots", err)
	}
	if c.Len() != 0 || c.Slot() != -1 || m.Stats() != before {
		t.Fatalf("failed Admit left %d blocks, slot %d, stats %+v (before %+v)", c.Len(), c.Slot(), m.Stats(), before)
	}
	if err := m.Check(&a, &b); err != nil {
		t.Fatal(err)
	}
	freed := a.Slot()
	m.Free(&a)
	if a.Slot() != -1 || m.Stats().FreeSlots != 1 {
		t.Fatalf("Free left slot %d, %d free", a.Slot(), m.Stats().FreeSlots)
	}
	if _, err := admit(m, &c, seq(40, 1)); !errors.Is(err, ErrOutOfBlocks) || c.Slot() != -1 || m.Stats().FreeSlots != 1 {
		t.Fatalf("Admit beyond the blocks: %v, slot %d, %d free", err, c.Slot(), m.Stats().FreeSlots)
	}
	if _, err := admit(m, &c, seq(5, 1)); err != nil || c.Slot() != freed {
		t.Fatalf("Admit after Free: %v, slot %d, want %d", err, c.Slot(), freed)
	}
	freeAndCheck(t, m, &b, &c)
}

// TestStateManagerServesNoPrefixHits: without snapshots a state model's
// prefix cannot be resumed, so nothing is indexed or hit.
func TestStateManagerServesNoPrefixHits(t *testing.T) {
	m := newStateManager(t, 8, 4, 2)
	tokens := seq(10, 1)
	var a, b Blocks
	if _, err := admit(m, &a, tokens); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(&a, tokens, len(tokens)); err != nil {
		t.Fatal(err)
	}
	m.Free(&a)
	if n := m.Lookup(tokens); n != 0 {
		t.Fatalf("Lookup after a finished sequence: %d, want 0", n)
	}
	if hit, err := admit(m, &b, tokens); err != nil || hit != 0 || m.Stats().Cached != 0 {
		t.Fatalf("Admit: hit %d, %v, %d cached", hit, err, m.Stats().Cached)
	}
	freeAndCheck(t, m, &b)
}

// TestSettle: a paged table keeps what it is told, dropping blocks past it;
// a table with a state slot refuses to keep fewer positions than it wrote,
// unless the pass saved its state in its spare at or before what it
// keeps: then its slot and spare swap and it has computed up to the save.
func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		slots                int
		spares               bool
		saved, written, keep int
		wantErr              error
		wantBlocks, kept     int
		wantSwap             bool
	}{
		{"paged keeps all", 0, false, -1, 10, 10, nil, 3, 10, false},
		{"paged rolls back", 0, false, -1, 10, 5, nil, 2, 5, false},
		{"state keeps all", 2, false, -1, 10, 10, nil, 3, 10, false},
		{"state refuses rollback", 2, false, -1, 10, 5, ErrStateRollback, 3, 0, false},
		{"spare keeps all", 2, true, 6, 10, 10, nil, 3, 10, false},
		{"spare goes back to the save", 2, true, 6, 10, 8, nil, 2, 6, true},
		{"spare not saved", 2, true, -1, 10, 8, ErrStateRollback, 3, 0, false},
		{"spare saved past the keep", 2, true, 9, 10, 8, ErrStateRollback, 3, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(Config{NumBlocks: 8, BlockSize: 4, StateSlots: tc.slots, Spares: tc.spares})
			if err != nil {
				t.Fatal(err)
			}
			var b Blocks
			if _, err := admit(m, &b, seq(tc.written, 1)); err != nil {
				t.Fatal(err)
			}
			slot, spare := b.Slot(), b.Spare()
			if (spare >= 0) != tc.spares || tc.spares && spare == slot {
				t.Fatalf("slot %d, spare %d with spares %v", slot, spare, tc.spares)
			}
			kept, err := m.Settle(&b, tc.saved, tc.written, tc.keep)
			if !errors.Is(err, tc.wantErr) || kept != tc.kept || b.Len() != tc.wantBlocks {
				t.Fatalf("Settle(%d, %d, %d) = %d, %v with %d blocks; want %d, %v, %d", tc.saved, tc.written, tc.keep, kept, err, b.Len(), tc.kept, tc.wantErr, tc.wantBlocks)
			}
			if swapped := slot != spare && b.Slot() == spare && b.Spare() == slot; swapped != tc.wantSwap {
				t.Fatalf("slot %d and spare %d became %d and %d; swap wanted: %v", slot, spare, b.Slot(), b.Spare(), tc.wantSwap)
			}
			freeAndCheck(t, m, &b)
		})
	}
}

// TestCheckReportsSlotMisuse: a slot held by two tables, a slot both free
// and held, a slot still held at the end (a leak) and a slot from a manager
// without slots are reported.
func TestCheckReportsSlotMisuse(t *testing.T) {
	m := newStateManager(t, 8, 4, 2)
	var a Blocks
	if _, err := admit(m, &a, seq(3, 1)); err != nil {
		t.Fatal(err)
	}
	held := a.slot
	for _, tc := range []struct {
		name string
		m    *Manager
		live []*Blocks
	}{
		{"held twice", m, []*Blocks{&a, {slot: held}}},
		{"leaked", m, nil},
		{"free and held", m, []*Blocks{&a, {slot: 3 - held}}}, // the other slot, which is free
		{"no slots", newManager(t, 8, 4), []*Blocks{{slot: 1}}},
	} {
		if err := tc.m.Check(tc.live...); err == nil || !strings.Contains(err.Error(), "state slot") {
			t.Errorf("%s: %v, want a state slot error", tc.name, err)
		}
	}
	freeAndCheck(t, m, &a)
}
