package api

import "github.com/valyala/fasthttp"

// handleChat serves POST /v1/chat/completions.
func (s *Server) handleChat(ctx *fasthttp.RequestCtx) {
	var req chatRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	plan, err := s.planChat(&req)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	g, err := s.start(plan.gen)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	id, created := newID("chatcmpl-"), s.opts.Now().Unix()
	if req.Stream {
		s.stream(ctx, g, newChatStream(id, s.opts.ModelID, created, plan))
		return
	}
	res, err := g.collect(s.clientGone(ctx))
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, chatResponse(id, s.opts.ModelID, created, plan, res))
}
