package grammar

import (
	"bytes"
	"encoding/json"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// generator samples constrained documents the way a decoder would: at each
// step it takes the mask and picks an allowed token. Picking uniformly
// among allowed tokens is the argmax of i.i.d. random logits after
// ApplyMask; with probability closeBias it picks among tokens holding a
// closing byte instead, so that documents end in a reasonable number of steps.
type generator struct {
	q       *qwenVocab
	closers []int // tokens holding ", }, ] or , and the EOS ids
}

const closeBias = 0.3

func newGenerator(q *qwenVocab) *generator {
	g := &generator{q: q, closers: append([]int(nil), q.eos...)}
	for id, t := range q.tokens {
		if len(t) > 0 && bytes.ContainsAny(t, "\"}],") {
			g.closers = append(g.closers, id)
		}
	}
	return g
}

// run generates one document, failing the test on any inconsistency
// between the mask and the matcher.
func (g *generator) run(t *testing.T, gr *Grammar, cache *MaskCache, rng *rand.Rand, maxSteps int) ([]byte, bool) {
	m := NewMatcher(gr)
	var doc []byte
	for step := 0; step < maxSteps; step++ {
		mask := cache.Mask(m)
		id := g.pick(mask, rng)
		if id < 0 {
			t.Fatalf("empty mask after %q", doc)
		}
		if g.q.vocab.isEOS(id) {
			if !m.CanEnd() {
				t.Fatalf("EOS allowed after %q, which cannot end", doc)
			}
			return doc, true
		}
		if !g.q.vocab.AcceptToken(m, id) {
			t.Fatalf("mask allowed token %d %q after %q, matcher rejects it", id, g.q.tokens[id], doc)
		}
		doc = append(doc, g.q.tokens[id]...)
	}
	return doc, false
}

func (g *generator) pick(mask Mask, rng *rand.Rand) int {
	if rng.Float64() < closeBias {
		var allowed []int
		for _, id := range g.closers {
			if mask.Allowed(id) {
				allowed = append(allowed, id)
			}
		}
		if len(allowed) > 0 {
			return allowed[rng.IntN(len(allowed))]
		}
	}
	n := mask.Count()
	if n == 0 {
		return -1
	}
	r := rng.IntN(n)
	for w, word := range mask {
		c := bits.OnesCount64(word)
		if r >= c {
			r -= c
			continue
		}
		for ; r > 0; r-- {
			word &= word - 1
		}
		return w*64 + bits.TrailingZeros64(word)
	}
	return -1
}

func TestRandomGenerationValidates(t *testing.T) {
	q := qwen(t)
	gen := newGenerator(q)
	cache := NewMaskCache(q.vocab, 512)
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			gr := mustCompile(t, c.schema)
			ref := newReferenceValidator(t, c.schema)
			for seed := uint64(0); seed < 100; seed++ {
				rng := rand.New(rand.NewPCG(seed, 0x5eed))
				doc, ended := gen.run(t, gr, cache, rng, 2000)
				if !ended {
					t.Fatalf("seed %d: no end after 2000 tokens: %q", seed, doc)
				}
				if !json.Valid(doc) || !ref.valid(doc) {
					t.Errorf("seed %d: generated %q, which the validator rejects", seed, doc)
				}
			}
		})
	}
	t.Logf("mask cache: %d hits, %d misses", cache.Hits, cache.Misses)
}

// TestGenerationWithLogits runs the full sampler hook path: random logits,
// ApplyMask, argmax, on a few seeds.
func TestGenerationWithLogits(t *testing.T) {
	q := qwen(t)
	gr := mustCompile(t, schemaCases[0].schema)
	ref := newReferenceValidator(t, schemaCases[0].schema)
	cache := NewMaskCache(q.vocab, 64)
	logits := make([]float32, len(q.tokens))
	// Favour the EOS and closing tokens a little so the document ends.
	bias := make([]float32, len(q.tokens))
	for _, id := range q.eos {
		bias[id] = 2
	}
	for id, tok := range q.tokens {
		if bytes.ContainsAny(tok, "\"}") {
			bias[id] = 0.5
		}
	}
	for seed := uint64(0); seed < 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		m := NewMatcher(gr)
		var doc []byte
		for step := 0; ; step++ {
			if step == 200 {
				t.Fatalf("seed %d: no end after 200 tokens: %q", seed, doc)
			}
			for i := range logits {
				logits[i] = rng.Float32() + bias[i]
			}
			ApplyMask(logits, cache.Mask(m))
			best := 0
			for i, l := range logits {
				if l > logits[best] {
					best = i
				}
			}
			if math.IsInf(float64(logits[best]), -1) {
				t.Fatalf("every logit masked after %q", doc)
			}
			if q.vocab.isEOS(best) {
				break
			}
			if !q.vocab.AcceptToken(m, best) {
				t.Fatalf("argmax token %q rejected after %q", q.tokens[best], doc)
			}
			doc = append(doc, q.tokens[best]...)
		}
		if !ref.valid(doc) {
			t.Errorf("seed %d: generated %q, which the validator rejects", seed, doc)
		}
	}
}
