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

// Len is the number of entries.
func (m *Map) Len() int { return len(m.keys) }

// namespace is the mutable object namespace() returns.
type namespace struct{ m *Map }

// DecodeJSON parses JSON into template values: objects become *Map in key
// order, integers int64, other numbers float64.
func DecodeJSON(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("jinja: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("jinja: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (Value, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			m := NewMap()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
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
				v, err := decodeValue(dec)
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
		var sb strings.Builder
		writeRepr(&sb, x)
		return sb.String()
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
func writeRepr(sb *strings.Builder, v Value) {
	switch x := v.(type) {
	case string:
		b, _ := marshalString(x)
		sb.Write(b)
	case []Value:
		sb.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, it)
		}
		sb.WriteByte(']')
	case *Map:
		sb.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, k)
			sb.WriteString(": ")
			writeRepr(sb, x.vals[k])
		}
		sb.WriteByte('}')
	case nil:
		sb.WriteString("null")
	default:
		sb.WriteString(str(x))
	}
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
// separators (", ", ": ") or, with indent, an indented layout.
func toJSON(v Value, indent int) (string, error) {
	var sb strings.Builder
	if err := writeJSON(&sb, v, indent, 0); err != nil {
		return "", err
	}
	return sb.String(), nil
}

func writeJSON(sb *strings.Builder, v Value, indent, depth int) error {
	nl := func(d int) {
		if indent > 0 {
			sb.WriteByte('\n')
			sb.WriteString(strings.Repeat(" ", indent*d))
		}
	}
	sep := ", "
	if indent > 0 {
		sep = ","
	}
	switch x := v.(type) {
	case nil, Undefined:
		sb.WriteString("null")
	case bool, int64:
		sb.WriteString(str(x))
	case float64:
		sb.WriteString(formatFloat(x))
	case string:
		b, _ := marshalString(x)
		sb.Write(b)
	case []Value:
		if len(x) == 0 {
			sb.WriteString("[]")
			return nil
		}
		sb.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				sb.WriteString(sep)
			}
			nl(depth + 1)
			if err := writeJSON(sb, it, indent, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		sb.WriteByte(']')
	case *Map:
		if x.Len() == 0 {
			sb.WriteString("{}")
			return nil
		}
		sb.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				sb.WriteString(sep)
			}
			nl(depth + 1)
			b, _ := marshalString(k)
			sb.Write(b)
			sb.WriteString(": ")
			if err := writeJSON(sb, x.vals[k], indent, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		sb.WriteByte('}')
	case *namespace:
		return writeJSON(sb, x.m, indent, depth)
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
