package jinja

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// errUnknownFilter is a filter name no template engine here knows, or one
// applied to a value it has no meaning for.
var errUnknownFilter = errors.New("unknown filter")

// textFilter applies the filters that make or reshape text, keeping the
// request-content marks of what they copy.
func textFilter(name string, v Value, a []Value, kw map[string]Value) (Value, error) {
	switch name {
	case "tojson":
		indent := int64(0)
		if i, ok := kw["indent"].(int64); ok {
			indent = i
		} else if len(a) > 0 {
			indent, _ = a[0].(int64)
		}
		return toJSON(v, int(indent))
	case "string":
		return strMarked(v).value(), nil
	case "trim":
		return stringMethod(strMarked(v), "strip", nil)
	case "upper", "lower", "title", "capitalize":
		return stringMethod(strMarked(v), name, nil)
	case "safe", "e", "escape":
		if name == "safe" {
			return v, nil
		}
		return caseMapped(strMarked(v), htmlEscape, func(r rune) string { return htmlEscape(string(r)) }), nil
	case "replace":
		if len(a) < 2 {
			return nil, errors.New("needs two arguments")
		}
		return replaceAll(strMarked(v), str(a[0]), strMarked(a[1])), nil
	case "indent":
		width := int64(4)
		if len(a) > 0 {
			width, _ = a[0].(int64)
		}
		pad := strings.Repeat(" ", int(width))
		m := strMarked(v)
		var b textBuilder
		i := 0
		for {
			j := strings.IndexByte(m.s[i:], '\n')
			if j < 0 {
				break
			}
			b.write(m.sub(i, i+j+1)) // the line and its newline, as marked as they were
			i += j + 1
			if i < len(m.s) && m.s[i] != '\n' {
				b.WriteString(pad)
			}
		}
		b.write(m.sub(i, len(m.s)))
		return b.value(), nil
	}
	return nil, errUnknownFilter
}

// sequenceFilter applies the filters over lists, dicts and strings as
// sequences.
func sequenceFilter(name string, v Value, a []Value, kw map[string]Value) (Value, error) {
	switch name {
	case "length", "count":
		return length(v)
	case "join":
		items, err := iterate(v)
		if err != nil {
			return nil, err
		}
		var sep marked
		if len(a) > 0 {
			sep = strMarked(a[0])
		}
		return join(items, sep)
	case "first", "last":
		items, err := iterate(v)
		if err != nil || len(items) == 0 {
			return Undefined{}, err
		}
		if name == "first" {
			return items[0], nil
		}
		return items[len(items)-1], nil
	case "list":
		return iterate(v)
	case "items":
		if m, ok := v.(*Map); ok {
			return iterate(m)
		}
		return nil, fmt.Errorf("items needs a dict, not %s", typeName(v))
	case "reverse":
		return reverse(v)
	case "selectattr", "rejectattr":
		return selectAttr(name == "selectattr", v, a)
	case "map":
		return mapItems(v, a, kw)
	case "unique":
		return unique(v)
	case "dictsort":
		return dictsort(v)
	}
	return nil, errUnknownFilter
}

// length is the length filter: a string's characters, a list's items, a
// dict's keys; 0 for none.
func length(v Value) (Value, error) {
	switch x := plain(v).(type) {
	case string:
		return int64(len([]rune(x))), nil
	case []Value:
		return int64(len(x)), nil
	case *Map:
		return int64(x.Len()), nil
	case nil, Undefined:
		return int64(0), nil
	}
	return nil, fmt.Errorf("%s has no length", typeName(v))
}

// reverse is the reverse filter: a list's items or a string's characters
// in reverse order.
func reverse(v Value) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := make([]Value, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	if _, ok := textOf(v); ok {
		var b textBuilder
		for _, ch := range out {
			b.writeValue(ch)
		}
		return b.value(), nil
	}
	return out, nil
}

// mapItems is the map filter: each item's attribute= (or default= where
// it has none), or each item through the filter named by the first
// argument.
func mapItems(v Value, a []Value, kw map[string]Value) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := make([]Value, len(items))
	for i, it := range items {
		if attr, ok := kw["attribute"]; ok {
			out[i] = getAttr(it, str(attr))
			if _, undef := out[i].(Undefined); undef && kw["default"] != nil {
				out[i] = kw["default"]
			}
		} else if len(a) > 0 {
			if out[i], err = applyFilter(str(a[0]), it, a[1:], nil); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// unique is the unique filter: the items, each once, in first-seen order.
func unique(v Value) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	var out []Value
	for _, it := range items {
		if in, _ := contains(out, it); !in {
			out = append(out, it)
		}
	}
	return out, nil
}

// dictsort is the dictsort filter: a dict's [key, value] pairs by key.
func dictsort(v Value) (Value, error) {
	m, ok := v.(*Map)
	if !ok {
		return nil, fmt.Errorf("dictsort needs a dict")
	}
	keys := append([]string(nil), m.keys...)
	sort.Strings(keys)
	out := make([]Value, len(keys))
	for i, k := range keys {
		out[i] = []Value{m.key(k), m.vals[k]}
	}
	return out, nil
}

// valueFilter applies default and the number conversions.
func valueFilter(name string, v Value, a []Value, kw map[string]Value) (Value, error) {
	switch name {
	case "default", "d":
		_, undef := v.(Undefined)
		boolean := len(a) > 1 && truthy(a[1]) || truthy(kw["boolean"])
		if undef || boolean && !truthy(v) {
			if len(a) > 0 {
				return a[0], nil
			}
			return "", nil
		}
		return v, nil
	case "int":
		switch x := plain(v).(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case string:
			var n int64
			if _, err := fmt.Sscan(strings.TrimSpace(x), &n); err == nil {
				return n, nil
			}
		}
		return int64(0), nil
	case "float":
		if f, ok := toFloat(v); ok {
			return f, nil
		}
		return 0.0, nil
	case "abs":
		switch x := v.(type) {
		case int64:
			if x < 0 {
				return -x, nil
			}
			return x, nil
		case float64:
			return math.Abs(x), nil
		}
	case "round":
		f, _ := toFloat(v)
		return math.Round(f), nil
	}
	return nil, errUnknownFilter
}
