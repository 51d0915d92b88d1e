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
)

// tokenizerJSON is the part of tokenizer.json that Splash reads.
type tokenizerJSON struct {
	AddedTokens   []addedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type  string          `json:"type"`
		Vocab json.RawMessage `json:"vocab"` // read by scanVocab

		Merges       json.RawMessage `json:"merges"`
		IgnoreMerges bool            `json:"ignore_merges"`
		ByteFallback bool            `json:"byte_fallback"`
		UnkToken     *string         `json:"unk_token"`
		FuseUnk      bool            `json:"fuse_unk"`
		Dropout      *float64        `json:"dropout"`
		ContPrefix   *string         `json:"continuing_subword_prefix"`
		EndSuffix    *string         `json:"end_of_word_suffix"`
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
	BOSToken       any    `json:"bos_token"`
	EOSToken       any    `json:"eos_token"`
	AddBOS         *bool  `json:"add_bos_token"`
	AddEOS         *bool  `json:"add_eos_token"`
	TokenizerClass string `json:"tokenizer_class"`
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
	byteLevel, err := isByteLevel(&tj)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{bl: newByteLevel()}
	// the components first: they fail fast, without building the tables
	if t.normalizer, err = parseNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if byteLevel {
		if err := t.loadPreTokenizer(tj.PreTokenizer); err != nil {
			return nil, err
		}
		if err := checkDecoder(tj.Decoder); err != nil {
			return nil, err
		}
	} else {
		if t.pre, err = parseSPPreTokenizer(tj.PreTokenizer); err != nil {
			return nil, err
		}
		if t.dec, err = parseSPDecoder(tj.Decoder); err != nil {
			return nil, err
		}
	}
	if err := t.loadModel(&tj, byteLevel); err != nil {
		return nil, err
	}
	t.idToToken = make([]string, 0, len(t.bpe.vocab)+len(tj.AddedTokens))
	for s, id := range t.bpe.vocab {
		t.setToken(id, s, false)
	}
	for i := range tj.AddedTokens {
		a := &tj.AddedTokens[i]
		// as the reference does, an added token that is also a vocabulary
		// entry keeps the vocabulary's id
		if id, ok := t.bpe.vocab[a.Content]; ok {
			a.ID = id
		}
		t.setToken(a.ID, a.Content, true)
		t.isAdded[a.ID] = true
		t.special[a.ID] = a.Special
	}
	t.loadAddedTokens(tj.AddedTokens)
	if err := t.loadPostProcessor(tj.PostProcessor); err != nil {
		return nil, err
	}
	if configJSON != nil {
		if err := t.loadConfig(configJSON); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// isByteLevel tells the byte-level BPE family (a ByteLevel pre-tokenizer or
// decoder) from the SentencePiece-style one.
func isByteLevel(tj *tokenizerJSON) (bool, error) {
	for _, raw := range []json.RawMessage{tj.PreTokenizer, tj.Decoder} {
		if isNull(raw) {
			continue
		}
		var c struct {
			Type          string            `json:"type"`
			Pretokenizers []json.RawMessage `json:"pretokenizers"`
			Decoders      []json.RawMessage `json:"decoders"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return false, fmt.Errorf("tokenizer: pre_tokenizer or decoder: %w", err)
		}
		if c.Type == "ByteLevel" {
			return true, nil
		}
		for _, sub := range append(c.Pretokenizers, c.Decoders...) {
			var t struct{ Type string }
			if json.Unmarshal(sub, &t) == nil && t.Type == "ByteLevel" {
				return true, nil
			}
		}
	}
	return false, nil
}

// loadAddedTokens builds the two added-token matchers: tokens matched on
// the raw text, and tokens with normalized set, matched on normalized text
// by their normalized form.
func (t *Tokenizer) loadAddedTokens(tokens []addedToken) {
	var raw, normalized []addedToken
	for _, a := range tokens {
		if a.Normalized && t.normalizer != nil {
			a.Content = t.normalizer.normalize(a.Content)
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.added = newAddedMatcher(raw)
	if len(normalized) > 0 {
		t.addedNorm = newAddedMatcher(normalized)
	}
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
	eos, hasEOS := t.TokenID(name(c.EOSToken))
	if hasEOS {
		t.eos = append(t.eos, eos)
	}
	if rebuildsTemplate[c.TokenizerClass] {
		// transformers' Llama and Gemma tokenizers rebuild the
		// post-processor from add_bos_token (default true) and
		// add_eos_token (default false), whatever tokenizer.json says
		t.prefix, t.suffix = nil, nil
		if (c.AddBOS == nil || *c.AddBOS) && t.hasBOS {
			t.prefix = []int32{t.bos}
		}
		if c.AddEOS != nil && *c.AddEOS && hasEOS {
			t.suffix = []int32{eos}
		}
	}
	return nil
}

// rebuildsTemplate lists the tokenizer classes whose special tokens come
// from tokenizer_config.json's add_bos_token and add_eos_token.
var rebuildsTemplate = map[string]bool{
	"LlamaTokenizer": true, "LlamaTokenizerFast": true, "CodeLlamaTokenizer": true, "CodeLlamaTokenizerFast": true,
	"GemmaTokenizer": true, "GemmaTokenizerFast": true,
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}
