package spec

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// dflashFixture is a tiny target, a DFlash draft bound to it, a sequence
// of 9 tokens, the target's features at its first 8 positions and the
// draft's own proposal after them.
type dflashFixture struct {
	d      *model.DFlashDraft
	tokens []int32
	feats  []float32
	want   []int32
	kv     *metal.KVCache // the draft's cache holding the whole context
}

func newDFlashFixture(t *testing.T) *dflashFixture { return newDFlashFixtureOf(t, model.DFlash) }

// newDFlashFixtureOf is newDFlashFixture with a draft of kind.
func newDFlashFixtureOf(t *testing.T, kind model.DFlashKind) *dflashFixture {
	t.Helper()
	be := cpu.New(2)
	t.Cleanup(be.Close)
	ts := testmodel.Tiny("qwen3")
	ts.Vocab, ts.Layers = 512, 3
	cfg, w, err := testmodel.Random(ts, metal.F32)
	if err != nil {
		t.Fatal(err)
	}
	target, err := model.Architectures().Build(cfg, w, be)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := testmodel.WriteDFlash(dir, testmodel.DFlashSpec{Kind: kind, Target: ts, BlockSize: 4, TargetLayerIDs: []int{0, 2}, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	d, dts, err := model.OpenDFlashDraft(dir, target, be)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dts.Close() })
	fx := &dflashFixture{d: d, tokens: []int32{5, 9, 300, 41, 7, 7, 120, 88, 3}}
	fc := &model.FeatureCapture{Layers: d.FeatureLayers()}
	tkv := target.NewKVCache(4, 16, metal.KVF16)
	if _, err := target.Forward(&model.Batch{Rows: []model.Row{{Tokens: fx.tokens[:8], Blocks: []int32{0}, Capture: true}}, Features: fc}, tkv); err != nil {
		t.Fatal(err)
	}
	fx.feats = append([]float32(nil), fc.Out...)
	kv := d.NewKVCache(4, 16, metal.KVF16)
	if err := d.AddContext([]model.DFlashContext{{Features: fx.feats, Blocks: []int32{1}}}, kv); err != nil {
		t.Fatal(err)
	}
	fx.want = fx.proposal(t, kv, 3)
	fx.kv = kv
	return fx
}

// proposal is the draft's own proposal after the whole context in kv,
// from anchor at position 8.
func (fx *dflashFixture) proposal(t *testing.T, kv *metal.KVCache, anchor int32) []int32 {
	t.Helper()
	out := make([]int32, 3)
	if err := fx.d.Propose([]model.DFlashBlock{{Start: 8, Anchor: anchor, Blocks: []int32{1}}}, kv, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// logits are the draft's logits after the whole context from anchor.
func (fx *dflashFixture) logits(t *testing.T, anchor int32) []float32 {
	t.Helper()
	fx.proposal(t, fx.kv, anchor)
	return slices.Clone(fx.d.Logits())
}

// TestDFlashProposer feeds the proposer a target's features the way the
// engine does (in chunks, one overlapping) and checks its proposals equal
// the draft's own on the whole context, cut to K; a sequence with a gap in
// its context or none proposes nothing; releasing leaks nothing.
func TestDFlashProposer(t *testing.T) {
	fx := newDFlashFixture(t)
	d, tokens, feats, want := fx.d, fx.tokens, fx.feats, fx.want
	fw := d.FeatureWidth()
	p, err := NewDFlash(d, 8, 4, metal.KVF16)
	if err != nil {
		t.Fatal(err)
	}
	steps := [][]Features{
		{{Seq: 1, Start: 0, Rows: feats[:5*fw]}, {Seq: 2, Start: 4, Rows: feats[4*fw : 6*fw]}},
		{{Seq: 1, Start: 3, Rows: feats[3*fw : 8*fw]}},
	}
	for _, s := range steps {
		if err := p.AddFeatures(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []int{1, 3, 5} {
		wants := []Want{
			{Seq: 1, Tokens: tokens, K: k, Draft: make([]int32, 0, k)},
			{Seq: 2, Tokens: tokens, K: k, Draft: make([]int32, 0, k)},
			{Seq: 3, Tokens: tokens, K: k, Draft: make([]int32, 0, k)},
		}
		if err := p.Propose(wants); err != nil {
			t.Fatal(err)
		}
		if got := wants[0].Draft; !slices.Equal(got, want[:min(k, 3)]) {
			t.Errorf("K=%d: proposed %v, the draft alone %v", k, got, want)
		}
		if len(wants[1].Draft)+len(wants[2].Draft) > 0 {
			t.Errorf("K=%d: sequences without a whole context proposed %v and %v", k, wants[1].Draft, wants[2].Draft)
		}
	}
	if err := p.AddFeatures([]Features{{Seq: 1, Start: 8, Rows: feats[:fw+1]}}); err == nil {
		t.Error("ragged features accepted")
	}
	for _, s := range []uint64{1, 2, 3} {
		p.Release(s)
	}
	if err := p.CheckLeaks(); err != nil {
		t.Fatal(err)
	}
}

// TestDFlashProposerSharesPrefix: a prompt's context is shared by prefix,
// so a sequence whose target had a prefix-cache hit (features only after
// it) drafts what the draft proposes on the whole context, as long as the
// draft's cache holds the hit; a sequence of other tokens does not draft.
func TestDFlashProposerSharesPrefix(t *testing.T) {
	fx := newDFlashFixture(t)
	fw := fx.d.FeatureWidth()
	for _, hit := range []int{4, 5, 7} {
		p, err := NewDFlash(fx.d, 16, 4, metal.KVF16)
		if err != nil {
			t.Fatal(err)
		}
		other := append([]int32{6}, fx.tokens[1:]...)
		steps := [][]Features{
			{{Seq: 1, Start: 0, Rows: fx.feats[:8*fw], Tokens: fx.tokens[:8]}},
			{{Seq: 2, Start: hit, Rows: fx.feats[hit*fw : 8*fw], Tokens: fx.tokens[:8]},
				{Seq: 3, Start: hit, Rows: fx.feats[hit*fw : 8*fw], Tokens: other[:8]}},
		}
		for _, s := range steps {
			if err := p.AddFeatures(s); err != nil {
				t.Fatal(err)
			}
		}
		if hit == 7 {
			p.Release(1) // its cached context outlives it
		}
		wants := []Want{{Seq: 2, Tokens: fx.tokens, K: 3}, {Seq: 3, Tokens: other, K: 3}}
		if err := p.Propose(wants); err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(fx.d.Logits())
		if !slices.Equal(wants[0].Draft, fx.want) || !slices.Equal(got, fx.logits(t, fx.tokens[8])) {
			t.Errorf("hit %d: proposed %v after the shared prefix, the draft on the whole context %v, or their logits differ", hit, wants[0].Draft, fx.want)
		}
		if len(wants[1].Draft) != 0 {
			t.Errorf("hit %d: a sequence of other tokens proposed %v", hit, wants[1].Draft)
		}
		for _, s := range []uint64{1, 2, 3} {
			p.Release(s)
		}
		if err := p.CheckLeaks(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDFlashSamplesFromItsDistribution: a sampling sequence's drafts are
// drawn from, and reported with, the draft's distribution under its
// sampler settings (Probs equal to those of the draft's own logits, each
// position's draws passing a chi-square test against it); a seeded
// sequence draws the same drafts in a fresh proposer; a greedy one beside
// it keeps the arg max drafts and no Probs.
func TestDFlashSamplesFromItsDistribution(t *testing.T) {
	fx := newDFlashFixture(t)
	seed := uint64(9)
	params := sample.Params{Temperature: 0.7, TopK: 6, Seed: &seed, PresencePenalty: 1.5}
	s, err := sample.New(sample.Params{Temperature: params.Temperature, TopK: params.TopK}, rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	logits, V := fx.logits(t, fx.tokens[8]), fx.d.Config().Layers.VocabSize
	want := make([][]float32, 3)
	for l := range want {
		want[l] = make([]float32, V)
		s.Probs(logits[l*V:(l+1)*V], want[l])
	}
	newProposer := func() *DFlash {
		p, err := NewDFlash(fx.d, 8, 4, metal.KVF16)
		if err != nil {
			t.Fatal(err)
		}
		feats := []Features{{Seq: 1, Rows: fx.feats}, {Seq: 2, Rows: fx.feats}}
		if err := p.AddFeatures(feats); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := newProposer()
	const trials = 3000
	counts := [3]map[int32]int{{}, {}, {}}
	var first []int32
	for trial := range trials {
		wants := []Want{
			{Seq: 1, Tokens: fx.tokens, K: 3, Draft: make([]int32, 0, 3), Sampling: &params},
			{Seq: 2, Tokens: fx.tokens, K: 3, Draft: make([]int32, 0, 3), Sampling: &sample.Params{}},
		}
		if err := p.Propose(wants); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(wants[1].Draft, fx.want) || wants[1].Probs != nil {
			t.Fatalf("a greedy sequence proposed %v with Probs %v, the draft's arg max %v", wants[1].Draft, wants[1].Probs != nil, fx.want)
		}
		w := wants[0]
		if len(w.Draft) != 3 || len(w.Probs) != 3 {
			t.Fatalf("%d drafts with %d distributions", len(w.Draft), len(w.Probs))
		}
		for l, tok := range w.Draft {
			if trial == 0 && !slices.Equal(w.Probs[l], want[l]) {
				t.Fatalf("position %d: the reported distribution is not the draft's", l+1)
			}
			counts[l][tok]++
		}
		if trial == 0 {
			first = slices.Clone(w.Draft)
		}
	}
	for l := range counts {
		var cells []int
		var probs []float32
		for tok, c := range counts[l] {
			if want[l][tok] == 0 {
				t.Fatalf("position %d: drew token %d, of draft probability 0", l+1, tok)
			}
			cells = append(cells, c)
			probs = append(probs, want[l][tok])
		}
		for tok, q := range want[l] {
			if _, seen := counts[l][int32(tok)]; q > 0 && !seen {
				cells, probs = append(cells, 0), append(probs, q)
			}
		}
		if len(cells) != 6 {
			t.Fatalf("position %d: %d tokens of the top 6 drawn", l+1, len(cells))
		}
		if chi := chiSquare(cells, probs); chi > chi2Crit {
			t.Errorf("position %d: chi-square %.1f > %.2f: counts %v vs q %v", l+1, chi, chi2Crit, cells, probs)
		}
	}
	again := []Want{{Seq: 1, Tokens: fx.tokens, K: 3, Draft: make([]int32, 0, 3), Sampling: &params}}
	if err := newProposer().Propose(again); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again[0].Draft, first) {
		t.Errorf("seeded drafts %v, then %v in a fresh proposer", first, again[0].Draft)
	}
}

// TestDFlash2SampledProbs: a sampling sequence's DFlash2 drafts come from
// the candidate walk at its temperature, and each one's Probs is the
// walk's distribution spread over the vocabulary: a distribution over
// selector_top_k tokens, the drafted one among them; a greedy sequence
// beside it keeps the greedy walk and no Probs.
func TestDFlash2SampledProbs(t *testing.T) {
	fx := newDFlashFixtureOf(t, model.DFlash2)
	p, err := NewDFlash(fx.d, 8, 4, metal.KVF16)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddFeatures([]Features{{Seq: 1, Rows: fx.feats}, {Seq: 2, Rows: fx.feats}}); err != nil {
		t.Fatal(err)
	}
	params := sample.Params{Temperature: 2}
	varied := false
	for range 20 {
		wants := []Want{
			{Seq: 1, Tokens: fx.tokens, K: 3, Draft: make([]int32, 0, 3), Sampling: &params},
			{Seq: 2, Tokens: fx.tokens, K: 3, Draft: make([]int32, 0, 3)},
		}
		if err := p.Propose(wants); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(wants[1].Draft, fx.want) || wants[1].Probs != nil {
			t.Fatalf("a greedy sequence proposed %v with Probs %v, the walk %v", wants[1].Draft, wants[1].Probs != nil, fx.want)
		}
		w := wants[0]
		varied = varied || !slices.Equal(w.Draft, fx.want)
		for l, tok := range w.Draft {
			q, support, total := w.Probs[l], 0, 0.0
			for _, v := range q {
				if v > 0 {
					support++
				}
				total += float64(v)
			}
			if q[tok] <= 0 || support > fx.d.Config().SelectorTopK || total < 1-1e-5 || total > 1+1e-5 {
				t.Fatalf("position %d: drafted %d of probability %v, among %d tokens of total %v", l+1, tok, q[tok], support, total)
			}
		}
	}
	if !varied {
		t.Error("20 sampled walks at temperature 2 all took the greedy path")
	}
}

// TestDFlashContextNotQuantized: beside a q8 target cache the draft's
// context cache is f16; beside others it is the target's type.
func TestDFlashContextNotQuantized(t *testing.T) {
	fx := newDFlashFixture(t)
	for _, tc := range []struct{ target, want metal.KVType }{
		{metal.KVQ8, metal.KVF16}, {metal.KVF16, metal.KVF16}, {metal.KVF32, metal.KVF32},
	} {
		p, err := NewDFlash(fx.d, 4, 16, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.kv.Layers[0].Type; got != tc.want {
			t.Errorf("beside a %s cache: the draft's is %s, want %s", tc.target, got, tc.want)
		}
	}
}
