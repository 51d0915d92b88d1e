package model_test

import (
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// BenchmarkDFlashBlock0_6BQ4 measures what one DFlash step costs one
// sequence next to its target (a random Qwen3-0.6B-shaped q4 package, 256
// tokens of context): a target decode step (k0), a verify of a whole
// block of 16 (verify16), and the draft's part of a step with a one-layer
// bf16 draft reading three target layers (draft16: 16 positions of context
// added, then a block of 16 proposed, 15 positions through the target's
// lm_head). Minimums over b.N rounds, as in VerifyRatio; draft16/k0 is
// what the draft adds to a step in decode steps.
func BenchmarkDFlashBlock0_6BQ4(b *testing.B) {
	m, _, be, done := openBenchSource(b, metal.Q4, 0)
	defer done()
	dir := b.TempDir()
	spec := testmodel.Qwen3_0_6B()
	if err := testmodel.WriteDFlash(dir, testmodel.DFlashSpec{Target: spec, BlockSize: 16, TargetLayerIDs: []int{1, 13, 25}, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	d, dts, err := model.OpenDFlashDraft(dir, m, be)
	if err != nil {
		b.Fatal(err)
	}
	defer dts.Close()
	typ := benchKV(b)
	kv, blocks := benchCache(m, 512, typ)
	dkv := d.NewKVCache(512/benchBlockSize, benchBlockSize, typ)
	fc := &model.FeatureCapture{Layers: d.FeatureLayers()}
	if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: benchPrompt(256), Blocks: blocks, Logits: 1, Capture: true}}, Features: fc}, kv); err != nil {
		b.Fatal(err)
	}
	if err := d.AddContext([]model.DFlashContext{{Features: fc.Out, Blocks: blocks}}, dkv); err != nil {
		b.Fatal(err)
	}
	feats := append([]float32(nil), fc.Out[:16*d.FeatureWidth()]...)
	out := make([]int32, 15)
	best := map[string]time.Duration{}
	timed := func(name string, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		if dt := time.Since(start); best[name] == 0 || dt < best[name] {
			best[name] = dt
		}
	}
	b.ResetTimer()
	for range b.N {
		timed("k0", func() error {
			_, err := m.Forward(&model.Batch{Rows: []model.Row{{Start: 256, Tokens: []int32{42}, Blocks: blocks, Logits: 1}}}, kv)
			return err
		})
		timed("verify16", func() error {
			_, err := m.Forward(&model.Batch{Rows: []model.Row{{Start: 256, Tokens: make([]int32, 16), Blocks: blocks, Logits: 16, Capture: true}}, Features: fc}, kv)
			return err
		})
		timed("draft16", func() error {
			if err := d.AddContext([]model.DFlashContext{{Start: 240, Features: feats, Blocks: blocks}}, dkv); err != nil {
				return err
			}
			return d.Propose([]model.DFlashBlock{{Start: 256, Anchor: 42, Blocks: blocks}}, dkv, out)
		})
	}
	ms := func(dt time.Duration) float64 { return dt.Seconds() * 1e3 }
	b.ReportMetric(ms(best["k0"]), "k0-min-ms")
	b.ReportMetric(ms(best["verify16"]), "verify16-min-ms")
	b.ReportMetric(ms(best["draft16"]), "draft16-min-ms")
	b.ReportMetric(best["draft16"].Seconds()/best["k0"].Seconds(), "draft16/k0")
	b.ReportMetric(best["verify16"].Seconds()/best["k0"].Seconds(), "verify16/k0")
}
