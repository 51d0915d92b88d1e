package actors

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// countingModel counts the forward passes of the model it wraps.
type countingModel struct {
	model.Model
	passes atomic.Int64
}

func (c *countingModel) Forward(b *model.Batch, kv *metal.KVCache) ([]float32, error) {
	c.passes.Add(1)
	return c.Model.Forward(b, kv)
}

// TestUselessDraftModelStopsRunning: a draft model that the target keeps
// rejecting is backed off to k = 0, where it is not run at all, apart from
// rare probes; a draft model equal to the target keeps running. Output is
// the greedy reference either way.
func TestUselessDraftModelStopsRunning(t *testing.T) {
	m := tinyModel(t)
	const n = 96
	prompt := promptFor(3)
	want := greedyAlone(t, m, prompt, n)
	for _, tc := range []struct {
		name               string
		draft              model.Model
		least, most        int64 // draft forward passes
		mostTargetPerToken float64
	}{
		// An unrelated model: its first guess is rejected, then only
		// probes (about steps 1, 8, 23, 54 and the odd lucky guess) run it.
		{name: "unrelated", draft: tinyModelSeed(t, 99), most: n / 4, mostTargetPerToken: 1.01},
		// The target's twin as the draft: every guess is accepted and k
		// stays at its maximum, so the target runs about once per 5 tokens.
		{name: "same", draft: tinyModelSeed(t, 1), least: n / 5, mostTargetPerToken: 0.35},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := &countingModel{Model: m}
			draft := &countingModel{Model: tc.draft}
			e := newEngineWithDraft(t, target, draft, "draft", 64, nil)
			ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt, MaxTokens: n, Sampling: sample.Params{Logprobs: -1}})
			if err != nil {
				t.Fatal(err)
			}
			r := collect(ch)
			if r.err != nil || fmt.Sprint(r.tokens) != fmt.Sprint(want) {
				t.Fatalf("got %v (%v), want %v", r.tokens, r.err, want)
			}
			waitIdle(t, e)
			dp, tp := draft.passes.Load(), target.passes.Load()
			t.Logf("draft passes %d, target passes %d for %d tokens", dp, tp, n)
			if dp < tc.least || tc.most > 0 && dp > tc.most {
				t.Fatalf("%d draft passes, want %d to %d", dp, tc.least, tc.most)
			}
			if perToken := float64(tp) / n; perToken > tc.mostTargetPerToken {
				t.Fatalf("%d target passes for %d tokens", tp, n)
			}
		})
	}
}
