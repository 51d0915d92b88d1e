package spec

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/splash-inference/splash/engine/kvcache"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// Features are a target pass's captured hidden states (model.FeatureCapture)
// at committed positions Start, Start+1, … of sequence Seq, one
// model.DFlashDraft.FeatureWidth() row per position.
type Features struct {
	Seq   uint64
	Start int
	Rows  []float32
	// Tokens, when set, are the sequence's tokens at positions 0 … at least
	// the last of Rows: the context of their full blocks is shared with
	// later sequences of the same prefix, and a sequence first seen after
	// a prefix-cache hit (Start > 0) takes its context before Start from
	// there.
	Tokens []int32
}

// FeatureSink takes the target's features of committed positions; the
// engine gives them to a proposer that implements it after every step.
type FeatureSink interface {
	AddFeatures(fs []Features) error
}

// DFlash proposes with a block-diffusion draft (model.DFlashDraft): one
// batched pass per step gives every drafting sequence BlockSize−1 tokens
// after its last token, conditioned on the target's features at all its
// earlier positions, which the draft keeps as context in its own paged
// cache (positions as the target's), shared between sequences by prefix
// like the target's. A sequence drafts only while its context is
// complete: positions the target never ran (its prefix-cache hit) come
// from the draft's prefix cache, and a sequence whose hit that cache does
// not cover proposes nothing. A greedy sequence's drafts are the draft's
// arg max tokens (q one-hot for rejection sampling). A sampling one
// (Want.Sampling) draws a DFlash draft's tokens from its distribution,
// the softmax of its logits under the sequence's temperature, top-k,
// top-p, min-p and logit bias (not its penalties, which hang on tokens
// the block has not yet accepted), and reports it in Want.Probs; a
// DFlash2 draft's candidate walk draws each token among its candidates
// from the softmax of their scores over the sequence's temperature, given
// the token drawn before it (model.DFlashDraft.Walk), and reports that.
type DFlash struct {
	d      *model.DFlashDraft
	kv     *metal.KVCache
	blocks *kvcache.Manager
	seqs   map[uint64]*dflashSeq

	rows   []model.DFlashBlock
	active []int
	out    []int32
	ctx    []model.DFlashContext
	copies []metal.BlockCopy
	q      []float32 // sampling rows' draft distributions (Want.Probs)
	probs  [][]float32
	// pending are features not added to the context yet (AddFeatures).
	pending       []Features
	pendingFloats int
	commits       []dflashCommit
	entropy       rand.PCG // seeds unseeded sequences' draft samplers
}

type dflashSeq struct {
	blocks kvcache.Blocks
	ctxLen int             // positions 0..ctxLen-1 hold context
	draw   *sample.Sampler // the sampling sequence's draft distribution and generator
}

// NewDFlash wraps d with a context cache of numBlocks blocks of blockSize
// positions beside a target cache of type t (model.DFlashKVType: a q8
// cache keeps the draft's context in f16).
func NewDFlash(d *model.DFlashDraft, numBlocks, blockSize int, t metal.KVType) (*DFlash, error) {
	t = model.DFlashKVType(t)
	if err := t.Check(blockSize, d.Config().Layers.HeadDim); err != nil {
		return nil, fmt.Errorf("spec: dflash cache: %w", err)
	}
	blocks, err := kvcache.New(kvcache.Config{NumBlocks: numBlocks, BlockSize: blockSize})
	if err != nil {
		return nil, fmt.Errorf("spec: dflash cache: %w", err)
	}
	f := &DFlash{d: d, kv: d.NewKVCache(numBlocks, blockSize, t), blocks: blocks, seqs: make(map[uint64]*dflashSeq)}
	f.entropy.Seed(rand.Uint64(), rand.Uint64())
	return f, nil
}

// flushFloats bounds the features AddFeatures keeps pending (64 MiB):
// past it they are added at once, so sequences drafting rarely do not
// hold their whole output's features (a position of an 8B target's five
// layers is 80 KiB).
const flushFloats = 1 << 24

// AddFeatures takes context, kept pending until the next Propose or
// Release adds it in one batched pass: the engine sends features while
// the target runs its next step, and a draft pass beside it would only
// slow it down on shared cores. Features starting at or before a
// sequence's context end overwrite and extend it; a new sequence's
// features after a prefix-cache hit take the context before them from the
// draft's own prefix cache (Features.Tokens); features after a gap that
// cannot fill are dropped, and the sequence stops drafting.
func (f *DFlash) AddFeatures(fs []Features) error {
	fw := f.d.FeatureWidth()
	for _, ft := range fs {
		if len(ft.Rows) == 0 || len(ft.Rows)%fw != 0 {
			return fmt.Errorf("spec: dflash features of sequence %d: %d floats, not a multiple of %d", ft.Seq, len(ft.Rows), fw)
		}
		if end := ft.Start + len(ft.Rows)/fw; ft.Tokens != nil && len(ft.Tokens) < end {
			return fmt.Errorf("spec: dflash features of sequence %d end at %d, its tokens at %d", ft.Seq, end, len(ft.Tokens))
		}
		f.pending = append(f.pending, ft)
		f.pendingFloats += len(ft.Rows)
	}
	if f.pendingFloats > flushFloats {
		return f.flush()
	}
	return nil
}

// flush adds the pending features to the context in one pass.
func (f *DFlash) flush() error {
	if len(f.pending) == 0 {
		return nil
	}
	fw := f.d.FeatureWidth()
	fs := f.pending
	f.pending, f.pendingFloats = f.pending[:0], 0
	f.ctx, f.commits = f.ctx[:0], f.commits[:0]
	for _, ft := range fs {
		end := ft.Start + len(ft.Rows)/fw
		ds := f.seq(ft.Seq)
		if ft.Start > ds.ctxLen && ds.blocks.Len() == 0 && ft.Tokens != nil {
			// the context gathered so far may hold the prefix this one reuses
			if err := f.apply(); err != nil {
				return err
			}
			if err := f.reuse(ds, ft.Tokens[:ft.Start+1]); err != nil {
				return err
			}
		}
		if ft.Start > ds.ctxLen {
			continue
		}
		if err := f.blocks.Allocate(&ds.blocks, end); err != nil {
			if errors.Is(err, kvcache.ErrOutOfBlocks) {
				f.blocks.Free(&ds.blocks)
				ds.ctxLen = -1 // never complete again
				continue
			}
			return fmt.Errorf("spec: %w", err)
		}
		ds.ctxLen = end
		f.ctx = append(f.ctx, model.DFlashContext{Start: ft.Start, Features: ft.Rows, Blocks: ds.blocks.Table()})
		if ft.Tokens != nil {
			f.commits = append(f.commits, dflashCommit{ds, ft.Tokens, end})
		}
	}
	return f.apply()
}

// dflashCommit is a sequence's context to index for prefix reuse once
// written: its first end positions, of tokens.
type dflashCommit struct {
	ds     *dflashSeq
	tokens []int32
	end    int
}

// apply writes the gathered context and indexes the prompts' full blocks.
func (f *DFlash) apply() error {
	if err := f.d.AddContext(f.ctx, f.kv); err != nil {
		return fmt.Errorf("spec: dflash: %w", err)
	}
	for _, c := range f.commits {
		if err := f.blocks.Commit(&c.ds.blocks, c.tokens, c.end); err != nil {
			return fmt.Errorf("spec: %w", err)
		}
	}
	f.ctx, f.commits = f.ctx[:0], f.commits[:0]
	return nil
}

// reuse attaches to the empty ds the draft's cached context of the
// longest prefix of tokens (all but the last), making the partial block
// copies that owes. ds's context then covers the hit.
func (f *DFlash) reuse(ds *dflashSeq, tokens []int32) error {
	hit, err := f.blocks.Reuse(&ds.blocks, tokens)
	if err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	f.copies = f.blocks.TakeCopies(f.copies[:0])
	if err := f.kv.CopyBlocks(f.copies); err != nil {
		return fmt.Errorf("spec: dflash cache: %w", err)
	}
	ds.ctxLen = hit
	return nil
}

// Propose fills each want whose context is complete with up to K (at most
// BlockSize−1) draft tokens from one batched block pass.
func (f *DFlash) Propose(wants []Want) error {
	if err := f.flush(); err != nil {
		return err
	}
	B := f.d.Config().BlockSize
	f.rows, f.active = f.rows[:0], f.active[:0]
	for i := range wants {
		w := &wants[i]
		n := len(w.Tokens)
		ds, ok := f.seqs[w.Seq]
		if w.K <= 0 || n == 0 || !ok || ds.ctxLen < n-1 {
			continue
		}
		if err := f.blocks.Allocate(&ds.blocks, n-1+B); err != nil {
			if errors.Is(err, kvcache.ErrOutOfBlocks) {
				continue // no room for the block this step
			}
			return fmt.Errorf("spec: %w", err)
		}
		row := model.DFlashBlock{Start: n - 1, Anchor: w.Tokens[n-1], Blocks: ds.blocks.Table(), N: min(w.K, B-1)}
		if sampling(w) && f.d.Config().Kind == model.DFlash2 {
			s, err := f.drawer(w)
			if err != nil {
				return err
			}
			row.Temperature, row.Rand = w.Sampling.Temperature, s.Rand()
		}
		f.rows = append(f.rows, row)
		f.active = append(f.active, i)
	}
	if len(f.rows) == 0 {
		return nil
	}
	need := len(f.rows) * (B - 1)
	if cap(f.out) < need {
		f.out = make([]int32, need)
	}
	out := f.out[:need]
	if err := f.d.Propose(f.rows, f.kv, out); err != nil {
		return fmt.Errorf("spec: dflash: %w", err)
	}
	for j, i := range f.active {
		w := &wants[i]
		w.Draft = append(w.Draft, out[j*(B-1):j*(B-1)+min(w.K, B-1)]...)
	}
	return f.sampleDrafts(wants)
}

// sampleDrafts gives the active sampling wants their drafts'
// distributions in Probs: a DFlash draft's drafts are redrawn from the
// distributions of its logits; a DFlash2 draft's walk drew them among its
// candidates (model.DFlashDraft.Walk), whose probabilities are spread
// over the vocabulary.
func (f *DFlash) sampleDrafts(wants []Want) error {
	V := f.d.Config().Layers.VocabSize
	need := 0
	for j, i := range f.active {
		if sampling(&wants[i]) {
			need += f.rows[j].N
		}
	}
	if need == 0 {
		return nil
	}
	if cap(f.q) < need*V {
		f.q = make([]float32, need*V)
	}
	q, logits, at, off := f.q[:need*V], f.d.Logits(), 0, 0
	walkIDs, walkProbs := f.d.Walk()
	K := f.d.Config().SelectorTopK
	f.probs = f.probs[:0]
	for j, i := range f.active {
		w, n := &wants[i], f.rows[j].N // the row's logits, its last n drafts
		if !sampling(w) {
			at += n
			continue
		}
		s, err := f.drawer(w)
		if err != nil {
			return err
		}
		start := len(f.probs)
		for l := range n {
			ql := q[off*V : (off+1)*V]
			if walkIDs != nil {
				clear(ql)
				for c, id := range walkIDs[(at+l)*K : (at+l+1)*K] {
					ql[id] = walkProbs[(at+l)*K+c]
				}
			} else {
				s.Probs(logits[(at+l)*V:(at+l+1)*V], ql)
				tok, ok := draw(ql, s.Rand())
				if !ok {
					return fmt.Errorf("spec: dflash draft distribution of sequence %d has no mass", w.Seq)
				}
				w.Draft[len(w.Draft)-n+l] = tok
			}
			f.probs = append(f.probs, ql)
			off++
		}
		w.Probs = f.probs[start:len(f.probs):len(f.probs)]
		at += n
	}
	return nil
}

// sampling reports whether w asks for sampled drafts.
func sampling(w *Want) bool { return w.Sampling != nil && w.Sampling.Temperature > 0 }

// drawer returns w's sequence's draft sampler: its settings without the
// penalties, seeded from its seed when it has one (so a seeded request
// drafts the same tokens every time), else from the proposer's.
func (f *DFlash) drawer(w *Want) (*sample.Sampler, error) {
	ds := f.seqs[w.Seq]
	if ds.draw != nil {
		return ds.draw, nil
	}
	p := *w.Sampling
	p.PresencePenalty, p.FrequencyPenalty, p.RepetitionPenalty, p.Logprobs = 0, 0, 0, -1
	if p.Seed != nil {
		seed := *p.Seed ^ draftSeedSalt
		p.Seed = &seed
	}
	s, err := sample.New(p, &f.entropy)
	if err != nil {
		return nil, fmt.Errorf("spec: dflash sampling of sequence %d: %w", w.Seq, err)
	}
	ds.draw = s
	return s, nil
}

// draftSeedSalt keeps a seeded request's draft draws apart from its
// target's (sample.New seeds the target's sampler with the seed itself).
const draftSeedSalt = 0x6466_6c61_7368_0001

// seq returns the draft state of a sequence, creating an empty one.
func (f *DFlash) seq(id uint64) *dflashSeq {
	if ds, ok := f.seqs[id]; ok {
		return ds
	}
	ds := &dflashSeq{}
	f.seqs[id] = ds
	return ds
}

// Release frees a finished sequence's context cache, once the pending
// features (its own among them: its prompt's context is shared) are
// added.
func (f *DFlash) Release(seq uint64) {
	_ = f.flush() // an error only costs speculation
	if ds, ok := f.seqs[seq]; ok {
		f.blocks.Free(&ds.blocks)
		delete(f.seqs, seq)
	}
}

// CheckLeaks verifies the context block pool against the live sequences;
// with none left it is a leak check.
func (f *DFlash) CheckLeaks() error {
	live := make([]*kvcache.Blocks, 0, len(f.seqs))
	for _, ds := range f.seqs {
		live = append(live, &ds.blocks)
	}
	return f.blocks.Check(live...)
}
