package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// spModel is the part of a SentencePiece-style BPE that differs from the
// byte-level one: words are BPE'd on their characters as they are, and a
// character outside the vocabulary becomes its UTF-8 bytes as "<0xXX>"
// tokens (byte fallback) or the unknown token.
type spModel struct {
	byteFallback bool
	byteIDs      [256]int32 // id of "<0xXX>" for each byte, when byteFallback
	unk          int32      // -1 when the model has no unk_token
	fuseUnk      bool       // consecutive unknown characters make one unk token
}

// byteToken is the vocabulary entry byte fallback uses for b.
func byteToken(b byte) string { return fmt.Sprintf("<0x%02X>", b) }

// symbols appends the initial symbols of word: one per character, with the
// reference's unknown-character rules. Load ensures the model has byte
// fallback or an unk token.
func (m *spModel) symbols(vocab map[string]int32, word string, dst []int32) []int32 {
	pendingUnk := false // an unk token is owed (fused until a known character)
	for i := 0; i < len(word); {
		_, w := utf8.DecodeRuneInString(word[i:])
		ch := word[i : i+w]
		i += w
		if id, found := vocab[ch]; found {
			if pendingUnk {
				dst, pendingUnk = append(dst, m.unk), false
			}
			dst = append(dst, id)
			continue
		}
		if m.byteFallback {
			// The reference emits the byte tokens without first flushing a
			// pending unk (it lands later); with byte fallback and a full
			// byte table no unk is ever pending, so the order is moot.
			for j := 0; j < len(ch); j++ {
				dst = append(dst, m.byteIDs[ch[j]])
			}
			continue
		}
		if pendingUnk && !m.fuseUnk {
			dst = append(dst, m.unk)
		}
		pendingUnk = true
	}
	if pendingUnk {
		dst = append(dst, m.unk)
	}
	return dst
}

// mergeLong is merge for long words (SentencePiece-style BPE sees the whole
// text as one word): the same lowest-rank-first, leftmost-among-equals
// order, in O(n log n) with a heap of candidate pairs over a linked list.
func (m *bpe) mergeLong(syms []int32) []int32 {
	n := len(syms)
	type node struct {
		id         int32
		prev, next int32 // -1 at the ends
	}
	nodes := make([]node, n)
	for i, id := range syms {
		nodes[i] = node{id: id, prev: int32(i - 1), next: int32(i + 1)}
	}
	nodes[n-1].next = -1
	h := make(pairHeap, 0, n)
	for i := 0; i+1 < n; i++ {
		if mg, ok := m.merges[pair{syms[i], syms[i+1]}]; ok {
			h = append(h, newCandidate(mg, int32(i), syms[i], syms[i+1]))
		}
	}
	h.init()
	push := func(l int32) {
		r := nodes[l].next
		if r < 0 {
			return
		}
		if mg, ok := m.merges[pair{nodes[l].id, nodes[r].id}]; ok {
			h.push(newCandidate(mg, l, nodes[l].id, nodes[r].id))
		}
	}
	for len(h) > 0 {
		c := h.pop()
		l := int32(uint32(c.order))
		r := nodes[l].next
		// stale: one side has merged since (merging always changes an id,
		// and a removed node is unlinked from its left neighbour)
		if nodes[l].id != c.left || r < 0 || nodes[r].id != c.right {
			continue
		}
		nodes[l].id = c.id
		nodes[l].next = nodes[r].next
		if nn := nodes[r].next; nn >= 0 {
			nodes[nn].prev = l
		}
		nodes[r].id = -1 // removed
		if p := nodes[l].prev; p >= 0 {
			push(p)
		}
		push(l)
	}
	out := syms[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		out = append(out, nodes[i].id)
	}
	return out
}

// candidate is a mergeable adjacent pair found at some point.
type candidate struct {
	order       uint64 // rank in the high half, position of the left symbol in the low
	left, right int32  // the ids that made the pair, to detect stale entries
	id          int32
}

func newCandidate(mg merge, pos, left, right int32) candidate {
	return candidate{order: uint64(uint32(mg.rank))<<32 | uint64(uint32(pos)), left: left, right: right, id: mg.id}
}

// pairHeap is a binary min-heap of candidates by rank, then position
// (hand-written: container/heap's interface boxing costs a third of the
// time on long words).
type pairHeap []candidate

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].order <= s[i].order {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *pairHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		small := l
		if r := l + 1; r < len(h) && h[r].order < h[l].order {
			small = r
		}
		if h[i].order <= h[small].order {
			return
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
}
