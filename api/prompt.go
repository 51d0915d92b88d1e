package api

import (
	"strings"

	"github.com/splash-inference/splash/engine"
)

// prompt is a rendered, tokenized request prompt.
type prompt struct {
	ids     []int32
	text    string
	content []Span // the bytes of text that came from the request
	// images are the prompt's images, where their pad tokens are in ids.
	images []engine.Image
	// startsInThink is true when the rendered prompt already opened a
	// <think> block, so the model's first output is reasoning.
	startsInThink bool
}

// renderChat renders a conversation with the template and tokenizes it,
// parsing control tokens only in the template's own text: a message, tool
// result or system prompt that spells <|im_end|> or <think> cannot end its
// turn or fake the model's reasoning. The template emits any BOS token
// itself, so none is added here. The images media read for the
// conversation take their markers' places (splitImages).
func (s *Server) renderChat(r ChatRenderRequest, media *requestMedia) (prompt, error) {
	rp, err := s.opts.Template.Render(r)
	if err != nil {
		return prompt{}, invalidf("messages", "rendering the chat template failed: %v", err)
	}
	p := prompt{ids: s.opts.Tokenizer.EncodePrompt(rp), text: rp.Text, content: rp.Content}
	if len(media.images) > 0 {
		if p, err = s.splitImages(rp, media); err != nil {
			return prompt{}, err
		}
	}
	p.startsInThink = strings.HasSuffix(strings.TrimRight(rp.Text, " \t\r\n"), thinkOpen)
	return p, nil
}

// maxTokens resolves a request's completion-token cap against the context:
// an absent cap means "the rest of the context", and so does a cap that
// does not fit next to the prompt. Clamping, as llama.cpp and Ollama do,
// rather than vLLM's 400: coding agents send fixed large caps (Claude Code
// asks for 32000) whatever the server's context, and a generation that
// reaches the end of the context ends with the usual length finish reason.
func (s *Server) maxTokens(promptLen int, requested *int, param string) (int, error) {
	ctxLen := s.opts.ContextLength
	if promptLen >= ctxLen {
		return 0, invalidf("messages", "the prompt has %d tokens, which leaves no room in the context length of %d tokens", promptLen, ctxLen)
	}
	if requested != nil && *requested < 1 {
		return 0, invalidf(param, "%s must be at least 1, got %d", param, *requested)
	}
	if requested == nil {
		return ctxLen - promptLen, nil
	}
	return min(*requested, ctxLen-promptLen), nil
}

// choiceCount validates n.
func choiceCount(n *int) (int, error) {
	const maxChoices = 16
	if n == nil {
		return 1, nil
	}
	if *n < 1 || *n > maxChoices {
		return 0, invalidf("n", "n must be in [1, %d], got %d", maxChoices, *n)
	}
	return *n, nil
}

// topLogprobs validates a top-logprobs count.
func topLogprobs(param string, n *int) (int, error) {
	const maxTop = 20
	if n == nil {
		return 0, nil
	}
	if *n < 0 || *n > maxTop {
		return 0, invalidf(param, "%s must be in [0, %d], got %d", param, maxTop, *n)
	}
	return *n, nil
}

// stopStrings validates stop strings.
func stopStrings(param string, stops []string) ([]string, error) {
	const maxStops = 16
	if len(stops) > maxStops {
		return nil, invalidf(param, "at most %d stop sequences are allowed, got %d", maxStops, len(stops))
	}
	out := stops[:0:0]
	for i, s := range stops {
		if s == "" {
			return nil, invalidf(param, "%s[%d] is empty", param, i)
		}
		out = append(out, s)
	}
	return out, nil
}
