package api

import (
	"fmt"

	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/actors"
)

// messagesRequest is a POST /v1/messages (and count_tokens) body. Fields
// not listed (metadata, service_tier, ...) are accepted and ignored.
type messagesRequest struct {
	Model         string               `json:"model"`
	Messages      []anthropicMessage   `json:"messages"`
	System        anthropicContent     `json:"system"`
	MaxTokens     *int                 `json:"max_tokens"`
	StopSequences []string             `json:"stop_sequences"`
	Stream        bool                 `json:"stream"`
	Temperature   *float64             `json:"temperature"`
	TopP          *float64             `json:"top_p"`
	TopK          *int                 `json:"top_k"`
	Thinking      *thinkingConfig      `json:"thinking"`
	Tools         []anthropicTool      `json:"tools"`
	ToolChoice    *anthropicToolChoice `json:"tool_choice"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content anthropicContent `json:"content"`
}

// thinkingConfig is {"type":"enabled","budget_tokens":N}, {"type":"disabled"}
// or {"type":"adaptive"}.
type thinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// anthropicTool is a client tool definition.
type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// anthropicBlockIn is one content block of a request message.
type anthropicBlockIn struct {
	Type      string           `json:"type"`
	Text      string           `json:"text"`
	Thinking  string           `json:"thinking"`
	ID        string           `json:"id"`
	Name      string           `json:"name"`
	Input     json.RawMessage  `json:"input"`
	ToolUseID string           `json:"tool_use_id"`
	Source    mediaSource      `json:"source"` // an image or document block's
	Title     string           `json:"title"`  // a document block's, as are Context
	Context   string           `json:"context"`
	Content   anthropicContent `json:"content"` // a tool_result's content
}

// anthropicContent is message content: a string or an array of blocks.
type anthropicContent []anthropicBlockIn

func (c *anthropicContent) UnmarshalJSON(b []byte) error {
	blocks, err := stringOrArray(b, func(s string) anthropicBlockIn { return anthropicBlockIn{Type: "text", Text: s} },
		func(err error) error {
			return invalidf("content", "content blocks must be objects with a \"type\": %v", err)
		},
		invalidf("content", "content must be a string or an array of content blocks"))
	*c = blocks
	return err
}

// text joins the text blocks (system prompts, tool results).
func (c anthropicContent) text(param string) (string, error) {
	var s string
	for _, b := range c {
		if b.Type != "text" {
			return "", invalidf(param, "%s: block type %q is not supported here (text only)", param, b.Type)
		}
		s += b.Text
	}
	return s, nil
}

// toolResult joins a tool_result's text and image blocks (a tool may
// return a screenshot), each image's marker in its place.
func (c anthropicContent) toolResult(media *requestMedia, param string) (string, error) {
	var j contentJoiner
	for k, b := range c {
		switch b.Type {
		case "text":
			j.text(b.Text)
		case "image":
			marker, err := b.Source.read(media, fmt.Sprintf("%s[%d]", param, k))
			if err != nil {
				return "", err
			}
			j.image(marker)
		default:
			return "", invalidf(param, "%s: block type %q is not supported here (text and image only)", param, b.Type)
		}
	}
	return j.content, nil
}

// openAIToolCall is an assistant tool call in the OpenAI shape the
// template receives.
type openAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// anthropicConversation converts system + messages for the template,
// reading document blocks with media; a user turn's tool_result blocks
// become "tool" messages.
func anthropicConversation(system anthropicContent, msgs []anthropicMessage, media *requestMedia) ([]ChatMessage, error) {
	if len(msgs) == 0 {
		return nil, invalidf("messages", "messages must not be empty")
	}
	var out []ChatMessage
	if len(system) > 0 {
		text, err := system.text("system")
		if err != nil {
			return nil, err
		}
		out = append(out, ChatMessage{Role: "system", Content: text})
	}
	for i, m := range msgs {
		if m.Role == "system" {
			// Not in Anthropic's published schema, but Claude Code sends
			// mid-conversation system messages; the chat template places them.
			text, err := m.Content.text(fmt.Sprintf("messages[%d].content", i))
			if err != nil {
				return nil, err
			}
			out = append(out, ChatMessage{Role: "system", Content: text})
			continue
		}
		if m.Role != "user" && m.Role != "assistant" {
			return nil, invalidf("messages", "messages[%d].role: unknown role %s (want user, assistant or system)", i, quote(m.Role))
		}
		msg := ChatMessage{Role: m.Role}
		var content contentJoiner
		for j, b := range m.Content {
			switch b.Type {
			case "text":
				content.text(b.Text)
			case "document":
				param := fmt.Sprintf("messages[%d].content[%d]", i, j)
				doc, err := b.document(param)
				if err != nil {
					return nil, err
				}
				text, err := media.documentText(param, doc)
				if err != nil {
					return nil, err
				}
				content.block(text)
			case "thinking":
				msg.Reasoning += b.Thinking
			case "redacted_thinking":
			case "tool_use":
				call, err := json.Marshal(openAIToolCall{ID: b.ID, Type: "function", Function: openAIFunction{Name: b.Name, Arguments: string(b.Input)}})
				if err != nil {
					return nil, invalidf("messages", "messages[%d]: bad tool_use input: %v", i, err)
				}
				msg.ToolCalls = append(msg.ToolCalls, call)
			case "image":
				marker, err := b.Source.read(media, fmt.Sprintf("messages[%d].content[%d]", i, j))
				if err != nil {
					return nil, err
				}
				content.image(marker)
			case "tool_result":
				result, err := b.Content.toolResult(media, fmt.Sprintf("messages[%d].content[%d].content", i, j))
				if err != nil {
					return nil, err
				}
				out = append(out, ChatMessage{Role: "tool", Content: result, ToolCallID: b.ToolUseID})
			default:
				return nil, invalidf("messages", "messages[%d]: content block type %q is not supported", i, b.Type)
			}
		}
		msg.Content = content.content
		if msg.Content != "" || msg.Reasoning != "" || len(msg.ToolCalls) > 0 || len(m.Content) == 0 {
			out = append(out, msg)
		}
	}
	return out, nil
}

// openAITools converts tool definitions to the OpenAI function-tool shape.
func openAITools(tools []anthropicTool) ([][]byte, error) {
	out := make([][]byte, 0, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, invalidf("tools", "tools[%d].name is required", i)
		}
		b, err := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": t.InputSchema}})
		if err != nil {
			return nil, invalidf("tools", "bad tool %q: %v", t.Name, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// anthropicThinking resolves the thinking switch. Anthropic's default is
// no thinking; budget_tokens must be at least 1024 and below max_tokens.
func anthropicThinking(t *thinkingConfig, maxTokens int) (reasoning, error) {
	const minBudget = 1024
	if t == nil {
		return reasoning{}, nil
	}
	switch t.Type {
	case "disabled":
		return reasoning{}, nil
	case "adaptive":
		return reasoning{enabled: true}, nil
	case "enabled":
		if t.BudgetTokens < minBudget || (maxTokens > 0 && t.BudgetTokens >= maxTokens) {
			return reasoning{}, invalidf("thinking.budget_tokens", "thinking.budget_tokens must be at least %d and less than max_tokens (%d), got %d", minBudget, maxTokens, t.BudgetTokens)
		}
		return reasoning{enabled: true, budget: t.BudgetTokens}, nil
	}
	return reasoning{}, invalidf("thinking.type", "thinking.type must be enabled, disabled or adaptive, got %s", quote(t.Type))
}

// messagesPlan is a validated Messages request, ready for the engine.
type messagesPlan struct {
	gen    *actors.Request
	prompt prompt
	tools  bool // the request declares tools: parse tool calls out of the answer
}

// renderMessages validates the conversation and renders its prompt; it is
// all count_tokens needs.
func (s *Server) renderMessages(r *messagesRequest, think reasoning) (prompt, error) {
	if err := s.checkModel(r.Model); err != nil {
		return prompt{}, err
	}
	media := s.newRequestMedia(nil)
	msgs, err := anthropicConversation(r.System, r.Messages, media)
	if err != nil {
		return prompt{}, err
	}
	tools, err := openAITools(r.Tools)
	if err != nil {
		return prompt{}, err
	}
	if r.ToolChoice != nil && r.ToolChoice.Type == "none" {
		tools = nil // the model is not told about tools it may not call
	}
	return s.renderChat(ChatRenderRequest{Messages: msgs, Tools: tools, AddGenerationPrompt: true, EnableThinking: think.enabled}, media)
}

// planMessages validates a Messages request and builds the engine request.
func (s *Server) planMessages(r *messagesRequest) (*messagesPlan, error) {
	if r.MaxTokens == nil {
		return nil, invalidf("max_tokens", "max_tokens: field required")
	}
	think, err := anthropicThinking(r.Thinking, *r.MaxTokens)
	if err != nil {
		return nil, err
	}
	gen, err := (&generationParams{sampling: samplingFields{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK}, maxTemperature: 1,
		stop: r.StopSequences, stopParam: "stop_sequences"}).validate()
	if err != nil {
		return nil, err
	}
	choice, err := r.ToolChoice.choice()
	if err != nil {
		return nil, err
	}
	oaTools, err := openAITools(r.Tools)
	if err != nil {
		return nil, err
	}
	raw := make([]json.RawMessage, len(oaTools))
	for i, t := range oaTools {
		raw[i] = t
	}
	if err := s.checkToolsAllowed(len(raw), choice); err != nil {
		return nil, err
	}
	toolG, err := forcedToolGrammar(s.grammars, choice, raw)
	if err != nil {
		return nil, err
	}
	if toolG != nil {
		think = reasoning{} // the forced call starts at the first token
	}
	p, err := s.renderMessages(r, think)
	if err != nil {
		return nil, err
	}
	maxTokens, err := s.maxTokens(len(p.ids), r.MaxTokens, "max_tokens")
	if err != nil {
		return nil, err
	}
	gen.Prompt, gen.Images, gen.MaxTokens, gen.ThinkingBudget, gen.ToolGrammar = p.ids, p.images, maxTokens, think.budget, toolG
	gen.ParallelToolCalls = r.ToolChoice == nil || !r.ToolChoice.DisableParallelToolUse
	return &messagesPlan{prompt: p, tools: len(r.Tools) > 0 && (choice == nil || choice.Mode != "none"), gen: gen}, nil
}
