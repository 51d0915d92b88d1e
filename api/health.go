package api

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// handleHealth is liveness: the process serves HTTP.
func (s *Server) handleHealth(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ok"})
}

// handleReady is readiness: 503 until SetReady(true), i.e. until the model
// is loaded and warmed up.
func (s *Server) handleReady(ctx *fasthttp.RequestCtx) {
	if !s.ready.Load() {
		writeError(ctx, dialectOpenAI, &apiError{kind: kindUnavailable, message: "model is loading"})
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ready"})
}

// modelList is the OpenAI list-models response.
type modelList struct {
	Object string        `json:"object"`
	Data   []modelObject `json:"data"`
}

type modelObject struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int    `json:"max_model_len"` // vLLM's extension: the context length
}

func (s *Server) handleModels(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, fasthttp.StatusOK, modelList{Object: "list", Data: []modelObject{{
		ID: s.opts.ModelID, Object: "model", Created: s.created, OwnedBy: "splash", MaxModelLen: s.opts.ContextLength,
	}}})
}

// handleMetrics writes the server's and the engine's metrics in the
// Prometheus text format.
func (s *Server) handleMetrics(ctx *fasthttp.RequestCtx) {
	var b bytes.Buffer
	s.metrics.write(&b, s.inFlight.Load(), s.ready.Load())
	s.conns.writeMetrics(&b)
	if err := s.opts.Engine.WriteMetrics(&b); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.SetBody(b.Bytes())
}

// checkModel accepts an absent model or one naming the served package.
func (s *Server) checkModel(model string) error {
	if model == "" || s.models[model] {
		return nil
	}
	return &apiError{kind: kindNotFound, code: "model_not_found", param: "model",
		message: "model " + quote(model) + " does not exist; this server serves " + quote(s.opts.ModelID)}
}
