package jinja

import (
	"fmt"
	"math"
	"strings"
)

// arith applies an arithmetic operator (+ - * / // % **) to two values
// with Python's rules: + also joins strings and lists, * repeats a string.
func arith(op string, l, r Value, line int) (Value, error) {
	if op == "+" {
		switch a := l.(type) {
		case string, *marked:
			if b, ok := textOf(r); ok {
				am, _ := textOf(a)
				return concat(am, b), nil
			}
		case []Value:
			if b, ok := r.([]Value); ok {
				return append(append([]Value{}, a...), b...), nil
			}
		}
	}
	if op == "*" {
		if a, ok := textOf(l); ok {
			if n, ok := r.(int64); ok {
				parts := make([]marked, max(n, 0))
				for i := range parts {
					parts[i] = a
				}
				return concat(parts...), nil
			}
		}
	}
	ai, aInt := l.(int64)
	bi, bInt := r.(int64)
	if aInt && bInt {
		switch op {
		case "+":
			return ai + bi, nil
		case "-":
			return ai - bi, nil
		case "*":
			return ai * bi, nil
		case "//":
			if bi == 0 {
				return nil, errf(line, "division by zero")
			}
			return int64(math.Floor(float64(ai) / float64(bi))), nil
		case "%":
			if bi == 0 {
				return nil, errf(line, "division by zero")
			}
			m := ai % bi
			if m != 0 && (m < 0) != (bi < 0) {
				m += bi
			}
			return m, nil
		case "**":
			return int64(math.Pow(float64(ai), float64(bi))), nil
		}
	}
	a, okA := toFloat(l)
	b, okB := toFloat(r)
	if !okA || !okB {
		return nil, errf(line, "unsupported operand types for %s: %s and %s", op, typeName(l), typeName(r))
	}
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, errf(line, "division by zero")
		}
		return a / b, nil
	case "//":
		return math.Floor(a / b), nil
	case "%":
		return math.Mod(a, b), nil
	case "**":
		return math.Pow(a, b), nil
	}
	return nil, errf(line, "unknown operator %s", op)
}

func toFloat(v Value) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func equal(a, b Value) bool {
	a, b = plain(a), plain(b)
	if fa, ok := toFloat(a); ok {
		if _, isBool := a.(bool); !isBool {
			if fb, ok := toFloat(b); ok {
				if _, isBool := b.(bool); !isBool {
					return fa == fb
				}
			}
		}
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case []Value:
		y, ok := b.([]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Map:
		y, ok := b.(*Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.keys {
			if yv, ok := y.Get(k); !ok || !equal(x.vals[k], yv) {
				return false
			}
		}
		return true
	case string, bool:
		return a == b
	}
	return false
}

func compare(a, b Value) (int, error) {
	a, b = plain(a), plain(b)
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return strings.Compare(sa, sb), nil
		}
	}
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	if !okA || !okB {
		return 0, fmt.Errorf("cannot compare %s and %s", typeName(a), typeName(b))
	}
	switch {
	case fa < fb:
		return -1, nil
	case fa > fb:
		return 1, nil
	}
	return 0, nil
}

func contains(container, item Value) (bool, error) {
	item = plain(item)
	switch c := plain(container).(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' needs a string, not %s", typeName(item))
		}
		return strings.Contains(c, s), nil
	case []Value:
		for _, v := range c {
			if equal(v, item) {
				return true, nil
			}
		}
		return false, nil
	case *Map:
		_, ok := c.Get(str(item))
		return ok, nil
	case nil, Undefined:
		return false, nil
	}
	return false, fmt.Errorf("'in' needs a string, list or dict, not %s", typeName(container))
}

func iterate(v Value) ([]Value, error) {
	switch x := v.(type) {
	case []Value:
		return x, nil
	case *Map:
		out := make([]Value, len(x.keys))
		for i, k := range x.keys {
			out[i] = []Value{x.key(k), x.vals[k]}
		}
		return out, nil
	case string, *marked:
		m, _ := textOf(x)
		return m.chars(), nil
	case nil, Undefined:
		return nil, nil
	}
	return nil, fmt.Errorf("%s is not iterable", typeName(v))
}

func typeName(v Value) string {
	switch v.(type) {
	case nil:
		return "none"
	case Undefined:
		return "undefined"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "float"
	case string, *marked:
		return "string"
	case []Value:
		return "list"
	case *Map:
		return "dict"
	case *namespace:
		return "namespace"
	case *macro, builtin:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}
