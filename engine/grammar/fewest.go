package grammar

import "sort"

// child returns node's child by byte b, or -1.
func (v *Vocab) child(node int32, b byte) int32 {
	es := v.children(node)
	i := sort.Search(len(es), func(i int) bool { return es[i].b >= b })
	if i < len(es) && es[i].b == b {
		return es[i].child
	}
	return -1
}

// spellsEveryByte reports whether every byte a shortest completion may use
// (printable ASCII, DEL and the bytes of UTF-8 sequences) is a token of
// its own, so that any completion of n bytes takes at most n tokens.
// Byte-level BPE vocabularies hold all 256 single bytes.
func (v *Vocab) spellsEveryByte() bool {
	for b := 0x20; b <= 0xf4; b++ {
		c := v.child(0, byte(b))
		if c < 0 || v.own[c] == v.first[c] {
			return false
		}
	}
	return true
}

// fewestTokens fills f (reused when long enough) so that f[i] is the
// fewest tokens that spell s[i:] exactly (endless when none does).
func (v *Vocab) fewestTokens(s []byte, f []int) []int {
	if cap(f) < len(s)+1 {
		f = make([]int, len(s)+1)
	}
	f = f[:len(s)+1]
	f[len(s)] = 0
	for i := len(s) - 1; i >= 0; i-- {
		best := endless
		node := int32(0)
		for j := i; j < len(s); j++ {
			if node = v.child(node, s[j]); node < 0 {
				break
			}
			if v.own[node] > v.first[node] {
				best = min(best, addLen(f[j+1], 1))
			}
		}
		f[i] = best
	}
	return f
}
