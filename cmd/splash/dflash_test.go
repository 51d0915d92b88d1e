package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// TestServeDFlash: a package with a DFlash or DFlash2 draft answers greedy
// completions with --spec dflash (and auto, which prefers it) exactly as
// with --spec off.
func TestServeDFlash(t *testing.T) {
	src := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	if err := testmodel.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []model.DFlashKind{model.DFlash, model.DFlash2} {
		t.Run(string(kind), func(t *testing.T) {
			draft := t.TempDir()
			if err := testmodel.WriteDFlash(draft, testmodel.DFlashSpec{Kind: kind, Target: spec, Seed: 4}); err != nil {
				t.Fatal(err)
			}
			pkg := filepath.Join(t.TempDir(), "pkg")
			if _, err := runCmd(t, "pack", src, pkg, "--quant", "q8", "--draft", draft); err != nil {
				t.Fatal(err)
			}
			answers := map[string]string{}
			for _, mode := range []string{"off", "dflash", "auto"} {
				addr, _, logs, stop := startServeLogs(t, "--model", pkg, "--spec", mode)
				oc := openai.NewClient(option.WithBaseURL("http://"+addr+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
				var texts []string
				for _, prompt := range []string{"the quick brown fox", "one two three one two three one two"} {
					c, err := oc.Completions.New(context.Background(), openai.CompletionNewParams{
						Model:  openai.CompletionNewParamsModel(filepath.Base(src)),
						Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompt)}, MaxTokens: openai.Int(24), Temperature: openai.Float(0)})
					if err != nil {
						stop()
						t.Fatalf("--spec %s: %v\n%s", mode, err, logs.String())
					}
					texts = append(texts, c.Choices[0].Text)
				}
				if err := stop(); err != nil {
					t.Fatal(err)
				}
				answers[mode] = strings.Join(texts, "|")
			}
			for _, mode := range []string{"dflash", "auto"} {
				if answers[mode] != answers["off"] {
					t.Errorf("--spec %s answers %q, --spec off %q", mode, answers[mode], answers["off"])
				}
			}
		})
	}
}

// packDFlash packs a checkpoint of spec, in f32, with a random DFlash
// draft, and returns the package's directory.
func packDFlash(t *testing.T, spec testmodel.Spec) string {
	t.Helper()
	src, draft := t.TempDir(), t.TempDir()
	if err := testmodel.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	if err := testmodel.WriteDFlash(draft, testmodel.DFlashSpec{Kind: model.DFlash, Target: spec, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(t.TempDir(), "dflash")
	if _, err := runCmd(t, "pack", src, pkg, "--quant", "f32", "--draft", draft); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestPlanCountsTheDFlashDraft: with a package's DFlash draft in use, the
// plan counts its weights, its context cache per token (as many blocks as
// the target's) and its block pass's scratch at --max-running sequences,
// and the table names them; with --spec ngram it counts none of them.
func TestPlanCountsTheDFlashDraft(t *testing.T) {
	m, err := loadModelDir(packDFlash(t, testmodel.Tiny("qwen3")))
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	be := cpu.New(1)
	defer be.Close()
	target, err := model.Architectures().Build(m.cfg, m.tensors, be)
	if err != nil {
		t.Fatal(err)
	}
	d, err := model.NewDFlashDraft(m.dflash, m.draft, target, be)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"dflash", "ngram"} {
		f := &serveFlags{spec: mode, kvBlockSize: 16, maxBatchTokens: 64, maxRunning: 8, maxMemory: "1G", maxContext: "1024", kvCacheType: "f16"}
		p, err := makePlan(f, m, target, d, 0, func(int) int64 { return 0 }, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := model.Plan{DraftWeights: model.WeightBytes(m.draft), DraftKV: d.CacheSpec().KVBytesPerToken(metal.KVF16), DraftScratch: d.ScratchBytes(8)}
		if mode == "ngram" {
			want = model.Plan{}
		}
		table := p.table(f)
		if p.DraftWeights != want.DraftWeights || p.DraftKV != want.DraftKV || p.DraftScratch != want.DraftScratch || want.DraftKV == 0 && mode == "dflash" ||
			strings.Contains(table, "draft scratch") != (mode == "dflash") {
			t.Errorf("--spec %s: draft weights %d, KV %d, scratch %d; want %d, %d, %d\n%s", mode, p.DraftWeights, p.DraftKV, p.DraftScratch,
				want.DraftWeights, want.DraftKV, want.DraftScratch, table)
		}
	}
}
