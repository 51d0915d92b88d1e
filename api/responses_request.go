package api

import (
	"fmt"
	"slices"

	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/actors"
)

// responsesRequest is a POST /v1/responses body. Fields not listed (user,
// truncation, ...) are accepted and ignored.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              responsesInput    `json:"input"`
	Instructions       string            `json:"instructions"`
	PreviousResponseID string            `json:"previous_response_id"`
	Store              *bool             `json:"store"`
	Stream             bool              `json:"stream"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Reasoning          *reasoningParam   `json:"reasoning"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	TopLogprobs        *int              `json:"top_logprobs"`
	Include            []string          `json:"include"`
	Metadata           map[string]string `json:"metadata"`
	Text               *textFormat       `json:"text"`
	samplingFields
}

type reasoningParam struct {
	Effort string `json:"effort"`
}

// responsesItem is one input item: a message (with or without "type"),
// a reasoning item, a function call or a function call's output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    string          `json:"output"`
}

// responsesInput is "input": a string (one user message) or a list of items.
type responsesInput []responsesItem

func (in *responsesInput) UnmarshalJSON(b []byte) error {
	switch firstByte(b) {
	case 'n':
		*in = nil
		return nil
	case '"':
		raw := json.RawMessage(append([]byte(nil), b...))
		*in = responsesInput{{Type: "message", Role: "user", Content: raw}}
		return nil
	case '[':
		var items []responsesItem
		if err := json.Unmarshal(b, &items); err != nil {
			return invalidf("input", "input items must be objects: %v", err)
		}
		*in = items
		return nil
	}
	return invalidf("input", "input must be a string or an array of input items")
}

// reasoningPart is a reasoning item's content part.
type reasoningPart struct {
	Text string `json:"text"`
}

// responsesConversation converts input items to chat messages, reading
// attached documents with media. A reasoning item is attached to the
// assistant message after it.
func responsesConversation(items responsesInput, media *requestMedia) ([]ChatMessage, error) {
	var out []ChatMessage
	pendingReasoning := ""
	for i, it := range items {
		switch it.Type {
		case "", "message":
			if !chatRoles[it.Role] || it.Role == "tool" {
				return nil, invalidf("input", "input[%d].role: unknown role %s (want user, assistant, system or developer)", i, quote(it.Role))
			}
			var content textContent
			if len(it.Content) > 0 {
				if err := content.UnmarshalJSON(it.Content); err != nil {
					return nil, err
				}
			}
			text, err := content.read(media, fmt.Sprintf("input[%d].content", i))
			if err != nil {
				return nil, err
			}
			m := ChatMessage{Role: it.Role, Content: text}
			if it.Role == "assistant" {
				m.Reasoning, pendingReasoning = pendingReasoning, ""
			}
			out = append(out, m)
		case "reasoning":
			var parts []reasoningPart
			if len(it.Content) > 0 && json.Unmarshal(it.Content, &parts) != nil {
				return nil, invalidf("input", "input[%d]: reasoning content must be an array of parts", i)
			}
			for _, p := range parts {
				pendingReasoning += p.Text
			}
		case "function_call":
			call, err := json.Marshal(openAIToolCall{ID: it.CallID, Type: "function", Function: openAIFunction{Name: it.Name, Arguments: it.Arguments}})
			if err != nil {
				return nil, invalidf("input", "input[%d]: %v", i, err)
			}
			if n := len(out); n > 0 && out[n-1].Role == "assistant" && out[n-1].Content == "" {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
			} else {
				out = append(out, ChatMessage{Role: "assistant", ToolCalls: [][]byte{call}, Reasoning: pendingReasoning})
				pendingReasoning = ""
			}
		case "function_call_output":
			out = append(out, ChatMessage{Role: "tool", Content: it.Output, ToolCallID: it.CallID})
		default:
			return nil, invalidf("input", "input[%d]: item type %q is not supported", i, it.Type)
		}
	}
	return out, nil
}

// responsesPlan is a validated Responses request, ready for the engine.
type responsesPlan struct {
	gen     *actors.Request
	prompt  prompt
	history []ChatMessage // the conversation without instructions, for the store
	images  []promptImage // the images history's markers stand for
	req     *responsesRequest
	effort  string
	tools   offeredTools
	choice  *toolChoice
	// parseCalls is set when the model was offered tools: its output goes
	// through the tool-call parser.
	parseCalls bool
}

// planResponses validates a Responses request, joins it to the stored
// conversation it continues, and builds the engine request.
func (s *Server) planResponses(r *responsesRequest) (*responsesPlan, error) {
	if err := s.checkModel(r.Model); err != nil {
		return nil, err
	}
	var prev storedResponse
	if r.PreviousResponseID != "" {
		var ok bool
		if prev, ok = s.store.get(r.PreviousResponseID); !ok {
			return nil, &apiError{kind: kindInvalidRequest, param: "previous_response_id", code: "previous_response_not_found",
				message: "previous response with id " + quote(r.PreviousResponseID) + " not found (it may have been evicted)"}
		}
	}
	// the stored history's image markers number its images: new ones follow
	media := s.newRequestMedia(slices.Clip(prev.images))
	msgs, err := responsesConversation(r.Input, media)
	if err != nil {
		return nil, err
	}
	msgs = slices.Concat(prev.history, msgs)
	if len(msgs) == 0 {
		return nil, invalidf("input", "input must not be empty")
	}
	effort := ""
	if r.Reasoning != nil {
		effort = r.Reasoning.Effort
	}
	think, err := parseEffort("reasoning.effort", effort)
	if err != nil {
		return nil, err
	}
	gen, err := (&generationParams{sampling: r.samplingFields, topLogprobs: r.TopLogprobs}).validate()
	if err != nil {
		return nil, err
	}
	tools, err := parseResponsesTools(r.Tools)
	if err != nil {
		return nil, err
	}
	choice, err := responsesToolChoice(r.ToolChoice, tools)
	if err != nil {
		return nil, err
	}
	g, err := r.Text.grammar(s.grammars)
	if err != nil {
		return nil, err
	}
	if err := s.checkToolsAllowed(len(tools.chat), choice); err != nil {
		return nil, err
	}
	toolG, err := forcedToolGrammar(s.grammars, choice, tools.chat)
	if err != nil {
		return nil, err
	}
	if g != nil && toolG != nil {
		return nil, invalidf("tool_choice", "tool_choice %q cannot be combined with text.format", choice.Mode)
	}
	if g != nil || toolG != nil {
		think.enabled = false // the constrained output starts at the first token
	}
	offered := tools.chat
	if choice != nil && choice.Mode == "none" {
		offered = nil // the model is not told about tools it may not call
	}
	rendered := msgs
	if r.Instructions != "" {
		rendered = slices.Concat([]ChatMessage{{Role: "system", Content: r.Instructions}}, msgs)
	}
	p, err := s.renderChat(ChatRenderRequest{Messages: rendered, Tools: rawList(offered), AddGenerationPrompt: true, EnableThinking: think.enabled}, media)
	if err != nil {
		return nil, err
	}
	maxTokens, err := s.maxTokens(len(p.ids), r.MaxOutputTokens, "max_output_tokens")
	if err != nil {
		return nil, err
	}
	gen.Prompt, gen.Images, gen.MaxTokens, gen.ThinkingBudget, gen.Grammar, gen.ToolGrammar = p.ids, p.images, maxTokens, think.budget, g, toolG
	gen.Logprobs = gen.TopLogprobs > 0 || slices.Contains(r.Include, "message.output_text.logprobs")
	gen.ParallelToolCalls = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	return &responsesPlan{prompt: p, history: msgs, images: media.images, req: r, effort: effort, tools: tools, choice: choice, parseCalls: len(offered) > 0,
		gen: gen}, nil
}
