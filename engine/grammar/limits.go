package grammar

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Limits bound the work one compilation may do, so that a small schema
// cannot buy a large amount of CPU or memory: the cheap checks (size,
// nesting, number lengths) run over the decoded schema before anything is
// compiled, and the budgets stop a compilation that grows past them (type
// lists compile their keywords once per listed type, so work can exceed
// the schema's size). A zero field means the DefaultLimits value.
type Limits struct {
	SchemaBytes  int // the schema's JSON text
	Depth        int // nesting of JSON objects and arrays in the schema
	NumberLen    int // characters of any number literal in the schema
	Subschemas   int // subschemas compiled, counting each time one is compiled
	LiteralBytes int // canonical bytes of all enum and const values compiled
}

// DefaultLimits are generous for real tool and response schemas (hundreds
// of properties, long enums) and keep a compilation to milliseconds.
func DefaultLimits() Limits {
	return Limits{SchemaBytes: 1 << 20, Depth: 128, NumberLen: 64, Subschemas: 16384, LiteralBytes: 4 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *int }{
		{&l.SchemaBytes, &d.SchemaBytes}, {&l.Depth, &d.Depth}, {&l.NumberLen, &d.NumberLen},
		{&l.Subschemas, &d.Subschemas}, {&l.LiteralBytes, &d.LiteralBytes},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// LimitError reports a schema over one of the Limits, naming it.
type LimitError struct {
	What  string // what is too large
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("grammar: schema too large: %s exceeds the limit of %d", e.What, e.Limit)
}

// precheck walks the decoded schema once, checking nesting and number
// lengths, before any compilation: a number is only ever handled as text,
// but its length bounds every later step's cost.
func precheck(v any, depth int, l *Limits) error {
	switch x := v.(type) {
	case map[string]any:
		if depth >= l.Depth {
			return &LimitError{What: "nesting depth", Limit: l.Depth}
		}
		for _, e := range x {
			if err := precheck(e, depth+1, l); err != nil {
				return err
			}
		}
	case []any:
		if depth >= l.Depth {
			return &LimitError{What: "nesting depth", Limit: l.Depth}
		}
		for _, e := range x {
			if err := precheck(e, depth+1, l); err != nil {
				return err
			}
		}
	case json.Number:
		if len(x) > l.NumberLen {
			return &LimitError{What: fmt.Sprintf("a number of %d characters", len(x)), Limit: l.NumberLen}
		}
	}
	return nil
}

// budget counts a compilation's work against its Limits and checks the
// caller's context, so that a client that left stops the work.
type budget struct {
	ctx        context.Context
	limits     Limits
	subschemas int
	literals   int
}

// subschema charges one compiled subschema.
func (b *budget) subschema() error {
	b.subschemas++
	if b.subschemas > b.limits.Subschemas {
		return &LimitError{What: "the number of subschemas to compile", Limit: b.limits.Subschemas}
	}
	if b.subschemas%256 == 0 {
		if err := b.ctx.Err(); err != nil {
			return fmt.Errorf("grammar: compilation stopped: %w", err)
		}
	}
	return nil
}

// literal charges n bytes of canonical enum or const encodings.
func (b *budget) literal(n int) error {
	b.literals += n
	if b.literals > b.limits.LiteralBytes {
		return &LimitError{What: "the bytes of enum and const values", Limit: b.limits.LiteralBytes}
	}
	return nil
}

// isInteger reports whether a JSON number literal denotes an integer, from
// its text alone: 1.50e1 and 1e999999 are integers, 1.5 and 15e-1 are
// not. It costs a pass over the text whatever the exponent, where a
// big.Rat would materialise 10^999999.
func isInteger(num string) bool {
	mant, exp := num, ""
	for i := 0; i < len(num); i++ {
		if num[i] == 'e' || num[i] == 'E' {
			mant, exp = num[:i], num[i+1:]
			break
		}
	}
	if len(mant) > 0 && mant[0] == '-' {
		mant = mant[1:]
	}
	intPart, frac := mant, ""
	for i := 0; i < len(mant); i++ {
		if mant[i] == '.' {
			intPart, frac = mant[:i], mant[i+1:]
			break
		}
	}
	// value = digits × 10^(exp - len(frac)); trailing zeros of digits raise
	// the power, and an all-zero mantissa is the integer 0.
	digits := intPart + frac
	zeros := 0
	for zeros < len(digits) && digits[len(digits)-1-zeros] == '0' {
		zeros++
	}
	if zeros == len(digits) {
		return true
	}
	need := len(frac) - zeros // the power of ten the exponent must reach
	e := 0
	if exp != "" {
		var err error
		if e, err = strconv.Atoi(exp); err != nil {
			// Only an exponent too large for an int gets here (the JSON
			// decoder checked the syntax): its sign decides.
			return exp[0] != '-'
		}
	}
	return e >= need
}
