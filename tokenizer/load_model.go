package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// loadModel builds the BPE vocabulary and merge tables. Byte-level BPE
// needs the 256 byte symbols; SentencePiece-style BPE needs byte fallback
// (with all 256 "<0xXX>" tokens) or an unk token, so that every character
// encodes.
func (t *Tokenizer) loadModel(tj *tokenizerJSON, byteLevel bool) error {
	m := &tj.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("tokenizer: model type %q is not supported (want BPE)", m.Type)
	case byteLevel && m.ByteFallback:
		return errors.New("tokenizer: BPE byte_fallback with a ByteLevel pre-tokenizer is not supported")
	case m.Dropout != nil && *m.Dropout != 0:
		return errors.New("tokenizer: BPE dropout is not supported")
	case m.ContPrefix != nil && *m.ContPrefix != "", m.EndSuffix != nil && *m.EndSuffix != "":
		return errors.New("tokenizer: BPE continuing_subword_prefix and end_of_word_suffix are not supported")
	}
	t.addedIDs = map[string]int32{}
	vocab, err := parseVocab(m.Vocab)
	if err != nil {
		return err
	}
	pairs, err := parseMerges(m.Merges)
	if err != nil {
		return err
	}
	b := &bpe{vocab: vocab, ignoreMerges: m.IgnoreMerges, merges: make(map[pair]merge, len(pairs)), cache: map[string][]int32{}}
	var joined []byte // reused: the lookup by string(joined) does not allocate
	for rank, p := range pairs {
		a, okA := vocab[p[0]]
		c, okC := vocab[p[1]]
		joined = append(append(joined[:0], p[0]...), p[1]...)
		id, okM := vocab[string(joined)]
		if !okA || !okC || !okM {
			return fmt.Errorf("tokenizer: BPE merge %d (%q, %q) uses symbols outside the vocabulary", rank, p[0], p[1])
		}
		// a pair listed twice keeps its later rank, as in the reference
		b.merges[pair{a, c}] = merge{rank: int32(rank), id: id}
	}
	t.bpe = b
	if byteLevel {
		for c := 0; c < 256; c++ {
			id, ok := vocab[string(t.bl.toRune[c])]
			if !ok {
				return fmt.Errorf("tokenizer: the vocabulary lacks the byte-level symbol for byte %#02x", c)
			}
			t.byteIDs[c] = id
		}
		return nil
	}
	sp := &spModel{byteFallback: m.ByteFallback, fuseUnk: m.FuseUnk, unk: -1}
	if m.UnkToken != nil {
		if id, ok := vocab[*m.UnkToken]; ok {
			sp.unk = id
		}
	}
	if m.ByteFallback {
		for c := 0; c < 256; c++ {
			id, ok := vocab[byteToken(byte(c))]
			if !ok {
				return fmt.Errorf("tokenizer: BPE byte_fallback but the vocabulary lacks %s", byteToken(byte(c)))
			}
			sp.byteIDs[c] = id
		}
	} else if sp.unk < 0 {
		return errors.New("tokenizer: a BPE model without byte_fallback needs an unk_token in its vocabulary")
	}
	t.sp = sp
	return nil
}

// parseVocab reads the model's vocabulary, with scanVocab or, when that
// gives up, encoding/json.
func parseVocab(raw json.RawMessage) (map[string]int32, error) {
	if v, err := scanVocab(raw); err == nil {
		return v, nil
	}
	var v map[string]int32
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("tokenizer: BPE vocab: %w", err)
	}
	return v, nil
}

// parseMerges reads merges written as "a b" strings (older files) or as
// ["a", "b"] pairs, with scanMerges or, when that gives up, encoding/json.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if m, err := scanMerges(raw); err == nil {
		return m, nil
	}
	var asPairs [][2]string
	if err := json.Unmarshal(raw, &asPairs); err == nil {
		return asPairs, nil
	}
	var asStrings []string
	if err := json.Unmarshal(raw, &asStrings); err != nil {
		return nil, fmt.Errorf("tokenizer: BPE merges: %w", err)
	}
	asPairs = make([][2]string, len(asStrings))
	for i, s := range asStrings {
		a, b, ok := strings.Cut(s, " ")
		if !ok {
			return nil, fmt.Errorf("tokenizer: BPE merge %d %q is not two symbols", i, s)
		}
		asPairs[i] = [2]string{a, b}
	}
	return asPairs, nil
}
