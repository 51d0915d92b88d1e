package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The SentencePiece-style decoders (Replace, ByteFallback, Fuse, Strip,
// Metaspace) are applied by the reference to the whole list of token
// strings. Here each is a streaming stage that receives the token strings
// one at a time and passes on what it can, so that one implementation
// serves both Decode (push everything, then finish) and StreamDecoder (push
// as tokens arrive). Equality of the two is by construction; the fixtures
// check Decode against the reference.
//
// After Fuse the reference sees one single token; a stage downstream of a
// Fuse receives it in pieces, each marked cont (continuing the token
// before), so that per-token rules such as Strip's leading count and
// Metaspace's first-token rule apply to the fused token as a whole.

// emitFunc receives a token string, or a further piece of the previous one.
type emitFunc func(tok string, cont bool)

// decodeStage is one decoder of the chain.
type decodeStage interface {
	push(tok string, cont bool, next emitFunc)
	finish(next emitFunc)
}

// replaceStage replaces a literal in every token.
type replaceStage struct{ old, new string }

func (s *replaceStage) push(tok string, cont bool, next emitFunc) {
	next(strings.ReplaceAll(tok, s.old, s.new), cont)
}
func (s *replaceStage) finish(emitFunc) {}

// byteFallbackStage turns runs of "<0xXX>" tokens into the text of their
// bytes, or, when the run is not valid UTF-8, into one U+FFFD per byte as
// the reference does. A run is held until the first other token (or the
// end), since a later byte can still make it invalid.
type byteFallbackStage struct{ run []byte }

// parseByteToken reads "<0xXX>" (hex digits of either case).
func parseByteToken(tok string) (byte, bool) {
	if len(tok) != 6 || !strings.HasPrefix(tok, "<0x") || tok[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(tok[3:5], 16, 8)
	return byte(v), err == nil
}

func (s *byteFallbackStage) push(tok string, cont bool, next emitFunc) {
	if b, ok := parseByteToken(tok); ok && !cont {
		s.run = append(s.run, b)
		return
	}
	s.finish(next)
	next(tok, cont)
}

func (s *byteFallbackStage) finish(next emitFunc) {
	if len(s.run) == 0 {
		return
	}
	if utf8.Valid(s.run) {
		next(string(s.run), false)
	} else {
		for range s.run {
			next("\uFFFD", false)
		}
	}
	s.run = s.run[:0]
}

// fuseStage joins all tokens into one.
type fuseStage struct{ started bool }

func (s *fuseStage) push(tok string, _ bool, next emitFunc) {
	next(tok, s.started)
	s.started = true
}
func (s *fuseStage) finish(emitFunc) {}

// stripStage removes up to n leading occurrences of a character from each
// token (stripping at the end is refused at load).
type stripStage struct {
	char rune
	n    int
	left int // how many more the current token may lose; 0 once a kept character was seen
}

func (s *stripStage) push(tok string, cont bool, next emitFunc) {
	if !cont {
		s.left = s.n
	}
	for s.left > 0 && tok != "" {
		r, w := utf8.DecodeRuneInString(tok)
		if r != s.char {
			s.left = 0
			break
		}
		tok = tok[w:]
		s.left--
	}
	next(tok, cont)
}
func (s *stripStage) finish(emitFunc) {}

// metaspaceStage turns the replacement character back into spaces, except
// in the first token, where it is dropped (it is the prefix the
// pre-tokenizer added) unless the scheme is never.
type metaspaceStage struct {
	replacement rune
	dropFirst   bool
	index       int // of the current token; -1 before any
}

func (s *metaspaceStage) push(tok string, cont bool, next emitFunc) {
	if !cont {
		s.index++
	}
	with := " "
	if s.index == 0 && s.dropFirst {
		with = ""
	}
	next(strings.ReplaceAll(tok, string(s.replacement), with), cont)
}
func (s *metaspaceStage) finish(emitFunc) {}

// joinStage puts a space between tokens: what the reference does when a
// tokenizer.json has no decoder.
type joinStage struct{ started bool }

func (s *joinStage) push(tok string, cont bool, next emitFunc) {
	if s.started && !cont {
		next(" ", true)
	}
	next(tok, cont || s.started)
	s.started = true
}
func (s *joinStage) finish(emitFunc) {}

// decoderSpec is a parsed decoder chain; newChain makes a fresh stateful
// instance per decode.
type decoderSpec struct {
	stages []func() decodeStage
	space  string // the token character that stands for a space ("▁"), for TokenBytes
}

// chain is one running instance of a decoder chain.
type chain struct {
	stages []decodeStage
	emits  []emitFunc // emits[i] feeds stage i+1; the last appends to out
	out    strings.Builder
}

func (d *decoderSpec) newChain() *chain {
	c := &chain{stages: make([]decodeStage, len(d.stages)), emits: make([]emitFunc, len(d.stages))}
	for i, mk := range d.stages {
		c.stages[i] = mk()
	}
	for i := range c.stages {
		if i == len(c.stages)-1 {
			c.emits[i] = func(tok string, _ bool) { c.out.WriteString(tok) }
			continue
		}
		nextStage, nextEmit := c.stages[i+1], i+1
		c.emits[i] = func(tok string, cont bool) { nextStage.push(tok, cont, c.emits[nextEmit]) }
	}
	return c
}

// push feeds one token string and returns the text completed so far.
func (c *chain) push(tok string) string {
	c.stages[0].push(tok, false, c.emits[0])
	return c.take()
}

// finish flushes held text.
func (c *chain) finish() string {
	for i, s := range c.stages {
		s.finish(c.emits[i])
	}
	return c.take()
}

func (c *chain) take() string {
	s := c.out.String()
	c.out.Reset()
	return s
}

// decoderJSON is a tokenizer.json decoder object.
type decoderJSON struct {
	Type          string        `json:"type"`
	Decoders      []decoderJSON `json:"decoders"`
	Pattern       patternJSON   `json:"pattern"`
	Content       string        `json:"content"`
	Start         int           `json:"start"`
	Stop          int           `json:"stop"`
	Replacement   string        `json:"replacement"`
	PrependScheme string        `json:"prepend_scheme"`
	AddPrefix     *bool         `json:"add_prefix_space"`
}

// parseSPDecoder builds the decoder chain of a SentencePiece-style
// tokenizer.json.
func parseSPDecoder(raw json.RawMessage) (*decoderSpec, error) {
	if isNull(raw) {
		// without a decoder the reference joins the tokens with spaces
		return &decoderSpec{space: "\u2581", stages: []func() decodeStage{func() decodeStage { return &joinStage{} }}}, nil
	}
	var c decoderJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: decoder: %w", err)
	}
	list := []decoderJSON{c}
	if c.Type == "Sequence" {
		list = c.Decoders
	}
	d := &decoderSpec{space: "\u2581"}
	fused := false
	for _, s := range list {
		switch s.Type {
		case "Replace":
			if s.Pattern.String == nil {
				return nil, errors.New("tokenizer: Replace decoder with a Regex pattern is not supported")
			}
			old, new := *s.Pattern.String, s.Content
			if fused && utf8.RuneCountInString(old) != 1 {
				return nil, fmt.Errorf("tokenizer: Replace decoder of %q after Fuse is not supported", old)
			}
			if new == " " && old != "" {
				d.space = old
			}
			d.stages = append(d.stages, func() decodeStage { return &replaceStage{old: old, new: new} })
		case "ByteFallback":
			if fused {
				return nil, errors.New("tokenizer: ByteFallback decoder after Fuse is not supported")
			}
			d.stages = append(d.stages, func() decodeStage { return &byteFallbackStage{} })
		case "Fuse":
			fused = true
			d.stages = append(d.stages, func() decodeStage { return &fuseStage{} })
		case "Strip":
			r := []rune(s.Content)
			if len(r) != 1 || s.Stop != 0 || s.Start < 0 {
				return nil, fmt.Errorf("tokenizer: Strip decoder (content %q, start %d, stop %d) is not supported", s.Content, s.Start, s.Stop)
			}
			char, n := r[0], s.Start
			d.stages = append(d.stages, func() decodeStage { return &stripStage{char: char, n: n} })
		case "Metaspace":
			r := []rune(s.Replacement)
			if len(r) != 1 {
				return nil, fmt.Errorf("tokenizer: Metaspace decoder replacement %q is not one character", s.Replacement)
			}
			drop := s.PrependScheme == "always" || s.PrependScheme == "first" ||
				s.PrependScheme == "" && (s.AddPrefix == nil || *s.AddPrefix)
			if s.PrependScheme != "" && !drop && s.PrependScheme != "never" {
				return nil, fmt.Errorf("tokenizer: Metaspace decoder prepend_scheme %q is not supported", s.PrependScheme)
			}
			char := r[0]
			d.space = s.Replacement
			d.stages = append(d.stages, func() decodeStage { return &metaspaceStage{replacement: char, dropFirst: drop, index: -1} })
		default:
			return nil, fmt.Errorf("tokenizer: decoder %q is not supported", s.Type)
		}
	}
	if len(d.stages) == 0 {
		return nil, errors.New("tokenizer: an empty decoder Sequence is not supported")
	}
	return d, nil
}
