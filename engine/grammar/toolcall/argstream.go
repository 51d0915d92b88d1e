package toolcall

import (
	"encoding/json"
	"regexp"
	"strings"
)

// ArgStream reads the body of a call while it is generated and gives out
// the call's name and its arguments as soon as they are known, so a client
// sees long arguments (a file being written) as they are generated rather
// than when the call closes (vLLM #30439). It streams the arguments
// compacted the way Call.Arguments is (whitespace outside strings
// dropped), so the deltas add up to exactly the parsed call's arguments.
//
// Only the common shape streams: {"name": "...", "arguments": {...}} with
// the name first and the arguments an object. Any other shape (arguments
// first, arguments as a JSON string) yields nothing here and the call is
// reported whole when it closes.
type ArgStream struct {
	head  strings.Builder // body before the arguments object
	name  string
	state argState
	depth int
	inStr bool
	esc   bool
	args  strings.Builder // compacted arguments so far
}

type argState uint8

const (
	readingHead argState = iota
	inArguments
	argsDone
)

// callHead matches a body up to the opening brace of its arguments.
var callHead = regexp.MustCompile(`^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*\{`)

// Feed adds the next bytes of the body and returns the new compacted
// argument bytes (empty until the name is known).
func (a *ArgStream) Feed(chunk string) string {
	if a.state == readingHead {
		a.head.WriteString(chunk)
		head := a.head.String()
		m := callHead.FindStringSubmatchIndex(head)
		if m == nil {
			return ""
		}
		if err := json.Unmarshal([]byte(head[m[2]:m[3]]), &a.name); err != nil || a.name == "" {
			a.state = argsDone // not streamable; reported whole at the end
			return ""
		}
		a.state = inArguments
		chunk = head[m[1]-1:] // from the arguments' opening brace
	}
	if a.state != inArguments {
		return ""
	}
	start := a.args.Len()
	for i := 0; i < len(chunk) && a.state == inArguments; i++ {
		c := chunk[i]
		if a.inStr {
			a.args.WriteByte(c)
			switch {
			case a.esc:
				a.esc = false
			case c == '\\':
				a.esc = true
			case c == '"':
				a.inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			a.inStr = true
		case '{', '[':
			a.depth++
		case '}', ']':
			a.depth--
			if a.depth == 0 {
				a.state = argsDone
			}
		}
		a.args.WriteByte(c)
	}
	return a.args.String()[start:]
}

// Name is the call's name once the body has shown it.
func (a *ArgStream) Name() (string, bool) { return a.name, a.name != "" && a.args.Len() > 0 }

// Arguments are the compacted argument bytes streamed so far.
func (a *ArgStream) Arguments() string { return a.args.String() }
