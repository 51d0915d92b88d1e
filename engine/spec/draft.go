package spec

import (
	"errors"
	"fmt"

	"github.com/splash-inference/splash/engine/kvcache"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// DraftModel proposes tokens by running a small model greedily over its own
// paged KV cache. Each sequence's draft cache holds the tokens it has fed;
// before proposing, the cache is rolled back to the longest prefix those
// share with the sequence's confirmed tokens (dropping rejected guesses) and
// caught up with the rest in one row. All sequences run in one batch per
// drafted position. Its block pool shares prefixes between sequences like
// the target's. Greedy drafting makes proposals deterministic, so rejection
// sampling treats them as q = one-hot.
type DraftModel struct {
	m      model.Model
	kv     *metal.KVCache
	blocks *kvcache.Manager
	seqs   map[uint64]*draftSeq

	rows   []model.Row
	active []int // index into wants of each row
	copies []metal.BlockCopy
}

type draftSeq struct {
	blocks kvcache.Blocks
	fed    []int32 // tokens whose keys and values are in the draft cache
}

// NewDraftModel wraps m with a cache of numBlocks blocks of blockSize tokens
// of type t.
func NewDraftModel(m model.Model, numBlocks, blockSize int, t metal.KVType) (*DraftModel, error) {
	if m.CacheSpec().HasState() {
		// Its drafts are rolled back on every rejection, which a state
		// cannot be without snapshots.
		return nil, fmt.Errorf("spec: a draft model with state layers is not supported")
	}
	if err := t.Check(blockSize, m.Config().HeadDim); err != nil {
		return nil, fmt.Errorf("spec: draft cache: %w", err)
	}
	blocks, err := kvcache.New(kvcache.Config{NumBlocks: numBlocks, BlockSize: blockSize})
	if err != nil {
		return nil, fmt.Errorf("spec: draft cache: %w", err)
	}
	return &DraftModel{m: m, kv: m.NewKVCache(numBlocks, blockSize, t), blocks: blocks, seqs: make(map[uint64]*draftSeq)}, nil
}

// Propose fills each want with up to K greedy draft tokens. A sequence whose
// draft cache cannot get blocks proposes nothing this time.
func (d *DraftModel) Propose(wants []Want) error {
	d.rows, d.active = d.rows[:0], d.active[:0]
	for i := range wants {
		w := &wants[i]
		if w.K <= 0 || len(w.Tokens) == 0 {
			continue
		}
		ds := d.seq(w.Seq)
		ok, err := d.sync(ds, w.Tokens)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		start := len(ds.fed)
		d.rows = append(d.rows, model.Row{Start: start, Tokens: w.Tokens[start:], Blocks: ds.blocks.Table(), Logits: 1})
		d.active = append(d.active, i)
	}
	vocab := d.m.Config().VocabSize
	for len(d.rows) > 0 {
		logits, err := d.m.Forward(&model.Batch{Rows: d.rows}, d.kv)
		if err != nil {
			return fmt.Errorf("spec: draft model: %w", err)
		}
		// Build the next position's rows in place: row j moves to n ≤ j.
		n := 0
		for j, i := range d.active {
			w, r := &wants[i], d.rows[j]
			ds := d.seqs[w.Seq]
			ds.fed = append(ds.fed, r.Tokens...)
			w.Draft = append(w.Draft, argmax(logits[j*vocab:(j+1)*vocab]))
			if len(w.Draft) >= w.K || d.blocks.Allocate(&ds.blocks, len(ds.fed)+1) != nil {
				continue
			}
			d.rows[n] = model.Row{Start: len(ds.fed), Tokens: w.Draft[len(w.Draft)-1:], Blocks: ds.blocks.Table(), Logits: 1}
			d.active[n] = i
			n++
		}
		d.rows, d.active = d.rows[:n], d.active[:n]
	}
	for i := range wants {
		if ds, ok := d.seqs[wants[i].Seq]; ok {
			// Only confirmed tokens are committed: they never roll back.
			c := min(len(ds.fed), len(wants[i].Tokens)) - 1
			if err := d.blocks.Commit(&ds.blocks, ds.fed, max(c, 0)); err != nil {
				return fmt.Errorf("spec: %w", err)
			}
		}
	}
	return nil
}

// sync rolls ds back to the longest prefix of its fed tokens that agrees
// with tokens, keeping at least the last token to feed, and allocates blocks
// for all of tokens. It reports false when the cache is out of blocks; the
// sequence's draft state is then dropped.
func (d *DraftModel) sync(ds *draftSeq, tokens []int32) (bool, error) {
	if ds.blocks.Len() == 0 {
		hit, err := d.blocks.Reuse(&ds.blocks, tokens)
		if err != nil {
			return false, fmt.Errorf("spec: %w", err)
		}
		// A hit into a block may owe a copy; it is made before any pass.
		d.copies = d.blocks.TakeCopies(d.copies[:0])
		if err := d.kv.CopyBlocks(d.copies); err != nil {
			return false, fmt.Errorf("spec: draft cache: %w", err)
		}
		ds.fed = append(ds.fed[:0], tokens[:hit]...)
	}
	common := 0
	for common < len(ds.fed) && common < len(tokens) && ds.fed[common] == tokens[common] {
		common++
	}
	common = min(common, len(tokens)-1)
	if err := d.blocks.Truncate(&ds.blocks, common); err != nil {
		return false, fmt.Errorf("spec: %w", err)
	}
	ds.fed = ds.fed[:common]
	if err := d.blocks.Allocate(&ds.blocks, len(tokens)); err != nil {
		if errors.Is(err, kvcache.ErrOutOfBlocks) {
			d.blocks.Free(&ds.blocks)
			ds.fed = ds.fed[:0]
			return false, nil
		}
		return false, fmt.Errorf("spec: %w", err)
	}
	return true, nil
}

// seq returns the draft state of a sequence, creating an empty one.
func (d *DraftModel) seq(id uint64) *draftSeq {
	if ds, ok := d.seqs[id]; ok {
		return ds
	}
	ds := &draftSeq{}
	d.seqs[id] = ds
	return ds
}

// Release frees a finished sequence's draft cache.
func (d *DraftModel) Release(seq uint64) {
	if ds, ok := d.seqs[seq]; ok {
		d.blocks.Free(&ds.blocks)
		delete(d.seqs, seq)
	}
}

// CheckLeaks verifies the draft block pool against the live sequences; with
// none left it is a leak check.
func (d *DraftModel) CheckLeaks() error {
	live := make([]*kvcache.Blocks, 0, len(d.seqs))
	for _, ds := range d.seqs {
		live = append(live, &ds.blocks)
	}
	return d.blocks.Check(live...)
}

func argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}
