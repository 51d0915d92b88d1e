package api

import "github.com/valyala/fasthttp"

// handleResponses serves POST /v1/responses.
func (s *Server) handleResponses(ctx *fasthttp.RequestCtx) {
	var req responsesRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	plan, err := s.planResponses(&req)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	g, err := s.start(plan.gen)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	rs := s.newResponsesStream(plan)
	if req.Stream {
		s.stream(ctx, g, rs)
		return
	}
	res, err := g.collect(s.clientGone(ctx))
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	// Replay the collected generation through the stream writer, discarding
	// events, to assemble the same response object a stream ends with.
	c := res.choices[0]
	rs.event(nil, Event{Text: c.text, Logprobs: c.logprobs, FinishReason: c.finish})
	rs.end(nil, res.usage)
	writeJSON(ctx, fasthttp.StatusOK, rs.obj)
}

// handleGetResponse serves GET /v1/responses/{id} from the store.
func (s *Server) handleGetResponse(ctx *fasthttp.RequestCtx) {
	id, _ := ctx.UserValue("id").(string)
	stored, ok := s.store.get(id)
	if !ok {
		writeError(ctx, dialectOpenAI, &apiError{kind: kindNotFound, param: "id", message: "response with id " + quote(id) + " not found"})
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, stored.object)
}
