package kvcache

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestSnapshots: snapshots are kept only at interval ends of committed
// blocks, once per block; a sequence sharing a prefix is admitted up to
// the deepest snapshot in it and owes its restore after the snapshot
// copies; with every snapshot held, the least recently used free block's
// is taken over; evicting a block frees its snapshot; without snapshots a
// state model serves no hit.
func TestSnapshots(t *testing.T) {
	const bs, every = 4, 8
	m, err := New(Config{NumBlocks: 12, BlockSize: bs, StateSlots: 2, Snapshots: 2, SnapshotEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{NumBlocks: 8, BlockSize: bs, StateSlots: 2, Snapshots: 2, SnapshotEvery: 6}); err == nil {
		t.Fatal("an interval that is not a multiple of the block size was accepted")
	}
	a := seq(20, 1)
	x := admitCommitted(t, m, a)
	for _, n := range []int{4, 8, 8, 12, 16, 20} { // 4, 12, 20: not interval ends; the second 8: kept already
		m.Snapshot(&x, n, false)
	}
	got := m.TakeStateCopies(nil)
	want := []metal.StateCopy{{Src: x.Slot(), Dst: 2}, {Src: x.Slot(), Dst: 3}}
	if !slices.Equal(got, want) || m.Stats().Snapshots != 2 {
		t.Fatalf("snapshot copies %v, want %v; %d kept", got, want, m.Stats().Snapshots)
	}
	if hit := m.Lookup(append(seq(13, 1), 99, 98)); hit != 8 {
		t.Fatalf("Lookup of a prompt sharing 13 tokens: %d, want the snapshot at 8", hit)
	}
	var y Blocks
	b := append(seq(17, 1), 50, 51)
	hit, err := admit(m, &y, b)
	if err != nil || hit != 16 || y.Slot() == x.Slot() {
		t.Fatalf("Admit of a prompt sharing 17 tokens: hit %d, slot %d: %v", hit, y.Slot(), err)
	}
	if got := m.TakeStateCopies(nil); !slices.Equal(got, []metal.StateCopy{{Src: 3, Dst: y.Slot()}}) {
		t.Fatalf("restore copies %v", got)
	}
	if err := m.Check(&x, &y); err != nil {
		t.Fatal(err)
	}
	m.Free(&x)
	m.Free(&y)
	// A third snapshot takes over the least recently used free block's.
	c := seq(12, 40)
	var z Blocks
	if _, err := admit(m, &z, c); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(&z, c, 12); err != nil {
		t.Fatal(err)
	}
	m.Snapshot(&z, 8, false)
	if got := m.TakeStateCopies(nil); len(got) != 1 || m.Stats().Snapshots != 2 {
		t.Fatalf("snapshot with every one held: copies %v, %d kept", got, m.Stats().Snapshots)
	}
	freeAndCheck(t, m, &z)
	// Evicting every cached block frees every snapshot.
	var big Blocks
	if err := m.Allocate(&big, 12*bs); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Snapshots != 0 || s.Cached != 0 {
		t.Fatalf("after evicting every block: %d snapshots, %d cached", s.Snapshots, s.Cached)
	}
	freeAndCheck(t, m, &big)

	plain := newStateManager(t, 8, bs, 1)
	var p, q Blocks
	prefill(t, plain, &p, a[:12])
	plain.Free(&p)
	if hit, err := admit(plain, &q, a); err != nil || hit != 0 {
		t.Fatalf("a state model without snapshots: hit %d: %v", hit, err)
	}
	freeAndCheck(t, plain, &q)
}

// admitCommitted admits tokens into a new table and commits them all, as
// if computed.
func admitCommitted(t *testing.T, m *Manager, tokens []int32) Blocks {
	t.Helper()
	var x Blocks
	if _, err := admit(m, &x, tokens); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(&x, tokens, len(tokens)); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestSnapshotAtLast: with last, a snapshot is kept at a committed block's
// end off the interval, never inside a block; a table admitted
// uncounted takes its hit without touching the hit statistics.
func TestSnapshotAtLast(t *testing.T) {
	const bs, every = 4, 16
	m, err := New(Config{NumBlocks: 12, BlockSize: bs, StateSlots: 2, Snapshots: 4, SnapshotEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	a := seq(20, 1)
	x := admitCommitted(t, m, a)
	for _, tc := range []struct {
		n    int
		last bool
		kept bool
	}{{12, false, false}, {14, true, false}, {12, true, true}, {12, true, false}, {16, false, true}} {
		m.Snapshot(&x, tc.n, tc.last)
		if got := m.TakeStateCopies(nil); (len(got) == 1) != tc.kept {
			t.Errorf("Snapshot(%d, %v): copies %v, want one: %v", tc.n, tc.last, got, tc.kept)
		}
	}
	before := m.Stats()
	var y Blocks
	if hit, err := m.AdmitUncounted(&y, append(seq(13, 1), 7), func(hit int) int { return 14 }); err != nil || hit != 12 {
		t.Fatalf("AdmitUncounted: hit %d, %v; want the snapshot at 12", hit, err)
	}
	if after := m.Stats(); after.HitTokens != before.HitTokens || after.Queried != before.Queried {
		t.Errorf("hit statistics moved: %+v, then %+v", before, after)
	}
	m.TakeStateCopies(nil)
	m.Free(&y)
	freeAndCheck(t, m, &x)
}
