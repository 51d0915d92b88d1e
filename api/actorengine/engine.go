package actorengine

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/engine/grammar"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/tokenizer"
)

// Engine serves the HTTP layer's Engine interface with the actor runtime:
// one actors sequence per choice, their events merged.
type Engine struct {
	e     *actors.Engine
	tok   *tokenizer.Tokenizer
	eos   []int32
	vocab *grammar.Vocab // the model's tokens as bytes, for constrained decoding
}

// New serves e's model, whose tokenizer is tok, vocabulary modelVocab
// tokens and end-of-sequence ids eos.
func New(e *actors.Engine, tok *tokenizer.Tokenizer, modelVocab int, eos []int32) (*Engine, error) {
	vocab, err := grammarVocab(tok, modelVocab, eos)
	if err != nil {
		return nil, fmt.Errorf("actorengine: constrained decoding vocabulary: %w", err)
	}
	return &Engine{e: e, tok: tok, eos: eos, vocab: vocab}, nil
}

var _ api.Engine = (*Engine)(nil)

// WriteMetrics writes the actor runtime's Prometheus metrics.
func (a *Engine) WriteMetrics(w io.Writer) error {
	a.e.WriteMetrics(w)
	return nil
}

// Generate runs req's choices and merges their events.
func (a *Engine) Generate(ctx context.Context, req *actors.Request) (<-chan api.Event, error) {
	ctx, cancel := context.WithCancel(ctx)
	streams, err := a.start(ctx, req)
	if err != nil {
		cancel() // ends the choices already started
		return nil, fmt.Errorf("%w: %v", api.ErrInvalidRequest, err)
	}
	m := &merge{a: a, req: req, out: make(chan api.Event, 16), ctx: ctx, cancel: cancel}
	var wg sync.WaitGroup
	for i, ch := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.relay(i, ch)
		}()
	}
	go func() {
		wg.Wait()
		m.finish()
	}()
	return m.out, nil
}

// start submits each of req's choices as one sequence.
func (a *Engine) start(ctx context.Context, req *actors.Request) ([]<-chan actors.Event, error) {
	streams := make([]<-chan actors.Event, req.Choices())
	for i := range streams {
		gr, err := a.request(req, i)
		if err != nil {
			return nil, err
		}
		if streams[i], err = a.e.Generate(ctx, gr); err != nil {
			return nil, err
		}
	}
	return streams, nil
}

// merge joins the event streams of a request's choices into one.
type merge struct {
	a      *Engine
	req    *actors.Request
	out    chan api.Event
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex // guards usage and failed while choices relay
	usage  api.Usage
	failed error
}

// relay forwards choice i's events until its stream ends, counting its
// reasoning tokens and adding its usage when it finishes. A cancelled
// choice's last event is not forwarded; a failure cancels every choice.
func (m *merge) relay(i int, ch <-chan actors.Event) {
	thinking := m.a.newReasoningCounter(m.req.Prompt)
	reasoning, first := 0, true
	for ev := range ch {
		if ev.Err != nil {
			m.fail(ev.Err)
			continue
		}
		reasoning += thinking.count(ev.Tokens)
		e := m.a.event(i, ev, first, m.req.PromptLogprobs)
		first = false
		if ev.Finish != stop.None {
			m.count(ev.Usage, reasoning)
			if ev.Finish == stop.Cancelled {
				continue
			}
		}
		m.send(e)
	}
}

// fail keeps the first failure and cancels the request.
func (m *merge) fail(err error) {
	m.mu.Lock()
	if m.failed == nil {
		m.failed = err
	}
	m.mu.Unlock()
	m.cancel()
}

// count adds a finished choice's usage: the prompt is shared, so it and
// its cached part count once.
func (m *merge) count(u actors.Usage, reasoning int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage.PromptTokens = u.PromptTokens
	m.usage.CompletionTokens += u.CompletionTokens
	m.usage.CachedPromptTokens = max(m.usage.CachedPromptTokens, u.CachedTokens)
	m.usage.ReasoningTokens += reasoning
}

// finish sends the final event, once every choice has ended, and closes
// the stream.
func (m *merge) finish() {
	last := api.Event{Done: true, Usage: &m.usage}
	if m.failed != nil {
		last = api.Event{Err: m.failed}
	}
	m.send(last)
	close(m.out)
	m.cancel()
}

// send delivers e unless the request has ended.
func (m *merge) send(e api.Event) {
	select {
	case m.out <- e:
	case <-m.ctx.Done():
	}
}

// event is choice i's actors event in the HTTP layer's terms. A choice's
// first event carries the prompt's cached tokens and, when asked for, its
// logprobs.
func (a *Engine) event(i int, ev actors.Event, first, promptLogprobs bool) api.Event {
	e := api.Event{Choice: i, Text: ev.Text, Tokens: ev.Tokens, Logprobs: a.logprobs(ev.Logprobs), FinishReason: finishReason(ev.Finish)}
	if first {
		e.CachedPromptTokens = ev.CachedTokens
		if promptLogprobs {
			e.PromptLogprobs = a.logprobs(ev.PromptLogprobs)
		}
	}
	return e
}

// finishReason maps the engine's reasons to the HTTP layer's; a
// cancellation has none.
func finishReason(r stop.Reason) api.FinishReason {
	switch r {
	case stop.Stop:
		return api.FinishStop
	case stop.Length:
		return api.FinishLength
	}
	return ""
}

func (a *Engine) logprobs(in []actors.TokenLogprobs) []api.TokenLogprob {
	if len(in) == 0 {
		return nil
	}
	out := make([]api.TokenLogprob, len(in))
	for i, t := range in {
		tl := api.TokenLogprob{ID: t.Token, Token: a.tok.Decode([]int32{t.Token}, false), Logprob: float64(t.Logprob)}
		for _, alt := range t.Top {
			tl.Top = append(tl.Top, api.TopLogprob{ID: alt.Token, Token: a.tok.Decode([]int32{alt.Token}, false), Logprob: float64(alt.Logprob)})
		}
		out[i] = tl
	}
	return out
}
