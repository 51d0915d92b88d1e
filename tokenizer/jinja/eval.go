package jinja

import (
	"fmt"
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
