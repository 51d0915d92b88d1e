package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

const (
	openTag  = "<tool_call>"
	closeTag = "</tool_call>"
)

// Call is one parsed tool call.
type Call struct {
	Name      string
	Arguments json.RawMessage // a JSON object, compact
}

// Segment is one piece of output: a Call, or Text. Text with a non-empty
// Malformed is a call that could not be parsed, tags included, and why.
type Segment struct {
	Text      string
	Call      *Call
	Malformed string
}

type phase uint8

const (
	outside    phase = iota // plain text
	inside                  // after <tool_call>, collecting the body
	afterClose              // after </tool_call>: a duplicate closing tag is dropped
)

// Parser is a streaming tool-call parser. The zero value is ready to use.
// It is not safe for concurrent use.
type Parser struct {
	phase   phase
	pending string // undecided text: a possible partial tag, or the open call's body
}

// Parse splits a whole output into segments; the same as feeding it to a
// Parser in any chunks and flushing.
func Parse(text string) []Segment {
	var p Parser
	return append(p.Feed(text), p.Flush()...)
}

// Feed adds a chunk of output and returns the segments it decides.
func (p *Parser) Feed(chunk string) []Segment {
	p.pending += chunk
	var out []Segment
	for {
		switch p.phase {
		case outside:
			if i := strings.Index(p.pending, openTag); i >= 0 {
				out = appendText(out, p.pending[:i])
				p.pending, p.phase = p.pending[i+len(openTag):], inside
				continue
			}
			keep := partialSuffix(p.pending, openTag)
			out = appendText(out, p.pending[:len(p.pending)-keep])
			p.pending = p.pending[len(p.pending)-keep:]
			return out

		case inside:
			ci := indexOutsideStrings(p.pending, closeTag)
			oi := indexOutsideStrings(p.pending, openTag)
			if oi >= 0 && (ci < 0 || oi < ci) {
				// A new call opens before this one closed: close this one
				// only if its body is a whole valid call.
				body := p.pending[:oi]
				if call, err := parseCall(body); err == nil {
					out = append(out, Segment{Call: call})
					p.pending = p.pending[oi+len(openTag):]
				} else {
					out = append(out, malformed(openTag+body, "unterminated tool call before another <tool_call>"))
					p.pending, p.phase = p.pending[oi:], outside
				}
				continue
			}
			if ci < 0 {
				return out // the body is still streaming
			}
			out = append(out, callOrText(p.pending[:ci]))
			p.pending, p.phase = p.pending[ci+len(closeTag):], afterClose

		case afterClose:
			rest := strings.TrimLeft(p.pending, " \t\r\n")
			if strings.HasPrefix(rest, closeTag) {
				p.pending = rest[len(closeTag):] // a duplicated closing tag
				continue
			}
			if strings.HasPrefix(closeTag, rest) {
				return out // could still become a duplicate
			}
			p.phase = outside
		}
	}
}

// OpenBody is the body of the call being generated, when the output is
// inside one: what an ArgStream reads to stream its arguments.
func (p *Parser) OpenBody() (string, bool) {
	return p.pending, p.phase == inside
}

// Flush ends the stream and returns the segments still held back.
func (p *Parser) Flush() []Segment {
	var out []Segment
	switch p.phase {
	case outside, afterClose:
		out = appendText(out, p.pending)
	case inside:
		if call, err := parseCall(p.pending); err == nil {
			out = append(out, Segment{Call: call}) // missing closing tag
		} else {
			out = append(out, malformed(openTag+p.pending, "unterminated tool call: "+err.Error()))
		}
	}
	p.pending, p.phase = "", outside
	return out
}

func callOrText(body string) Segment {
	call, err := parseCall(body)
	if err != nil {
		return malformed(openTag+body+closeTag, err.Error())
	}
	return Segment{Call: call}
}

func malformed(text, reason string) Segment {
	return Segment{Text: text, Malformed: reason}
}

func appendText(out []Segment, text string) []Segment {
	if text == "" {
		return out
	}
	return append(out, Segment{Text: text})
}

// indexOutsideStrings is the index of the first tag in a call body that is
// not inside a JSON string, or -1. A string may hold the tags' text (a
// model writing about tool calls, or Qwen's added <tool_call> token sampled
// inside a constrained argument), and that text does not end the call. A
// body whose string never closes is held back until the stream ends.
func indexOutsideStrings(body, tag string) int {
	inStr, esc := false, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && c == tag[0] && strings.HasPrefix(body[i:], tag):
			return i
		}
	}
	return -1
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of tag: text that may still turn into the tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

// parseCall parses a call body: one JSON object with a non-empty string
// "name" and an object "arguments" (absent means {}).
func parseCall(body string) (*Call, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	var raw struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("toolcall: invalid JSON: %w", err)
	}
	if dec.More() || strings.TrimSpace(body[dec.InputOffset():]) != "" {
		return nil, errors.New("toolcall: data after the call object")
	}
	if raw.Name == nil || *raw.Name == "" {
		return nil, errors.New("toolcall: missing name")
	}
	args := bytes.TrimSpace(raw.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] == '"' {
		// Arguments encoded as a string: accept it if it holds an object.
		var s string
		if err := json.Unmarshal(args, &s); err == nil {
			args = bytes.TrimSpace([]byte(s))
		}
	}
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return nil, errors.New("toolcall: arguments is not a JSON object")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return nil, fmt.Errorf("toolcall: arguments: %w", err)
	}
	return &Call{Name: *raw.Name, Arguments: compact.Bytes()}, nil
}
