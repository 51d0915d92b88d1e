package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// API is the wire dialect a benchmark speaks.
type API string

// The dialects a benchmark can speak. All are streamed.
const (
	APIChat        API = "chat"        // OpenAI Chat Completions, POST /v1/chat/completions
	APICompletions API = "completions" // OpenAI Completions, POST /v1/completions
	APIMessages    API = "messages"    // Anthropic Messages, POST /v1/messages
)

// ParseAPI checks a dialect name.
func ParseAPI(s string) (API, error) {
	switch a := API(s); a {
	case APIChat, APICompletions, APIMessages:
		return a, nil
	}
	return "", fmt.Errorf("bench: unknown API %q (want chat, completions or messages)", s)
}

// endpoint returns the URL of the API's streaming endpoint under baseURL.
// The base URL may or may not already end in /v1, as servers document it both
// ways (http://localhost:11434 and http://localhost:11434/v1).
func (a API) endpoint(baseURL string) string {
	base := strings.TrimRight(baseURL, "/")
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	switch a {
	case APICompletions:
		return base + "/completions"
	case APIMessages:
		return base + "/messages"
	}
	return base + "/chat/completions"
}

// setAuth adds the API key in the dialect's header(s).
func (a API) setAuth(h http.Header, key string) {
	if a == APIMessages {
		h.Set("anthropic-version", "2023-06-01")
	}
	if key == "" {
		return
	}
	h.Set("Authorization", "Bearer "+key)
	if a == APIMessages {
		h.Set("x-api-key", key)
	}
}

// requestBody is the JSON body of one streamed request. history is the whole
// conversation so far.
func (a API) requestBody(model string, history []Message, maxTokens int, ignoreEOS bool) ([]byte, error) {
	body := map[string]any{
		"model":      model,
		"stream":     true,
		"max_tokens": maxTokens,
	}
	if ignoreEOS {
		body["ignore_eos"] = true
	}
	switch a {
	case APIChat:
		body["messages"] = history
		body["stream_options"] = map[string]any{"include_usage": true}
	case APICompletions:
		body["prompt"] = renderPrompt(history)
		body["stream_options"] = map[string]any{"include_usage": true}
	case APIMessages:
		var system []string
		msgs := make([]Message, 0, len(history))
		for _, m := range history {
			if m.Role == "system" {
				system = append(system, m.Content)
				continue
			}
			msgs = append(msgs, m)
		}
		if len(system) > 0 {
			body["system"] = strings.Join(system, "\n\n")
		}
		body["messages"] = msgs
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("bench: encoding request: %w", err)
	}
	return b, nil
}

// renderPrompt flattens a conversation for the Completions API. A lone user
// message is sent as it is; anything longer is written as a plain transcript
// ending with an open assistant turn.
func renderPrompt(history []Message) string {
	if len(history) == 1 && history[0].Role == "user" {
		return history[0].Content
	}
	var b strings.Builder
	for _, m := range history {
		b.WriteString(roleTitle(m.Role))
		b.WriteString(": ")
		b.WriteString(m.Content)
		b.WriteString("\n\n")
	}
	b.WriteString("Assistant:")
	return b.String()
}

func roleTitle(role string) string {
	if role == "" {
		return ""
	}
	return strings.ToUpper(role[:1]) + role[1:]
}

// streamUpdate is what one stream event tells the client.
type streamUpdate struct {
	text         string // generated text (content or reasoning), may be ""
	promptTokens int    // > 0 when the event reports the prompt's token count
	outputTokens int    // > 0 when the event reports the output's token count
	done         bool   // the stream's end marker
}

// errStreamError is a server-reported error inside a stream.
var errStreamError = errors.New("bench: server sent an error event")

// decodeEvent interprets one SSE event of the dialect.
func (a API) decodeEvent(typ, data string) (streamUpdate, error) {
	if a == APIMessages {
		return decodeAnthropic(typ, data)
	}
	return decodeOpenAI(data)
}

// openAIChunk covers chat and completions chunks, including the reasoning
// fields servers use for thinking models (vLLM's reasoning_content, llama.cpp
// and Ollama's reasoning): reasoning tokens are generated tokens too.
type openAIChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func decodeOpenAI(data string) (streamUpdate, error) {
	data = strings.TrimSpace(data)
	if data == "[DONE]" {
		return streamUpdate{done: true}, nil
	}
	var c openAIChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return streamUpdate{}, fmt.Errorf("bench: bad stream chunk: %w", err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return streamUpdate{}, fmt.Errorf("%w: %s", errStreamError, c.Error)
	}
	var u streamUpdate
	for _, ch := range c.Choices {
		u.text += ch.Text + ch.Delta.ReasoningContent + ch.Delta.Reasoning + ch.Delta.Content
	}
	if c.Usage != nil {
		u.promptTokens = c.Usage.PromptTokens
		u.outputTokens = c.Usage.CompletionTokens
	}
	return u, nil
}

// anthropicEvent covers the Messages stream events the benchmark reads.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Delta struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
	Usage anthropicUsage  `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func decodeAnthropic(typ, data string) (streamUpdate, error) {
	var e anthropicEvent
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return streamUpdate{}, fmt.Errorf("bench: bad stream event: %w", err)
	}
	if typ == "" {
		typ = e.Type
	}
	switch typ {
	case "message_start":
		return streamUpdate{promptTokens: e.Message.Usage.InputTokens}, nil
	case "content_block_delta":
		return streamUpdate{text: e.Delta.Text + e.Delta.Thinking}, nil
	case "message_delta":
		// output_tokens here is cumulative for the message.
		return streamUpdate{promptTokens: e.Usage.InputTokens, outputTokens: e.Usage.OutputTokens}, nil
	case "message_stop":
		return streamUpdate{done: true}, nil
	case "error":
		return streamUpdate{}, fmt.Errorf("%w: %s", errStreamError, e.Error)
	}
	return streamUpdate{}, nil // ping, content_block_start/stop, unknown
}
