package tokenizer

import "sync"

// pair is two adjacent symbols, by id.
type pair struct{ a, b int32 }

// merge is what a pair becomes, and its priority (lower merges first).
type merge struct {
	rank int32
	id   int32
}

// bpe applies byte-level BPE merges to one pre-token.
type bpe struct {
	vocab        map[string]int32
	merges       map[pair]merge
	ignoreMerges bool // a pre-token that is itself in the vocabulary is one token (Llama 3)

	mu    sync.Mutex // guards cache
	cache map[string][]int32
}

const (
	bpeCacheMax     = 1 << 16
	bpeCacheWordMax = 256 // longer words (whole texts, for SentencePiece) are not cached
	mergeLongAt     = 64  // symbols from which merge switches to the heap algorithm
)

// encode appends the ids of word to dst. initial returns word's symbols
// before merging (called only on a cache miss); word is byte-level mapped
// for byte-level BPE, as is for SentencePiece-style BPE.
func (m *bpe) encode(word string, initial func() []int32, dst []int32) []int32 {
	if m.ignoreMerges {
		if id, ok := m.vocab[word]; ok {
			return append(dst, id)
		}
	}
	cacheable := len(word) <= bpeCacheWordMax
	if cacheable {
		m.mu.Lock()
		ids, ok := m.cache[word]
		m.mu.Unlock()
		if ok {
			return append(dst, ids...)
		}
	}
	ids := m.merge(initial())
	if cacheable {
		m.mu.Lock()
		if len(m.cache) >= bpeCacheMax {
			clear(m.cache) // bounded: start over rather than grow without end
		}
		m.cache[word] = ids
		m.mu.Unlock()
	}
	return append(dst, ids...)
}

// merge repeatedly merges the adjacent pair of lowest rank (the leftmost
// among equals), the reference BPE algorithm.
func (m *bpe) merge(syms []int32) []int32 {
	syms = append([]int32(nil), syms...)
	if len(syms) >= mergeLongAt {
		return m.mergeLong(syms)
	}
	for len(syms) > 1 {
		best, at := merge{rank: -1}, -1
		for i := 0; i+1 < len(syms); i++ {
			if mg, ok := m.merges[pair{syms[i], syms[i+1]}]; ok && (at < 0 || mg.rank < best.rank) {
				best, at = mg, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] = best.id
		syms = append(syms[:at+1], syms[at+2:]...)
	}
	return syms
}
