package fake

import (
	"github.com/splash-inference/splash/actors"

	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/splash-inference/splash/api"
)

// Default scripts of a new Engine.
var (
	DefaultWords    = []string{"Hello", " there", ",", " this", " is", " a", " fake", " model", " talking", "."}
	DefaultThoughts = []string{"Let", " me", " think", " about", " it", "."}
)

// wordID is the token id of script position i (outside the byte range).
const wordID = 1000

// VocabSize bounds the token ids the fake engine accepts in a request.
const VocabSize = 2000

// Engine replays a script. Set fields before the first Generate.
type Engine struct {
	Words    []string      // the answer, one token per word
	Thoughts []string      // the reasoning, emitted when the prompt ends inside <think>
	Delay    time.Duration // pause before each token
	Cached   int           // prompt tokens reported as served from the prefix cache
	Busy     bool          // Generate fails with api.ErrBusy
	// Hold, when non-nil, blocks every generation before its first token
	// until it is closed (or the request is cancelled).
	Hold chan struct{}
	// FailAfter > 0 ends the stream with an error after that many tokens.
	FailAfter int

	mu        sync.Mutex // guards the fields below
	last      *actors.Request
	running   int
	cancelled int
}

var _ api.Engine = (*Engine)(nil)

// New returns an Engine with the default scripts.
func New() *Engine {
	return &Engine{Words: DefaultWords, Thoughts: DefaultThoughts}
}

// Last returns the most recent request.
func (e *Engine) Last() *actors.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last
}

// LastText is the most recent request's prompt as text.
func (e *Engine) LastText() string {
	return Tokenizer{}.Decode(e.Last().Prompt, false)
}

// Running is the number of generations in progress.
func (e *Engine) Running() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running
}

// Cancelled is the number of generations stopped by their context.
func (e *Engine) Cancelled() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cancelled
}

// WriteMetrics implements api.Engine.
func (e *Engine) WriteMetrics(w io.Writer) error {
	_, err := fmt.Fprintf(w, "# TYPE splash_fake_running gauge\nsplash_fake_running %d\n", e.Running())
	return err
}

// Generate implements api.Engine.
func (e *Engine) Generate(ctx context.Context, req *actors.Request) (<-chan api.Event, error) {
	if e.Busy {
		return nil, fmt.Errorf("fake: queue full: %w", api.ErrBusy)
	}
	for id := range req.Sampling.LogitBias {
		if id >= VocabSize {
			return nil, fmt.Errorf("fake: logit_bias token %d is outside the vocabulary of %d: %w", id, VocabSize, api.ErrInvalidRequest)
		}
	}
	e.mu.Lock()
	e.last, e.running = req, e.running+1
	e.mu.Unlock()
	out := make(chan api.Event)
	go func() {
		defer close(out)
		err := e.run(ctx, req, out)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.running--
		if err != nil && ctx.Err() != nil {
			e.cancelled++
		}
	}()
	return out, nil
}

// token is one scripted token.
type token struct {
	text     string
	thinking bool
}

// script is the token sequence of choice i.
func (e *Engine) script(req *actors.Request, choice int) []token {
	var toks []token
	if strings.HasSuffix(Tokenizer{}.Decode(req.Prompt, true), "<think>\n") {
		thoughts := e.Thoughts
		if req.ThinkingBudget > 0 && len(thoughts) > req.ThinkingBudget {
			thoughts = thoughts[:req.ThinkingBudget] // the engine closes the block itself
		}
		for _, w := range thoughts {
			toks = append(toks, token{w, true})
		}
		toks = append(toks, token{"</think>", true}, token{"\n\n", false})
	}
	words := slices.Concat(e.Words[choice%len(e.Words):], e.Words[:choice%len(e.Words)])
	for _, w := range words {
		toks = append(toks, token{w, false})
	}
	return toks
}

// choiceState tracks one choice while it runs.
type choiceState struct {
	script  []token
	pos     int    // next script position
	emitted int    // tokens generated
	text    string // all text so far, stop strings not yet removed
	sent    int    // bytes of text already sent
	done    bool
}

func (e *Engine) run(ctx context.Context, req *actors.Request, out chan<- api.Event) error {
	send := func(ev api.Event) error {
		select {
		case out <- ev:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if e.Hold != nil {
		select {
		case <-e.Hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	n := max(req.N, 1)
	choices := make([]*choiceState, n)
	for i := range choices {
		choices[i] = &choiceState{script: e.script(req, i)}
	}
	usage := api.Usage{PromptTokens: len(req.Prompt), CachedPromptTokens: min(e.Cached, len(req.Prompt))}
	first := true
	total := 0
	for remaining := n; remaining > 0; {
		for i, c := range choices {
			if c.done {
				continue
			}
			if e.Delay > 0 {
				select {
				case <-time.After(e.Delay):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if e.FailAfter > 0 && total >= e.FailAfter {
				return send(api.Event{Err: fmt.Errorf("fake: failing after %d tokens as configured", total)})
			}
			ev := e.step(req, i, c, &usage)
			if first && req.PromptLogprobs {
				ev.PromptLogprobs = promptLogprobs(req.Prompt)
			}
			first = false
			total++
			if c.done {
				remaining--
			}
			if remaining == 0 {
				ev.Done, ev.Usage = true, &usage
			}
			if err := send(ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// step generates the next token of choice i.
func (e *Engine) step(req *actors.Request, i int, c *choiceState, usage *api.Usage) api.Event {
	ev := api.Event{Choice: i}
	if c.pos >= len(c.script) && !req.IgnoreEOS {
		c.done, ev.FinishReason = true, api.FinishStop // end of sequence
		ev.Text = c.text[c.sent:]
		return ev
	}
	tok := c.script[c.pos%len(c.script)]
	id := int32(wordID + c.pos%len(c.script))
	c.pos++
	c.emitted++
	usage.CompletionTokens++
	if tok.thinking {
		usage.ReasoningTokens++
	}
	ev.Tokens = []int32{id}
	if c.emitted == 1 {
		ev.CachedPromptTokens = usage.CachedPromptTokens
	}
	if req.Logprobs {
		ev.Logprobs = []api.TokenLogprob{logprob(id, tok.text, c.emitted, req.TopLogprobs)}
	}
	if slices.Contains(req.StopTokens, id) {
		c.done, ev.FinishReason = true, api.FinishStop
		ev.Text = c.text[c.sent:]
		return ev
	}
	c.text += tok.text
	if idx, stop := firstStop(c.text, req.Stop); idx >= 0 {
		c.done, ev.FinishReason, ev.StopSequence = true, api.FinishStop, stop
		ev.Text = c.text[c.sent:idx]
		c.sent = idx
		return ev
	}
	hold := heldBack(c.text, req.Stop)
	if c.emitted >= req.MaxTokens {
		c.done, ev.FinishReason, hold = true, api.FinishLength, 0
	}
	ev.Text = c.text[c.sent : len(c.text)-hold]
	c.sent = len(c.text) - hold
	return ev
}

// firstStop finds the earliest stop string in text.
func firstStop(text string, stops []string) (int, string) {
	best, which := -1, ""
	for _, s := range stops {
		if i := strings.Index(text, s); i >= 0 && (best < 0 || i < best) {
			best, which = i, s
		}
	}
	return best, which
}

// heldBack is the length of the longest tail of text that could begin a
// stop string; it is not sent until the next token decides.
func heldBack(text string, stops []string) int {
	hold := 0
	for _, s := range stops {
		for n := min(len(s)-1, len(text)); n > hold; n-- {
			if strings.HasSuffix(text, s[:n]) {
				hold = n
				break
			}
		}
	}
	return hold
}

// logprob is the scripted log-probability of the k-th generated token.
func logprob(id int32, text string, k, top int) api.TokenLogprob {
	lp := api.TokenLogprob{ID: id, Token: text, Logprob: -0.125 * float64(k%4+1)}
	for j := range top {
		if j == 0 {
			lp.Top = append(lp.Top, api.TopLogprob{ID: id, Token: text, Logprob: lp.Logprob})
			continue
		}
		lp.Top = append(lp.Top, api.TopLogprob{ID: int32(j), Token: fmt.Sprintf("alt%d", j), Logprob: lp.Logprob - float64(j)})
	}
	return lp
}

// promptLogprobs scores every prompt token after the first.
func promptLogprobs(prompt []int32) []api.TokenLogprob {
	if len(prompt) < 2 {
		return nil
	}
	out := make([]api.TokenLogprob, len(prompt)-1)
	for i, id := range prompt[1:] {
		out[i] = api.TokenLogprob{ID: id, Token: Tokenizer{}.Decode([]int32{id}, false), Logprob: -1}
	}
	return out
}
