package api

import "github.com/valyala/fasthttp"

// handleMessages serves POST /v1/messages (Anthropic).
func (s *Server) handleMessages(ctx *fasthttp.RequestCtx) {
	var req messagesRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	plan, err := s.planMessages(&req)
	if err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	g, err := s.start(plan.gen)
	if err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	id := newID("msg_")
	if req.Stream {
		s.stream(ctx, g, newMessagesStream(id, s.opts.ModelID, plan))
		return
	}
	res, err := g.collect(s.clientGone(ctx))
	if err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, messagesResponse(id, s.opts.ModelID, plan, res))
}

// handleCountTokens serves POST /v1/messages/count_tokens: the prompt's
// token count as the Messages endpoint would render it.
func (s *Server) handleCountTokens(ctx *fasthttp.RequestCtx) {
	var req messagesRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	think, err := anthropicThinking(req.Thinking, 0)
	if err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	p, err := s.renderMessages(&req, think)
	if err != nil {
		writeError(ctx, dialectAnthropic, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]int{"input_tokens": len(p.ids)})
}
