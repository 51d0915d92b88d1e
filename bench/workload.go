package bench

import (
	"math/rand/v2"
	"sync"
)

// Message is one message of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Turn is one request of a job: the messages it adds to the conversation and
// how many tokens it asks the server for.
type Turn struct {
	Messages  []Message
	MaxTokens int
}

// Job is what one client runs from start to end, in order: a single request,
// or an agent session whose turns each send the whole conversation so far
// (earlier turns, the server's answers to them, and the new messages).
type Job struct {
	Turns []Turn
}

// Workload produces the jobs of a benchmark step.
type Workload interface {
	// Name says which workload this is, for reports ("synthetic", "agent",
	// "file").
	Name() string
	// Source returns a fresh job source for one step. Sources with the same
	// seed produce the same jobs in the same order.
	Source(seed uint64) Source
}

// Source hands out jobs. It is safe for concurrent use.
type Source interface {
	// Next returns the next job, or false when the workload is exhausted.
	Next() (Job, bool)
}

// Synthetic is a workload of independent single-turn requests with a prompt
// of InputLen words (≈ tokens) and MaxTokens drawn from OutputLen.
type Synthetic struct {
	InputLen  Length
	OutputLen Length
	// SharedPrefix is how many leading prompt words every request shares,
	// like the common system prompt of a fleet of agents. 0 for none.
	SharedPrefix int
}

// Name implements Workload.
func (Synthetic) Name() string { return "synthetic" }

// Source implements Workload.
func (w Synthetic) Source(seed uint64) Source {
	return &generator{rng: newRNG(seed), prefix: sharedPrefix(w.SharedPrefix), make: func(rng *rand.Rand, prefix string) Job {
		n := w.InputLen.Sample(rng)
		text := joinWords(prefix, words(rng, n-countWords(prefix)))
		return Job{Turns: []Turn{{
			Messages:  []Message{{Role: "user", Content: text}},
			MaxTokens: w.OutputLen.Sample(rng),
		}}}
	}}
}

// AgentSessions is a workload of multi-turn conversations shaped like a
// coding agent's: a long first context (system prompt of InputLen words,
// beginning with SharedPrefix words common to all sessions), then Turns
// turns, each adding a user message of TurnLen words after the server's
// previous answer. The prompt grows every turn by the answer and the new
// message, which is what prefix caching serves.
type AgentSessions struct {
	InputLen     Length
	OutputLen    Length
	TurnLen      Length
	Turns        Length
	SharedPrefix int
}

// Name implements Workload.
func (AgentSessions) Name() string { return "agent" }

// Source implements Workload.
func (w AgentSessions) Source(seed uint64) Source {
	return &generator{rng: newRNG(seed), prefix: sharedPrefix(w.SharedPrefix), make: func(rng *rand.Rand, prefix string) Job {
		system := joinWords(prefix, words(rng, w.InputLen.Sample(rng)-countWords(prefix)))
		turns := make([]Turn, w.Turns.Sample(rng))
		for i := range turns {
			user := Message{Role: "user", Content: words(rng, w.TurnLen.Sample(rng))}
			turns[i] = Turn{Messages: []Message{user}, MaxTokens: w.OutputLen.Sample(rng)}
		}
		turns[0].Messages = append([]Message{{Role: "system", Content: system}}, turns[0].Messages...)
		return Job{Turns: turns}
	}}
}

// generator is an endless Source that builds each job from a seeded RNG.
type generator struct {
	prefix string
	make   func(rng *rand.Rand, prefix string) Job

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

func (g *generator) Next() (Job, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.make(g.rng, g.prefix), true
}

// sharedPrefixSeed seeds the words every request shares, so the prefix is the
// same in every step and every run (and so against every server).
const sharedPrefixSeed = 0x5eed

func sharedPrefix(n int) string {
	return words(newRNG(sharedPrefixSeed), n)
}

func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func joinWords(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}
