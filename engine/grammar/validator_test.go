package grammar

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// referenceValidator validates documents with an independent JSON Schema
// implementation, against the schema made strict the way Compile reads it:
// objects with declared properties allow no others, and keywords that imply
// an object or array also imply its type.
type referenceValidator struct {
	schema *jsonschema.Schema
}

func newReferenceValidator(t testing.TB, schema string) referenceValidator {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader([]byte(schema)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("schema: %v", err)
	}
	strictify(v)
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", v); err != nil {
		t.Fatalf("reference compiler: %v", err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("reference compiler: %v", err)
	}
	return referenceValidator{schema: sch}
}

// valid reports whether doc is one JSON value that the schema accepts.
func (r referenceValidator) valid(doc []byte) bool {
	if !json.Valid(doc) {
		return false
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return false
	}
	return r.schema.Validate(inst) == nil
}

func strictify(v any) {
	switch s := v.(type) {
	case map[string]any:
		for _, sub := range s {
			strictify(sub)
		}
		if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
			if _, isSchema := s["additionalProperties"].(map[string]any); !isSchema {
				s["additionalProperties"] = false
			}
		}
		_, hasType := s["type"]
		_, hasAnyOf := s["anyOf"]
		_, hasEnum := s["enum"]
		_, hasConst := s["const"]
		if hasType || hasAnyOf || hasEnum || hasConst {
			return
		}
		for _, k := range []string{"properties", "required", "additionalProperties"} {
			if _, ok := s[k]; ok {
				s["type"] = "object"
				return
			}
		}
		for _, k := range []string{"items", "minItems", "maxItems"} {
			if _, ok := s[k]; ok {
				s["type"] = "array"
				return
			}
		}
	case []any:
		for _, sub := range s {
			strictify(sub)
		}
	}
}
