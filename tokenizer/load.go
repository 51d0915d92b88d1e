package tokenizer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tokenizerJSON is the part of tokenizer.json that Splash reads.
type tokenizerJSON struct {
	AddedTokens   []addedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type         string           `json:"type"`
		Vocab        map[string]int32 `json:"vocab"`
		Merges       json.RawMessage  `json:"merges"`
		IgnoreMerges bool             `json:"ignore_merges"`
		ByteFallback bool             `json:"byte_fallback"`
		Dropout      *float64         `json:"dropout"`
		ContPrefix   *string          `json:"continuing_subword_prefix"`
		EndSuffix    *string          `json:"end_of_word_suffix"`
	} `json:"model"`
}

type component struct {
	Type          string          `json:"type"`
	Pattern       json.RawMessage `json:"pattern"`
	Behavior      string          `json:"behavior"`
	Invert        bool            `json:"invert"`
	AddPrefix     bool            `json:"add_prefix_space"`
	UseRegex      bool            `json:"use_regex"`
	Pretokenizers []component     `json:"pretokenizers"`
	Normalizers   []component     `json:"normalizers"`
	Single        []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
	Processors []component `json:"processors"`
}

// tokenizerConfig is the part of tokenizer_config.json Splash reads.
type tokenizerConfig struct {
	BOSToken any `json:"bos_token"`
	EOSToken any `json:"eos_token"`
}

// Load reads tokenizer.json and, when present, tokenizer_config.json from
// dir (either may be gzip-compressed with a .gz suffix).
func Load(dir string) (*Tokenizer, error) {
	tj, err := readMaybeGz(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	cfg, err := readMaybeGz(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return FromJSON(tj, cfg)
}

func readMaybeGz(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	f, gzErr := os.Open(path + ".gz")
	if gzErr != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s.gz: %w", path, err)
	}
	return io.ReadAll(zr)
}

// FromJSON builds a Tokenizer from the contents of tokenizer.json and
// tokenizer_config.json (which may be nil).
func FromJSON(tokenizerJSONData, configJSON []byte) (*Tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(tokenizerJSONData, &tj); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %w", err)
	}
	t := &Tokenizer{bl: newByteLevel(), added: newAddedMatcher(tj.AddedTokens)}
	if err := t.loadModel(&tj); err != nil {
		return nil, err
	}
	t.idToToken = make([]string, 0, len(tj.Model.Vocab)+len(tj.AddedTokens))
	for s, id := range tj.Model.Vocab {
		t.setToken(id, s, false)
	}
	for _, a := range tj.AddedTokens {
		t.setToken(a.ID, a.Content, true)
		t.isAdded[a.ID] = true
		t.special[a.ID] = a.Special
	}
	if err := t.loadNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if err := t.loadPreTokenizer(tj.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.loadPostProcessor(tj.PostProcessor); err != nil {
		return nil, err
	}
	if err := checkDecoder(tj.Decoder); err != nil {
		return nil, err
	}
	if configJSON != nil {
		if err := t.loadConfig(configJSON); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Tokenizer) setToken(id int32, s string, added bool) {
	for int(id) >= len(t.idToToken) {
		t.idToToken = append(t.idToToken, "")
		t.isAdded = append(t.isAdded, false)
		t.special = append(t.special, false)
	}
	t.idToToken[id] = s
	if added {
		t.addedIDs[s] = id
	}
}

func (t *Tokenizer) loadModel(tj *tokenizerJSON) error {
	m := &tj.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("tokenizer: model type %q is not supported (want BPE)", m.Type)
	case m.ByteFallback:
		return errors.New("tokenizer: BPE byte_fallback (SentencePiece-style) is not supported yet")
	case m.Dropout != nil && *m.Dropout != 0:
		return errors.New("tokenizer: BPE dropout is not supported")
	case m.ContPrefix != nil && *m.ContPrefix != "", m.EndSuffix != nil && *m.EndSuffix != "":
		return errors.New("tokenizer: BPE continuing_subword_prefix and end_of_word_suffix are not supported")
	}
	t.addedIDs = map[string]int32{}
	b := &bpe{vocab: m.Vocab, ignoreMerges: m.IgnoreMerges, merges: map[pair]merge{}, cache: map[string][]int32{}}
	// merges are "a b" strings (older files) or ["a", "b"] pairs
	var asStrings []string
	var asPairs [][2]string
	if err := json.Unmarshal(m.Merges, &asStrings); err != nil {
		if err := json.Unmarshal(m.Merges, &asPairs); err != nil {
			return fmt.Errorf("tokenizer: BPE merges: %w", err)
		}
	} else {
		asPairs = make([][2]string, len(asStrings))
		for i, s := range asStrings {
			a, bb, ok := strings.Cut(s, " ")
			if !ok {
				return fmt.Errorf("tokenizer: BPE merge %d %q is not two symbols", i, s)
			}
			asPairs[i] = [2]string{a, bb}
		}
	}
	for rank, p := range asPairs {
		a, okA := m.Vocab[p[0]]
		c, okC := m.Vocab[p[1]]
		id, okM := m.Vocab[p[0]+p[1]]
		if !okA || !okC || !okM {
			return fmt.Errorf("tokenizer: BPE merge %d (%q, %q) uses symbols outside the vocabulary", rank, p[0], p[1])
		}
		if _, dup := b.merges[pair{a, c}]; !dup {
			b.merges[pair{a, c}] = merge{rank: int32(rank), id: id}
		}
	}
	for c := 0; c < 256; c++ {
		id, ok := m.Vocab[string(t.bl.toRune[c])]
		if !ok {
			return fmt.Errorf("tokenizer: the vocabulary lacks the byte-level symbol for byte %#02x", c)
		}
		t.byteIDs[c] = id
	}
	t.bpe = b
	return nil
}

func (t *Tokenizer) loadNormalizer(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("tokenizer: normalizer: %w", err)
	}
	list := []component{c}
	if c.Type == "Sequence" {
		list = c.Normalizers
	}
	for _, n := range list {
		switch n.Type {
		case "NFC":
			t.nfc = true
		default:
			return fmt.Errorf("tokenizer: normalizer %q is not supported", n.Type)
		}
	}
	return nil
}

func (t *Tokenizer) loadPreTokenizer(raw json.RawMessage) error {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil || isNull(raw) {
		return fmt.Errorf("tokenizer: pre_tokenizer missing or malformed")
	}
	list := []component{c}
	if c.Type == "Sequence" {
		list = c.Pretokenizers
	}
	var haveSplit, haveByteLevel bool
	for _, p := range list {
		switch p.Type {
		case "Split":
			var pat struct{ Regex string }
			if err := json.Unmarshal(p.Pattern, &pat); err != nil || pat.Regex == "" {
				return fmt.Errorf("tokenizer: Split pre-tokenizer without a Regex pattern is not supported")
			}
			if p.Behavior != "Isolated" || p.Invert {
				return fmt.Errorf("tokenizer: Split behavior %q (invert %v) is not supported", p.Behavior, p.Invert)
			}
			sp, err := parsePattern(pat.Regex)
			if err != nil {
				return err
			}
			t.split, haveSplit = sp, true
		case "ByteLevel":
			if p.AddPrefix {
				return errors.New("tokenizer: ByteLevel add_prefix_space is not supported")
			}
			if p.UseRegex {
				t.split, haveSplit = splitPattern{gpt2: true}, true
			}
			haveByteLevel = true
		default:
			return fmt.Errorf("tokenizer: pre-tokenizer %q is not supported", p.Type)
		}
	}
	if !haveSplit || !haveByteLevel {
		return errors.New("tokenizer: only byte-level BPE (a Split or regex ByteLevel pre-tokenizer) is supported")
	}
	return nil
}

func (t *Tokenizer) loadPostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("tokenizer: post_processor: %w", err)
	}
	list := []component{c}
	if c.Type == "Sequence" {
		list = c.Processors
	}
	for _, p := range list {
		switch p.Type {
		case "ByteLevel":
		case "TemplateProcessing":
			// Only "$A" optionally preceded and followed by special tokens.
			seenSeq := false
			for _, item := range p.Single {
				switch {
				case item.Sequence != nil:
					seenSeq = true
				case item.SpecialToken != nil:
					id, ok := t.TokenID(item.SpecialToken.ID)
					if !ok {
						return fmt.Errorf("tokenizer: post-processor token %q is not in the vocabulary", item.SpecialToken.ID)
					}
					if seenSeq {
						t.suffix = append(t.suffix, id)
					} else {
						t.prefix = append(t.prefix, id)
					}
				}
			}
		default:
			return fmt.Errorf("tokenizer: post-processor %q is not supported", p.Type)
		}
	}
	return nil
}

func checkDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("tokenizer: decoder: %w", err)
	}
	if c.Type != "ByteLevel" {
		return fmt.Errorf("tokenizer: decoder %q is not supported (want ByteLevel)", c.Type)
	}
	return nil
}

func (t *Tokenizer) loadConfig(raw []byte) error {
	var c tokenizerConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("tokenizer: tokenizer_config.json: %w", err)
	}
	name := func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case map[string]any: // {"content": "<s>", ...}
			s, _ := x["content"].(string)
			return s
		}
		return ""
	}
	if id, ok := t.TokenID(name(c.BOSToken)); ok {
		t.bos, t.hasBOS = id, true
	}
	if id, ok := t.TokenID(name(c.EOSToken)); ok {
		t.eos = append(t.eos, id)
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}
