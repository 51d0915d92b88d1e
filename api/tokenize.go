package api

import (
	"github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// templateRequest holds the fields /tokenize (with messages) and
// /apply-template share: a chat conversation and how to render it.
type templateRequest struct {
	Model               string            `json:"model"`
	Messages            []chatMessageIn   `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	AddGenerationPrompt *bool             `json:"add_generation_prompt"`
	ReasoningEffort     string            `json:"reasoning_effort"`
	EnableThinking      *bool             `json:"enable_thinking"`
	ChatTemplateKwargs  struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"chat_template_kwargs"`
}

// renderRequest validates the conversation and its reasoning switches.
// enable_thinking (top level or in chat_template_kwargs) overrides
// reasoning_effort. The conversation's attachments come with it.
func (s *Server) renderRequest(r *templateRequest) (ChatRenderRequest, *requestMedia, error) {
	if err := s.checkModel(r.Model); err != nil {
		return ChatRenderRequest{}, nil, err
	}
	media := s.newRequestMedia(nil)
	msgs, err := conversation(r.Messages, media)
	if err != nil {
		return ChatRenderRequest{}, nil, err
	}
	think, err := parseEffort("reasoning_effort", r.ReasoningEffort)
	if err != nil {
		return ChatRenderRequest{}, nil, err
	}
	for _, on := range []*bool{r.EnableThinking, r.ChatTemplateKwargs.EnableThinking} {
		if on != nil {
			think.enabled = *on
		}
	}
	return ChatRenderRequest{Messages: msgs, Tools: rawList(r.Tools), EnableThinking: think.enabled,
		AddGenerationPrompt: r.AddGenerationPrompt == nil || *r.AddGenerationPrompt}, media, nil
}

// tokenizeRequest is a POST /tokenize body: text (as "text", "content" or
// "prompt") or a chat conversation ("messages", rendered first).
type tokenizeRequest struct {
	templateRequest
	Text             *string `json:"text"`
	Content          *string `json:"content"`
	Prompt           *string `json:"prompt"`
	AddSpecialTokens *bool   `json:"add_special_tokens"`
}

type tokenizeResponse struct {
	Tokens []int32 `json:"tokens"`
	Count  int     `json:"count"`
}

func (s *Server) handleTokenize(ctx *fasthttp.RequestCtx) {
	var req tokenizeRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	ids, err := s.tokenize(&req)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, tokenizeResponse{Tokens: ids, Count: len(ids)})
}

// tokenize encodes whichever single input the request carries. Plain text
// gets the special (BOS) tokens unless add_special_tokens is false; a
// rendered conversation never does, as its template adds them.
func (s *Server) tokenize(r *tokenizeRequest) ([]int32, error) {
	var text *string
	inputs := 0
	for _, t := range []*string{r.Text, r.Content, r.Prompt} {
		if t != nil {
			text = t
			inputs++
		}
	}
	if r.Messages != nil {
		inputs++
	}
	if inputs != 1 {
		return nil, invalidf("", "send exactly one of text, content, prompt or messages")
	}
	if text != nil {
		return orEmpty(s.opts.Tokenizer.Encode(*text, r.AddSpecialTokens == nil || *r.AddSpecialTokens)), nil
	}
	rr, media, err := s.renderRequest(&r.templateRequest)
	if err != nil {
		return nil, err
	}
	p, err := s.renderChat(rr, media)
	if err != nil {
		return nil, err
	}
	return orEmpty(p.ids), nil
}

func orEmpty(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// detokenizeRequest is a POST /detokenize body.
type detokenizeRequest struct {
	Tokens            []int32 `json:"tokens"`
	SkipSpecialTokens bool    `json:"skip_special_tokens"`
}

// handleDetokenize answers {"prompt": text}, as vLLM does.
func (s *Server) handleDetokenize(ctx *fasthttp.RequestCtx) {
	var req detokenizeRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	if req.Tokens == nil {
		writeError(ctx, dialectOpenAI, invalidf("tokens", "tokens: field required"))
		return
	}
	for i, id := range req.Tokens {
		if id < 0 {
			writeError(ctx, dialectOpenAI, invalidf("tokens", "tokens[%d] is negative (%d)", i, id))
			return
		}
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"prompt": s.opts.Tokenizer.Decode(req.Tokens, req.SkipSpecialTokens)})
}

// applyTemplateRequest is a POST /apply-template body: a conversation and
// whether to say which bytes of the prompt came from it.
type applyTemplateRequest struct {
	templateRequest
	Spans bool `json:"spans"`
}

// applyTemplateResponse is the rendered prompt and, when asked for, the
// byte ranges [start, end) of it that came from the request's content:
// control tokens are parsed everywhere else, never there.
type applyTemplateResponse struct {
	Prompt  string    `json:"prompt"`
	Content *[][2]int `json:"content_spans,omitempty"`
}

// handleApplyTemplate answers {"prompt": rendered chat}, with
// "content_spans" when the request sets "spans".
func (s *Server) handleApplyTemplate(ctx *fasthttp.RequestCtx) {
	var req applyTemplateRequest
	if err := decodeJSON(ctx.PostBody(), &req); err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	rr, media, err := s.renderRequest(&req.templateRequest)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	p, err := s.renderChat(rr, media)
	if err != nil {
		writeError(ctx, dialectOpenAI, err)
		return
	}
	resp := applyTemplateResponse{Prompt: p.text}
	if req.Spans {
		spans := make([][2]int, len(p.content))
		for i, sp := range p.content {
			spans[i] = [2]int{sp.Start, sp.End}
		}
		resp.Content = &spans
	}
	writeJSON(ctx, fasthttp.StatusOK, resp)
}
