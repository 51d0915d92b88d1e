package spec

// Ngram proposes draft tokens by prompt lookup over the sequence's own
// tokens. The zero value uses n from 3 down to 1.
type Ngram struct {
	MaxN, MinN int
}

// Propose fills each want by Lookup.
func (g Ngram) Propose(wants []Want) error {
	for i := range wants {
		w := &wants[i]
		w.Draft = g.Lookup(w.Tokens, w.K, w.Draft)
	}
	return nil
}

// Lookup appends to dst up to k tokens that followed the most recent
// earlier occurrence of the last n tokens of tokens, trying the longest n
// first, and returns dst. It appends nothing when no n-gram recurs.
func (g Ngram) Lookup(tokens []int32, k int, dst []int32) []int32 {
	maxN, minN := g.MaxN, g.MinN
	if maxN <= 0 {
		maxN = 3
	}
	if minN <= 0 {
		minN = 1
	}
	L := len(tokens)
	if k <= 0 {
		return dst
	}
	for n := min(maxN, L-1); n >= minN; n-- {
		suffix := tokens[L-n:]
		// Scan start positions from the most recent; the match must end
		// before the suffix itself so that at least one token follows it.
		for i := L - n - 1; i >= 0; i-- {
			if tokens[i] != suffix[0] || !equal(tokens[i:i+n], suffix) {
				continue
			}
			follow := tokens[i+n : min(i+n+k, L)]
			return append(dst, follow...)
		}
	}
	return dst
}

func equal(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
