package fake

import (
	"errors"
	"strings"

	"github.com/splash-inference/splash/api"
)

// Template renders a conversation as "<|role|>content\n" lines.
type Template struct{}

var _ api.ChatTemplate = Template{}

// Render implements api.ChatTemplate, marking what came from the request
// as content. It fails on a conversation whose last message is from the
// assistant while a generation prompt is asked for, as strict real
// templates do, so tests can reach the error path.
func (Template) Render(r api.ChatRenderRequest) (api.RenderedPrompt, error) {
	var b promptBuilder
	if len(r.Tools) > 0 {
		b.text.WriteString("<|tools|>")
		for _, t := range r.Tools {
			b.content(string(t))
		}
		b.text.WriteString("\n")
	}
	for _, m := range r.Messages {
		b.text.WriteString("<|")
		b.content(m.Role)
		b.text.WriteString("|>")
		if m.Reasoning != "" {
			b.text.WriteString("<think>")
			b.content(m.Reasoning)
			b.text.WriteString("</think>")
		}
		b.content(m.Content)
		for _, c := range m.ToolCalls {
			b.text.WriteString("<|call|>")
			b.content(string(c))
		}
		if m.ToolCallID != "" {
			b.text.WriteString("<|for ")
			b.content(m.ToolCallID)
			b.text.WriteString("|>")
		}
		b.text.WriteString("\n")
	}
	if r.AddGenerationPrompt {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "assistant" {
			return api.RenderedPrompt{}, errors.New("fake: conversation already ends with an assistant turn")
		}
		b.text.WriteString("<|assistant|>\n")
		if r.EnableThinking {
			b.text.WriteString("<think>\n")
		} else {
			b.text.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return api.RenderedPrompt{Text: b.text.String(), Content: b.spans}, nil
}

// promptBuilder writes template text and content, recording content spans.
type promptBuilder struct {
	text  strings.Builder
	spans []api.Span
}

func (b *promptBuilder) content(s string) {
	if s == "" {
		return
	}
	start := b.text.Len()
	b.text.WriteString(s)
	b.spans = append(b.spans, api.Span{Start: start, End: b.text.Len()})
}
