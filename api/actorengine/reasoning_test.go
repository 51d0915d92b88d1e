package actorengine

import (
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
	"github.com/splash-inference/splash/tokenizer"
)

func TestReasoningCounter(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := &Engine{tok: tok}
	enc := func(s string) []int32 { return tok.Encode(s, true) }
	for _, tt := range []struct {
		name, prompt string
		chunks       []string // the output, as the engine's events bring it
		want         int
	}{
		{"no reasoning", "<|im_start|>assistant\n", []string{"Hello", " world"}, 0},
		{"the model opens the block", "<|im_start|>assistant\n", []string{"\n<think>", "a b", "</think>", "answer"}, 1 + len(enc("a b")) + 1},
		{"the prompt opened it", "<|im_start|>assistant\n<think>", []string{"a b c", "</think>\n\nanswer"}, len(enc("a b c")) + 1},
		{"the prompt opened it, then a newline", "<|im_start|>assistant\n<think>\n", []string{"a", "</think>", "a b"}, len(enc("a")) + 1},
		{"an answer, then a tag", "<|im_start|>assistant\n", []string{"answer", "<think>x</think>"}, 0},
		{"never closed", "<think>", []string{"a b c d"}, len(enc("a b c d"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := a.newReasoningCounter(enc(tt.prompt))
			got := 0
			for _, chunk := range tt.chunks {
				got += c.count(enc(chunk))
			}
			if got != tt.want {
				t.Errorf("%d reasoning tokens, want %d", got, tt.want)
			}
		})
	}
}
