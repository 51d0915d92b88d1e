package jinja

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
)

// builtin is a global function: positional and keyword arguments.
type builtin func(args []Value, kwargs map[string]Value) (Value, error)

func globals() map[string]Value {
	return map[string]Value{
		"range": builtin(func(a []Value, _ map[string]Value) (Value, error) {
			var lo, hi, st int64 = 0, 0, 1
			ints := make([]int64, len(a))
			for i, v := range a {
				n, ok := v.(int64)
				if !ok {
					return nil, errors.New("range() needs integers")
				}
				ints[i] = n
			}
			switch len(ints) {
			case 1:
				hi = ints[0]
			case 2:
				lo, hi = ints[0], ints[1]
			case 3:
				lo, hi, st = ints[0], ints[1], ints[2]
			default:
				return nil, errors.New("range() takes 1 to 3 arguments")
			}
			if st == 0 {
				return nil, errors.New("range() step must not be zero")
			}
			out := []Value{}
			for i := lo; st > 0 && i < hi || st < 0 && i > hi; i += st {
				out = append(out, i)
			}
			return out, nil
		}),
		"namespace": builtin(func(a []Value, kw map[string]Value) (Value, error) {
			ns := &namespace{m: NewMap()}
			if len(a) == 1 {
				if m, ok := a[0].(*Map); ok {
					for _, k := range m.keys {
						ns.m.Set(k, m.vals[k])
					}
				}
			}
			for _, k := range sortedKeys(kw) {
				ns.m.Set(k, kw[k])
			}
			return ns, nil
		}),
		"raise_exception": builtin(func(a []Value, _ map[string]Value) (Value, error) {
			msg := "raise_exception called"
			if len(a) > 0 {
				msg = str(a[0])
			}
			return nil, errors.New(msg)
		}),
		"strftime_now": builtin(func(a []Value, _ map[string]Value) (Value, error) {
			if len(a) != 1 {
				return nil, errors.New("strftime_now takes a format")
			}
			return strftime(time.Now(), str(a[0])), nil
		}),
		"dict": builtin(func(_ []Value, kw map[string]Value) (Value, error) {
			m := NewMap()
			for _, k := range sortedKeys(kw) {
				m.Set(k, kw[k])
			}
			return m, nil
		}),
	}
}

func sortedKeys(m map[string]Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func strftime(t time.Time, f string) string {
	r := strings.NewReplacer("%Y", "2006", "%m", "01", "%d", "02", "%H", "15", "%M", "04", "%S", "05",
		"%b", "Jan", "%B", "January", "%a", "Mon", "%A", "Monday", "%y", "06", "%p", "PM", "%I", "03", "%%", "%")
	return t.Format(r.Replace(f))
}

func (r *renderer) evalArgs(args []expr, kwargs map[string]expr, s *scope) ([]Value, map[string]Value, error) {
	a := make([]Value, len(args))
	for i, e := range args {
		v, err := r.eval(e, s)
		if err != nil {
			return nil, nil, err
		}
		a[i] = v
	}
	kw := map[string]Value{}
	for k, e := range kwargs {
		v, err := r.eval(e, s)
		if err != nil {
			return nil, nil, err
		}
		kw[k] = v
	}
	return a, kw, nil
}

func (r *renderer) evalCall(e *callExpr, s *scope) (Value, error) {
	args, kw, err := r.evalArgs(e.args, e.kwargs, s)
	if err != nil {
		return nil, err
	}
	if at, ok := e.fn.(*attrExpr); ok { // method call
		obj, err := r.eval(at.obj, s)
		if err != nil {
			return nil, err
		}
		if _, isNS := obj.(*namespace); !isNS {
			if _, isMap := obj.(*Map); !isMap || isMethodName(at.name) {
				v, err := callMethod(obj, at.name, args, kw)
				if err != nil {
					return nil, errf(e.line, "%v", err)
				}
				return v, nil
			}
		}
	}
	fn, err := r.eval(e.fn, s)
	if err != nil {
		return nil, err
	}
	switch f := fn.(type) {
	case builtin:
		v, err := f(args, kw)
		if err != nil {
			return nil, errf(e.line, "%v", err)
		}
		return v, nil
	case *macro:
		return r.callMacro(f, args, kw, e.line)
	}
	return nil, errf(e.line, "%s is not callable", typeName(fn))
}

func isMethodName(n string) bool {
	switch n {
	case "items", "keys", "values", "get":
		return true
	}
	return false
}

func (r *renderer) callMacro(m *macro, args []Value, kw map[string]Value, line int) (Value, error) {
	s := &scope{vars: map[string]Value{}, parent: m.scope}
	for i, p := range m.def.params {
		switch {
		case i < len(args):
			s.vars[p] = args[i]
		case kw[p] != nil:
			s.vars[p] = kw[p]
		case m.def.defaults[p] != nil:
			v, err := r.eval(m.def.defaults[p], m.scope)
			if err != nil {
				return nil, err
			}
			s.vars[p] = v
		default:
			s.vars[p] = Undefined{}
		}
	}
	var b textBuilder
	sub := &renderer{out: &b, globals: r.globals}
	if err := sub.exec(m.def.body, s); err != nil {
		return nil, err
	}
	return b.value(), nil
}

func callMethod(obj Value, name string, a []Value, kw map[string]Value) (Value, error) {
	switch o := obj.(type) {
	case string, *marked:
		m, _ := textOf(o)
		return stringMethod(m, name, a)
	case *Map:
		switch name {
		case "items":
			return iterate(o)
		case "keys":
			out := make([]Value, len(o.keys))
			for i, k := range o.keys {
				out[i] = o.key(k)
			}
			return out, nil
		case "values":
			out := make([]Value, len(o.keys))
			for i, k := range o.keys {
				out[i] = o.vals[k]
			}
			return out, nil
		case "get":
			if len(a) == 0 {
				return nil, errors.New("get() needs a key")
			}
			if v, ok := o.Get(str(a[0])); ok {
				return v, nil
			}
			if len(a) > 1 {
				return a[1], nil
			}
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%s has no method %s", typeName(obj), name)
}

// stringMethod calls a Python str method on m. Methods returning text keep
// m's content marks on the bytes they keep.
func stringMethod(m marked, name string, a []Value) (Value, error) {
	s := m.s
	argText := func(i int) (marked, bool) {
		if i < len(a) {
			return textOf(a[i])
		}
		return marked{}, false
	}
	arg := func(i int) (string, bool) {
		t, ok := argText(i)
		return t.s, ok
	}
	switch name {
	case "startswith", "endswith":
		p, ok := arg(0)
		if !ok {
			return nil, fmt.Errorf("%s() needs a string", name)
		}
		if name == "startswith" {
			return strings.HasPrefix(s, p), nil
		}
		return strings.HasSuffix(s, p), nil
	case "strip", "lstrip", "rstrip":
		chars, given := arg(0)
		left := func(x string) string { return strings.TrimLeftFunc(x, unicode.IsSpace) }
		right := func(x string) string { return strings.TrimRightFunc(x, unicode.IsSpace) }
		if given {
			left = func(x string) string { return strings.TrimLeft(x, chars) }
			right = func(x string) string { return strings.TrimRight(x, chars) }
		}
		keep := func(x string) string { return x }
		switch name {
		case "lstrip":
			right = keep
		case "rstrip":
			left = keep
		}
		return trimmed(m, left, right).value(), nil
	case "split":
		sep, given := arg(0)
		n := -1
		if len(a) > 1 {
			if k, ok := a[1].(int64); ok && k >= 0 {
				n = int(k) + 1
			}
		}
		if given && sep == "" {
			return nil, errors.New("split() separator is empty")
		}
		return split(m, sep, given, n), nil
	case "upper":
		return caseMapped(m, strings.ToUpper, func(r rune) string { return string(unicode.ToUpper(r)) }), nil
	case "lower":
		return caseMapped(m, strings.ToLower, func(r rune) string { return string(unicode.ToLower(r)) }), nil
	case "title":
		return caseMapped(m, titleCase, titleRunes()), nil
	case "capitalize":
		return caseMapped(m, capitalize, capitalizeRunes()), nil
	case "replace":
		old, ok1 := arg(0)
		nw, ok2 := argText(1)
		if !ok1 || !ok2 {
			return nil, errors.New("replace() needs two strings")
		}
		return replaceAll(m, old, nw), nil
	case "find":
		p, _ := arg(0)
		return int64(strings.Index(s, p)), nil
	case "count":
		p, _ := arg(0)
		return int64(strings.Count(s, p)), nil
	case "join":
		if len(a) == 1 {
			return join(a[0], m)
		}
	case "isdigit":
		return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0, nil
	}
	return nil, fmt.Errorf("string has no method %s", name)
}

// split is Python's str.split keeping marks: on sep when given, at most n
// parts (n < 0: all), else on runs of whitespace.
func split(m marked, sep string, given bool, n int) []Value {
	out := []Value{}
	if !given {
		start := -1
		for i, r := range m.s {
			switch {
			case unicode.IsSpace(r) && start >= 0:
				out = append(out, m.sub(start, i).value())
				start = -1
			case !unicode.IsSpace(r) && start < 0:
				start = i
			}
		}
		if start >= 0 {
			out = append(out, m.sub(start, len(m.s)).value())
		}
		return out
	}
	i := 0
	for n < 0 || len(out) < n-1 {
		j := strings.Index(m.s[i:], sep)
		if j < 0 {
			break
		}
		out = append(out, m.sub(i, i+j).value())
		i += j + len(sep)
	}
	return append(out, m.sub(i, len(m.s)).value())
}

// join concatenates the items of v as strings with sep between them.
func join(v Value, sep marked) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	parts := make([]marked, len(items))
	hasSpans := len(sep.spans) > 0
	for i, it := range items {
		parts[i] = strMarked(it)
		hasSpans = hasSpans || len(parts[i].spans) > 0
	}
	if !hasSpans {
		strs := make([]string, len(parts))
		for i, p := range parts {
			strs[i] = p.s
		}
		return strings.Join(strs, sep.s), nil
	}
	var b textBuilder
	for i, p := range parts {
		if i > 0 {
			b.write(sep)
		}
		b.write(p)
	}
	return b.value(), nil
}

// caseMapped applies a per-character case mapping: whole for plain text,
// one character at a time (perRune) when marks must follow the characters.
func caseMapped(m marked, whole func(string) string, perRune func(rune) string) Value {
	if len(m.spans) == 0 {
		return whole(m.s)
	}
	return m.mapRunes(perRune).value()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	rs := []rune(strings.ToLower(s))
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

// capitalizeRunes is capitalize one character at a time.
func capitalizeRunes() func(rune) string {
	first := true
	return func(r rune) string {
		if first {
			first = false
			return string(unicode.ToUpper(unicode.ToLower(r)))
		}
		return string(unicode.ToLower(r))
	}
}

// titleRunes is titleCase one character at a time.
func titleRunes() func(rune) string {
	start := true
	return func(r rune) string {
		if !unicode.IsLetter(r) {
			start = true
			return string(r)
		}
		up := start
		start = false
		if up {
			return string(unicode.ToUpper(r))
		}
		return string(unicode.ToLower(r))
	}
}

// htmlEscape is the escape filter.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(s)
}

func titleCase(s string) string {
	rs := []rune(s)
	start := true
	for i, r := range rs {
		if unicode.IsLetter(r) {
			if start {
				rs[i] = unicode.ToUpper(r)
			} else {
				rs[i] = unicode.ToLower(r)
			}
			start = false
		} else {
			start = true
		}
	}
	return string(rs)
}

func (r *renderer) evalFilter(e *filterExpr, s *scope) (Value, error) {
	obj, err := r.eval(e.obj, s)
	if err != nil {
		return nil, err
	}
	args, kw, err := r.evalArgs(e.args, e.kwargs, s)
	if err != nil {
		return nil, err
	}
	v, err := applyFilter(e.name, obj, args, kw)
	if err != nil {
		return nil, errf(e.line, "filter %s: %v", e.name, err)
	}
	return v, nil
}

// applyFilter applies the filter name to v with positional arguments a and
// keyword arguments kw.
func applyFilter(name string, v Value, a []Value, kw map[string]Value) (Value, error) {
	switch name {
	case "tojson", "string", "trim", "upper", "lower", "title", "capitalize", "safe", "e", "escape", "replace", "indent":
		return textFilter(name, v, a, kw)
	case "length", "count", "join", "first", "last", "list", "items", "reverse", "selectattr", "rejectattr", "map", "unique", "dictsort":
		return sequenceFilter(name, v, a, kw)
	case "default", "d", "int", "float", "abs", "round":
		return valueFilter(name, v, a, kw)
	}
	return nil, errUnknownFilter
}

func selectAttr(keep bool, v Value, a []Value) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(a) == 0 {
		return nil, errors.New("needs an attribute name")
	}
	out := []Value{}
	for _, it := range items {
		attr := getAttr(it, str(a[0]))
		ok := truthy(attr)
		if len(a) > 1 {
			if ok, err = applyTest(str(a[1]), attr, a[2:]); err != nil {
				return nil, err
			}
		}
		if ok == keep {
			out = append(out, it)
		}
	}
	return out, nil
}

func (r *renderer) evalTest(e *testExpr, s *scope) (Value, error) {
	obj, err := r.eval(e.obj, s)
	if err != nil {
		return nil, err
	}
	args, _, err := r.evalArgs(e.args, nil, s)
	if err != nil {
		return nil, err
	}
	ok, err := applyTest(e.name, obj, args)
	if err != nil {
		return nil, errf(e.line, "test %s: %v", e.name, err)
	}
	return ok != e.negate, nil
}

func applyTest(name string, v Value, a []Value) (bool, error) {
	switch name {
	case "defined":
		_, undef := v.(Undefined)
		return !undef, nil
	case "undefined":
		_, undef := v.(Undefined)
		return undef, nil
	case "none":
		return v == nil, nil
	case "string":
		_, ok := textOf(v)
		return ok, nil
	case "number":
		switch v.(type) {
		case int64, float64:
			return true, nil
		}
		return false, nil
	case "integer":
		_, ok := v.(int64)
		return ok, nil
	case "float":
		_, ok := v.(float64)
		return ok, nil
	case "boolean":
		_, ok := v.(bool)
		return ok, nil
	case "true":
		b, ok := v.(bool)
		return ok && b, nil
	case "false":
		b, ok := v.(bool)
		return ok && !b, nil
	case "mapping":
		_, ok := v.(*Map)
		return ok, nil
	case "sequence", "iterable":
		switch v.(type) {
		case []Value, string, *marked, *Map:
			return true, nil
		}
		return false, nil
	case "callable":
		switch v.(type) {
		case builtin, *macro:
			return true, nil
		}
		return false, nil
	case "equalto", "eq", "==", "sameas":
		return len(a) > 0 && equal(v, a[0]), nil
	case "ne", "!=":
		return len(a) > 0 && !equal(v, a[0]), nil
	case "in":
		if len(a) == 0 {
			return false, nil
		}
		return contains(a[0], v)
	case "odd", "even":
		n, ok := v.(int64)
		return ok && (n%2 != 0) == (name == "odd"), nil
	case "lower", "upper":
		s, ok := plain(v).(string)
		if name == "lower" {
			return ok && s == strings.ToLower(s), nil
		}
		return ok && s == strings.ToUpper(s), nil
	}
	return false, errors.New("unknown test")
}
