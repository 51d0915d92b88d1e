package spec

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// TestDFlashProposer feeds the proposer a target's features the way the
// engine does (in chunks, one overlapping) and checks its proposals equal
// the draft's own on the whole context, cut to K; a sequence with a gap in
// its context or none proposes nothing; releasing leaks nothing.
func TestDFlashProposer(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
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
	defer dts.Close()

	tokens := []int32{5, 9, 300, 41, 7, 7, 120, 88, 3}
	fc := &model.FeatureCapture{Layers: d.FeatureLayers()}
	tkv := target.NewKVCache(4, 16, metal.KVF16)
	if _, err := target.Forward(&model.Batch{Rows: []model.Row{{Tokens: tokens[:8], Blocks: []int32{0}, Capture: true}}, Features: fc}, tkv); err != nil {
		t.Fatal(err)
	}
	fw := d.FeatureWidth()
	feats := append([]float32(nil), fc.Out...)
	// the draft's own proposal over the whole context
	kv := d.NewKVCache(4, 16, metal.KVF16)
	if err := d.AddContext([]model.DFlashContext{{Features: feats, Blocks: []int32{1}}}, kv); err != nil {
		t.Fatal(err)
	}
	want := make([]int32, 3)
	if err := d.Propose([]model.DFlashBlock{{Start: 8, Anchor: 3, Blocks: []int32{1}}}, kv, want); err != nil {
		t.Fatal(err)
	}

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
