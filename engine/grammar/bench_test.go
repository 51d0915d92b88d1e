package grammar

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchSchema and benchDoc are a realistic structured-output request: a
// tool-call-like object with nested objects, arrays, enums and free text.
const benchSchema = `{"type":"object","properties":{
	"name":{"type":"string"},
	"arguments":{"type":"object","properties":{
		"query":{"type":"string"},
		"filters":{"type":"array","items":{"type":"object","properties":{
			"field":{"type":"string","enum":["author","year","venue","topic"]},
			"op":{"type":"string","enum":["eq","lt","gt","contains"]},
			"value":{"anyOf":[{"type":"string"},{"type":"number"}]}},
			"required":["field","op","value"],"additionalProperties":false}},
		"limit":{"type":"integer"},
		"sort":{"type":["string","null"]}},
		"required":["query"],"additionalProperties":false},
	"reason":{"type":"string"}},
	"required":["name","arguments"],"additionalProperties":false}`

const benchDoc = `{"name":"search_papers","arguments":{"query":"speculative decoding for large language models on Apple silicon","filters":[{"field":"year","op":"gt","value":2022},{"field":"topic","op":"contains","value":"inference"},{"field":"venue","op":"eq","value":"NeurIPS"}],"limit":20,"sort":null},"reason":"The user asked for recent work on fast local inference, so I filter by year and topic and cap the results at twenty."}`

// greedyTokens splits doc into vocabulary tokens by longest match: not the
// tokenizer's merges, but token boundaries of the same kind.
func greedyTokens(v *Vocab, doc []byte) []int {
	var ids []int
	for pos := 0; pos < len(doc); {
		node, best, bestLen := int32(0), -1, 0
		for i := pos; i < len(doc); i++ {
			next := int32(-1)
			for _, e := range v.children(node) {
				if e.b == doc[i] {
					next = e.child
					break
				}
			}
			if next < 0 {
				break
			}
			node = next
			if v.own[node] > v.first[node] {
				best, bestLen = int(v.order[v.first[node]]), i+1-pos
			}
		}
		if best < 0 {
			panic("byte not in vocabulary")
		}
		ids = append(ids, best)
		pos += bestLen
	}
	return ids
}

// BenchmarkMaskStep measures the mask computed at each decoding step of a
// schema-constrained generation, replayed from benchDoc. "cold" starts each
// generation with an empty cache (a new schema); "warm" keeps the cache
// across generations (repeated requests with one schema); "uncached" walks
// the trie at every step. Reported: p50 and p99 per step.
func BenchmarkMaskStep(b *testing.B) {
	q := qwen(b)
	ids := greedyTokens(q.vocab, []byte(benchDoc))
	grammars := []struct {
		name string
		g    *Grammar
	}{{"schema", mustCompile(b, benchSchema)}, {"json_object", JSONObject()}}
	for _, gr := range grammars {
		for _, mode := range []string{"cold", "warm", "uncached"} {
			b.Run(gr.name+"/"+mode, func(b *testing.B) { benchReplay(b, q, gr.g, ids, mode) })
		}
	}
}

func benchReplay(b *testing.B, q *qwenVocab, g *Grammar, ids []int, mode string) {
	{
		{
			var steps []time.Duration
			cache := NewMaskCache(q.vocab, 512)
			var buf Mask
			b.ResetTimer()
			for range b.N {
				if mode == "cold" {
					cache = NewMaskCache(q.vocab, 512)
				}
				m := NewMatcher(g)
				for _, id := range ids {
					start := time.Now()
					var mask Mask
					if mode == "uncached" {
						buf = q.vocab.Mask(m, buf)
						mask = buf
					} else {
						mask = cache.Mask(m)
					}
					steps = append(steps, time.Since(start))
					if !mask.Allowed(id) || !q.vocab.AcceptToken(m, id) {
						b.Fatalf("token %q not allowed", q.tokens[id])
					}
				}
			}
			b.StopTimer()
			slices.Sort(steps)
			b.ReportMetric(float64(len(ids)), "tokens/gen")
			b.ReportMetric(float64(steps[len(steps)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(steps[len(steps)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(steps[len(steps)-1].Microseconds()), "max-µs")
		}
	}
}

// BenchmarkNewVocab measures building the Qwen3 trie and string tables, a
// once-per-model cost.
func BenchmarkNewVocab(b *testing.B) {
	q := qwen(b)
	b.ResetTimer()
	for range b.N {
		v, err := NewVocab(q.tokens, q.eos)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(v.first)), "trie-nodes")
	}
}

// timedHook measures the time spent in a hook's Mask.
type timedHook struct {
	hook interface {
		Mask([]float32)
		Accept(int32)
	}
	spent time.Duration
	calls int
}

func (h *timedHook) Mask(logits []float32) {
	start := time.Now()
	h.hook.Mask(logits)
	h.spent += time.Since(start)
	h.calls++
}

func (h *timedHook) Accept(tok int32) { h.hook.Accept(tok) }

// BenchmarkBudgetMask measures the mask of a schema-constrained output
// over the Qwen3 vocabulary with a budget of 48 tokens and without one,
// per token, for a sampler that rambles inside strings (the outputs the
// budget has to end). Each document starts with a fresh constraint, so
// its mask cache starts cold, as a request's does.
func BenchmarkBudgetMask(b *testing.B) {
	q := qwen(b)
	g := mustCompile(b, benchSchema)
	r := newRambler(q)
	for _, budget := range []int{0, 48} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) {
			var spent time.Duration
			calls := 0
			seed := uint64(0)
			for b.Loop() {
				c := NewConstraint(q.vocab, g)
				if budget > 0 {
					if err := c.Limit(budget); err != nil {
						b.Fatal(err)
					}
				}
				h := &timedHook{hook: c}
				r.run(b, h, rand.New(rand.NewPCG(seed, 9)), 48)
				seed++
				spent += h.spent
				calls += h.calls
			}
			b.ReportMetric(float64(spent.Microseconds())/float64(calls), "mask-µs/token")
		})
	}
}
