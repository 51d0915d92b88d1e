package kvcache

import (
	"slices"
	"testing"
)

// TestEvictedBlocksRestore: the blocks a pool evicts are reported, with
// the chain hashes ChainHashes gives, their parents and tokens, before
// reuse; restored into another pool they serve the same prefix hit a
// sequence that committed them would.
func TestEvictedBlocksRestore(t *testing.T) {
	const bs = 4
	m := newManager(t, 4, bs)
	var evicted []Evicted
	m.OnEvict(func(e Evicted) {
		e.Tokens = slices.Clone(e.Tokens)
		evicted = append(evicted, e)
	})
	prompt := seq(3*bs+1, 100)
	var a Blocks
	prefill(t, m, &a, prompt)
	m.Free(&a)
	if len(evicted) != 0 {
		t.Fatalf("%d blocks reported evicted before any was reused", len(evicted))
	}
	var b Blocks
	prefill(t, m, &b, seq(4*bs, 900)) // takes every block
	if len(evicted) != 3 {
		t.Fatalf("%d evictions reported, want the 3 cached blocks", len(evicted))
	}
	hashes := ChainHashes(nil, prompt, bs)
	if len(hashes) != 3 {
		t.Fatalf("%d chain hashes for %d tokens of blocks of %d", len(hashes), len(prompt), bs)
	}
	slices.SortFunc(evicted, func(x, y Evicted) int { return slices.Index(hashes, x.Hash) - slices.Index(hashes, y.Hash) })
	for i, e := range evicted {
		parent := RootHash
		if i > 0 {
			parent = hashes[i-1]
		}
		if e.Hash != hashes[i] || e.Parent != parent || !slices.Equal(e.Tokens, prompt[i*bs:(i+1)*bs]) {
			t.Fatalf("eviction %d: %+v, want hash %x parent %x tokens %v", i, e, hashes[i], parent, prompt[i*bs:(i+1)*bs])
		}
	}
	freeAndCheck(t, m, &b)

	r := newManager(t, 6, bs)
	for _, e := range evicted {
		if _, ok := r.Restore(e.Hash, e.Parent, e.Tokens); !ok {
			t.Fatalf("Restore of %x refused", e.Hash)
		}
		if !r.Indexed(e.Hash) {
			t.Fatalf("%x not indexed after Restore", e.Hash)
		}
	}
	if _, ok := r.Restore(evicted[0].Hash, evicted[0].Parent, evicted[0].Tokens); ok {
		t.Fatal("a block already indexed was restored again")
	}
	if _, ok := r.Restore(1, RootHash, prompt[:bs-1]); ok {
		t.Fatal("a block of the wrong length was restored")
	}
	if err := r.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
	if got := r.Lookup(prompt); got != 3*bs {
		t.Fatalf("restored blocks serve %d tokens, want %d", got, 3*bs)
	}
	var c Blocks
	if hit := prefill(t, r, &c, prompt); hit != 3*bs {
		t.Fatalf("Reuse after Restore: %d tokens, want %d", hit, 3*bs)
	}
	freeAndCheck(t, r, &c)
}

// TestRestoreNeedsAFreeBlock: with every block held Restore takes nothing.
func TestRestoreNeedsAFreeBlock(t *testing.T) {
	m := newManager(t, 2, 4)
	var b Blocks
	prefill(t, m, &b, seq(8, 0))
	if _, ok := m.Restore(42, RootHash, seq(4, 50)); ok {
		t.Fatal("Restore succeeded with no free block")
	}
	freeAndCheck(t, m, &b)
}
