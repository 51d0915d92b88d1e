package api

import (
	"bufio"
	"context"
	"fmt"

	"github.com/valyala/fasthttp"
)

// sseWriter writes Server-Sent Events to a streamed response. The first
// failed write or flush means the client is gone: it cancels the
// generation and every later write is a no-op. A nil *sseWriter discards
// everything, so a stream handler can also build a non-streamed response.
type sseWriter struct {
	w      *bufio.Writer
	cancel context.CancelFunc
	err    error
}

// send writes one event: an optional "event:" line and v as JSON "data:".
func (s *sseWriter) send(event string, v any) {
	if s == nil || s.err != nil {
		return
	}
	b, err := marshal(v)
	if err != nil {
		s.fail(fmt.Errorf("api: encoding an SSE event: %w", err))
		return
	}
	if event != "" {
		s.write("event: " + event + "\n")
	}
	s.write("data: ")
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
	s.write("\n\n")
	s.flush()
}

// done writes OpenAI's stream terminator.
func (s *sseWriter) done() {
	if s == nil {
		return
	}
	s.write("data: [DONE]\n\n")
	s.flush()
}

// comment writes an SSE comment line, which clients ignore (keep-alive).
func (s *sseWriter) comment(text string) {
	if s == nil {
		return
	}
	s.write(": " + text + "\n\n")
	s.flush()
}

func (s *sseWriter) write(str string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(str)
		if s.err != nil {
			s.cancel()
		}
	}
}

func (s *sseWriter) flush() {
	if s.err == nil {
		s.err = s.w.Flush()
		if s.err != nil {
			s.cancel()
		}
	}
}

func (s *sseWriter) fail(err error) {
	if s.err == nil {
		s.err = err
		s.cancel()
	}
}

// setSSEHeaders prepares a response for event streaming.
func setSSEHeaders(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/event-stream; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
}
