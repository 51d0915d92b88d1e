package jinja

import (
	"fmt"
	"strings"
	"unicode"
)

type tokKind int

const (
	tText tokKind = iota
	tExprOpen
	tExprClose
	tStmtOpen
	tStmtClose
	tName
	tString
	tInt
	tFloat
	tOp
	tEOF
)

type token struct {
	kind tokKind
	val  string
	line int
}

// Error is a template error at a line of the template source.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("jinja: line %d: %s", e.Line, e.Msg) }

func errf(line int, format string, args ...any) error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// lex splits src into text and tag tokens, applying trim_blocks,
// lstrip_blocks and "-" whitespace control.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	stripNext := false // a "-" close strips the whitespace that follows
	for i < len(src) {
		open := nextTag(src, i)
		text := src[i:]
		if open >= 0 {
			text = src[i:open]
		}
		if stripNext {
			text = strings.TrimLeftFunc(text, unicode.IsSpace)
			stripNext = false
		}
		if open < 0 {
			if text != "" {
				toks = append(toks, token{tText, text, lineAt(src, i)})
			}
			break
		}
		line := lineAt(src, open)
		kind := src[open+1]
		minus := open+2 < len(src) && src[open+2] == '-'
		if minus {
			text = strings.TrimRightFunc(text, unicode.IsSpace)
		} else if kind != '{' {
			text = lstripBlock(text)
		}
		if text != "" {
			toks = append(toks, token{tText, text, lineAt(src, i)})
		}
		start := open + 2
		if minus {
			start++
		}
		closer := map[byte]string{'{': "}}", '%': "%}", '#': "#}"}[kind]
		end := strings.Index(src[start:], closer)
		if end < 0 {
			return nil, errf(line, "unclosed %q", src[open:open+2])
		}
		end += start
		inner := src[start:end]
		after := end + 2
		if strings.HasSuffix(inner, "-") {
			inner = inner[:len(inner)-1]
			stripNext = true
		} else if kind != '{' && after < len(src) && src[after] == '\n' {
			after++ // trim_blocks: the newline after a block tag goes
		}
		switch kind {
		case '#':
		case '%':
			if strings.TrimSpace(inner) == "raw" {
				endRaw, rawEnd, err := findEndRaw(src, after)
				if err != nil {
					return nil, errf(line, "%v", err)
				}
				toks = append(toks, token{tText, src[after:endRaw], line})
				i = rawEnd
				continue
			}
			toks = append(toks, token{tStmtOpen, "", line})
			if err := lexExpr(inner, line, &toks); err != nil {
				return nil, err
			}
			toks = append(toks, token{tStmtClose, "", line})
		case '{':
			toks = append(toks, token{tExprOpen, "", line})
			if err := lexExpr(inner, line, &toks); err != nil {
				return nil, err
			}
			toks = append(toks, token{tExprClose, "", line})
		}
		i = after
	}
	toks = append(toks, token{tEOF, "", lineAt(src, len(src))})
	return toks, nil
}

// lineAt is the 1-based line of byte offset pos.
func lineAt(src string, pos int) int { return 1 + strings.Count(src[:pos], "\n") }

// nextTag returns the index of the next "{{", "{%" or "{#" from i, or -1.
func nextTag(src string, i int) int {
	for {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 || i+j+1 >= len(src) {
			return -1
		}
		j += i
		if c := src[j+1]; c == '{' || c == '%' || c == '#' {
			return j
		}
		i = j + 1
	}
}

// lstripBlock removes spaces and tabs between the last newline of text and
// a block tag that follows it (lstrip_blocks).
func lstripBlock(text string) string {
	k := len(text)
	for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k == 0 || text[k-1] == '\n' {
		return text[:k]
	}
	return text
}

func findEndRaw(src string, from int) (textEnd, tagEnd int, err error) {
	for i := from; ; {
		j := strings.Index(src[i:], "{%")
		if j < 0 {
			return 0, 0, fmt.Errorf("raw block without endraw")
		}
		j += i
		k := strings.Index(src[j:], "%}")
		if k < 0 {
			return 0, 0, fmt.Errorf("unclosed tag in raw block")
		}
		inner := strings.Trim(src[j+2:j+k], "- \t\n")
		if inner == "endraw" {
			return j, j + k + 2, nil
		}
		i = j + 2
	}
}

var ops = []string{"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "~", "="}

func lexExpr(s string, line int, toks *[]token) error {
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\'' || c == '"':
			str, n, err := lexString(s[i:])
			if err != nil {
				return errf(line, "%v", err)
			}
			*toks = append(*toks, token{tString, str, line})
			i += n
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			kind := tInt
			if j+1 < len(s) && s[j] == '.' && s[j+1] >= '0' && s[j+1] <= '9' {
				j++
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				kind = tFloat
			}
			*toks = append(*toks, token{kind, strings.ReplaceAll(s[i:j], "_", ""), line})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			*toks = append(*toks, token{tName, s[i:j], line})
			i = j
		default:
			matched := false
			for _, op := range ops {
				if strings.HasPrefix(s[i:], op) {
					*toks = append(*toks, token{tOp, op, line})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				return errf(line, "unexpected character %q", c)
			}
		}
	}
	return nil
}

func lexString(s string) (string, int, error) {
	q := s[0]
	var sb strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return sb.String(), i + 1, nil
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case 'r':
				sb.WriteByte('\r')
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			default:
				sb.WriteByte(s[i])
			}
		default:
			sb.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}
