package spec

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// pagedFake is a model whose next token is a function of the whole prefix,
// read back through the block table from the KV cache it writes (token ids
// as one-float keys): a draft cache that is not rolled back or caught up
// correctly changes its proposals.
type pagedFake struct {
	cfg    model.Config
	calls  int
	logits []float32
}

func newPagedFake(vocab int) *pagedFake {
	return &pagedFake{cfg: model.Config{VocabSize: vocab, NumHiddenLayers: 1, NumKeyValueHeads: 1, HeadDim: 1}}
}

func (f *pagedFake) Config() *model.Config { return &f.cfg }

func (f *pagedFake) CacheSpec() model.CacheSpec { return model.DenseCache(&f.cfg) }

func (f *pagedFake) NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache {
	return metal.NewKVCache(t, 1, numBlocks, blockSize, 1, 1)
}

func (f *pagedFake) Forward(b *model.Batch, kv *metal.KVCache) ([]float32, error) {
	f.calls++
	out := f.logits[:0]
	k := kv.Layers[0].K
	for _, r := range b.Rows {
		if len(r.Tokens) == 0 || r.Logits > len(r.Tokens) {
			return nil, fmt.Errorf("fake: bad row")
		}
		for j, t := range r.Tokens {
			slot, err := kv.Slot(r.Blocks, r.Start+j)
			if err != nil {
				return nil, err
			}
			k[slot] = uint16(t) // the id itself (a small vocabulary), not a float16
		}
		for j := len(r.Tokens) - r.Logits; j < len(r.Tokens); j++ {
			prefix := make([]int32, r.Start+j+1)
			for p := range prefix {
				slot, err := kv.Slot(r.Blocks, p)
				if err != nil {
					return nil, err
				}
				prefix[p] = int32(k[slot])
			}
			l := make([]float32, f.cfg.VocabSize)
			l[fakeNext(prefix, f.cfg.VocabSize)] = 1
			out = append(out, l...)
		}
	}
	f.logits = out
	return out, nil
}

func fakeNext(prefix []int32, vocab int) int32 {
	h := uint64(7)
	for i, t := range prefix {
		h = h*31 + uint64(t)*uint64(i+3)
	}
	return int32(h % uint64(vocab))
}

func greedyContinuation(tokens []int32, k, vocab int) []int32 {
	toks := slices.Clone(tokens)
	for range k {
		toks = append(toks, fakeNext(toks, vocab))
	}
	return toks[len(tokens):]
}

// TestDraftModelRollsBack proposes for two sequences over several rounds
// in which the "target" accepts only part of each proposal and then emits a
// different token, so the draft cache must roll back and catch up; every
// proposal must equal the model's greedy continuation computed afresh.
func TestDraftModelRollsBack(t *testing.T) {
	const vocab, k = 11, 4
	f := newPagedFake(vocab)
	d, err := NewDraftModel(f, 32, 4, metal.KVF16)
	if err != nil {
		t.Fatal(err)
	}
	seqs := [][]int32{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 5, 6, 7, 8, 2, 2}} // shared prefix
	for round := range 6 {
		wants := make([]Want, len(seqs))
		for i, s := range seqs {
			wants[i] = Want{Seq: uint64(i), Tokens: s, K: k, Draft: make([]int32, 0, k)}
		}
		calls := f.calls
		if err := d.Propose(wants); err != nil {
			t.Fatal(err)
		}
		if f.calls-calls != k {
			t.Fatalf("round %d: %d forward passes for %d drafted positions; rows are not batched", round, f.calls-calls, k)
		}
		for i, w := range wants {
			if want := greedyContinuation(w.Tokens, k, vocab); !slices.Equal(w.Draft, want) {
				t.Fatalf("round %d seq %d: draft %v, want %v", round, i, w.Draft, want)
			}
			// Accept round%k of the guesses, then a token the draft did not predict.
			acc := round % (k + 1)
			next := append(slices.Clone(w.Draft[:min(acc, k)]), (w.Draft[min(acc, k-1)]+1)%vocab)
			seqs[i] = append(seqs[i], next...)
		}
		if err := d.CheckLeaks(); err != nil {
			t.Fatal(err)
		}
	}
	// A late arrival reuses the committed prefix of the draft cache.
	late := []Want{{Seq: 9, Tokens: seqs[0][:12], K: 2, Draft: make([]int32, 0, 2)}}
	if err := d.Propose(late); err != nil {
		t.Fatal(err)
	}
	if d.blocks.Stats().HitTokens == 0 {
		t.Fatal("a late sequence did not reuse the draft cache's prefix")
	}
	if want := greedyContinuation(late[0].Tokens, 2, vocab); !slices.Equal(late[0].Draft, want) {
		t.Fatalf("late draft %v, want %v", late[0].Draft, want)
	}
	d.Release(9)
	d.Release(0)
	d.Release(1)
	d.Release(1) // unknown: no-op
	if err := d.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

func TestDraftModelOutOfBlocksProposesNothing(t *testing.T) {
	f := newPagedFake(5)
	d, err := NewDraftModel(f, 2, 4, metal.KVF16) // 8 tokens of cache
	if err != nil {
		t.Fatal(err)
	}
	wants := []Want{{Seq: 1, Tokens: make([]int32, 12), K: 3, Draft: make([]int32, 0, 3)}}
	if err := d.Propose(wants); err != nil {
		t.Fatal(err)
	}
	if len(wants[0].Draft) != 0 {
		t.Fatalf("proposed %v without cache space", wants[0].Draft)
	}
	d.Release(1)
	if err := d.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

// statefulFake declares a state layer besides the paged one.
type statefulFake struct{ *pagedFake }

func (f statefulFake) CacheSpec() model.CacheSpec {
	s := model.DenseCache(&f.cfg)
	s.Layers = append(s.Layers, model.StateLayer(4))
	return s
}

// TestDraftModelRefusesState: a draft model is rolled back after every
// rejection, which a state without snapshots cannot be.
func TestDraftModelRefusesState(t *testing.T) {
	if _, err := NewDraftModel(statefulFake{newPagedFake(8)}, 8, 4, metal.KVF16); err == nil || !strings.Contains(err.Error(), "state layers") {
		t.Fatalf("NewDraftModel of a model with state layers: %v", err)
	}
}
