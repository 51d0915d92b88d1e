package actors

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/splash-inference/splash/engine/grammar"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/model/testmodel"
	"github.com/splash-inference/splash/tokenizer"
)

// TestTokenMaskConstrainsOutput runs seeded, high-temperature requests of a
// random model (which follows no instructions) under a JSON-schema grammar,
// with n-gram speculation on: every output is a prefix the grammar accepts,
// and every one that stopped by itself is a complete, valid document.
func TestTokenMaskConstrainsOutput(t *testing.T) {
	root, err := testmodel.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(filepath.Join(root, "testdata", "qwen3-tokenizer"))
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t)
	vocab := m.Config().VocabSize
	tokens := make([][]byte, vocab)
	for id := 0; id < vocab; id++ {
		if !tok.IsSpecial(int32(id)) {
			tokens[id] = tok.TokenBytes(int32(id))
		}
	}
	eos := []int{151645, 151643}
	v, err := grammar.NewVocab(tokens, eos)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grammar.Compile([]byte(`{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}},"required":["ok"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, m, "ngram", 256, nil)
	const runs = 24
	var wg sync.WaitGroup
	results := make([]struct {
		ids    []int32
		finish stop.Reason
		err    error
	}, runs)
	for i := 0; i < runs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			seed := uint64(i)
			ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: promptFor(i), MaxTokens: 48,
				StopTokens: []int32{151645, 151643}, Mask: grammar.NewConstraint(v, g),
				Sampling: sample.Params{Temperature: 1.5, Seed: &seed, Logprobs: -1}})
			if err != nil {
				results[i].err = err
				return
			}
			for ev := range ch {
				results[i].ids = append(results[i].ids, ev.Tokens...)
				if ev.Finish != stop.None {
					results[i].finish = ev.Finish
				}
				if ev.Err != nil {
					results[i].err = ev.Err
				}
			}
		}(i)
	}
	wg.Wait()
	completed := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		check := grammar.NewConstraint(v, g)
		for _, id := range r.ids {
			check.Accept(id)
		}
		if !check.Valid() {
			t.Fatalf("request %d: output %q leaves the grammar", i, tok.Decode(r.ids, false))
		}
		if r.finish == stop.Stop {
			completed++
			text := tok.Decode(r.ids, true)
			var doc map[string]any
			if err := json.Unmarshal([]byte(text), &doc); err != nil || doc["ok"] == nil {
				t.Fatalf("request %d stopped with %q: %v", i, text, err)
			}
		}
	}
	t.Logf("%d of %d requests completed a document within 48 tokens", completed, runs)
	waitIdle(t, e)
}
