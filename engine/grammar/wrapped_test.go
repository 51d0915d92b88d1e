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
	logits := make([]float32, len(q.tokens))
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		w := NewWrapped(q.vocab, g, "<tool_call>\n", "\n</tool_call>")
		var out []byte
		for step := 0; ; step++ {
			if step == 300 {
				t.Fatalf("seed %d: no end after 300 tokens: %q", seed, out)
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
				break
			}
			out = append(out, q.tokens[best]...)
		}
		if !bytes.HasPrefix(out, []byte("<tool_call>\n")) || !bytes.HasSuffix(out, []byte("\n</tool_call>")) {
			t.Fatalf("seed %d: %q", seed, out)
		}
		segs := toolcall.Parse(string(out))
		if len(segs) != 1 || segs[0].Call == nil || segs[0].Call.Name != "get_weather" {
			t.Fatalf("seed %d: %q parsed as %+v", seed, out, segs)
		}
	}
}
