package grammar

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"sync"
	"testing"
)

// qwenVocabSize is the Qwen3 output layer's row count: the BPE vocabulary,
// the added tokens and unused padding ids.
const qwenVocabSize = 151936

type qwenVocab struct {
	tokens [][]byte
	eos    []int
	vocab  *Vocab
}

// loadQwen builds the Qwen3 vocabulary's token byte strings from the
// vendored tokenizer.json, once per test binary.
var loadQwen = sync.OnceValues(func() (*qwenVocab, error) {
	f, err := os.Open("../../testdata/qwen3-tokenizer/tokenizer.json.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var tj struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.NewDecoder(zr).Decode(&tj); err != nil {
		return nil, err
	}
	decode := byteDecoder()
	q := &qwenVocab{tokens: make([][]byte, qwenVocabSize)}
	for text, id := range tj.Model.Vocab {
		b := make([]byte, 0, len(text))
		for _, r := range text {
			b = append(b, decode[r])
		}
		q.tokens[id] = b
	}
	for _, a := range tj.AddedTokens {
		switch {
		case a.Content == "<|im_end|>" || a.Content == "<|endoftext|>":
			q.eos = append(q.eos, a.ID)
			q.tokens[a.ID] = []byte(a.Content)
		case a.Special:
			q.tokens[a.ID] = nil // never inside constrained output
		default:
			q.tokens[a.ID] = []byte(a.Content) // added tokens are literal text
		}
	}
	q.vocab, err = NewVocab(q.tokens, q.eos)
	return q, err
})

// byteDecoder inverts GPT-2's bytes_to_unicode: printable bytes map to
// themselves, the others to runes from U+0100 upwards in byte order.
func byteDecoder() map[rune]byte {
	m := make(map[rune]byte, 256)
	next := rune(256)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae && b <= 0xff {
			m[rune(b)] = byte(b)
		} else {
			m[next] = byte(b)
			next++
		}
	}
	return m
}

func qwen(t testing.TB) *qwenVocab {
	t.Helper()
	q, err := loadQwen()
	if err != nil {
		t.Fatalf("loading the Qwen3 vocabulary: %v", err)
	}
	return q
}
