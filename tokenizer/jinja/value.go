package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Value is a template value: nil (none), Undefined, bool, int64, float64,
// string, []Value, *Map, or a callable (*macro, builtin).
type Value = any

// Undefined is the value of a missing variable, attribute or key.
type Undefined struct{}

// Map is a string-keyed dictionary that keeps insertion order, as Python
// dicts and JSON objects do.
type Map struct {
	keys []string
	vals map[string]Value
	// contentKeys marks the keys as request content (a client's JSON
	// object): the key values iteration yields are marked strings.
	contentKeys bool
}

// NewMap returns an empty Map.
func NewMap() *Map { return &Map{vals: map[string]Value{}} }

// Set stores v under k, keeping k's first position.
func (m *Map) Set(k string, v Value) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// Get returns the value under k.
func (m *Map) Get(k string) (Value, bool) {
	v, ok := m.vals[k]
	return v, ok
}

// Keys returns the keys in insertion order.
func (m *Map) Keys() []string { return m.keys }

// key is k as a template value: marked as content when the keys are.
func (m *Map) key(k string) Value {
	if m.contentKeys {
		return content(k)
	}
	return k
}

// Len is the number of entries.
func (m *Map) Len() int { return len(m.keys) }

// namespace is the mutable object namespace() returns.
type namespace struct{ m *Map }

// DecodeJSON parses JSON into template values: objects become *Map in key
// order, integers int64, other numbers float64.
func DecodeJSON(data []byte) (Value, error) {
	return decodeJSON(data, nil)
}

// DecodeJSONContent is DecodeJSON for a request's content: its strings and
// keys come out marked as MarkContent marks them, without a copy.
func DecodeJSONContent(data []byte) (Value, error) {
	return decodeJSON(data, &marker{})
}

func decodeJSON(data []byte, mk *marker) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, mk)
	if err != nil {
		return nil, fmt.Errorf("jinja: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("jinja: trailing data after JSON value")
	}
	return v, nil
}

// decodeValue decodes the next value, marking strings and keys as content
// when mk is set.
func decodeValue(dec *json.Decoder, mk *marker) (Value, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			m := NewMap()
			m.contentKeys = mk != nil
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec, mk)
				if err != nil {
					return nil, err
				}
				m.Set(kt.(string), v)
			}
			_, err := dec.Token()
			return m, err
		case '[':
			l := []Value{}
			for dec.More() {
				v, err := decodeValue(dec, mk)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
	case json.Number:
		if i, err := x.Int64(); err == nil && !strings.ContainsAny(string(x), ".eE") {
			return i, nil
		}
		return x.Float64()
	case string:
		if mk != nil {
			return mk.mark(x), nil
		}
	}
	return t, nil // string, bool, nil
}

// truthy follows Python: none, undefined, false, 0, "" and empty
// collections are false.
func truthy(v Value) bool {
	switch x := v.(type) {
	case nil, Undefined:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case *marked:
		return x.s != ""
	case []Value:
		return len(x) > 0
	case *Map:
		return x.Len() > 0
	}
	return true
}

// str renders v as the reference renderer prints it.
func str(v Value) string {
	switch x := v.(type) {
	case nil, Undefined:
		return ""
	case string:
		return x
	case *marked:
		return x.s
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x)
	case []Value, *Map:
		var b textBuilder
		writeRepr(&b, x)
		return b.String()
	case *namespace:
		return "[object Object]"
	}
	return fmt.Sprint(v)
}

// formatFloat prints floats as Python does for the common cases: integral
// values keep ".0".
func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// writeRepr prints lists and dicts the way the reference renderer does.
func writeRepr(b *textBuilder, v Value) {
	switch x := v.(type) {
	case string, *marked:
		m, _ := textOf(x)
		writeQuoted(b, m)
	case []Value:
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it)
		}
		b.WriteByte(']')
	case *Map:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, x.key(k))
			b.WriteString(": ")
			writeRepr(b, x.vals[k])
		}
		b.WriteByte('}')
	case nil:
		b.WriteString("null")
	default:
		b.WriteString(str(x))
	}
}

// writeQuoted writes m as a JSON string. Escaping is per character, so each
// run of content or template bytes is escaped on its own and the escaped
// run keeps its mark.
func writeQuoted(b *textBuilder, m marked) {
	if len(m.spans) == 0 {
		q, _ := marshalString(m.s)
		b.sb.Write(q)
		return
	}
	b.WriteByte('"')
	run := func(i, j int, isContent bool) {
		if i >= j {
			return
		}
		q, _ := marshalString(m.s[i:j])
		start := b.Len()
		b.sb.Write(q[1 : len(q)-1])
		if isContent {
			b.mark(start, b.Len())
		}
	}
	at := 0
	for _, sp := range m.spans {
		run(at, sp.Start, false)
		run(sp.Start, sp.End, true)
		at = sp.End
	}
	run(at, len(m.s), false)
	b.WriteByte('"')
}

func marshalString(s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// toJSON serialises v like Python's json.dumps(ensure_ascii=False) with
// separators (", ", ": ") or, with indent, an indented layout. Content
// strings stay marked in the output.
func toJSON(v Value, indent int) (Value, error) {
	var b textBuilder
	if err := writeJSON(&b, v, indent, 0); err != nil {
		return "", err
	}
	return b.value(), nil
}

func writeJSON(b *textBuilder, v Value, indent, depth int) error {
	nl := func(d int) {
		if indent > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*d))
		}
	}
	sep := ", "
	if indent > 0 {
		sep = ","
	}
	switch x := v.(type) {
	case nil, Undefined:
		b.WriteString("null")
	case bool, int64:
		b.WriteString(str(x))
	case float64:
		b.WriteString(formatFloat(x))
	case string, *marked:
		m, _ := textOf(x)
		writeQuoted(b, m)
	case []Value:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(depth + 1)
			if err := writeJSON(b, it, indent, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		b.WriteByte(']')
	case *Map:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(depth + 1)
			km, _ := textOf(x.key(k))
			writeQuoted(b, km)
			b.WriteString(": ")
			if err := writeJSON(b, x.vals[k], indent, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		b.WriteByte('}')
	case *namespace:
		return writeJSON(b, x.m, indent, depth)
	default:
		return fmt.Errorf("cannot serialise %T to JSON", v)
	}
	return nil
}

// FromGo converts ordinary Go values (maps with sorted keys, slices, numbers)
// into template values.
func FromGo(v any) Value {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := NewMap()
		for _, k := range keys {
			m.Set(k, FromGo(x[k]))
		}
		return m
	case []any:
		l := make([]Value, len(x))
		for i, it := range x {
			l[i] = FromGo(it)
		}
		return l
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}
