package jinja

import (
	"strconv"
)

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.val == op
}

func (p *parser) isName(n string) bool {
	t := p.peek()
	return t.kind == tName && t.val == n
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return errf(p.peek().line, "expected %q, found %q", op, p.peek().val)
	}
	p.next()
	return nil
}

func (p *parser) expectName() (string, error) {
	t := p.next()
	if t.kind != tName {
		return "", errf(t.line, "expected a name, found %q", t.val)
	}
	return t.val, nil
}

func (p *parser) expectKind(k tokKind, what string) error {
	t := p.next()
	if t.kind != k {
		return errf(t.line, "expected %s, found %q", what, t.val)
	}
	return nil
}

// parseBody parses nodes until a statement whose keyword is in ends (not
// consumed) or EOF; it returns that keyword.
func (p *parser) parseBody(ends ...string) ([]node, string, error) {
	var nodes []node
	for {
		t := p.peek()
		switch t.kind {
		case tEOF:
			if len(ends) > 0 {
				return nil, "", errf(t.line, "unexpected end of template, expected %v", ends)
			}
			return nodes, "", nil
		case tText:
			p.next()
			nodes = append(nodes, &textNode{t.val})
		case tExprOpen:
			p.next()
			e, err := p.parseExpr()
			if err != nil {
				return nil, "", err
			}
			if err := p.expectKind(tExprClose, "}}"); err != nil {
				return nil, "", err
			}
			nodes = append(nodes, &outputNode{e, t.line})
		case tStmtOpen:
			kw := p.toks[p.pos+1]
			for _, e := range ends {
				if kw.kind == tName && kw.val == e {
					p.next()
					p.next()
					return nodes, e, nil
				}
			}
			p.next()
			n, err := p.parseStmt()
			if err != nil {
				return nil, "", err
			}
			if n != nil {
				nodes = append(nodes, n)
			}
		default:
			return nil, "", errf(t.line, "unexpected %q", t.val)
		}
	}
}

func (p *parser) endStmt() error { return p.expectKind(tStmtClose, "%}") }

func (p *parser) parseStmt() (node, error) {
	t := p.next()
	if t.kind != tName {
		return nil, errf(t.line, "expected a statement, found %q", t.val)
	}
	switch t.val {
	case "if":
		return p.parseIf(t.line)
	case "for":
		return p.parseFor(t.line)
	case "set":
		return p.parseSet(t.line)
	case "macro":
		return p.parseMacro(t.line)
	case "generation", "endgeneration": // transformers' assistant-mask markers: no output
		return nil, p.endStmt()
	}
	return nil, errf(t.line, "unknown statement %q", t.val)
}

func (p *parser) parseIf(line int) (node, error) {
	n := &ifNode{line: line}
	for {
		cond, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if err := p.endStmt(); err != nil {
			return nil, err
		}
		body, end, err := p.parseBody("elif", "else", "endif")
		if err != nil {
			return nil, err
		}
		n.conds, n.bodies = append(n.conds, cond), append(n.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.endStmt(); err != nil {
				return nil, err
			}
			body, _, err := p.parseBody("endif")
			if err != nil {
				return nil, err
			}
			n.bodies = append(n.bodies, body)
		}
		return n, p.endStmt()
	}
}

func (p *parser) parseFor(line int) (node, error) {
	n := &forNode{line: line}
	for {
		v, err := p.expectName()
		if err != nil {
			return nil, err
		}
		n.vars = append(n.vars, v)
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	if !p.isName("in") {
		return nil, errf(p.peek().line, "expected 'in' in for loop")
	}
	p.next()
	iter, err := p.parseOr() // not parseExpr: a trailing "if" filters the loop
	if err != nil {
		return nil, err
	}
	n.iter = iter
	if p.isName("if") {
		p.next()
		if n.cond, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	if err := p.endStmt(); err != nil {
		return nil, err
	}
	body, end, err := p.parseBody("else", "endfor")
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		if err := p.endStmt(); err != nil {
			return nil, err
		}
		if n.els, _, err = p.parseBody("endfor"); err != nil {
			return nil, err
		}
	}
	return n, p.endStmt()
}

func (p *parser) parseSet(line int) (node, error) {
	n := &setNode{line: line}
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	n.target = name
	switch {
	case p.isOp("."):
		p.next()
		if n.attr, err = p.expectName(); err != nil {
			return nil, err
		}
	case p.isOp(","):
		n.vars = []string{name}
		for p.isOp(",") {
			p.next()
			v, err := p.expectName()
			if err != nil {
				return nil, err
			}
			n.vars = append(n.vars, v)
		}
	}
	if p.peek().kind == tStmtClose { // block set
		p.next()
		body, _, err := p.parseBody("endset")
		if err != nil {
			return nil, err
		}
		n.body = body
		return n, p.endStmt()
	}
	if err := p.expectOp("="); err != nil {
		return nil, err
	}
	if n.value, err = p.parseExpr(); err != nil {
		return nil, err
	}
	return n, p.endStmt()
}

func (p *parser) parseMacro(line int) (node, error) {
	n := &macroNode{line: line, defaults: map[string]expr{}}
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	n.name = name
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	for !p.isOp(")") {
		param, err := p.expectName()
		if err != nil {
			return nil, err
		}
		n.params = append(n.params, param)
		if p.isOp("=") {
			p.next()
			if n.defaults[param], err = p.parseExpr(); err != nil {
				return nil, err
			}
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if err := p.endStmt(); err != nil {
		return nil, err
	}
	if n.body, _, err = p.parseBody("endmacro"); err != nil {
		return nil, err
	}
	return n, p.endStmt()
}

// Expressions, lowest precedence first.

func (p *parser) parseExpr() (expr, error) {
	yes, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if !p.isName("if") {
		return yes, nil
	}
	p.next()
	cond, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	c := &condExpr{cond: cond, yes: yes}
	if p.isName("else") {
		p.next()
		if c.no, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (p *parser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	for err == nil && p.isName("or") {
		line := p.next().line
		var r expr
		if r, err = p.parseAnd(); err == nil {
			l = &binaryExpr{"or", l, r, line}
		}
	}
	return l, err
}

func (p *parser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	for err == nil && p.isName("and") {
		line := p.next().line
		var r expr
		if r, err = p.parseNot(); err == nil {
			l = &binaryExpr{"and", l, r, line}
		}
	}
	return l, err
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		line := p.next().line
		x, err := p.parseNot()
		return &unaryExpr{"not", x, line}, err
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	l, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == ">" || t.val == "<=" || t.val == ">="):
			op = t.val
			p.next()
		case t.kind == tName && t.val == "in":
			op = "in"
			p.next()
		case t.kind == tName && t.val == "not" && p.toks[p.pos+1].kind == tName && p.toks[p.pos+1].val == "in":
			op = "not in"
			p.next()
			p.next()
		default:
			return l, nil
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		l = &binaryExpr{op, l, r, t.line}
	}
}

func (p *parser) parseMath1() (expr, error) {
	l, err := p.parseConcat()
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		t := p.next()
		var r expr
		if r, err = p.parseConcat(); err == nil {
			l = &binaryExpr{t.val, l, r, t.line}
		}
	}
	return l, err
}

func (p *parser) parseConcat() (expr, error) {
	l, err := p.parseMath2()
	for err == nil && p.isOp("~") {
		t := p.next()
		var r expr
		if r, err = p.parseMath2(); err == nil {
			l = &binaryExpr{"~", l, r, t.line}
		}
	}
	return l, err
}

func (p *parser) parseMath2() (expr, error) {
	l, err := p.parsePow()
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%")) {
		t := p.next()
		var r expr
		if r, err = p.parsePow(); err == nil {
			l = &binaryExpr{t.val, l, r, t.line}
		}
	}
	return l, err
}

func (p *parser) parsePow() (expr, error) {
	l, err := p.parseUnary()
	for err == nil && p.isOp("**") {
		t := p.next()
		var r expr
		if r, err = p.parseUnary(); err == nil {
			l = &binaryExpr{"**", l, r, t.line}
		}
	}
	return l, err
}

func (p *parser) parseUnary() (expr, error) {
	if p.isOp("-") || p.isOp("+") {
		t := p.next()
		x, err := p.parseUnary()
		return &unaryExpr{t.val, x, t.line}, err
	}
	x, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	if x, err = p.parsePostfix(x); err != nil {
		return nil, err
	}
	return p.parseFilters(x)
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tString:
		s := t.val
		for p.peek().kind == tString { // adjacent literals concatenate
			s += p.next().val
		}
		return &literal{s}, nil
	case tInt:
		v, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			return nil, errf(t.line, "bad integer %q", t.val)
		}
		return &literal{v}, nil
	case tFloat:
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, errf(t.line, "bad number %q", t.val)
		}
		return &literal{v}, nil
	case tName:
		switch t.val {
		case "true", "True":
			return &literal{true}, nil
		case "false", "False":
			return &literal{false}, nil
		case "none", "None":
			return &literal{nil}, nil
		}
		return &nameExpr{t.val, t.line}, nil
	case tOp:
		switch t.val {
		case "(":
			if p.isOp(")") {
				p.next()
				return &tupleExpr{}, nil
			}
			e, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			if p.isOp(",") {
				items := []expr{e}
				for p.isOp(",") {
					p.next()
					if p.isOp(")") {
						break
					}
					it, err := p.parseExpr()
					if err != nil {
						return nil, err
					}
					items = append(items, it)
				}
				e = &tupleExpr{items}
			}
			return e, p.expectOp(")")
		case "[":
			items, err := p.parseList("]")
			return &listExpr{items}, err
		case "{":
			d := &dictExpr{}
			for !p.isOp("}") {
				k, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				d.keys, d.vals = append(d.keys, k), append(d.vals, v)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			return d, p.expectOp("}")
		}
	}
	return nil, errf(t.line, "unexpected %q in expression", t.val)
}

func (p *parser) parseList(end string) ([]expr, error) {
	var items []expr
	for !p.isOp(end) {
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	return items, p.expectOp(end)
}

func (p *parser) parsePostfix(x expr) (expr, error) {
	for {
		t := p.peek()
		switch {
		case t.kind == tOp && t.val == ".":
			p.next()
			name, err := p.expectName()
			if err != nil {
				return nil, err
			}
			x = &attrExpr{x, name, t.line}
		case t.kind == tOp && t.val == "[":
			p.next()
			var err error
			if x, err = p.parseSubscript(x, t.line); err != nil {
				return nil, err
			}
		case t.kind == tOp && t.val == "(":
			p.next()
			c := &callExpr{fn: x, line: t.line}
			if err := p.parseArgs(&c.args, &c.kwargs, &c.kwnames); err != nil {
				return nil, err
			}
			x = c
		default:
			return x, nil
		}
	}
}

// parseArgs parses call arguments after "(" up to and including ")".
func (p *parser) parseArgs(args *[]expr, kwargs *map[string]expr, names *[]string) error {
	for !p.isOp(")") {
		if t := p.peek(); t.kind == tName && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].val == "=" {
			p.next()
			p.next()
			v, err := p.parseExpr()
			if err != nil {
				return err
			}
			if *kwargs == nil {
				*kwargs = map[string]expr{}
			}
			(*kwargs)[t.val] = v
			if names != nil {
				*names = append(*names, t.val)
			}
		} else {
			v, err := p.parseExpr()
			if err != nil {
				return err
			}
			*args = append(*args, v)
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	return p.expectOp(")")
}

func (p *parser) parseSubscript(x expr, line int) (expr, error) {
	var parts [3]expr
	n := 0
	isSlice := false
	for {
		if p.isOp(":") {
			isSlice = true
			p.next()
			n++
			if n > 2 {
				return nil, errf(line, "too many ':' in slice")
			}
			continue
		}
		if p.isOp("]") {
			p.next()
			break
		}
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		parts[n] = e
	}
	if !isSlice {
		return &indexExpr{x, parts[0], line}, nil
	}
	return &sliceExpr{x, parts[0], parts[1], parts[2], line}, nil
}

func (p *parser) parseFilters(x expr) (expr, error) {
	for {
		switch {
		case p.isOp("|"):
			t := p.next()
			name, err := p.expectName()
			if err != nil {
				return nil, err
			}
			f := &filterExpr{obj: x, name: name, line: t.line}
			if p.isOp("(") {
				p.next()
				if err := p.parseArgs(&f.args, &f.kwargs, nil); err != nil {
					return nil, err
				}
			}
			x = f
		case p.isName("is"):
			t := p.next()
			te := &testExpr{obj: x, line: t.line}
			if p.isName("not") {
				p.next()
				te.negate = true
			}
			name, err := p.expectName()
			if err != nil {
				return nil, err
			}
			te.name = name
			if p.isOp("(") {
				p.next()
				var kw map[string]expr
				if err := p.parseArgs(&te.args, &kw, nil); err != nil {
					return nil, err
				}
			} else if k := p.peek().kind; k == tString || k == tInt || k == tFloat || k == tName && !isKeyword(p.peek().val) {
				arg, err := p.parsePrimary()
				if err != nil {
					return nil, err
				}
				te.args = []expr{arg}
			}
			x = te
		default:
			return x, nil
		}
	}
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "in", "is", "if", "else":
		return true
	}
	return false
}
