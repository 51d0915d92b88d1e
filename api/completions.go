package api

import "github.com/valyala/fasthttp"

// handleCompletions serves POST /v1/completions.
func (s *Server) handleCompletions(ctx *fasthttp.RequestCtx) {
	serveGeneration(s, ctx, dialectOpenAI, s.completionsExchange)
}

// completionsExchange plans a Completions request and its answer:
// text_completion chunks or one text_completion.
func (s *Server) completionsExchange(r *completionsRequest) (*exchange, error) {
	plan, err := s.planCompletions(r)
	if err != nil {
		return nil, err
	}
	id, created := newID("cmpl-"), s.opts.Now().Unix()
	x := &exchange{gen: plan.gen}
	if r.Stream {
		x.stream = newCompletionsStream(s, id, created, plan)
	} else {
		x.respond = func(res *result) any { return s.completionResponse(id, created, plan, res) }
	}
	return x, nil
}
