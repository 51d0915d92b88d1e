package api

import "github.com/valyala/fasthttp"

// handleMessages serves POST /v1/messages (Anthropic).
func (s *Server) handleMessages(ctx *fasthttp.RequestCtx) {
	serveGeneration(s, ctx, dialectAnthropic, s.messagesExchange)
}

// messagesExchange plans a Messages request and its answer: the message_*
// and content_block_* events, or one message.
func (s *Server) messagesExchange(r *messagesRequest) (*exchange, error) {
	plan, err := s.planMessages(r)
	if err != nil {
		return nil, err
	}
	id := newID("msg_")
	x := &exchange{gen: plan.gen}
	if r.Stream {
		x.stream = newMessagesStream(id, s.opts.ModelID, plan)
	} else {
		x.respond = func(res *result) any { return messagesResponse(id, s.opts.ModelID, plan, res) }
	}
	return x, nil
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
