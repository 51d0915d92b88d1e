package tokenizer

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The vocabulary and the merges are most of a tokenizer.json (Gemma 3: 262k
// pieces, 515k merges) and have one simple shape each, which encoding/json
// decodes through reflection in seconds. jsonScanner reads just those
// shapes; anything it does not expect (floats, invalid UTF-8, another
// layout) makes it give up, and the caller falls back to encoding/json,
// which then also words the error.

var errScan = errors.New("tokenizer: unexpected JSON")

// jsonScanner reads JSON that encoding/json has already checked for syntax.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) skipSpace() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\t' || s.b[s.i] == '\r') {
		s.i++
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *jsonScanner) peek() byte {
	s.skipSpace()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *jsonScanner) expect(c byte) error {
	if s.peek() != c {
		return errScan
	}
	s.i++
	return nil
}

// str reads a string.
func (s *jsonScanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			if !utf8.Valid(out) {
				return "", errScan
			}
			return string(out), nil
		case c == '\\':
			return s.escapedStr(start)
		default:
			s.i++
		}
	}
	return "", errScan
}

// escapedStr finishes a string that has escapes, begun at start.
func (s *jsonScanner) escapedStr(start int) (string, error) {
	var sb strings.Builder
	sb.Write(s.b[start:s.i])
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			if !utf8.ValidString(sb.String()) {
				return "", errScan
			}
			return sb.String(), nil
		}
		if c != '\\' {
			sb.WriteByte(c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", errScan
		}
		s.i += 2
		switch e := s.b[s.i-1]; e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", errScan
			}
			if utf16.IsSurrogate(r) {
				// a pair combines; a lone half becomes U+FFFD, as in encoding/json
				save := s.i
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					if r2, ok := s.hex4(); ok {
						if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
							sb.WriteRune(c)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			sb.WriteRune(r)
		default:
			return "", errScan
		}
	}
	return "", errScan
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	s.i += 4
	return rune(v), true
}

// int32 reads an integer that fits in int32.
func (s *jsonScanner) int32() (int32, error) {
	s.skipSpace()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	v, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 32)
	if err != nil {
		return 0, errScan
	}
	return int32(v), nil
}

// scanVocab reads {"piece": id, ...}.
func scanVocab(raw json.RawMessage) (map[string]int32, error) {
	s := &jsonScanner{b: raw}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	vocab := make(map[string]int32, len(raw)/16)
	if s.peek() == '}' {
		return vocab, nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		v, err := s.int32()
		if err != nil {
			return nil, err
		}
		vocab[k] = v
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			return vocab, nil
		default:
			return nil, errScan
		}
	}
}

// scanMerges reads ["a b", ...] or [["a", "b"], ...].
func scanMerges(raw json.RawMessage) ([][2]string, error) {
	s := &jsonScanner{b: raw}
	if err := s.expect('['); err != nil {
		return nil, err
	}
	var out [][2]string
	if s.peek() == ']' {
		return out, nil
	}
	for {
		var p [2]string
		switch s.peek() {
		case '"':
			m, err := s.str()
			if err != nil {
				return nil, err
			}
			a, b, ok := strings.Cut(m, " ")
			if !ok {
				return nil, errScan
			}
			p = [2]string{a, b}
		case '[':
			s.i++
			a, err := s.str()
			if err != nil {
				return nil, err
			}
			if err := s.expect(','); err != nil {
				return nil, err
			}
			b, err := s.str()
			if err != nil {
				return nil, err
			}
			if err := s.expect(']'); err != nil {
				return nil, err
			}
			p = [2]string{a, b}
		default:
			return nil, errScan
		}
		out = append(out, p)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			return out, nil
		default:
			return nil, errScan
		}
	}
}
