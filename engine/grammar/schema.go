package grammar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Grammar is a compiled JSON Schema (or the json_object mode). It is
// read-only and safe to share between goroutines; matchers hold the state.
type Grammar struct {
	root *node
}

// annotations are keywords that do not constrain a value, so ignoring them
// loses nothing.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"$schema": true, "$id": true, "$comment": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$defs": true, "definitions": true,
	"contentMediaType": true, "contentEncoding": true, "format": true,
}

// constraints are the keywords the compiler enforces. Any other keyword that
// is not an annotation is rejected with an error naming it.
var constraints = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "maxItems": true, "enum": true, "const": true,
	"anyOf": true, "minLength": true, "maxLength": true,
}

// Compile compiles a JSON Schema into a Grammar under DefaultLimits. It
// returns an error naming the first keyword or construct it cannot enforce,
// rather than producing a grammar that would let unconstrained output
// through.
func Compile(schema []byte) (*Grammar, error) {
	return CompileContext(context.Background(), schema, Limits{})
}

// CompileContext is Compile under limits (zero fields: DefaultLimits),
// stopping when ctx ends. Cheap checks run first (the schema's size before
// it is decoded, nesting and number lengths before anything is compiled),
// then compilation runs under the work budgets; an error over a limit is a
// *LimitError naming it.
func CompileContext(ctx context.Context, schema []byte, limits Limits) (*Grammar, error) {
	limits = limits.withDefaults()
	if len(schema) > limits.SchemaBytes {
		return nil, &LimitError{What: fmt.Sprintf("a schema of %d bytes", len(schema)), Limit: limits.SchemaBytes}
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("grammar: schema is not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("grammar: schema has trailing data")
	}
	if err := precheck(v, 0, &limits); err != nil {
		return nil, err
	}
	c := compiler{any: anyValue(), budget: budget{ctx: ctx, limits: limits}}
	root, err := c.compile(v, "#")
	if err != nil {
		return nil, err
	}
	setLeast(root)
	return &Grammar{root: root}, nil
}

// JSONObject returns the grammar of the json_object response format: any
// JSON object, with values of any type.
func JSONObject() *Grammar {
	root := freeObject(anyValue())
	setLeast(root)
	return &Grammar{root: root}
}

// anyValue builds the node matching any JSON value. Objects and arrays refer
// back to it, so the graph is cyclic.
func anyValue() *node {
	any := &node{kind: kindAnyOf}
	obj := freeObject(any)
	arr := newNode(kindArray)
	arr.item, arr.maxItems = any, noLimit
	lit := newNode(kindLiteral)
	lit.lits = [][]byte{[]byte("true"), []byte("false"), []byte("null")}
	any.alts = []*node{obj, arr, newNode(kindString), newNode(kindNumber), lit}
	return any
}

type compiler struct {
	any    *node // shared "any value" node
	budget budget
}

func (c *compiler) compile(v any, path string) (*node, error) {
	if err := c.budget.subschema(); err != nil {
		return nil, err
	}
	switch s := v.(type) {
	case bool:
		if !s {
			return nil, fmt.Errorf("grammar: schema false at %s matches nothing", path)
		}
		return c.any, nil
	case map[string]any:
		return c.compileObject(s, path)
	default:
		return nil, fmt.Errorf("grammar: schema at %s is not an object or boolean", path)
	}
}

func (c *compiler) compileObject(s map[string]any, path string) (*node, error) {
	names := make([]string, 0, len(s))
	for k := range s {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !constraints[k] && !annotations[k] && !strings.HasPrefix(k, "x-") {
			return nil, fmt.Errorf("grammar: %s is not supported (at %s)", k, path)
		}
	}
	if alts, ok := s["anyOf"]; ok {
		for _, k := range names {
			if constraints[k] && k != "anyOf" {
				return nil, fmt.Errorf("grammar: anyOf with sibling keyword %s is not supported (at %s)", k, path)
			}
		}
		return c.compileAnyOf(alts, path+"/anyOf")
	}
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	if hasEnum || hasConst {
		return c.compileLiterals(s, path)
	}
	types, err := typesOf(s, path)
	if err != nil {
		return nil, err
	}
	if len(types) == 1 {
		return c.compileType(types[0], s, path)
	}
	any := &node{kind: kindAnyOf}
	for _, t := range types {
		n, err := c.compileType(t, s, path)
		if err != nil {
			return nil, err
		}
		any.alts = append(any.alts, n.alts...)
	}
	return any, nil
}

// typesOf returns the declared types, or the one type implied by the
// keywords present when "type" is absent ("any" when nothing implies one).
func typesOf(s map[string]any, path string) ([]string, error) {
	switch t := s["type"].(type) {
	case string:
		return []string{t}, nil
	case []any:
		if len(t) == 0 {
			return nil, fmt.Errorf("grammar: empty type list at %s", path)
		}
		out := make([]string, len(t))
		for i, e := range t {
			name, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("grammar: type list at %s holds a non-string", path)
			}
			out[i] = name
		}
		return out, nil
	case nil:
		if _, ok := s["type"]; ok {
			return nil, fmt.Errorf("grammar: type at %s is null", path)
		}
	default:
		return nil, fmt.Errorf("grammar: type at %s is not a string or list", path)
	}
	for _, k := range []string{"properties", "required", "additionalProperties"} {
		if _, ok := s[k]; ok {
			return []string{"object"}, nil
		}
	}
	for _, k := range []string{"items", "minItems", "maxItems"} {
		if _, ok := s[k]; ok {
			return []string{"array"}, nil
		}
	}
	return []string{"any"}, nil
}

func (c *compiler) compileType(t string, s map[string]any, path string) (*node, error) {
	switch t {
	case "any":
		return c.any, nil
	case "object":
		return c.compileProperties(s, path)
	case "array":
		return c.compileArray(s, path)
	case "string":
		// Formats (date-time, date, uuid, email, ...) are annotations here:
		// the value is generated as a plain string.
		return compileString(s, path)
	case "number", "integer":
		n := newNode(kindNumber)
		n.integer = t == "integer"
		return n, nil
	case "boolean":
		n := newNode(kindLiteral)
		n.lits = [][]byte{[]byte("true"), []byte("false")}
		return n, nil
	case "null":
		n := newNode(kindLiteral)
		n.lits = [][]byte{[]byte("null")}
		return n, nil
	}
	return nil, fmt.Errorf("grammar: unknown type %q at %s", t, path)
}

func compileString(s map[string]any, path string) (*node, error) {
	n := newNode(kindString)
	if v, ok := s["minLength"]; ok {
		m, err := count(v, "minLength", path)
		if err != nil {
			return nil, err
		}
		n.minLen = m
	}
	if v, ok := s["maxLength"]; ok {
		m, err := count(v, "maxLength", path)
		if err != nil {
			return nil, err
		}
		n.maxLen = m
	}
	if n.minLen > n.maxLen {
		return nil, fmt.Errorf("grammar: minLength > maxLength at %s matches nothing", path)
	}
	return n, nil
}

func (c *compiler) compileAnyOf(v any, path string) (*node, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("grammar: anyOf at %s is not a non-empty list", path)
	}
	any := &node{kind: kindAnyOf}
	for i, alt := range list {
		n, err := c.compile(alt, fmt.Sprintf("%s/%d", path, i))
		if err != nil {
			return nil, err
		}
		any.alts = append(any.alts, n.alts...)
	}
	return any, nil
}

func (c *compiler) compileProperties(s map[string]any, path string) (*node, error) {
	n := newNode(kindObject)
	props, _ := s["properties"].(map[string]any)
	if p, ok := s["properties"]; ok && props == nil {
		return nil, fmt.Errorf("grammar: properties at %s is %T, not an object", path, p)
	}
	if len(props) > maxSet {
		return nil, fmt.Errorf("grammar: more than %d properties at %s are not supported", maxSet, path)
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	index := make(map[string]int, len(names))
	for i, k := range names {
		v, err := c.compile(props[k], path+"/properties/"+k)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, canonical(k))
		n.values = append(n.values, v)
		index[k] = i
	}
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return nil, fmt.Errorf("grammar: required at %s is not a list", path)
		}
		for _, e := range list {
			name, _ := e.(string)
			i, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("grammar: required property %q at %s is not declared in properties", name, path)
			}
			n.required |= 1 << i
		}
	}
	extra, hasExtra := s["additionalProperties"]
	if len(names) > 0 {
		// Strict output: only declared properties, whatever additionalProperties says,
		// unless it is a schema, which would need free keys beside declared ones.
		if _, isSchema := extra.(map[string]any); isSchema {
			return nil, fmt.Errorf("grammar: additionalProperties schema beside properties is not supported (at %s)", path)
		}
		return n, nil
	}
	switch e := extra.(type) {
	case bool:
		if e {
			return freeObject(c.any), nil
		}
		return n, nil // additionalProperties:false and no properties: {} only
	case map[string]any:
		v, err := c.compile(e, path+"/additionalProperties")
		if err != nil {
			return nil, err
		}
		return freeObject(v), nil
	default:
		if hasExtra {
			return nil, fmt.Errorf("grammar: additionalProperties at %s is not a boolean or schema", path)
		}
		return freeObject(c.any), nil
	}
}

func (c *compiler) compileArray(s map[string]any, path string) (*node, error) {
	n := newNode(kindArray)
	n.item, n.maxItems = c.any, noLimit
	if it, ok := s["items"]; ok {
		if b, isBool := it.(bool); isBool && !b {
			n.maxItems = 0 // items:false allows only []
		} else {
			item, err := c.compile(it, path+"/items")
			if err != nil {
				return nil, err
			}
			n.item = item
		}
	}
	if v, ok := s["minItems"]; ok {
		m, err := count(v, "minItems", path)
		if err != nil {
			return nil, err
		}
		n.minItems = m
	}
	if v, ok := s["maxItems"]; ok {
		m, err := count(v, "maxItems", path)
		if err != nil {
			return nil, err
		}
		n.maxItems = min(n.maxItems, m)
	}
	if n.minItems > n.maxItems {
		return nil, fmt.Errorf("grammar: minItems > maxItems at %s matches nothing", path)
	}
	return n, nil
}

func count(v any, name, path string) (uint32, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("grammar: %s at %s is not a number", name, path)
	}
	i, err := num.Int64()
	if err != nil || i < 0 || i >= int64(noLimit) {
		return 0, fmt.Errorf("grammar: %s at %s is not a valid count", name, path)
	}
	return uint32(i), nil
}

// compileLiterals compiles enum or const into the canonical encodings of the
// values that also satisfy "type", when present.
func (c *compiler) compileLiterals(s map[string]any, path string) (*node, error) {
	for k := range s {
		if constraints[k] && k != "enum" && k != "const" && k != "type" {
			return nil, fmt.Errorf("grammar: enum/const with sibling keyword %s is not supported (at %s)", k, path)
		}
	}
	var values []any
	if e, ok := s["enum"]; ok {
		if _, both := s["const"]; both {
			return nil, fmt.Errorf("grammar: enum with const at %s is not supported", path)
		}
		list, ok := e.([]any)
		if !ok {
			return nil, fmt.Errorf("grammar: enum at %s is not a list", path)
		}
		// Checked on the list as given, before any value is looked at.
		if len(list) > maxSet {
			return nil, fmt.Errorf("grammar: more than %d enum values at %s are not supported", maxSet, path)
		}
		values = list
	} else {
		values = []any{s["const"]}
	}
	types := []string{"any"}
	if _, ok := s["type"]; ok {
		t, err := typesOf(s, path)
		if err != nil {
			return nil, err
		}
		types = t
	}
	n := newNode(kindLiteral)
	seen := map[string]bool{}
	for _, v := range values {
		if !hasType(v, types) {
			continue
		}
		b := canonical(v)
		if err := c.budget.literal(len(b)); err != nil {
			return nil, err
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			n.lits = append(n.lits, b)
		}
	}
	if len(n.lits) == 0 {
		return nil, fmt.Errorf("grammar: enum/const at %s has no value of the declared type", path)
	}
	if len(n.lits) > maxSet {
		return nil, fmt.Errorf("grammar: more than %d enum values at %s are not supported", maxSet, path)
	}
	return n, nil
}

func hasType(v any, types []string) bool {
	for _, t := range types {
		switch x := v.(type) {
		case string:
			if t == "string" {
				return true
			}
		case json.Number:
			if t == "number" {
				return true
			}
			if t == "integer" && isInteger(string(x)) {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case nil:
			if t == "null" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		}
		if t == "any" {
			return true
		}
	}
	return false
}

// canonical encodes v as compact JSON without HTML escaping, object keys
// sorted: the one spelling the matcher accepts for keys and literals.
func canonical(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// v came from encoding/json, so it always encodes.
		panic(fmt.Sprintf("grammar: re-encoding a decoded value: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
