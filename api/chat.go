package api

import "github.com/valyala/fasthttp"

// handleChat serves POST /v1/chat/completions.
func (s *Server) handleChat(ctx *fasthttp.RequestCtx) {
	serveGeneration(s, ctx, dialectOpenAI, s.chatExchange)
}

// chatExchange plans a chat request and its answer: chat.completion.chunk
// events or one chat.completion.
func (s *Server) chatExchange(r *chatRequest) (*exchange, error) {
	plan, err := s.planChat(r)
	if err != nil {
		return nil, err
	}
	id, created := newID("chatcmpl-"), s.opts.Now().Unix()
	x := &exchange{gen: plan.gen}
	if r.Stream {
		x.stream = newChatStream(id, s.opts.ModelID, created, plan)
	} else {
		x.respond = func(res *result) any { return chatResponse(id, s.opts.ModelID, created, plan, res) }
	}
	return x, nil
}
