package fake

import (
	"errors"
	"strings"

	api "github.com/splash-inference/splash/http"
)

// Template renders a conversation as "<|role|>content\n" lines.
type Template struct{}

var _ api.ChatTemplate = Template{}

// Render implements api.ChatTemplate. It fails on a conversation whose last
// message is from the assistant while a generation prompt is asked for,
// as strict real templates do, so tests can reach the error path.
func (Template) Render(r api.ChatRenderRequest) (string, error) {
	var b strings.Builder
	if len(r.Tools) > 0 {
		b.WriteString("<|tools|>")
		for _, t := range r.Tools {
			b.Write(t)
		}
		b.WriteString("\n")
	}
	for _, m := range r.Messages {
		b.WriteString("<|" + m.Role + "|>")
		if m.Reasoning != "" {
			b.WriteString("<think>" + m.Reasoning + "</think>")
		}
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString("<|call|>")
			b.Write(c)
		}
		if m.ToolCallID != "" {
			b.WriteString("<|for " + m.ToolCallID + "|>")
		}
		b.WriteString("\n")
	}
	if r.AddGenerationPrompt {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "assistant" {
			return "", errors.New("fake: conversation already ends with an assistant turn")
		}
		b.WriteString("<|assistant|>\n")
		if r.EnableThinking {
			b.WriteString("<think>\n")
		} else {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String(), nil
}
