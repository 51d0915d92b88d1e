package grammar

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/engine/grammar/toolcall"
)

// TestWrappedToolCall samples forced tool calls from random logits over the
// Qwen3 vocabulary: every output is <tool_call>\n + a valid call + \n</tool_call>
// followed by EOS, and the tool-call parser reads it back.
func TestWrappedToolCall(t *testing.T) {
	q := qwen(t)
	g := mustCompile(t, `{"type":"object","properties":{"name":{"const":"get_weather"},
		"arguments":{"type":"object","properties":{"unit":{"enum":["c","f"]},"days":{"type":"integer"}},"required":["unit"],"additionalProperties":false}},
		"required":["name","arguments"],"additionalProperties":false}`)
	for seed := uint64(0); seed < 20; seed++ {
		out := sampleConstrained(t, q, NewWrapped(q.vocab, g, "<tool_call>\n", "\n</tool_call>"), seed, 300)
		if !bytes.HasPrefix(out, []byte("<tool_call>\n")) || !bytes.HasSuffix(out, []byte("\n</tool_call>")) {
			t.Fatalf("seed %d: %q", seed, out)
		}
		segs := toolcall.Parse(string(out))
		if len(segs) != 1 || segs[0].Call == nil || segs[0].Call.Name != "get_weather" {
			t.Fatalf("seed %d: %q parsed as %+v", seed, out, segs)
		}
	}
}

// sampleConstrained picks the best of random logits under the mask until
// EOS, failing the test if the constraint ever rejects the pick or masks
// everything, and returns the output without the EOS.
func sampleConstrained(t *testing.T, q *qwenVocab, w *Wrapped, seed uint64, limit int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	logits := make([]float32, len(q.tokens))
	var out []byte
	for step := 0; ; step++ {
		if step == limit {
			t.Fatalf("seed %d: no end after %d tokens: %q", seed, limit, out)
		}
		for i := range logits {
			logits[i] = rng.Float32() * 4
		}
		w.Mask(logits)
		best := 0
		for i, l := range logits {
			if l > logits[best] {
				best = i
			}
		}
		if math.IsInf(float64(logits[best]), -1) {
			t.Fatalf("seed %d: every logit masked after %q", seed, out)
		}
		w.Accept(int32(best))
		if !w.Valid() {
			t.Fatalf("seed %d: token %q broke the constraint after %q", seed, q.tokens[best], out)
		}
		if q.vocab.isEOS(best) {
			return out
		}
		out = append(out, q.tokens[best]...)
	}
}

// TestWrappedRepeatParallelCalls: with a repeat, the output is one or more
// complete calls separated by a newline, each parsed back; over the seeds
// both a single call and several calls occur.
func TestWrappedRepeatParallelCalls(t *testing.T) {
	q := qwen(t)
	g := mustCompile(t, `{"anyOf":[
		{"type":"object","properties":{"name":{"const":"get_weather"},"arguments":{"type":"object","properties":{"city":{"enum":["Paris","Rome"]}},"required":["city"],"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false},
		{"type":"object","properties":{"name":{"const":"get_time"},"arguments":{"type":"object","properties":{},"additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false}]}`)
	counts := map[int]int{}
	for seed := uint64(0); seed < 30; seed++ {
		out := sampleConstrained(t, q, NewWrappedRepeat(q.vocab, g, "<tool_call>\n", "\n</tool_call>", "\n"), seed, 5000)
		segs := toolcall.Parse(string(out))
		calls := 0
		for _, s := range segs {
			switch {
			case s.Call != nil:
				calls++
			case s.Text != "\n":
				t.Fatalf("seed %d: text %q between calls in %q", seed, s.Text, out)
			}
		}
		if calls == 0 || calls != bytes.Count(out, []byte("<tool_call>")) {
			t.Fatalf("seed %d: %d calls parsed from %q", seed, calls, out)
		}
		counts[min(calls, 2)]++
	}
	if counts[1] == 0 || counts[2] == 0 {
		t.Fatalf("calls per output over the seeds: %v; want both one and several", counts)
	}
}
