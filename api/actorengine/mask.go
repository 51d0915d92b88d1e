package actorengine

import (
	"strings"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/grammar"
	"github.com/splash-inference/splash/tokenizer"
)

// grammarVocab lists every token's bytes for constrained decoding; special
// tokens and ids past the tokenizer are never allowed, EOS only at the end.
func grammarVocab(tok *tokenizer.Tokenizer, modelVocab int, eos []int32) (*grammar.Vocab, error) {
	tokens := make([][]byte, modelVocab)
	for id := range tokens {
		if id < tok.VocabSize() && !tok.IsSpecial(int32(id)) {
			tokens[id] = tok.TokenBytes(int32(id))
		}
	}
	var ends []int
	for _, id := range eos {
		if int(id) < modelVocab {
			ends = append(ends, int(id))
		}
	}
	return grammar.NewVocab(tokens, ends)
}

// request turns choice i of an HTTP request into one sequence's request
// with its mask. A constrained output gets max_tokens as its budget, so that
// it ends as a whole document; a budget smaller than the shortest document
// is an error.
func (a *Engine) request(req *actors.Request, i int) (actors.GenerateRequest, error) {
	gr := req.Sequence(i, a.eos)
	switch {
	case req.Grammar != nil:
		c := grammar.NewConstraint(a.vocab, req.Grammar)
		if err := limit(c, req.MaxTokens); err != nil {
			return gr, err
		}
		gr.Mask = c
	case req.ToolGrammar != nil:
		// the Qwen/Hermes call markup, which http parses back into tool_calls
		var w *grammar.Wrapped
		if req.ParallelToolCalls {
			w = grammar.NewWrappedRepeat(a.vocab, req.ToolGrammar, "<tool_call>\n", "\n</tool_call>", "\n")
		} else {
			w = grammar.NewWrapped(a.vocab, req.ToolGrammar, "<tool_call>\n", "\n</tool_call>")
		}
		if err := limit(w, req.MaxTokens); err != nil {
			return gr, err
		}
		gr.Mask = w
	case req.ThinkingBudget > 0:
		open, ok1 := a.tok.TokenID("<think>")
		end, ok2 := a.tok.TokenID("</think>")
		if ok1 && ok2 {
			gr.Mask = &engine.ThinkBudget{Open: open, Close: end, Budget: req.ThinkingBudget,
				InThink: a.opensThink(req.Prompt, open)}
		}
	}
	return gr, nil
}

// limit gives a constrained output its budget; 0 is no limit.
func limit(c interface{ Limit(int) error }, maxTokens int) error {
	if maxTokens <= 0 {
		return nil
	}
	return c.Limit(maxTokens)
}

// opensThink reports whether the prompt ends inside a reasoning block the
// template opened: open is its last token or is followed only by
// whitespace (Qwen3-Thinking-2507 and DeepSeek-R1 end the prompt with
// "<think>\n"), the rule the HTTP layer splits the output by.
func (a *Engine) opensThink(prompt []int32, open int32) bool {
	for i := len(prompt) - 1; i >= 0; i-- {
		if prompt[i] == open {
			return true
		}
		if strings.TrimRight(a.tok.Decode(prompt[i:i+1], false), " \t\r\n") != "" {
			return false
		}
	}
	return false
}
