package api

import "github.com/valyala/fasthttp"

// handleCompletions serves POST /v1/completions.
func (s *Server) handleCompletions(ctx *fasthttp.RequestCtx) {
	var req completionsRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	plan, err := s.planCompletions(&req)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	g, err := s.start(plan.gen)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	id, created := newID("cmpl-"), s.opts.Now().Unix()
	if req.Stream {
		s.stream(ctx, g, newCompletionsStream(s, id, created, plan))
		return
	}
	res, err := g.collect(s.clientGone(ctx))
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, s.completionResponse(id, created, plan, res))
}
