package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/tokenizer"
)

// specStepOut is one entry of --spec-trace: a decode step of the sequence
// (actors.SpecStep), Position indexing the whole sequence, prompt first.
type specStepOut struct {
	Position int     `json:"position"`
	Proposed []int32 `json:"proposed"`
	Accepted int     `json:"accepted"`
}

// specModels are the draft a --spec mode runs with, built on a device of
// its own (a Backend is owned by one model runner), as serve does.
type specModels struct {
	be     metal.Device // nil without a draft
	draft  model.Model
	dflash *model.DFlashDraft
}

func (sm *specModels) close() {
	if sm.be != nil {
		sm.be.Close()
	}
}

// buildSpecDraft builds the package's draft that --spec mode uses: its
// DFlash draft for dflash and auto, its draft model for draft and auto;
// none for ngram and off, or when the package has none (actors.New then
// refuses draft and dflash).
func buildSpecDraft(mode string, src *model.Source, d device, target model.Model) (*specModels, error) {
	sm := &specModels{}
	wantDFlash := (mode == "dflash" || mode == "auto") && src.DFlash != nil
	wantDraft := (mode == "draft" || mode == "auto") && src.Draft != nil && src.DFlash == nil
	if !wantDFlash && !wantDraft {
		return sm, nil
	}
	be, err := d.New()
	if err != nil {
		return nil, err
	}
	sm.be = be
	if wantDFlash {
		sm.dflash, err = src.BuildDFlash(target, be)
	} else {
		sm.draft, err = src.BuildDraft(be)
	}
	if err != nil {
		sm.close()
		return nil, fmt.Errorf("generate: --spec %s: %w", mode, err)
	}
	return sm, nil
}

// runEngine generates through the server's engine (scheduler, speculation
// by --spec, batched verification), one request alone: what serve would
// answer, with each decode step's speculation for --spec-trace.
func (g *generation) runEngine(ctx context.Context, prompt []int32, sm *specModels) error {
	maxLen := len(prompt) + g.f.maxTokens + 1
	room := max(g.f.specTokens, 4) // a verify row's drafts past the context
	if sm.dflash != nil {
		room = max(room, sm.dflash.Config().BlockSize)
	}
	blocks := (maxLen+room)/generateBlockSize + 2
	eng, err := actors.New(actors.Config{
		Model: g.m, Draft: sm.draft, DFlash: sm.dflash, Spec: g.f.spec, KVType: g.kvType,
		Scheduler: engine.Config{NumBlocks: blocks, BlockSize: generateBlockSize, MaxRunning: 1,
			MaxBatchTokens: max(len(prompt), 256), MaxModelLen: maxLen, MaxDraft: g.f.specTokens, FixedDraft: g.f.specFixed},
		NewDecoder: func() actors.TextDecoder { return g.tok.NewStreamDecoder(false) },
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	defer eng.Close()
	req := actors.GenerateRequest{Prompt: prompt, Sampling: g.params, MaxTokens: g.f.maxTokens,
		PromptLogprobs: g.f.echo && g.f.logprobs >= 0, SpecTrace: g.f.specTrace || g.f.spec != "off"}
	if !g.f.ignoreEOS {
		req.StopTokens = g.eos()
	}
	var clock generateClock
	clock.startPrompt(len(prompt))
	events, err := eng.Generate(ctx, req)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	stream := g.tok.NewStreamDecoder(false)
	first := true
	for ev := range events {
		if ev.Err != nil {
			return fmt.Errorf("generate: %w", ev.Err)
		}
		if first && len(ev.Tokens) > 0 {
			clock.prompted()
			g.echoPrompt(prompt, ev.PromptLogprobs, stream)
			first = false
		}
		for i, id := range ev.Tokens {
			t := tokenOut{ID: id, Text: g.tok.Decode([]int32{id}, false), Top: []tokenLogprobJ{}}
			if g.f.logprobs >= 0 && i < len(ev.Logprobs) {
				lp := ev.Logprobs[i].Logprob
				t.Logprob, t.Top = &lp, topOf(ev.Logprobs[i].Top)
			}
			g.emit(t, stream)
			clock.token()
		}
		if s := ev.Spec; s != nil {
			g.trace = append(g.trace, specStepOut{Position: s.Position, Proposed: append([]int32{}, s.Proposed...), Accepted: s.Accepted})
		}
	}
	if first {
		clock.prompted()
		g.echoPrompt(prompt, nil, stream)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return g.finish(clock, stream)
}

// echoPrompt emits the prompt's tokens for --echo, with their logprobs
// (lps[i] for token i+1) when the engine gave them.
func (g *generation) echoPrompt(prompt []int32, lps []actors.TokenLogprobs, stream *tokenizer.StreamDecoder) {
	if !g.f.echo {
		return
	}
	for i, id := range prompt {
		t := tokenOut{ID: id, Text: g.tok.Decode([]int32{id}, false), Top: []tokenLogprobJ{}}
		if i > 0 && i-1 < len(lps) {
			lp := lps[i-1].Logprob
			t.Logprob, t.Top = &lp, topOf(lps[i-1].Top)
		}
		g.emit(t, stream)
	}
}

// eos are the ids that end a generation: the model's and the tokenizer's.
func (g *generation) eos() []int32 {
	var ids []int32
	for _, id := range g.m.Config().EOSTokenID {
		ids = append(ids, int32(id))
	}
	return append(ids, g.tok.EOS()...)
}
