package api

import (
	"fmt"

	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/actors"
)

// chatRequest is a POST /v1/chat/completions body. Fields not listed
// (user, metadata, store, ...) are accepted and ignored.
type chatRequest struct {
	Model               string            `json:"model"`
	Messages            []chatMessageIn   `json:"messages"`
	Stream              bool              `json:"stream"`
	StreamOptions       *streamOptions    `json:"stream_options"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	Stop                stringList        `json:"stop"`
	StopTokenIDs        []int32           `json:"stop_token_ids"`
	IgnoreEOS           bool              `json:"ignore_eos"`
	N                   *int              `json:"n"`
	Logprobs            bool              `json:"logprobs"`
	TopLogprobs         *int              `json:"top_logprobs"`
	ReasoningEffort     string            `json:"reasoning_effort"`
	Tools               []json.RawMessage `json:"tools"`
	ResponseFormat      *responseFormat   `json:"response_format"`
	ToolChoice          *toolChoice       `json:"tool_choice"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	samplingFields
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessageIn is one message of a chat request.
type chatMessageIn struct {
	Role             string            `json:"role"`
	Content          textContent       `json:"content"`
	ReasoningContent string            `json:"reasoning_content"`
	Reasoning        string            `json:"reasoning"` // the name some clients send back
	Name             string            `json:"name"`
	ToolCallID       string            `json:"tool_call_id"`
	ToolCalls        []json.RawMessage `json:"tool_calls"`
}

// chatRoles are the roles a chat message may have.
var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// conversation validates the messages and converts them for the template,
// reading attached documents with media.
func conversation(msgs []chatMessageIn, media *requestMedia) ([]ChatMessage, error) {
	if len(msgs) == 0 {
		return nil, invalidf("messages", "messages must not be empty")
	}
	out := make([]ChatMessage, len(msgs))
	for i, msg := range msgs {
		if !chatRoles[msg.Role] {
			return nil, invalidf("messages", "messages[%d].role: unknown role %s (want system, developer, user, assistant or tool)", i, quote(msg.Role))
		}
		reasoning := msg.ReasoningContent
		if reasoning == "" {
			reasoning = msg.Reasoning
		}
		content, err := msg.Content.read(media, fmt.Sprintf("messages[%d].content", i))
		if err != nil {
			return nil, err
		}
		out[i] = ChatMessage{Role: msg.Role, Content: content, Reasoning: reasoning, Name: msg.Name,
			ToolCallID: msg.ToolCallID, ToolCalls: rawList(msg.ToolCalls)}
	}
	return out, nil
}

func rawList(in []json.RawMessage) [][]byte {
	if len(in) == 0 {
		return nil
	}
	out := make([][]byte, len(in))
	for i, r := range in {
		out[i] = r
	}
	return out
}

// chatPlan is a validated chat request, ready for the engine.
type chatPlan struct {
	gen          *actors.Request
	prompt       prompt
	includeUsage bool
	tools        bool // the request declares tools: parse tool calls out of the answer
}

// planChat validates a chat request, renders and tokenizes its prompt and
// builds the engine request.
func (s *Server) planChat(r *chatRequest) (*chatPlan, error) {
	if err := s.checkModel(r.Model); err != nil {
		return nil, err
	}
	media := s.newRequestMedia(nil)
	msgs, err := conversation(r.Messages, media)
	if err != nil {
		return nil, err
	}
	think, err := parseEffort("reasoning_effort", r.ReasoningEffort)
	if err != nil {
		return nil, err
	}
	gen, err := (&generationParams{sampling: r.samplingFields, n: r.N, topLogprobs: r.TopLogprobs, stop: r.Stop}).validate()
	if err != nil {
		return nil, err
	}
	g, err := r.ResponseFormat.grammar(s.grammars)
	if err != nil {
		return nil, err
	}
	if err := checkChatTools(r.Tools); err != nil {
		return nil, err
	}
	if err := s.checkToolsAllowed(len(r.Tools), r.ToolChoice); err != nil {
		return nil, err
	}
	toolG, err := forcedToolGrammar(s.grammars, r.ToolChoice, r.Tools)
	if err != nil {
		return nil, err
	}
	if g != nil && toolG != nil {
		return nil, invalidf("tool_choice", "tool_choice %q cannot be combined with response_format", r.ToolChoice.Mode)
	}
	if g != nil || toolG != nil {
		think.enabled = false // the constrained output starts at the first token
	}
	tools := r.Tools
	if r.ToolChoice != nil && r.ToolChoice.Mode == "none" {
		tools = nil // the model is not told about tools it may not call
	}
	p, err := s.renderChat(ChatRenderRequest{Messages: msgs, Tools: rawList(tools), AddGenerationPrompt: true, EnableThinking: think.enabled}, media)
	if err != nil {
		return nil, err
	}
	limit, param := r.MaxCompletionTokens, "max_completion_tokens"
	if limit == nil {
		limit, param = r.MaxTokens, "max_tokens"
	}
	maxTokens, err := s.maxTokens(len(p.ids), limit, param)
	if err != nil {
		return nil, err
	}
	gen.Prompt, gen.Images, gen.MaxTokens, gen.StopTokens, gen.IgnoreEOS = p.ids, p.images, maxTokens, r.StopTokenIDs, r.IgnoreEOS
	gen.Logprobs, gen.ThinkingBudget, gen.Grammar, gen.ToolGrammar = r.Logprobs || gen.TopLogprobs > 0, think.budget, g, toolG
	gen.ParallelToolCalls = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	return &chatPlan{prompt: p, includeUsage: r.StreamOptions != nil && r.StreamOptions.IncludeUsage, tools: len(tools) > 0, gen: gen}, nil
}
