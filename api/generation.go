package api

import (
	"github.com/splash-inference/splash/actors"

	"bufio"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

var (
	errNoFinalEvent = errors.New("api: the engine ended the stream without a final event")
	errClientGone   = errors.New("api: the client closed the connection")
)

// generation is one admitted request running in the engine.
type generation struct {
	req    *actors.Request
	events <-chan Event
	ctx    context.Context
	cancel context.CancelFunc
	done   func() // releases the admission slot; runs once
}

// start admits a request and hands it to the engine. Admission counts
// sequences, not requests: each of a request's n choices is a sequence the
// engine runs (and holds KV blocks for), so n takes n of the
// MaxRunning+MaxWaiting slots (429 beyond them).
func (s *Server) start(req *actors.Request) (*generation, error) {
	limit := int64(s.opts.MaxRunning + s.opts.MaxWaiting)
	seqs := int64(max(req.N, 1))
	if seqs > limit {
		return nil, invalidf("n", "n = %d exceeds the %d sequences this server admits at once", seqs, limit)
	}
	if s.inFlight.Add(seqs) > limit {
		s.inFlight.Add(-seqs)
		s.metrics.rejected.Add(1)
		return nil, &apiError{kind: kindRateLimit, retryAfter: 1,
			message: fmt.Sprintf("too many sequences running or waiting (limit %d); retry later", limit)}
	}
	ctx, cancel := context.WithCancel(s.base)
	events, err := s.opts.Engine.Generate(ctx, req)
	if err != nil {
		cancel()
		s.inFlight.Add(-seqs)
		if errors.Is(err, ErrBusy) {
			s.metrics.rejected.Add(1)
		}
		return nil, err
	}
	var once sync.Once
	return &generation{req: req, events: events, ctx: ctx, cancel: cancel, done: func() {
		once.Do(func() {
			cancel()
			s.inFlight.Add(-seqs)
		})
	}}, nil
}

// choiceResult is one finished choice of a collected generation.
type choiceResult struct {
	text         string
	tokens       []int32
	logprobs     []TokenLogprob
	finish       FinishReason
	stopSequence string
}

// result is a whole collected generation.
type result struct {
	choices        []choiceResult
	promptLogprobs []TokenLogprob
	usage          Usage
}

// disconnectPoll is how often a non-streamed request checks its client.
const disconnectPoll = 100 * time.Millisecond

// collect waits for the whole generation (non-streaming responses). It
// cancels the generation if gone reports that the client left.
func (g *generation) collect(gone func() bool) (*result, error) {
	defer g.done()
	r := &result{choices: make([]choiceResult, g.req.N)}
	tick := time.NewTicker(disconnectPoll)
	defer tick.Stop()
	for {
		var ev Event
		var ok bool
		select {
		case ev, ok = <-g.events:
		case <-tick.C:
			if gone() {
				g.cancel()
				return nil, errClientGone
			}
			continue
		}
		switch {
		case !ok:
			return nil, errNoFinalEvent
		case ev.Err != nil:
			return nil, ev.Err
		case ev.Choice < 0 || ev.Choice >= len(r.choices):
			return nil, fmt.Errorf("api: engine sent choice %d of %d", ev.Choice, len(r.choices))
		}
		c := &r.choices[ev.Choice]
		c.text += ev.Text
		c.tokens = append(c.tokens, ev.Tokens...)
		c.logprobs = append(c.logprobs, ev.Logprobs...)
		if ev.PromptLogprobs != nil {
			r.promptLogprobs = ev.PromptLogprobs
		}
		if ev.FinishReason != "" {
			c.finish, c.stopSequence = ev.FinishReason, ev.StopSequence
		}
		if ev.Done {
			if ev.Usage != nil {
				r.usage = *ev.Usage
			}
			return r, nil
		}
	}
}

// clientGone returns a check for a non-streamed request's client leaving.
func (s *Server) clientGone(ctx *fasthttp.RequestCtx) func() bool {
	conn := ctx.Conn()
	return func() bool {
		if peerClosed(conn) {
			s.metrics.cancelled.Add(1)
			return true
		}
		return false
	}
}

// streamHandler writes one dialect's SSE events for a generation.
type streamHandler interface {
	begin(w *sseWriter)            // events before any token (role chunk, message_start, ...)
	event(w *sseWriter, ev Event)  // one engine event, the final one included
	end(w *sseWriter, usage Usage) // events after the final engine event
	fail(w *sseWriter, err error)  // the engine failed mid-stream
	ping(w *sseWriter)             // keep-alive while idle
}

// stream answers with an SSE stream written by h. fasthttp runs the writer
// after the handler returns; a failed write cancels the generation.
func (s *Server) stream(ctx *fasthttp.RequestCtx, g *generation, h streamHandler) {
	setSSEHeaders(ctx)
	keepAlive := s.opts.KeepAlive
	ctx.SetBodyStreamWriter(func(bw *bufio.Writer) {
		defer g.done()
		w := &sseWriter{w: bw, cancel: g.cancel}
		g.pump(w, h, keepAlive)
		if w.err != nil {
			s.metrics.cancelled.Add(1)
		}
	})
}

// pump feeds the engine's events to h until the final one, the client
// leaving, or the server shutting down.
func (g *generation) pump(w *sseWriter, h streamHandler, keepAlive time.Duration) {
	h.begin(w)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for w.err == nil {
		select {
		case ev, ok := <-g.events:
			switch {
			case !ok:
				h.fail(w, errNoFinalEvent)
				return
			case ev.Err != nil:
				h.fail(w, ev.Err)
				return
			}
			h.event(w, ev)
			if ev.Done {
				var u Usage
				if ev.Usage != nil {
					u = *ev.Usage
				}
				h.end(w, u)
				return
			}
		case <-tick.C:
			h.ping(w)
		case <-g.ctx.Done():
			h.fail(w, fmt.Errorf("api: generation cancelled: %w", g.ctx.Err()))
			return
		}
	}
}
