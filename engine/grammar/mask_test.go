package grammar

import (
	"math"
	"testing"
)

// bruteMask is the definition the trie walk must match: try every token.
func bruteMask(q *qwenVocab, m *Matcher) Mask {
	mask := NewMask(len(q.tokens))
	for id, t := range q.tokens {
		if len(t) > 0 && m.Clone().Advance(t) {
			mask.set(int32(id))
		}
	}
	for _, id := range q.eos {
		mask[id>>6] &^= 1 << (id & 63)
		if m.CanEnd() {
			mask.set(int32(id))
		}
	}
	return mask
}

// twoNames keeps two stacks alive through a string: both branches have "name".
const twoNames = `{"anyOf":[
	{"type":"object","properties":{"name":{"type":"string"},"a":{"type":"integer"}},"required":["name","a"]},
	{"type":"object","properties":{"name":{"type":"string"},"b":{"type":"integer"}},"required":["name","b"]}]}`

// bounded has strings whose maxLength is below and above the longest token.
const bounded = `{"type":"object","properties":{"code":{"type":"string","minLength":2,"maxLength":4},
	"long":{"type":"string","minLength":300,"maxLength":1000}}}`

func TestMaskMatchesBruteForce(t *testing.T) {
	q := qwen(t)
	tests := []struct{ schema, prefix string }{
		{schemaCases[0].schema, ``},
		{schemaCases[0].schema, `{`},
		{schemaCases[0].schema, `{"`},
		{schemaCases[0].schema, `{"city":"`},
		{schemaCases[0].schema, `{"city":"Pa`},
		{schemaCases[0].schema, "{\"city\":\"\xe4"},
		{schemaCases[0].schema, `{"city":"a\`},
		{schemaCases[0].schema, `{"city":"a\u0`},
		{schemaCases[0].schema, `{"city":"x","days":1`},
		{schemaCases[0].schema, `{"city":"x","unit":"c`},
		{schemaCases[0].schema, `{"city":"x"}`},
		{schemaCases[1].schema, `{"user":{"name":"a","age":1},"scores":[`},
		{schemaCases[1].schema, `{"user":{"name":"a","age":1},"scores":[1.5`},
		{schemaCases[2].schema, `{"id":`},
		{schemaCases[2].schema, `{"id":"a","shape":{"kind":"`},
		{schemaCases[3].schema, `{"e":`},
		{schemaCases[3].schema, `{"e":1`},
		{`{"type":"number"}`, `12`},
		{`{"type":"object"}`, `{"a":[{"b":"`},
		{`{"type":"object"}`, `{"a":`},
		{`{"type":"object"}`, `{"a":[1,`},
		{twoNames, `{"name":"`},
		{bounded, `{"code":"`},
		{bounded, `{"code":"a`},
		{bounded, `{"code":"abc`},
		{bounded, `{"code":"abcd`},
		{bounded, `{"long":"`},
		{bounded, `{"long":"x`},
		{twoNames, `{"name":"x\`},
		{twoNames, `{"name":"x"`},
	}
	for _, tt := range tests {
		m := NewMatcher(mustCompile(t, tt.schema))
		if !m.Advance([]byte(tt.prefix)) {
			t.Fatalf("prefix %q rejected", tt.prefix)
		}
		got := q.vocab.Mask(m, nil)
		want := bruteMask(q, m)
		if got.Count() == 0 {
			t.Errorf("prefix %q: empty mask", tt.prefix)
		}
		for id := range q.tokens {
			if got.Allowed(id) != want.Allowed(id) {
				t.Errorf("prefix %q: token %d %q allowed=%v, brute force says %v",
					tt.prefix, id, q.tokens[id], got.Allowed(id), want.Allowed(id))
				break
			}
		}
	}
}

func TestApplyMask(t *testing.T) {
	mask := NewMask(130)
	for _, id := range []int32{0, 63, 64, 129} {
		mask.set(id)
	}
	logits := make([]float32, 140) // longer than the mask: padding rows
	for i := range logits {
		logits[i] = float32(i)
	}
	ApplyMask(logits, mask)
	for i, l := range logits {
		allowed := i < 130 && mask.Allowed(i)
		if allowed != !math.IsInf(float64(l), -1) {
			t.Errorf("logit %d = %v, allowed=%v", i, l, allowed)
		}
	}
}
