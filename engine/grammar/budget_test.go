package grammar

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/splash-inference/splash/engine/grammar/toolcall"
)

// TestShortestFinish walks random documents of every schema case and checks,
// at each position, what budget-aware decoding relies on: each state's
// shortest finish is valid from there and ends the document; following the
// best one byte by byte lowers the length in bytes by one per byte; and the
// first token of its best spelling lowers the distance in tokens by one.
func TestShortestFinish(t *testing.T) {
	q := qwen(t)
	if !q.vocab.everyByte {
		t.Fatal("the Qwen vocabulary should have a token for every byte")
	}
	gen := newGenerator(q)
	cache := NewMaskCache(q.vocab, 512)
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			gr := mustCompile(t, c.schema)
			for seed := uint64(0); seed < 20; seed++ {
				rng := rand.New(rand.NewPCG(seed, 7))
				m := NewMatcher(gr)
				var doc []byte
				for step := 0; step < 400; step++ {
					checkFinish(t, q.vocab, m, doc)
					id := gen.pick(cache.Mask(m), rng)
					if q.vocab.isEOS(id) {
						break
					}
					q.vocab.AcceptToken(m, id)
					doc = append(doc, q.tokens[id]...)
				}
			}
		})
	}
}

func checkFinish(t *testing.T, v *Vocab, m *Matcher, doc []byte) {
	t.Helper()
	w := walker{v: v}
	d := finishLen(m.states)
	for _, s := range m.states {
		spelled, _ := w.spell(s)
		c := m.Clone()
		if !c.Advance(spelled) || !c.CanEnd() {
			t.Fatalf("after %q: the finish %q of a state does not end the document", doc, spelled)
		}
		if len(spelled) != d {
			continue // not the best state
		}
		c = m.Clone()
		for i, b := range spelled {
			c.Accept(b)
			if got := finishLen(c.states); got != d-i-1 {
				t.Fatalf("after %q + %q: finish of %d bytes, want %d", doc, spelled[:i+1], got, d-i-1)
			}
		}
	}
	dist := w.fewestToFinish(m.states)
	if dist == 0 {
		return
	}
	forced := walker{v: v, mask: NewMask(v.Size()), limit: dist - 1}
	forced.addForced(m.states)
	if forced.mask.Count() == 0 {
		t.Fatalf("after %q: no token lowers the distance %d", doc, dist)
	}
	for id := range v.Size() {
		if forced.mask.Allowed(id) {
			c := m.Clone()
			if !v.AcceptToken(c, id) || w.fewestToFinish(c.states) > dist-1 {
				t.Fatalf("after %q: forced token %q leaves distance %d, want <= %d", doc, v.bytes(id), w.fewestToFinish(c.states), dist-1)
			}
		}
	}
}

// rambler picks tokens like a random-weight model at temperature 1 that
// never wants to stop: uniform random logits, EOS and closing bytes
// disfavoured, so outputs run into the budget.
type rambler struct {
	q      *qwenVocab
	logits []float32
	bias   []float32
	noise  []float32 // random values, read at a random offset each step
}

func newRambler(q *qwenVocab) *rambler {
	r := &rambler{q: q, logits: make([]float32, len(q.tokens)), bias: make([]float32, len(q.tokens)), noise: make([]float32, 2*len(q.tokens))}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range r.noise {
		r.noise[i] = rng.Float32() * 4
	}
	for id, tok := range q.tokens {
		if strings.ContainsAny(string(tok), "\"}]") {
			r.bias[id] = -3
		}
	}
	for _, id := range q.eos {
		r.bias[id] = -3
	}
	return r
}

// run generates under hook until EOS or maxTokens tokens, returning the
// document, the tokens taken (EOS included) and whether EOS ended it.
func (r *rambler) run(t testing.TB, hook interface {
	Mask([]float32)
	Accept(int32)
}, rng *rand.Rand, maxTokens int) ([]byte, int, bool) {
	var doc []byte
	for n := 1; n <= maxTokens; n++ {
		noise := r.noise[rng.IntN(len(r.logits)):]
		for i := range r.logits {
			r.logits[i] = noise[i] + r.bias[i]
		}
		hook.Mask(r.logits)
		best := 0
		for i, l := range r.logits {
			if l > r.logits[best] {
				best = i
			}
		}
		if math.IsInf(float64(r.logits[best]), -1) {
			t.Fatalf("every logit masked after %q", doc)
		}
		hook.Accept(int32(best))
		if r.q.vocab.isEOS(best) {
			return doc, n, true
		}
		doc = append(doc, r.q.tokens[best]...)
	}
	return doc, maxTokens, false
}

// TestBudgetEndsDocuments: with a budget, a rambling sampler's output ends
// with EOS within the budget as a document the reference validator accepts,
// for budgets from the schema's minimum up; a budget below the minimum is
// refused up front.
func TestBudgetEndsDocuments(t *testing.T) {
	q := qwen(t)
	r := newRambler(q)
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			gr := mustCompile(t, c.schema)
			ref := newReferenceValidator(t, c.schema)
			least := NewConstraint(q.vocab, gr).distance() + 1
			if err := NewConstraint(q.vocab, gr).Limit(least - 1); err == nil {
				t.Errorf("a budget of %d below the minimum %d was accepted", least-1, least)
			}
			for _, budget := range []int{least, least + 1, least + 4, least + 12, 48} {
				for seed := uint64(0); seed < 8; seed++ {
					con := NewConstraint(q.vocab, gr)
					if err := con.Limit(budget); err != nil {
						if budget < least {
							continue
						}
						t.Fatal(err)
					}
					doc, n, ended := r.run(t, con, rand.New(rand.NewPCG(seed, uint64(budget))), budget)
					if !ended || !con.Valid() || !json.Valid(doc) || !ref.valid(doc) {
						t.Fatalf("budget %d seed %d: %q after %d tokens (EOS %v), which is not a valid document", budget, seed, doc, n, ended)
					}
				}
			}
		})
	}
}

// TestWrappedBudget: forced tool calls (one, or repeated) under budgets from
// the minimum up end with EOS within the budget, every call whole and its
// arguments valid.
func TestWrappedBudget(t *testing.T) {
	q := qwen(t)
	const args = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},
		"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}`
	g := mustCompile(t, `{"type":"object","properties":{"name":{"const":"get_weather"},"arguments":`+args+`},
		"required":["name","arguments"],"additionalProperties":false}`)
	ref := newReferenceValidator(t, args)
	r := newRambler(q)
	for _, repeat := range []bool{false, true} {
		newHook := func() *Wrapped {
			if repeat {
				return NewWrappedRepeat(q.vocab, g, "<tool_call>\n", "\n</tool_call>", "\n")
			}
			return NewWrapped(q.vocab, g, "<tool_call>\n", "\n</tool_call>")
		}
		least := 1
		for newHook().Limit(least) != nil {
			least++
		}
		for _, budget := range []int{least, least + 1, least + 5, 48} {
			for seed := uint64(0); seed < 6; seed++ {
				w := newHook()
				if err := w.Limit(budget); err != nil {
					t.Fatal(err)
				}
				out, n, ended := r.run(t, w, rand.New(rand.NewPCG(seed, 3)), budget)
				calls := toolcall.Parse(string(out))
				if !ended || !w.Valid() || len(calls) == 0 {
					t.Fatalf("repeat %v budget %d seed %d: %q after %d tokens (EOS %v)", repeat, budget, seed, out, n, ended)
				}
				for _, c := range calls {
					if c.Call == nil || c.Call.Name != "get_weather" || !ref.valid([]byte(c.Call.Arguments)) {
						t.Fatalf("repeat %v budget %d seed %d: %q has a bad call %+v", repeat, budget, seed, out, c)
					}
				}
			}
		}
	}
}

// TestCheckDraftKeepsTheBudget: a draft is cut at the first token the
// budgeted mask would refuse, so speculation cannot overrun the budget; the
// constraint does not move.
func TestCheckDraftKeepsTheBudget(t *testing.T) {
	q := qwen(t)
	g := mustCompile(t, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)
	spellTokens := func(s string) []int32 {
		var ids []int32
		for _, id := range greedyTokens(q.vocab, []byte(s)) {
			ids = append(ids, int32(id))
		}
		return ids
	}
	long := append(spellTokens(`{"a":"`+strings.Repeat("lorem ipsum ", 10)+`"}`), int32(q.eos[0]))
	tests := []struct {
		budget int
		want   int
	}{
		{0, len(long)},         // no budget: the whole draft is a valid document
		{len(long), len(long)}, // exactly enough
		{8, -1},                // cut inside the string, where closing it must begin
	}
	for _, tt := range tests {
		c := NewConstraint(q.vocab, g)
		if tt.budget > 0 {
			if err := c.Limit(tt.budget); err != nil {
				t.Fatal(err)
			}
		}
		got := c.CheckDraft(long)
		if tt.want >= 0 && got != tt.want || tt.want < 0 && (got == 0 || got >= tt.budget) {
			t.Errorf("budget %d: %d of %d draft tokens allowed, want %d", tt.budget, got, len(long), tt.want)
		}
		if c.used != 0 || !statesEqual(c.m.states, NewMatcher(g).states) {
			t.Errorf("budget %d: CheckDraft moved the constraint", tt.budget)
		}
	}
}

// TestNumberBounds: generated numbers keep to 15 mantissa digits and a
// two-digit exponent, which every JSON parser reads back exactly.
func TestNumberBounds(t *testing.T) {
	g := mustCompile(t, `{"type":"array","items":{"type":"number"}}`)
	tests := []struct {
		doc  string
		want bool
	}{
		{"[123456789012345]", true}, {"[1234567890123456]", false},
		{"[-1.23456789012345]", true}, {"[1.234567890123456]", false},
		{"[0.00000000000001]", true}, {"[123456789012345.0]", false},
		{"[1e99]", true}, {"[1E-99]", true}, {"[1e100]", false}, {"[1e+099]", false},
	}
	for _, tt := range tests {
		if got := accepts(g, []byte(tt.doc)); got != tt.want {
			t.Errorf("%s accepted = %v, want %v", tt.doc, got, tt.want)
		}
	}
}
