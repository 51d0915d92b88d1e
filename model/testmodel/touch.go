package testmodel

import (
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// TouchKV writes zeros over every block of the cache, so that a benchmark
// measures a server's steady state, where the cache's pages have long been
// mapped, rather than the page faults of each block's first write (with
// decode positions moving on into fresh pages, they would be most of a
// decode step's cache writes).
func TouchKV(c *metal.KVCache) {
	for _, l := range c.Layers {
		n := l.KVHeads * l.HeadElems() // a block's KV heads are adjacent
		for b := range l.NumBlocks {
			i := l.BlockIndex(int32(b), 0)
			clear(l.K[i : i+n])
			clear(l.V[i : i+n])
		}
	}
}

// DecodeBatch readies a batched decode benchmark: a touched float16 cache
// of rows·perSeq blocks of blockSize, and rows sequences with perSeq
// blocks each whose first prompt positions hold distinct tokens' keys and
// values (m's prefill of them), left as one-token rows for the caller
// to place at positions from prompt on.
func DecodeBatch(m model.Model, rows, perSeq, blockSize, prompt int) (*metal.KVCache, *model.Batch, error) {
	kv := m.NewKVCache(rows*perSeq, blockSize, metal.KVF16)
	TouchKV(kv)
	batch := &model.Batch{Rows: make([]model.Row, rows)}
	for r := range batch.Rows {
		table := make([]int32, perSeq)
		for j := range table {
			table[j] = int32(r*perSeq + j)
		}
		toks := make([]int32, prompt)
		for j := range toks {
			toks[j] = int32(1000 + r*prompt + j)
		}
		batch.Rows[r] = model.Row{Tokens: toks, Blocks: table, Logits: 1}
	}
	if _, err := m.Forward(batch, kv); err != nil {
		return nil, nil, err
	}
	tok := []int32{42}
	for r := range batch.Rows {
		batch.Rows[r].Start, batch.Rows[r].Tokens = prompt, tok
	}
	return kv, batch, nil
}
