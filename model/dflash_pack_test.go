package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// proposeFrom binds the draft of src to its target and proposes one block
// after a context of fixed features.
func proposeFrom(t *testing.T, target model.Model, d *model.DFlashDraft) []int32 {
	t.Helper()
	feats := make([]float32, 5*d.FeatureWidth())
	for i := range feats {
		feats[i] = float32(i%11)/5 - 1
	}
	kv := d.NewKVCache(4, 4, metal.KVF16)
	if err := d.AddContext([]model.DFlashContext{{Features: feats, Blocks: []int32{1, 3, 0}}}, kv); err != nil {
		t.Fatal(err)
	}
	out := make([]int32, d.Config().BlockSize-1)
	if err := d.Propose([]model.DFlashBlock{{Start: 5, Anchor: 7, Blocks: []int32{1, 3, 0}}}, kv, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPackDFlashDraft packs a target with a DFlash and a DFlash2 draft and
// checks the manifest records the kind and config, the f32 package's draft
// proposes what the checkpoint's does, and a draft that does not fit the
// target is refused.
func TestPackDFlashDraft(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	src := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	spec.Layers, spec.Vocab = 4, 512
	if err := testmodel.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []model.DFlashKind{model.DFlash, model.DFlash2} {
		t.Run(string(kind), func(t *testing.T) {
			draftDir := t.TempDir()
			if err := testmodel.WriteDFlash(draftDir, testmodel.DFlashSpec{Kind: kind, Target: spec, TargetLayerIDs: []int{1, 2}, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			pkg := packProposesAsCheckpoint(t, be, src, draftDir)
			if pkg.DraftKind != string(kind) || pkg.Package.Manifest.DraftKind != string(kind) {
				t.Fatalf("draft kind %q (manifest %q), want %q", pkg.DraftKind, pkg.Package.Manifest.DraftKind, kind)
			}
			if _, err := pkg.BuildDraft(be); err == nil {
				t.Error("BuildDraft built a DFlash draft as a draft model")
			}
			q8 := filepath.Join(t.TempDir(), "q8")
			if _, err := model.Pack(src, q8, model.PackOptions{Quant: metal.Q8, Draft: draftDir}); err != nil {
				t.Fatalf("q8 package: %v", err)
			}
		})
	}
	t.Run("misfit", func(t *testing.T) {
		draftDir := t.TempDir()
		if err := testmodel.WriteDFlash(draftDir, testmodel.DFlashSpec{Target: spec, TargetLayerIDs: []int{4}}); err != nil {
			t.Fatal(err)
		}
		_, err := model.Pack(src, filepath.Join(t.TempDir(), "pkg"), model.PackOptions{Quant: metal.F32, Draft: draftDir})
		if err == nil || !strings.Contains(err.Error(), "target_layer_ids has layer 4") {
			t.Fatalf("error %v, want the out-of-range target layer named", err)
		}
	})
	t.Run("kind without config", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "pkg")
		if _, err := model.Pack(src, dst, model.PackOptions{Quant: metal.F32}); err != nil {
			t.Fatal(err)
		}
		editManifest(t, dst, func(m map[string]any) { m["draft_kind"] = "dflash" })
		if _, err := model.Open(dst, model.OpenOptions{SkipChecksums: true}); err == nil || !strings.Contains(err.Error(), "draft_kind") {
			t.Fatalf("error %v, want draft_kind refused", err)
		}
	})
}

// packProposesAsCheckpoint packs the checkpoint src with the DFlash draft
// in draftDir as f32, checks the package's draft proposes what the
// checkpoint's does over its target, and returns the package (closed at
// the test's end).
func packProposesAsCheckpoint(t *testing.T, be metal.Backend, src, draftDir string) *model.Source {
	t.Helper()
	ck, err := model.Open(src, model.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	target, err := ck.Build(be)
	if err != nil {
		t.Fatal(err)
	}
	fromCk, ts, err := model.OpenDFlashDraft(draftDir, target, be)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	want := proposeFrom(t, target, fromCk)
	dst := filepath.Join(t.TempDir(), "pkg")
	if _, err := model.Pack(src, dst, model.PackOptions{Quant: metal.F32, Draft: draftDir}); err != nil {
		t.Fatal(err)
	}
	pkg, err := model.Open(dst, model.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pkg.Close() })
	ptarget, err := pkg.Build(be)
	if err != nil {
		t.Fatal(err)
	}
	d, err := pkg.BuildDFlash(ptarget, be)
	if err != nil {
		t.Fatal(err)
	}
	if got := proposeFrom(t, ptarget, d); !slices.Equal(got, want) {
		t.Errorf("packaged draft proposes %v, the checkpoint's %v", got, want)
	}
	return pkg
}

// editManifest rewrites a package's splash.json through edit.
func editManifest(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, model.ManifestName)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
