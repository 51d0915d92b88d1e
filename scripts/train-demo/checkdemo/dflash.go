package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// checkDFlash checks the DFlash draft in dir against the target in
// dir/../target: its config must fit the target's (DFlashConfig.CheckTarget),
// and its proposals' logits for check.json's block (the target's features
// at the context's positions, then the anchor) must match torch's. A draft
// reads nothing of its target but the features, the embeddings and the
// head, so it is bound to a dense stand-in target carrying the real one's
// tied embeddings: the check covers every tensor and the draft's forward
// pass whatever targets Splash binds drafts to.
func checkDFlash(dir string, c *check, be metal.Backend, tol float64) error {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return err
	}
	dc, err := model.ParseDFlashConfig(raw)
	if err != nil {
		return err
	}
	tdir := filepath.Join(filepath.Dir(filepath.Clean(dir)), "target")
	tsrc, err := model.Open(tdir, model.OpenOptions{})
	if err != nil {
		return fmt.Errorf("its target: %w", err)
	}
	defer tsrc.Close()
	if err := dc.CheckTarget(tsrc.Config); err != nil {
		return fmt.Errorf("does not fit %s: %w", tdir, err)
	}
	target, err := standIn(tsrc, be)
	if err != nil {
		return err
	}
	d, ts, err := model.OpenDFlashDraft(dir, target, be)
	if err != nil {
		return err
	}
	defer ts.Close()
	n := len(c.Tokens) - 1 // context positions; the last token is the anchor
	if n < 1 || len(c.Features) != n*d.FeatureWidth() {
		return fmt.Errorf("check.json: %d features for %d context positions of width %d", len(c.Features), n, d.FeatureWidth())
	}
	const block = 16
	blocks := make([]int32, (n+dc.BlockSize+block-1)/block)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	kv := d.NewKVCache(len(blocks), block, metal.KVF32)
	if err := d.AddContext([]model.DFlashContext{{Features: c.Features, Blocks: blocks}}, kv); err != nil {
		return err
	}
	out := make([]int32, dc.BlockSize-1)
	if err := d.Propose([]model.DFlashBlock{{Start: n, Anchor: c.Tokens[n], Blocks: blocks}}, kv, out); err != nil {
		return err
	}
	worst, err := compareLogits(d.Logits(), c.Logits, dc.Layers.VocabSize, tol, "proposal", 1)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s (block %d, target layers %v) fits %s; logits of %d proposals after a held-out context match torch's within %.2g relative, same argmax\n",
		dir, dc.Kind, dc.BlockSize, dc.TargetLayerIDs, tdir, len(c.Logits), worst)
	return nil
}

// standIn builds a small random dense model as wide and deep as target,
// with target's tied embeddings (and so its head).
func standIn(target *model.Source, be metal.Backend) (model.Model, error) {
	tc := target.Config
	if !tc.TieWordEmbeddings {
		return nil, fmt.Errorf("its target %s has an untied head, which the stand-in does not carry", target.Dir)
	}
	var embed *metal.Tensor
	for _, name := range target.Tensors.Names() {
		if strings.HasSuffix(name, "embed_tokens.weight") {
			t, err := target.Tensors.Tensor(name)
			if err != nil {
				return nil, err
			}
			embed = t
		}
	}
	if embed == nil {
		return nil, fmt.Errorf("its target %s has no embed_tokens.weight", target.Dir)
	}
	cfg, ts, err := testmodel.Random(testmodel.Spec{Arch: "qwen3", Hidden: tc.HiddenSize, Intermediate: 64, Layers: tc.NumHiddenLayers,
		Heads: 2, KVHeads: 1, HeadDim: 32, Vocab: tc.VocabSize, Tied: true, Seed: 1}, metal.F32)
	if err != nil {
		return nil, err
	}
	m := map[string]*metal.Tensor{}
	for _, name := range ts.Names() {
		if m[name], err = ts.Tensor(name); err != nil {
			return nil, err
		}
	}
	m["model.embed_tokens.weight"] = embed
	return model.Architectures().Build(cfg, model.NewMemTensors(m), be)
}
