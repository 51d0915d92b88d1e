package api

import "github.com/valyala/fasthttp"

// handleResponses serves POST /v1/responses.
func (s *Server) handleResponses(ctx *fasthttp.RequestCtx) {
	serveGeneration(s, ctx, dialectOpenAI, s.responsesExchange)
}

// responsesExchange plans a Responses request and its answer: the
// response.* events, or the response object those events end with.
func (s *Server) responsesExchange(r *responsesRequest) (*exchange, error) {
	plan, err := s.planResponses(r)
	if err != nil {
		return nil, err
	}
	rs := s.newResponsesStream(plan)
	x := &exchange{gen: plan.gen}
	if r.Stream {
		x.stream = rs
		return x, nil
	}
	x.respond = func(res *result) any {
		// Replay the collected generation through the stream writer,
		// discarding events, to assemble the same response object a stream
		// ends with.
		c := res.choices[0]
		rs.event(nil, Event{Text: c.text, Logprobs: c.logprobs, FinishReason: c.finish})
		rs.end(nil, res.usage)
		return rs.obj
	}
	return x, nil
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
