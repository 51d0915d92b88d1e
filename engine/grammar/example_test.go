package grammar_test

import (
	"fmt"

	"github.com/splash-inference/splash/engine/grammar"
)

// A decoding loop: compute the mask, let the sampler pick among allowed
// tokens, advance the matcher, stop on EOS.
func Example() {
	g, err := grammar.Compile([]byte(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`))
	if err != nil {
		panic(err)
	}
	// A real byte-level vocabulary holds every single byte, so every valid
	// prefix can be completed; this toy one holds what the example needs.
	tokens := [][]byte{[]byte(`{"`), []byte(`ok`), []byte(`":`), []byte(`true`), []byte(`}`), []byte(`"`), []byte(`:`), nil}
	const eos = 7 // a special token: nil bytes, allowed only at the end
	vocab, err := grammar.NewVocab(tokens, []int{eos})
	if err != nil {
		panic(err)
	}
	m := grammar.NewMatcher(g)
	cache := grammar.NewMaskCache(vocab, 16)
	for {
		mask := cache.Mask(m)
		logits := []float32{1, 1, 1, 1, 1, 5, 1, 9} // the model prefers `"` and EOS
		grammar.ApplyMask(logits, mask)
		best := 0
		for id, l := range logits {
			if l > logits[best] {
				best = id
			}
		}
		if best == eos {
			break
		}
		if !vocab.AcceptToken(m, best) {
			panic("the mask allowed a token the matcher rejects")
		}
		fmt.Printf("%s", tokens[best])
	}
	fmt.Println()
	fmt.Println(vocab.CheckDraft(grammar.NewMatcher(g), []int{0, 1, 2, 5}))
	// Output:
	// {"ok":true}
	// 3
}
