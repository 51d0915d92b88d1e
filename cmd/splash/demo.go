package main

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
	"github.com/splash-inference/splash/tokenizer"
	"github.com/splash-inference/splash/tokenizer/chat"
)

// demoFiles is the embedded demo, built into the binary so `splash serve`
// runs on a fresh machine: the trained splash-demo's packages
// (demopackage.go) when the build has them, and the real Qwen3 tokenizer
// and chat template (Apache-2.0) of the random one.
//
//go:embed demo
var demoFiles embed.FS

// demoName is the embedded default model's name in /v1/models.
const demoName = "splash-demo"

// demoSpec is a small random-weight Qwen3-architecture model with the real
// Qwen3 vocabulary. Its answers are noise: it exists so that the whole
// server works with no download; serve a real package with --model.
func demoSpec() testmodel.Spec {
	return testmodel.Spec{Arch: "qwen3", Hidden: 256, Intermediate: 768, Layers: 4, Heads: 4, KVHeads: 2, HeadDim: 64,
		Tied: true, Seed: 2026, RopeTheta: 1000000, MaxContext: 32768}
}

// loadedModel is what serve needs of a model, wherever it came from.
type loadedModel struct {
	name    string
	cfg     *model.Config
	tensors model.Tensors
	// draftCfg and draft are the package's draft model, if it has one.
	draftCfg *model.Config
	draft    model.Tensors
	dflash   *model.DFlashConfig // set when draft is a DFlash draft
	tok      *tokenizer.Tokenizer
	tpl      *chat.Template
	vision   *api.Vision // the frontend's view of the vision tower; nil for a text-only model
	close    func() error
	identity string // the weights' identity for the prefix cache's disk tier (model.Identity)
}

// loadDemo loads the embedded demo for --spec spec: the trained
// splash-demo's package that suits spec, else the random model. It says on
// w which it uses.
func loadDemo(w io.Writer, spec string) (*loadedModel, error) {
	if dir := demoPackageFor(demoFiles, spec); dir != "" {
		sayDemo(w, dir)
		m, err := withDemoPackage(demoFiles, dir, loadModelDir)
		if err != nil {
			return nil, err
		}
		m.name = demoName
		return m, nil
	}
	sayDemo(w, "")
	return loadRandomDemo()
}

// demoSource is loadDemo for generate: the model as a Source, and its
// tokenizer.
func demoSource(w io.Writer, spec string) (*model.Source, *tokenizer.Tokenizer, error) {
	if dir := demoPackageFor(demoFiles, spec); dir != "" {
		sayDemo(w, dir)
		type opened struct {
			src *model.Source
			tok *tokenizer.Tokenizer
		}
		o, err := withDemoPackage(demoFiles, dir, func(dir string) (opened, error) {
			src, tok, err := openSource(dir)
			return opened{src, tok}, err
		})
		if err != nil {
			return nil, nil, err
		}
		o.src.Name = demoName
		return o.src, o.tok, nil
	}
	sayDemo(w, "")
	m, err := loadRandomDemo()
	if err != nil {
		return nil, nil, err
	}
	return &model.Source{Kind: "embedded", Name: demoName, Config: m.cfg, Tensors: m.tensors}, m.tok, nil
}

// sayDemo tells which embedded demo runs: the trained one's package dir,
// or the random one ("").
func sayDemo(w io.Writer, dir string) {
	if dir == "" {
		fmt.Fprintf(w, "no --model: using the embedded %s (random weights; it answers noise)\n", demoName)
		return
	}
	draft := map[string]string{demoPackage: "its draft model", demoDFlashPackage: "its DFlash draft"}[dir]
	fmt.Fprintf(w, "no --model: using the embedded %s with %s (a toy trained on the Go tree; see the README)\n", demoName, draft)
}

func loadRandomDemo() (*loadedModel, error) {
	cfg, ts, err := testmodel.Random(demoSpec(), metal.Q8)
	if err != nil {
		return nil, fmt.Errorf("demo model: %w", err)
	}
	tj, err := gunzipEmbedded("demo/tokenizer.json.gz")
	if err != nil {
		return nil, err
	}
	tc, err := gunzipEmbedded("demo/tokenizer_config.json.gz")
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromJSON(tj, tc)
	if err != nil {
		return nil, err
	}
	tpl, err := chat.FromConfig(tc)
	if err != nil {
		return nil, err
	}
	return &loadedModel{name: demoName, cfg: cfg, tensors: ts, tok: tok, tpl: tpl, close: ts.Close, identity: demoIdentity()}, nil
}

func gunzipEmbedded(name string) ([]byte, error) {
	raw, err := demoFiles.ReadFile(name)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// openSource opens a package or checkpoint directory with its tokenizer.
func openSource(dir string) (*model.Source, *tokenizer.Tokenizer, error) {
	src, err := model.Open(dir, model.OpenOptions{})
	if err != nil {
		return nil, nil, err
	}
	tok, err := tokenizer.Load(src.Dir)
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, tok, nil
}

// loadModelDir opens a package or checkpoint directory with its tokenizer
// and chat template.
func loadModelDir(dir string) (*loadedModel, error) {
	src, tok, err := openSource(dir)
	if err != nil {
		return nil, err
	}
	tpl, err := chat.Load(dir)
	var id string
	if err == nil {
		id, err = model.Identity(dir)
	}
	var vision *api.Vision
	if err == nil {
		vision, err = apiVision(src)
	}
	if err != nil {
		src.Close()
		return nil, err
	}
	return &loadedModel{name: src.Name, cfg: src.Config, tensors: src.Tensors, draftCfg: src.DraftConfig, draft: src.Draft, dflash: src.DFlash,
		tok: tok, tpl: tpl, vision: vision, close: src.Close, identity: id}, nil
}
