package grammar

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// Vocab is a tokenizer's vocabulary as byte strings, arranged as a trie so a
// mask is computed by walking the trie with the matcher: a byte the grammar
// rejects prunes every token below it. It is read-only once built.
type Vocab struct {
	size   int
	tokens [][]byte // kept, not copied: callers must not modify it
	eos    []int32
	order  []int32 // token ids in trie preorder: each node's tokens are one range

	// Trie nodes in preorder, as parallel slices. Node 0 is the root.
	first  []int32  // start of the node's range in order
	own    []int32  // end of the tokens that end exactly at the node
	end    []int32  // end of the node's range (its whole subtree)
	edgeLo []int32  // the node's children are edges[edgeLo[i]:edgeLo[i+1]]
	edges  []edge   // children, sorted by byte
	safe   []uint16 // bit p: from string phase p, every token below stays inside the string
	closes []uint16 // bit p: from string phase p, some token below closes the string
	height []uint16 // longest token suffix below the node, in bytes (saturating)

	// inString[p]: the tokens that, read from string phase p, stay inside
	// the string. Masks inside free strings start from these.
	inString [strPhases]Mask
	// inStringChars[k]: the tokens of inString[strBody] with at most k
	// characters, for strings with a maxLength closer than the longest token.
	inStringChars []Mask
	// inStringWhole: the tokens of inString[strBody] that end on a whole
	// character (no escape or UTF-8 sequence left open).
	inStringWhole Mask

	everyByte bool // every byte a completion may use is a token of its own
}

type edge struct {
	b     byte
	child int32
}

// A mask allows a token when its bytes keep the output valid, so the
// vocabulary must be able to finish every valid prefix: byte-level BPE
// vocabularies hold all 256 single bytes, which guarantees it.
//
// NewVocab builds a Vocab from token byte strings indexed by token id and
// the ids that end generation (allowed once the document may end). Pass nil
// for tokens that must never appear in constrained output (special and
// control tokens); empty tokens are never allowed either. The Vocab keeps
// tokens without copying it, so it must not be modified afterwards.
func NewVocab(tokens [][]byte, eos []int) (*Vocab, error) {
	v := &Vocab{size: len(tokens), tokens: tokens}
	for _, id := range eos {
		if id < 0 || id >= len(tokens) {
			return nil, fmt.Errorf("grammar: EOS id %d outside the vocabulary of %d", id, len(tokens))
		}
		v.eos = append(v.eos, int32(id))
	}
	if len(tokens) == 0 {
		return nil, errors.New("grammar: empty vocabulary")
	}
	for id, t := range tokens {
		if len(t) > 0 && !slices.Contains(eos, id) {
			v.order = append(v.order, int32(id))
		}
	}
	slices.SortFunc(v.order, func(a, b int32) int {
		if c := bytes.Compare(tokens[a], tokens[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	v.build(tokens, 0, int32(len(v.order)), 0)
	v.edgeLo = append(v.edgeLo, int32(len(v.edges)))
	v.computeSafe()
	for p := strBody; p < strPhases; p++ {
		v.inString[p] = NewMask(v.size)
		v.fillInString(v.inString[p], 0, p)
	}
	v.fillInStringChars()
	v.everyByte = v.spellsEveryByte()
	return v, nil
}

// build adds the node for order[lo:hi], whose tokens share their first depth
// bytes, and its subtree, and returns the node's index.
func (v *Vocab) build(tokens [][]byte, lo, hi int32, depth int) int32 {
	i := int32(len(v.first))
	v.first = append(v.first, lo)
	v.end = append(v.end, hi)
	v.own = append(v.own, 0)
	v.edgeLo = append(v.edgeLo, 0)
	v.safe = append(v.safe, 0)
	v.closes = append(v.closes, 0)
	v.height = append(v.height, 0)
	at := lo
	for at < hi && len(tokens[v.order[at]]) == depth {
		at++
	}
	v.own[i] = at
	// Group the rest by their next byte; the children's edges are
	// reserved first so that they stay contiguous.
	type group struct {
		b      byte
		lo, hi int32
	}
	var groups []group
	for at < hi {
		b := tokens[v.order[at]][depth]
		g := group{b: b, lo: at}
		for at < hi && tokens[v.order[at]][depth] == b {
			at++
		}
		g.hi = at
		groups = append(groups, g)
	}
	v.edgeLo[i] = int32(len(v.edges))
	base := len(v.edges)
	for _, g := range groups {
		v.edges = append(v.edges, edge{b: g.b})
	}
	// Children follow in preorder; edges of later nodes go after ours.
	for k, g := range groups {
		v.edges[base+k].child = v.build(tokens, g.lo, g.hi, depth+1)
	}
	return i
}

// children returns node i's edges.
func (v *Vocab) children(i int32) []edge {
	lo := v.edgeLo[i]
	hi := int32(len(v.edges))
	if int(i)+1 < len(v.first) {
		hi = v.edgeLo[i+1]
	}
	return v.edges[lo:hi]
}

// computeSafe fills safe and closes bottom-up: children have larger
// indices than their parent in preorder.
func (v *Vocab) computeSafe() {
	for i := int32(len(v.first)) - 1; i >= 0; i-- {
		safe, closes := ^uint16(0), uint16(0)
		for _, e := range v.children(i) {
			v.height[i] = max(v.height[i], min(v.height[e.child], 0xfffe)+1)
			for p := strBody; p < strPhases; p++ {
				t := strNext(p, e.b)
				if t == strFail || t == strClosed || v.safe[e.child]&(1<<t) == 0 {
					safe &^= 1 << p
				}
				if t == strClosed || t != strFail && v.closes[e.child]&(1<<t) != 0 {
					closes |= 1 << p
				}
			}
		}
		v.safe[i], v.closes[i] = safe, closes
	}
}

// Size is the number of token ids, the length masks cover.
func (v *Vocab) Size() int { return v.size }

// bytes returns token id's byte string (nil for special tokens).
func (v *Vocab) bytes(id int) []byte { return v.tokens[id] }

// fillInString sets in mask the tokens below node that stay inside a string
// read from phase p at node.
func (v *Vocab) fillInString(mask Mask, node int32, p uint8) {
	for _, e := range v.children(node) {
		t := strNext(p, e.b)
		if t == strFail || t == strClosed {
			continue
		}
		c := e.child
		lo, hi := v.own[c], v.end[c]
		if v.safe[c]&(1<<t) == 0 {
			hi = lo
			v.fillInString(mask, c, t)
		}
		for _, id := range v.order[v.first[c]:hi] {
			mask.set(id)
		}
	}
}

// fillInStringChars builds inStringChars, counting characters the way the
// matcher does for bounded strings (each character start in the body).
func (v *Vocab) fillInStringChars() {
	v.inStringWhole = NewMask(v.size)
	byCount := make([][]int32, int(v.height[0])+1)
	for _, id := range v.order {
		p, chars := strBody, 0
		for _, b := range v.tokens[id] {
			if p == strBody {
				chars++
			}
			if p = strNext(p, b); p == strFail || p == strClosed {
				chars = -1
				break
			}
		}
		if chars >= 0 {
			byCount[chars] = append(byCount[chars], id)
			if p == strBody {
				v.inStringWhole.set(id)
			}
		}
	}
	v.inStringChars = make([]Mask, len(byCount))
	for k, ids := range byCount {
		m := NewMask(v.size)
		if k > 0 {
			copy(m, v.inStringChars[k-1])
		}
		for _, id := range ids {
			m.set(id)
		}
		v.inStringChars[k] = m
	}
}
