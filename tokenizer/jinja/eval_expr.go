package jinja

import "fmt"

// eval evaluates an expression in scope s; eval.go runs the statements
// that call it, operators.go holds the operators' value rules.
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
