package kvcache

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
)

func newManager(t testing.TB, blocks, size int) *Manager {
	t.Helper()
	m, err := New(Config{NumBlocks: blocks, BlockSize: size})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func seq(n int, base int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = base + int32(i)
	}
	return out
}

// prefill allocates, "computes" and commits a whole token list.
func prefill(t testing.TB, m *Manager, b *Blocks, tokens []int32) int {
	t.Helper()
	hit, err := m.Reuse(b, tokens)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Allocate(b, len(tokens)); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(b, tokens, len(tokens)); err != nil {
		t.Fatal(err)
	}
	return hit
}

// freeAndCheck checks the pool with the live tables, frees them and checks
// for leaks.
func freeAndCheck(t testing.TB, m *Manager, live ...*Blocks) {
	t.Helper()
	if err := m.Check(live...); err != nil {
		t.Fatal(err)
	}
	for _, b := range live {
		m.Free(b)
	}
	if err := m.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{{NumBlocks: 0, BlockSize: 16}, {NumBlocks: 4, BlockSize: -1}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) succeeded", c)
		}
	}
	m, err := New(Config{NumBlocks: 2})
	if err != nil || m.BlockSize() != DefaultBlockSize {
		t.Fatalf("default block size: %v %v", m, err)
	}
}

func TestAllocateIsAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		blocks     int
		first, sec int // tokens for two sequences
		wantErr    bool
		wantFree   int
	}{
		{"fits exactly", 4, 8, 8, false, 0},
		{"partial block rounds up", 4, 5, 7, false, 0},
		{"second does not fit", 4, 9, 5, true, 1},
		{"zero tokens", 2, 0, 0, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, tc.blocks, 4)
			var a, b Blocks
			if err := m.Allocate(&a, tc.first); err != nil {
				t.Fatal(err)
			}
			err := m.Allocate(&b, tc.sec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("second Allocate error %v, want error %v", err, tc.wantErr)
			}
			if err != nil && (!errors.Is(err, ErrOutOfBlocks) || b.Len() != 0) {
				t.Fatalf("failed Allocate: err %v, table %v", err, b.Table())
			}
			if m.NumFree() != tc.wantFree {
				t.Fatalf("free %d, want %d", m.NumFree(), tc.wantFree)
			}
			freeAndCheck(t, m, &a, &b)
		})
	}
}

// TestReuseLongestPrefixNeverCoversLastToken: a hit reaches every cached
// position before the last token, into a full block the prompt ends in or
// differs from, and into a running sequence's partial last block; whole
// indexed blocks are shared, the partly matching one is copied.
func TestReuseLongestPrefixNeverCoversLastToken(t *testing.T) {
	const bs = 4
	cached := seq(14, 100) // 3 full blocks committed (tokens 0..11) and 2 positions of the fourth
	for _, tc := range []struct {
		name   string
		tokens []int32
		want   int
	}{
		{"identical prompt keeps last token", cached, 13},
		{"extended by one", append(seq(14, 100), 5), 14},
		{"extended past the partial block", append(seq(14, 100), 5, 6, 7, 8), 14},
		{"exactly the committed blocks", cached[:12], 11},
		{"one past the committed blocks", cached[:13], 12},
		{"diverges in block 2", append(append([]int32{}, cached[:9]...), 7, 7, 7, 7, 7), 9},
		{"diverges in block 0", append([]int32{1}, cached[1:]...), 0},
		{"shorter than a block", cached[:3], 2},
		{"one token", cached[:1], 0},
		{"empty", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, 16, bs)
			var a, b Blocks
			prefill(t, m, &a, cached)
			if got := m.Lookup(tc.tokens); got != tc.want {
				t.Errorf("Lookup = %d, want %d", got, tc.want)
			}
			hit, err := m.Reuse(&b, tc.tokens)
			if err != nil || hit != tc.want {
				t.Fatalf("Reuse = %d, %v; want %d", hit, err, tc.want)
			}
			for i := 0; i < hit/bs; i++ {
				if b.Table()[i] != a.Table()[i] {
					t.Fatalf("block %d: got %d, want shared block %d", i, b.Table()[i], a.Table()[i])
				}
			}
			copies := m.TakeCopies(nil)
			if i := hit / bs; hit%bs != 0 {
				if want := []metal.BlockCopy{{Src: a.Table()[i], Dst: b.Table()[i]}}; !slices.Equal(copies, want) || b.Len() != i+1 {
					t.Fatalf("copies %v with table %v, want %v", copies, b.Table(), want)
				}
			} else if len(copies) != 0 || b.Len() != hit/bs {
				t.Fatalf("copies %v with table %v for a hit of whole blocks", copies, b.Table())
			}
			freeAndCheck(t, m, &a, &b)
		})
	}
}

func TestCachedBlocksSurviveFreeAndEvictLRU(t *testing.T) {
	const bs = 4
	m := newManager(t, 6, bs)
	old, recent := seq(9, 0), seq(9, 50) // two full blocks each
	for _, p := range [][]int32{old, recent} {
		var b Blocks
		prefill(t, m, &b, p)
		m.Free(&b)
	}
	if s := m.Stats(); s.Cached != 4 || s.Used != 0 || s.Free != 6 {
		t.Fatalf("after freeing: %+v", s)
	}
	// A hit on a free cached block takes it off the free list.
	var hitter Blocks
	if hit, _ := m.Reuse(&hitter, old); hit != 8 {
		t.Fatalf("hit %d after free, want 8", hit)
	}
	if m.NumFree() != 4 {
		t.Fatalf("free %d, want 4", m.NumFree())
	}
	m.Free(&hitter) // old is now the most recently used
	// Need 4 blocks: 2 empty ones first, then the LRU cached pair (recent's).
	var big Blocks
	if err := m.Allocate(&big, 16); err != nil {
		t.Fatal(err)
	}
	if got := m.Lookup(old); got != 8 {
		t.Errorf("most recently used prefix evicted: Lookup(old) = %d", got)
	}
	if got := m.Lookup(recent); got != 0 {
		t.Errorf("least recently used prefix kept: Lookup(recent) = %d", got)
	}
	if s := m.Stats(); s.Evictions != 2 || s.Cached != 2 || s.HitTokens != 8 {
		t.Errorf("stats %+v", s)
	}
	m.Free(&big)
	if err := m.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

func TestCommitIsWriteOnce(t *testing.T) {
	m := newManager(t, 8, 4)
	p := seq(9, 3)
	var a, b Blocks
	// Both compute the same prompt before either commits: b's copies are not indexed.
	for _, x := range []*Blocks{&a, &b} {
		if err := m.Allocate(x, len(p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []*Blocks{&a, &b} {
		if err := m.Commit(x, p, len(p)); err != nil {
			t.Fatal(err)
		}
	}
	if s := m.Stats(); s.Cached != 2 {
		t.Fatalf("cached %d, want 2 (one copy of each block)", s.Cached)
	}
	indexed := append([]int32(nil), a.Table()...)
	m.Free(&a)
	var c Blocks
	if hit, _ := m.Reuse(&c, p); hit != 8 || c.Table()[0] != indexed[0] || c.Table()[1] != indexed[1] {
		t.Fatalf("hit %d on %v, want the first committed copies %v", hit, c.Table(), indexed)
	}
	freeAndCheck(t, m, &b, &c)
}

func TestHashCollisionIsAMiss(t *testing.T) {
	m := newManager(t, 8, 4)
	p := seq(9, 0)
	var a Blocks
	prefill(t, m, &a, p)
	// Forge a collision: point the hash of q's first block at p's first block.
	q := seq(9, 40)
	m.index[chainHash(rootHash, q[:4])] = a.table[0]
	if got := m.Lookup(q); got != 0 {
		t.Fatalf("collision served %d tokens of the wrong prefix", got)
	}
	delete(m.index, chainHash(rootHash, q[:4]))
	m.Free(&a)
	if err := m.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name          string
		have, commit  int
		to            int
		wantBlocks    int
		wantErrSubstr string
	}{
		{"drop whole blocks", 16, 0, 5, 2, ""},
		{"keep partial block", 10, 0, 9, 3, ""},
		{"to zero", 10, 0, 0, 0, ""},
		{"no-op beyond end", 8, 0, 12, 2, ""},
		{"down to committed boundary", 16, 8, 8, 2, ""},
		{"into committed blocks", 16, 8, 7, 4, "committed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, 8, 4)
			var b Blocks
			toks := seq(tc.have, 0)
			if err := m.Allocate(&b, tc.have); err != nil {
				t.Fatal(err)
			}
			if err := m.Commit(&b, toks, tc.commit); err != nil {
				t.Fatal(err)
			}
			err := m.Truncate(&b, tc.to)
			if tc.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
					t.Fatalf("error %v, want %q", err, tc.wantErrSubstr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if b.Len() != tc.wantBlocks {
				t.Fatalf("%d blocks, want %d", b.Len(), tc.wantBlocks)
			}
			if err := m.Check(&b); err != nil {
				t.Fatal(err)
			}
			m.Free(&b)
			if err := m.CheckLeaks(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTruncateTrimsPartialBlock: rolling back committed positions of a
// partial block (the scheduler never does, a draft cache may) leaves only
// the positions before the cut listed, so no hit reads the positions that
// will be rewritten.
func TestTruncateTrimsPartialBlock(t *testing.T) {
	const bs = 4
	toks := seq(7, 10) // one full block, three positions of the second
	for _, tc := range []struct{ to, want int }{{7, 7}, {6, 6}, {5, 5}, {4, 4}} {
		m := newManager(t, 4, bs)
		var a, b Blocks
		prefill(t, m, &a, toks)
		if err := m.Truncate(&a, tc.to); err != nil {
			t.Fatal(err)
		}
		if got := m.Lookup(append(seq(7, 10), 0)); got != tc.want {
			t.Fatalf("truncated to %d: Lookup = %d, want %d", tc.to, got, tc.want)
		}
		if err := m.Check(&a, &b); err != nil {
			t.Fatal(err)
		}
		m.Free(&a)
		if err := m.CheckLeaks(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoubleFreePanicsAndLeaksAreReported(t *testing.T) {
	m := newManager(t, 4, 4)
	var a Blocks
	if err := m.Allocate(&a, 6); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckLeaks(); err == nil || !strings.Contains(err.Error(), "reference count 1") {
		t.Fatalf("leak not reported: %v", err)
	}
	stale := a // a copy of the table: freeing both is a double free
	stale.table = append([]int32(nil), a.table...)
	m.Free(&a)
	m.Free(&a) // an emptied table frees nothing
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("double free did not panic")
		}
	}()
	m.Free(&stale)
}

// TestRandomOperationsKeepInvariants drives the manager with random
// sequences sharing prefixes and checks every invariant after each step. A
// stand-in cache holds each slot's token id: positions are "computed" by
// writing their ids, the owed copies are made, and every hit must read
// back exactly the new sequence's tokens, through rollbacks (Truncate of
// committed positions of a partial block, then different tokens) too.
func TestRandomOperationsKeepInvariants(t *testing.T) {
	const blocks, bs = 24, 4
	rng := rand.New(rand.NewPCG(1, 2))
	m := newManager(t, blocks, bs)
	kv := make([]int32, blocks*bs)
	slot := func(b *Blocks, pos int) *int32 { return &kv[int(b.Table()[pos/bs])*bs+pos%bs] }
	type live struct {
		b      Blocks
		tokens []int32
		done   int
	}
	var seqs []*live
	hits := 0
	for step := range 5000 {
		switch op := rng.IntN(6); {
		case op == 0 || len(seqs) == 0:
			n := 1 + rng.IntN(30)
			toks := make([]int32, n)
			for i := range toks {
				toks[i] = int32(rng.IntN(3)) // tiny alphabet: many shared prefixes
			}
			s := &live{tokens: toks}
			free, look := m.NumFree(), m.Lookup(toks)
			hit, err := m.Reuse(&s.b, toks)
			if err != nil {
				t.Fatal(err)
			}
			if hit >= n && n > 0 || hit != look && (free > 0 || hit != look/bs*bs) {
				t.Fatalf("hit %d of %d tokens, Lookup said %d with %d free", hit, n, look, free)
			}
			for _, c := range m.TakeCopies(nil) {
				copy(kv[c.Dst*bs:(c.Dst+1)*bs], kv[c.Src*bs:(c.Src+1)*bs])
			}
			for p := range hit {
				if got := *slot(&s.b, p); got != toks[p] {
					t.Fatalf("step %d: hit of %d: position %d holds %d, want %d", step, hit, p, got, toks[p])
				}
			}
			hits += hit % bs
			s.done = hit
			seqs = append(seqs, s)
		case op == 1:
			i := rng.IntN(len(seqs))
			m.Free(&seqs[i].b)
			seqs = append(seqs[:i], seqs[i+1:]...)
		case op == 2:
			// A rollback into the committed partial block, and other tokens after it.
			s := seqs[rng.IntN(len(seqs))]
			lo := len(s.b.hashes) * bs
			if s.done <= lo {
				continue
			}
			to := lo + rng.IntN(s.done-lo)
			if err := m.Truncate(&s.b, to); err != nil {
				t.Fatal(err)
			}
			s.done = to
			s.tokens[to] = (s.tokens[to] + 1 + int32(rng.IntN(2))) % 3 // a rejected draft's token differs
			for i := to + 1; i < len(s.tokens); i++ {
				s.tokens[i] = int32(rng.IntN(3))
			}
		default:
			s := seqs[rng.IntN(len(seqs))]
			to := min(len(s.tokens), s.done+1+rng.IntN(6))
			if err := m.Allocate(&s.b, to); err != nil {
				if !errors.Is(err, ErrOutOfBlocks) {
					t.Fatal(err)
				}
				continue
			}
			for p := s.done; p < to; p++ {
				*slot(&s.b, p) = s.tokens[p]
			}
			s.done = to
			if rng.IntN(2) == 0 { // computed positions are committed later, or rolled back first
				continue
			}
			if err := m.Commit(&s.b, s.tokens, s.done); err != nil {
				t.Fatal(err)
			}
		}
		bs := make([]*Blocks, len(seqs))
		for i, s := range seqs {
			bs[i] = &s.b
		}
		if err := m.Check(bs...); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	for _, s := range seqs {
		m.Free(&s.b)
	}
	if err := m.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
	if hits == 0 {
		t.Fatal("no hit reached into a block")
	}
}

// TestPartialHitTakesOrCopies: a hit into the partial last block of a
// freed sequence takes that block itself when it uses every committed
// position of it, and copies it when it uses fewer (the rest stays
// listed for others) or when the block is a full indexed one.
func TestPartialHitTakesOrCopies(t *testing.T) {
	const bs = 4
	cached := seq(14, 100) // the fourth block holds 2 committed positions
	for _, tc := range []struct {
		name   string
		tokens []int32
		hit    int
		copied bool
	}{
		{"resent: one of two positions", cached, 13, true},
		{"extended: both positions", append(seq(14, 100), 1), 14, false},
		{"ends in a full indexed block", cached[:12], 11, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, 16, bs)
			var a, b Blocks
			prefill(t, m, &a, cached)
			old := a.Table()[tc.hit/bs]
			m.Free(&a)
			hit, err := m.Reuse(&b, tc.tokens)
			if err != nil || hit != tc.hit {
				t.Fatalf("Reuse = %d, %v; want %d", hit, err, tc.hit)
			}
			copies := m.TakeCopies(nil)
			got := b.Table()[hit/bs]
			if tc.copied != (len(copies) == 1) || tc.copied && copies[0] != (metal.BlockCopy{Src: old, Dst: got}) || !tc.copied && got != old {
				t.Fatalf("block %d of the table, copies %v; the hit's source is %d, copied: %v", got, copies, old, tc.copied)
			}
			var c Blocks // the source still serves others when it was copied
			if again, _ := m.Reuse(&c, tc.tokens); tc.copied && again != tc.hit {
				t.Fatalf("second hit %d after a copy, want %d", again, tc.hit)
			}
			m.TakeCopies(nil)
			freeAndCheck(t, m, &b, &c)
		})
	}
}

// TestFailedAdmitKeepsPartialBlock: an Admit that takes a freed
// sequence's partial block and then runs out of blocks leaves that block
// listed, so the next attempt hits as far.
func TestFailedAdmitKeepsPartialBlock(t *testing.T) {
	const bs = 4
	m := newManager(t, 5, bs)
	var a, hog, b Blocks
	prefill(t, m, &a, seq(6, 10)) // one full block, two positions of the second
	m.Free(&a)
	if err := m.Allocate(&hog, 3*bs); err != nil { // the three empty blocks
		t.Fatal(err)
	}
	p := append(seq(6, 10), 1, 2, 3, 4)
	for range 2 {
		if _, err := m.Admit(&b, p, func(int) int { return len(p) + bs }); !errors.Is(err, ErrOutOfBlocks) {
			t.Fatalf("Admit: %v, want ErrOutOfBlocks", err)
		}
		if got := m.Lookup(p); got != 6 {
			t.Fatalf("Lookup after a failed Admit = %d, want 6", got)
		}
	}
	freeAndCheck(t, m, &hog, &b)
}

func TestAdmitIsAllOrNothing(t *testing.T) {
	m := newManager(t, 4, 4)
	p := seq(9, 0)
	var a Blocks
	prefill(t, m, &a, p) // 3 blocks; 2 full ones indexed
	m.Free(&a)
	var hog Blocks
	if err := m.Allocate(&hog, 4); err != nil { // takes the empty block
		t.Fatal(err)
	}
	before := m.Stats()
	var b Blocks
	// 8 cached tokens, then 12 more need 3 blocks; only 1 is left after the hit.
	if _, err := m.Admit(&b, p, func(hit int) int { return hit + 12 }); !errors.Is(err, ErrOutOfBlocks) {
		t.Fatalf("Admit: %v, want ErrOutOfBlocks", err)
	}
	if after := m.Stats(); b.Len() != 0 || after.HitTokens != before.HitTokens || after.Free != before.Free {
		t.Fatalf("failed Admit left %d blocks, stats %+v -> %+v", b.Len(), before, after)
	}
	hit, err := m.Admit(&b, p, func(hit int) int { return len(p) })
	if err != nil || hit != 8 || b.Len() != 3 || m.Stats().HitTokens != before.HitTokens+8 {
		t.Fatalf("Admit = %d, %v with %d blocks", hit, err, b.Len())
	}
	m.Free(&b)
	m.Free(&hog)
	if err := m.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}
