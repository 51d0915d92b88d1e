package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

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
