package tokenizer

import (
	"sort"
	"strings"
)

// Tokenizer encodes text to token ids and back. It is safe for concurrent
// use.
type Tokenizer struct {
	bl         *byteLevel
	bpe        *bpe
	byteIDs    [256]int32    // id of each byte's byte-level symbol
	added      *addedMatcher // tokens matched on the raw text
	addedNorm  *addedMatcher // tokens matched on normalized text; nil if none
	addedIDs   map[string]int32
	split      splitPattern // byte-level pre-tokenizer
	normalizer normalizer   // nil: none

	// SentencePiece-style BPE (nil for byte-level BPE)
	sp  *spModel
	pre preTokenizer // nil: the whole text is one word
	dec *decoderSpec

	prefix    []int32 // post-processor tokens before the sequence (BOS)
	suffix    []int32 // and after it
	idToToken []string
	isAdded   []bool
	special   []bool
	bos       int32
	hasBOS    bool
	eos       []int32
}

// Encode tokenizes text. parseSpecial makes special tokens written in the
// text (such as "<|im_start|>") encode as themselves, as Hugging Face does
// by default; false treats their text as ordinary characters. Added tokens
// that are not special are always recognised. No BOS is added: see
// AddSpecial.
func (t *Tokenizer) Encode(text string, parseSpecial bool) []int32 {
	return t.encode(text, parseSpecial, nil)
}

// Span is the byte range [Start, End) of a text.
type Span struct{ Start, End int }

// EncodePrompt tokenizes a rendered chat prompt whose content spans (sorted,
// disjoint byte ranges) came from a request rather than the chat template.
// Special and added tokens are parsed only outside them: inside, their text
// is ordinary text and encodes as its bytes' tokens, so a message, tool
// result or document can never close a turn or open one, nor fake a
// <think> block or a <tool_call>. The template's own text parses as Encode
// with parseSpecial does, and a prompt whose content holds no token's text
// encodes to exactly Encode's ids.
func (t *Tokenizer) EncodePrompt(text string, content []Span) []int32 {
	return t.encode(text, true, content)
}

func (t *Tokenizer) encode(text string, parseSpecial bool, content []Span) []int32 {
	var ids []int32
	for _, seg := range t.added.splitOutside(text, parseSpecial, content) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		s := seg.text
		if t.normalizer != nil {
			s = t.normalizer.normalize(s)
		}
		// Tokens matched on normalized text have no byte offsets in the
		// prompt, so a segment holding content matches none of them.
		if t.addedNorm == nil || overlaps(content, seg.start, seg.start+len(seg.text)) {
			ids = t.encodeText(s, seg.start == 0, ids)
			continue
		}
		for _, sub := range t.addedNorm.split(s, parseSpecial) {
			if sub.id >= 0 {
				ids = append(ids, sub.id)
			} else {
				ids = t.encodeText(sub.text, seg.start == 0 && sub.start == 0, ids)
			}
		}
	}
	return ids
}

// overlaps reports whether any of spans (sorted, disjoint) meets
// [start, end).
func overlaps(spans []Span, start, end int) bool {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].End > start })
	return i < len(spans) && spans[i].Start < end
}

// encodeText pre-tokenizes normalized text and BPE-encodes each word.
// atStart reports whether s begins the input.
func (t *Tokenizer) encodeText(s string, atStart bool, ids []int32) []int32 {
	if t.sp == nil {
		t.split.scan(s, func(piece string) {
			ids = t.encodePiece(piece, ids)
		})
		return ids
	}
	if t.pre == nil {
		return t.encodeWord(s, ids)
	}
	for _, w := range t.pre.split(nil, s, atStart) {
		ids = t.encodeWord(w, ids)
	}
	return ids
}

// encodeWord runs SentencePiece-style BPE on one word.
func (t *Tokenizer) encodeWord(w string, dst []int32) []int32 {
	return t.bpe.encode(w, func() []int32 {
		return t.sp.symbols(t.bpe.vocab, w, make([]int32, 0, len(w)))
	}, dst)
}

// encodePiece byte-level maps one pre-token and runs BPE on it.
func (t *Tokenizer) encodePiece(piece string, dst []int32) []int32 {
	var word strings.Builder
	for i := 0; i < len(piece); i++ {
		word.WriteRune(t.bl.toRune[piece[i]])
	}
	return t.bpe.encode(word.String(), func() []int32 {
		initial := make([]int32, len(piece))
		for i := 0; i < len(piece); i++ {
			initial[i] = t.byteIDs[piece[i]]
		}
		return initial
	}, dst)
}

// AddSpecial wraps ids with the post-processor's special tokens (for
// example a BOS), as Hugging Face's add_special_tokens=True does.
func (t *Tokenizer) AddSpecial(ids []int32) []int32 {
	if len(t.prefix) == 0 && len(t.suffix) == 0 {
		return ids
	}
	out := make([]int32, 0, len(t.prefix)+len(ids)+len(t.suffix))
	out = append(out, t.prefix...)
	out = append(out, ids...)
	return append(out, t.suffix...)
}

// VocabSize is one more than the largest token id.
func (t *Tokenizer) VocabSize() int { return len(t.idToToken) }

// TokenID returns the id of a token's text (an added token, or a vocabulary
// entry in its byte-level form).
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	if id, ok := t.addedIDs[s]; ok {
		return id, true
	}
	id, ok := t.bpe.vocab[s]
	return id, ok
}

// Token returns the stored form of a token (byte-level for vocabulary
// entries), or "" for an unknown id.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.idToToken) {
		return ""
	}
	return t.idToToken[id]
}

// IsSpecial reports whether id is a special added token.
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= 0 && int(id) < len(t.special) && t.special[id]
}

// BOS returns the beginning-of-sequence token named in tokenizer_config.json.
func (t *Tokenizer) BOS() (int32, bool) { return t.bos, t.hasBOS }

// EOS returns the tokens that end generation: tokenizer_config.json's
// eos_token and the end-of-turn tokens of known chat formats present in the
// vocabulary.
func (t *Tokenizer) EOS() []int32 {
	out := append([]int32(nil), t.eos...)
	for _, s := range []string{"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<end_of_turn>", "<eos>", "</s>"} {
		if id, ok := t.addedIDs[s]; ok && !contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// AddedTokens returns the texts of the added tokens matched on the raw
// text, special or not, sorted: the control tokens a prompt's template
// text may spell and its content never does (see EncodePrompt).
func (t *Tokenizer) AddedTokens() []string {
	out := make([]string, 0, len(t.added.byContent))
	for s := range t.added.byContent {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
