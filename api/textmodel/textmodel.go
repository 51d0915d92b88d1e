// Package textmodel serves the HTTP layer's Tokenizer and ChatTemplate
// with a model's own: its tokenizer.json and the chat template of its
// tokenizer_config.json.
package textmodel

import (
	"errors"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/tokenizer"
	"github.com/splash-inference/splash/tokenizer/chat"
	"github.com/splash-inference/splash/tokenizer/jinja"
)

// Tokenizer is the HTTP layer's Tokenizer: a raw text's special-token text
// is always parsed, a rendered prompt's only outside its content.
type Tokenizer struct{ T *tokenizer.Tokenizer }

var _ api.Tokenizer = Tokenizer{}

// Encode tokenizes text, parsing special tokens; addSpecial applies the
// post-processor (BOS).
func (a Tokenizer) Encode(text string, addSpecial bool) []int32 {
	ids := a.T.Encode(text, true)
	if addSpecial {
		ids = a.T.AddSpecial(ids)
	}
	return ids
}

// EncodePrompt tokenizes a rendered prompt with tokenizer.EncodePrompt.
func (a Tokenizer) EncodePrompt(p api.RenderedPrompt) []int32 {
	spans := make([]tokenizer.Span, len(p.Content))
	for i, sp := range p.Content {
		spans[i] = tokenizer.Span(sp)
	}
	return a.T.EncodePrompt(p.Text, spans)
}

// Decode turns ids into text.
func (a Tokenizer) Decode(ids []int32, skipSpecial bool) string {
	return a.T.Decode(ids, skipSpecial)
}

// Template renders the HTTP layer's conversations with the model's chat
// template.
type Template struct{ T *chat.Template }

var _ api.ChatTemplate = Template{}

// Render renders req; everything taken from it is content, marked as it
// is built (see chat.RenderPrompt).
func (a Template) Render(req api.ChatRenderRequest) (api.RenderedPrompt, error) {
	cr := chat.Request{AddGenerationPrompt: req.AddGenerationPrompt}
	thinking := req.EnableThinking
	cr.EnableThinking = &thinking
	for _, m := range req.Messages {
		msg := jinja.NewContentMap()
		msg.Set("role", jinja.Content(m.Role))
		msg.Set("content", jinja.Content(m.Content))
		if m.Reasoning != "" {
			msg.Set("reasoning_content", jinja.Content(m.Reasoning))
		}
		if m.Name != "" {
			msg.Set("name", jinja.Content(m.Name))
		}
		if m.ToolCallID != "" {
			msg.Set("tool_call_id", jinja.Content(m.ToolCallID))
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for i, raw := range m.ToolCalls {
				v, err := jinja.DecodeJSONContent(raw)
				if err != nil {
					return api.RenderedPrompt{}, errors.New("chat: a tool call is not valid JSON")
				}
				calls[i] = v
			}
			msg.Set("tool_calls", calls)
		}
		cr.Messages = append(cr.Messages, msg)
	}
	for _, raw := range req.Tools {
		v, err := jinja.DecodeJSONContent(raw)
		if err != nil {
			return api.RenderedPrompt{}, errors.New("chat: a tool definition is not valid JSON")
		}
		cr.Tools = append(cr.Tools, v)
	}
	p, err := a.T.RenderPrompt(cr)
	if err != nil {
		return api.RenderedPrompt{}, err
	}
	spans := make([]api.Span, len(p.Content))
	for i, sp := range p.Content {
		spans[i] = api.Span(sp)
	}
	return api.RenderedPrompt{Text: p.Text, Content: spans}, nil
}
