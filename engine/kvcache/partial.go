package kvcache

import "github.com/splash-inference/splash/metal"

// A sequence whose tokens share only the first positions of a block with a
// cached one (it ends inside the block, or differs from it there) reuses
// those positions too: the cached and partial blocks that follow a chain
// hash are its children, each with the token ids of its committed
// positions, and the longest common prefix of a child's tokens with the
// sequence's next ones is how far the hit reaches into the block. The
// sequence cannot share the block, since it will write the positions after
// that prefix; it gets a fresh block with a copy of the child's keys and
// values (metal.BlockCopy), or the child itself when that is an
// unreferenced partial block all of whose positions match, which nobody
// else could then hit for more. Partial blocks are listed as their owner
// commits positions (a running sequence's tail, a finished or preempted
// sequence's last block) and only while their positions stay committed.
//
// A hit is a count of positions whose keys and values are in the table's
// blocks; that is all attention needs. A model with recurrent layers would
// also need its state at the hit's position, which no block holds: it
// would keep snapshots by chain hash and offset beside these lists and cut
// the hit back to the nearest one.

// partialWant is what a partial hit can cover after full shared blocks:
// the tokens of the next block, but not the last token, whose logits the
// sequence needs.
func (m *Manager) partialWant(tokens []int32, full int) []int32 {
	lo := full * m.blockSize
	hi := min(lo+m.blockSize, len(tokens)-1)
	if hi <= lo {
		return nil
	}
	return tokens[lo:hi]
}

// partialMatch returns the child of parent whose committed tokens share the
// longest prefix with want, and that prefix's length (0: none).
func (m *Manager) partialMatch(parent uint64, want []int32) (int32, int) {
	best, bestN := none, 0
	if len(want) == 0 {
		return best, 0
	}
	bs := m.blockSize
	for _, id := range m.children[parent] {
		have := m.tokens[int(id)*bs : int(id)*bs+int(m.blocks[id].fill)]
		n := 0
		for n < len(have) && n < len(want) && have[n] == want[n] {
			n++
		}
		if n > bestN {
			best, bestN = id, n
		}
	}
	return best, bestN
}

// attachPartial appends to b a block holding the first n positions of src:
// src itself when it is unreferenced and either a partial block of exactly
// those positions or the last free block, else a fresh block and a copy
// owed. It reports false when no block is free. A block taken stays listed
// with its first n positions, which its new owner keeps (and commits again):
// a failed Admit that frees it loses no cached position.
func (m *Manager) attachPartial(b *Blocks, src int32, n int) bool {
	if blk := &m.blocks[src]; blk.ref == 0 && (!blk.cached && int(blk.fill) == n || m.free.n == 1) {
		m.unindex(src) // its new owner writes past n
		blk.fill = int32(n)
		m.acquire(src)
		b.table = append(b.table, src)
		return true
	}
	m.acquire(src) // so that it is not the destination
	defer m.release(src)
	if m.free.n == 0 {
		return false
	}
	id := m.free.popHead(m.blocks)
	m.evict(id)
	m.blocks[id].ref = 1
	b.table = append(b.table, id)
	m.copies = append(m.copies, metal.BlockCopy{Src: src, Dst: id})
	return true
}

// TakeCopies appends to dst the block copies that Reuse and Admit owe since
// the last call, in order, and forgets them. The caller makes them, in
// order, before the next forward pass over the cache (the source blocks
// keep their contents until a pass writes them) and before any position of
// a table that got one is read or written.
func (m *Manager) TakeCopies(dst []metal.BlockCopy) []metal.BlockCopy {
	dst = append(dst, m.copies...)
	m.copies = m.copies[:0]
	return dst
}

// commitPartial lists block id, a table's block after its committed full
// ones, with toks as its committed positions.
func (m *Manager) commitPartial(id int32, parent uint64, toks []int32) {
	if m.blocks[id].cached {
		return
	}
	copy(m.tokens[int(id)*m.blockSize:], toks)
	m.list(id, parent, len(toks))
}

// trimPartial keeps only the first n committed positions of block id when
// it is a listed partial block: the rest are about to be rewritten.
func (m *Manager) trimPartial(id int32, n int) {
	blk := &m.blocks[id]
	if !blk.listed || blk.cached || int(blk.fill) <= n {
		return
	}
	if n <= 0 {
		m.unlist(id)
		return
	}
	blk.fill = int32(n)
}

// list makes id a child of parent with fill committed positions.
func (m *Manager) list(id int32, parent uint64, fill int) {
	blk := &m.blocks[id]
	if !blk.listed {
		m.children[parent] = append(m.children[parent], id)
		blk.listed, blk.parent = true, parent
	}
	blk.fill = int32(fill)
}

// unlist removes id from its parent's children.
func (m *Manager) unlist(id int32) {
	blk := &m.blocks[id]
	if !blk.listed {
		return
	}
	kids := m.children[blk.parent]
	for i, k := range kids {
		if k == id {
			kids[i] = kids[len(kids)-1]
			kids = kids[:len(kids)-1]
			break
		}
	}
	if len(kids) == 0 {
		delete(m.children, blk.parent)
	} else {
		m.children[blk.parent] = kids
	}
	blk.listed, blk.fill = false, 0
}
