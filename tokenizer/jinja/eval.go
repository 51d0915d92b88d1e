package jinja

import (
	"fmt"
	"math"
	"strings"
)

// Template is a parsed template, safe for concurrent Render calls.
type Template struct {
	nodes []node
}

// Parse parses a template source.
func Parse(src string) (*Template, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	nodes, _, err := p.parseBody()
	if err != nil {
		return nil, err
	}
	return &Template{nodes: nodes}, nil
}

// Render renders the template with the given variables.
func (t *Template) Render(vars map[string]Value) (string, error) {
	out, _, err := t.RenderContent(vars)
	return out, err
}

// RenderContent renders the template and says which byte ranges of the
// output came from content: strings the variables carried marked (see
// MarkContent), through whatever the template did to them. Everything else
// the template wrote itself.
func (t *Template) RenderContent(vars map[string]Value) (out string, spans []Span, err error) {
	defer func() { // a bug here must not take the server down
		if r := recover(); r != nil {
			out, spans, err = "", nil, fmt.Errorf("jinja: internal error: %v", r)
		}
	}()
	s := &scope{vars: map[string]Value{}}
	for k, v := range vars {
		s.vars[k] = v
	}
	var b textBuilder
	r := &renderer{out: &b, globals: globals()}
	if err := r.exec(t.nodes, s); err != nil {
		return "", nil, err
	}
	return b.String(), b.spans, nil
}

type scope struct {
	vars   map[string]Value
	parent *scope
}

func (s *scope) lookup(name string) (Value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type renderer struct {
	out     *textBuilder
	globals map[string]Value
}

// macro is a {% macro %} bound to the scope it was defined in.
type macro struct {
	def   *macroNode
	scope *scope
}

func (r *renderer) exec(nodes []node, s *scope) error {
	for _, n := range nodes {
		if err := r.execNode(n, s); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) execNode(n node, s *scope) error {
	switch n := n.(type) {
	case *textNode:
		r.out.WriteString(n.text)
	case *outputNode:
		v, err := r.eval(n.expr, s)
		if err != nil {
			return err
		}
		r.out.writeValue(v)
	case *ifNode:
		for i, c := range n.conds {
			v, err := r.eval(c, s)
			if err != nil {
				return err
			}
			if truthy(v) {
				return r.exec(n.bodies[i], s)
			}
		}
		if len(n.bodies) > len(n.conds) {
			return r.exec(n.bodies[len(n.conds)], s)
		}
	case *forNode:
		return r.execFor(n, s)
	case *setNode:
		return r.execSet(n, s)
	case *macroNode:
		s.vars[n.name] = &macro{def: n, scope: s}
	default:
		return fmt.Errorf("jinja: unknown node %T", n)
	}
	return nil
}

func (r *renderer) execSet(n *setNode, s *scope) error {
	var v Value
	if n.body != nil {
		var b textBuilder
		sub := &renderer{out: &b, globals: r.globals}
		if err := sub.exec(n.body, s); err != nil {
			return err
		}
		v = b.value()
	} else {
		var err error
		if v, err = r.eval(n.value, s); err != nil {
			return err
		}
	}
	switch {
	case n.attr != "":
		obj, _ := s.lookup(n.target)
		ns, ok := obj.(*namespace)
		if !ok {
			return errf(n.line, "cannot set attribute %q on %s: not a namespace", n.attr, typeName(obj))
		}
		ns.m.Set(n.attr, v)
	case len(n.vars) > 0:
		items, err := iterate(v)
		if err != nil || len(items) != len(n.vars) {
			return errf(n.line, "cannot unpack %s into %d names", typeName(v), len(n.vars))
		}
		for i, name := range n.vars {
			s.vars[name] = items[i]
		}
	default:
		s.vars[n.target] = v
	}
	return nil
}

func (r *renderer) execFor(n *forNode, s *scope) error {
	it, err := r.eval(n.iter, s)
	if err != nil {
		return err
	}
	items, err := iterate(it)
	if err != nil {
		return errf(n.line, "%v", err)
	}
	if m, ok := it.(*Map); ok && len(n.vars) == 1 { // iterating a dict yields its keys
		items = make([]Value, len(m.keys))
		for i, k := range m.keys {
			items[i] = m.key(k)
		}
	}
	inner := &scope{vars: map[string]Value{}, parent: s}
	if n.cond != nil { // the inline if filters before loop counts
		var kept []Value
		for _, item := range items {
			if err := r.bind(n, inner, item); err != nil {
				return err
			}
			v, err := r.eval(n.cond, inner)
			if err != nil {
				return err
			}
			if truthy(v) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return r.exec(n.els, s)
	}
	for i, item := range items {
		inner.vars = map[string]Value{}
		if err := r.bind(n, inner, item); err != nil {
			return err
		}
		loop := &Map{keys: make([]string, 0, 8), vals: make(map[string]Value, 8)} // sized for its 8 entries
		loop.Set("index0", int64(i))
		loop.Set("index", int64(i+1))
		loop.Set("revindex", int64(len(items)-i))
		loop.Set("revindex0", int64(len(items)-i-1))
		loop.Set("first", i == 0)
		loop.Set("last", i == len(items)-1)
		loop.Set("length", int64(len(items)))
		if i > 0 {
			loop.Set("previtem", items[i-1])
		}
		if i+1 < len(items) {
			loop.Set("nextitem", items[i+1])
		}
		inner.vars["loop"] = loop
		if err := r.exec(n.body, inner); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) bind(n *forNode, s *scope, item Value) error {
	if len(n.vars) == 1 {
		s.vars[n.vars[0]] = item
		return nil
	}
	parts, err := iterate(item)
	if err != nil || len(parts) != len(n.vars) {
		return errf(n.line, "cannot unpack %s into %d loop variables", typeName(item), len(n.vars))
	}
	for i, name := range n.vars {
		s.vars[name] = parts[i]
	}
	return nil
}

func (r *renderer) eval(e expr, s *scope) (Value, error) {
	switch e := e.(type) {
	case *literal:
		return e.v, nil
	case *nameExpr:
		if v, ok := s.lookup(e.name); ok {
			return v, nil
		}
		if v, ok := r.globals[e.name]; ok {
			return v, nil
		}
		return Undefined{}, nil
	case *listExpr:
		return r.evalList(e.items, s)
	case *tupleExpr:
		return r.evalList(e.items, s)
	case *dictExpr:
		m := NewMap()
		for i := range e.keys {
			k, err := r.eval(e.keys[i], s)
			if err != nil {
				return nil, err
			}
			v, err := r.eval(e.vals[i], s)
			if err != nil {
				return nil, err
			}
			if km, ok := k.(*marked); ok {
				m.contentKeys = true // a key from content keeps its mark
				k = km.s
			}
			m.Set(str(k), v)
		}
		return m, nil
	case *attrExpr:
		obj, err := r.eval(e.obj, s)
		if err != nil {
			return nil, err
		}
		return getAttr(obj, e.name), nil
	case *indexExpr:
		obj, err := r.eval(e.obj, s)
		if err != nil {
			return nil, err
		}
		idx, err := r.eval(e.index, s)
		if err != nil {
			return nil, err
		}
		return getItem(obj, idx), nil
	case *sliceExpr:
		return r.evalSlice(e, s)
	case *callExpr:
		return r.evalCall(e, s)
	case *filterExpr:
		return r.evalFilter(e, s)
	case *testExpr:
		return r.evalTest(e, s)
	case *unaryExpr:
		x, err := r.eval(e.x, s)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "not":
			return !truthy(x), nil
		case "-":
			switch n := x.(type) {
			case int64:
				return -n, nil
			case float64:
				return -n, nil
			}
			return nil, errf(e.line, "cannot negate %s", typeName(x))
		}
		return x, nil
	case *binaryExpr:
		return r.evalBinary(e, s)
	case *condExpr:
		c, err := r.eval(e.cond, s)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(e.yes, s)
		}
		if e.no == nil {
			return Undefined{}, nil
		}
		return r.eval(e.no, s)
	}
	return nil, fmt.Errorf("jinja: unknown expression %T", e)
}

func (r *renderer) evalList(items []expr, s *scope) (Value, error) {
	l := make([]Value, len(items))
	for i, it := range items {
		v, err := r.eval(it, s)
		if err != nil {
			return nil, err
		}
		l[i] = v
	}
	return l, nil
}

func getAttr(obj Value, name string) Value {
	switch o := obj.(type) {
	case *Map:
		if v, ok := o.Get(name); ok {
			return v
		}
	case *namespace:
		if v, ok := o.m.Get(name); ok {
			return v
		}
	}
	return Undefined{}
}

func getItem(obj Value, idx Value) Value {
	switch o := obj.(type) {
	case *Map:
		if v, ok := o.Get(str(idx)); ok {
			return v
		}
	case *namespace:
		if v, ok := o.m.Get(str(idx)); ok {
			return v
		}
	case []Value:
		if i, ok := idx.(int64); ok {
			if i < 0 {
				i += int64(len(o))
			}
			if i >= 0 && i < int64(len(o)) {
				return o[i]
			}
		}
	case string, *marked:
		if i, ok := idx.(int64); ok {
			m, _ := textOf(o)
			chars := m.chars()
			if i < 0 {
				i += int64(len(chars))
			}
			if i >= 0 && i < int64(len(chars)) {
				return chars[i]
			}
		}
	}
	return Undefined{}
}

func (r *renderer) evalSlice(e *sliceExpr, s *scope) (Value, error) {
	obj, err := r.eval(e.obj, s)
	if err != nil {
		return nil, err
	}
	var bounds [3]*int64
	for i, x := range []expr{e.start, e.stop, e.step} {
		if x == nil {
			continue
		}
		v, err := r.eval(x, s)
		if err != nil {
			return nil, err
		}
		if n, ok := v.(int64); ok {
			bounds[i] = &n
		} else if v != nil {
			return nil, errf(e.line, "slice bounds must be integers")
		}
	}
	var items []Value
	m, isStr := textOf(obj)
	switch o := obj.(type) {
	case []Value:
		items = o
	case string, *marked:
		items = m.chars()
	default:
		return nil, errf(e.line, "cannot slice %s", typeName(obj))
	}
	out := pySlice(items, bounds[0], bounds[1], bounds[2])
	if isStr {
		var b textBuilder
		for _, v := range out {
			b.writeValue(v)
		}
		return b.value(), nil
	}
	return out, nil
}

// pySlice applies Python slice semantics.
func pySlice(items []Value, start, stop, step *int64) []Value {
	n := int64(len(items))
	st := int64(1)
	if step != nil {
		st = *step
	}
	if st == 0 {
		return nil
	}
	norm := func(p *int64, def int64, lo, hi int64) int64 {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += n
		}
		return max(lo, min(v, hi))
	}
	var out []Value
	if st > 0 {
		a, b := norm(start, 0, 0, n), norm(stop, n, 0, n)
		for i := a; i < b; i += st {
			out = append(out, items[i])
		}
	} else {
		a, b := norm(start, n-1, -1, n-1), norm(stop, -1, -1, n-1)
		for i := a; i > b; i += st {
			out = append(out, items[i])
		}
	}
	if out == nil {
		out = []Value{}
	}
	return out
}

func (r *renderer) evalBinary(e *binaryExpr, s *scope) (Value, error) {
	l, err := r.eval(e.l, s)
	if err != nil {
		return nil, err
	}
	switch e.op { // short-circuit
	case "and":
		if !truthy(l) {
			return l, nil
		}
		return r.eval(e.r, s)
	case "or":
		if truthy(l) {
			return l, nil
		}
		return r.eval(e.r, s)
	}
	rv, err := r.eval(e.r, s)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "~":
		return concat(strMarked(l), strMarked(rv)), nil
	case "==":
		return equal(l, rv), nil
	case "!=":
		return !equal(l, rv), nil
	case "in", "not in":
		in, err := contains(rv, l)
		if err != nil {
			return nil, errf(e.line, "%v", err)
		}
		return in == (e.op == "in"), nil
	case "<", ">", "<=", ">=":
		c, err := compare(l, rv)
		if err != nil {
			return nil, errf(e.line, "%v", err)
		}
		switch e.op {
		case "<":
			return c < 0, nil
		case ">":
			return c > 0, nil
		case "<=":
			return c <= 0, nil
		}
		return c >= 0, nil
	}
	return arith(e.op, l, rv, e.line)
}

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
