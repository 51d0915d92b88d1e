package spec

import (
	"slices"
	"testing"

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

func newDFlashFixture(t *testing.T) *dflashFixture {
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
	if err := testmodel.WriteDFlash(dir, testmodel.DFlashSpec{Target: ts, BlockSize: 4, TargetLayerIDs: []int{0, 2}, Seed: 5}); err != nil {
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
