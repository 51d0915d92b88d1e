package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine/stop"
)

// TextDecoder turns a stream of token ids into text, emitting only complete
// UTF-8 (tokenizer.StreamDecoder).
type TextDecoder interface {
	Add(id int32) string
	Flush() string
}

// RequestActor owns one request's event stream. It submits the request,
// turns the batcher's tokens into text events (detokenized incrementally,
// stop strings applied, held back while a stop string may be starting),
// and closes the stream exactly once.
type RequestActor struct {
	id       uint64
	submit   *Submit
	batcher  *actor.PID
	events   chan<- Event
	gone     <-chan struct{} // the caller's context: once done, nobody reads events
	finished chan struct{}   // closed when the stream ends
	decoder  TextDecoder
	stops    *stop.Checker
	done     bool

	promptTokens, completionTokens, cachedTokens int
}

// cancelRequest is sent by Engine.Generate when the caller's context ends.
type cancelRequest struct{}

func (r *RequestActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.submit.Reply = ctx.Self()
		r.promptTokens = len(r.submit.Req.Prompt)
		ctx.Send(r.batcher, r.submit)
	case *TokensGenerated:
		r.onTokens(ctx, m)
	case *Failed:
		r.finish(ctx, Event{Err: m.Err})
	case *cancelRequest:
		if !r.done {
			ctx.Send(r.batcher, &Cancel{ID: r.id, Reason: stop.Cancelled})
			r.finish(ctx, Event{Finish: stop.Cancelled})
		}
	case *actor.Restarting:
		// A panic left this request's state unknown: end it.
		ctx.Send(r.batcher, &Cancel{ID: r.id, Reason: stop.Cancelled})
		r.finish(ctx, Event{Err: errStopped})
	case *actor.Stopping:
		// Stopped by the system: never leave the caller hanging.
		r.finish(ctx, Event{Err: errStopped})
	}
}

func (r *RequestActor) onTokens(ctx actor.Context, m *TokensGenerated) {
	if r.done {
		return // the stream already ended (stop string); late tokens are dropped
	}
	if m.CachedTokens > 0 {
		r.cachedTokens = m.CachedTokens
	}
	ev := Event{Tokens: m.Tokens, Logprobs: m.Logprobs, PromptLogprobs: m.PromptLogprobs, CachedTokens: m.CachedTokens, Spec: m.Spec}
	r.completionTokens += len(m.Tokens)
	var text string
	for _, t := range m.Tokens {
		text += r.decoder.Add(t)
	}
	if m.Reason != stop.None {
		text += r.decoder.Flush()
	}
	emit, stopped := r.stops.Push(text)
	ev.Text = emit
	switch {
	case stopped:
		ctx.Send(r.batcher, &Cancel{ID: r.id, Reason: stop.Stop})
		ev.Finish = stop.Stop
	case m.Reason != stop.None:
		ev.Text += r.stops.Flush()
		ev.Finish = m.Reason
	}
	if ev.Finish != stop.None {
		r.finish(ctx, ev)
		return
	}
	if ev.Text != "" || len(ev.Tokens) > 0 {
		r.send(ev)
	}
}

// finish sends the last event, with usage, closes the stream and stops the
// actor. Only the first call does anything.
func (r *RequestActor) finish(ctx actor.Context, last Event) {
	if r.done {
		return
	}
	r.done = true
	last.Usage = Usage{PromptTokens: r.promptTokens, CompletionTokens: r.completionTokens, CachedTokens: r.cachedTokens}
	if last.Finish == stop.None && last.Err == nil {
		last.Finish = stop.Cancelled
	}
	r.send(last)
	close(r.events)
	close(r.finished)
	ctx.Stop(ctx.Self())
}

// send delivers ev unless the caller has gone.
func (r *RequestActor) send(ev Event) {
	select {
	case r.events <- ev:
	case <-r.gone:
	}
}
