package api

import (
	"github.com/valyala/fasthttp"

	"github.com/splash-inference/splash/actors"
)

// exchange is one dialect's validated request with the way it answers:
// the parts of a generating endpoint that differ by dialect.
type exchange struct {
	gen *actors.Request
	// stream, when the client asked to stream, writes the SSE events;
	// otherwise respond builds the JSON body of the collected generation.
	stream  streamHandler
	respond func(*result) any
}

// serveGeneration is the flow every generating endpoint shares: decode the
// body, plan the exchange (validate, template, tokenize), start the
// generation, then stream it or collect it into one response. Every error
// is answered in dialect d's shape.
func serveGeneration[R any](s *Server, ctx *fasthttp.RequestCtx, d dialect, plan func(*R) (*exchange, error)) {
	var req R
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, d, err)
		return
	}
	x, err := plan(&req)
	if err != nil {
		writeError(ctx, d, err)
		return
	}
	g, err := s.start(x.gen)
	if err != nil {
		writeError(ctx, d, err)
		return
	}
	if x.stream != nil {
		s.stream(ctx, g, x.stream)
		return
	}
	res, err := g.collect(s.clientGone(ctx))
	if err != nil {
		writeError(ctx, d, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, x.respond(res))
}
