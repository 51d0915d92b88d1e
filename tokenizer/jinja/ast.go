package jinja

// Statements.
type (
	node interface{}

	textNode   struct{ text string }
	outputNode struct {
		expr expr
		line int
	}
	ifNode struct {
		conds  []expr
		bodies [][]node // len(conds) bodies, plus one for else when present
		line   int
	}
	forNode struct {
		vars      []string
		iter      expr
		cond      expr // inline "if", may be nil
		body, els []node
		line      int
	}
	setNode struct {
		target string // variable, or namespace for attr
		attr   string // set ns.attr = ...
		vars   []string
		value  expr
		body   []node // {% set x %}...{% endset %}
		line   int
	}
	macroNode struct {
		name     string
		params   []string
		defaults map[string]expr
		body     []node
		line     int
	}
)

// Expressions.
type (
	expr interface{}

	literal  struct{ v Value }
	nameExpr struct {
		name string
		line int
	}
	listExpr  struct{ items []expr }
	tupleExpr struct{ items []expr }
	dictExpr  struct{ keys, vals []expr }
	attrExpr  struct {
		obj  expr
		name string
		line int
	}
	indexExpr struct {
		obj, index expr
		line       int
	}
	sliceExpr struct {
		obj               expr
		start, stop, step expr // each may be nil
		line              int
	}
	callExpr struct {
		fn      expr
		args    []expr
		kwargs  map[string]expr
		kwnames []string
		line    int
	}
	filterExpr struct {
		obj    expr
		name   string
		args   []expr
		kwargs map[string]expr
		line   int
	}
	testExpr struct {
		obj    expr
		name   string
		args   []expr
		negate bool
		line   int
	}
	unaryExpr struct {
		op   string
		x    expr
		line int
	}
	binaryExpr struct {
		op   string
		l, r expr
		line int
	}
	condExpr struct {
		cond, yes, no expr // no may be nil
	}
)
