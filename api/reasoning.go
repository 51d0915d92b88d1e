package api

import "strings"

// Thinking budgets per reasoning effort, in tokens. When a budget is spent
// the engine closes the <think> block and the model answers. "none"
// renders the prompt without thinking; no effort at all leaves the
// template's default (thinking on) with no cap.
const (
	budgetMinimal = 256
	budgetLow     = 1024
	budgetMedium  = 4096
	budgetHigh    = 16384
	budgetXHigh   = 32768
)

// reasoning is the resolved reasoning control of a request.
type reasoning struct {
	enabled bool // render the template with thinking
	budget  int  // thinking-token cap; 0 means none
}

// defaultReasoning is what a request that says nothing gets.
var defaultReasoning = reasoning{enabled: true}

// parseEffort resolves an OpenAI reasoning effort (reasoning_effort or the
// Responses reasoning.effort); param names the field for errors.
func parseEffort(param, effort string) (reasoning, error) {
	switch strings.ToLower(effort) {
	case "":
		return defaultReasoning, nil
	case "none":
		return reasoning{}, nil
	case "minimal":
		return reasoning{enabled: true, budget: budgetMinimal}, nil
	case "low":
		return reasoning{enabled: true, budget: budgetLow}, nil
	case "medium":
		return reasoning{enabled: true, budget: budgetMedium}, nil
	case "high":
		return reasoning{enabled: true, budget: budgetHigh}, nil
	case "xhigh":
		return reasoning{enabled: true, budget: budgetXHigh}, nil
	}
	return reasoning{}, invalidf(param, "%s must be one of none, minimal, low, medium, high, xhigh; got %s", param, quote(effort))
}
