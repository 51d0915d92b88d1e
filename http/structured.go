package api

import (
	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/engine/grammar"
)

// responseFormat is Chat Completions' "response_format": {"type": "text"},
// {"type": "json_object"} or {"type": "json_schema", "json_schema": {"name",
// "schema", "strict"}}.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// textFormat is the Responses API's "text": {"format": {"type":
// "json_schema", "name", "schema", "strict"}} (the schema sits beside the
// type, not nested).
type textFormat struct {
	Format *struct {
		Type   string          `json:"type"`
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"format"`
}

// compileFormat turns a requested output format into the grammar that
// constrains decoding, or nil for free text. A schema feature the grammar
// cannot enforce is a 400 naming it, never a silently unconstrained output.
func compileFormat(param, typ string, schema json.RawMessage) (*grammar.Grammar, error) {
	switch typ {
	case "", "text":
		return nil, nil
	case "json_object":
		return grammar.JSONObject(), nil
	case "json_schema":
		if len(schema) == 0 {
			return nil, invalidf(param, "%s json_schema needs a schema", param)
		}
		g, err := grammar.Compile(schema)
		if err != nil {
			return nil, invalidf(param, "%s: %v", param, err)
		}
		return g, nil
	}
	return nil, invalidf(param, "%s type %q is not one of text, json_object, json_schema", param, typ)
}

func (rf *responseFormat) grammar() (*grammar.Grammar, error) {
	if rf == nil {
		return nil, nil
	}
	var schema json.RawMessage
	if rf.JSONSchema != nil {
		schema = rf.JSONSchema.Schema
	}
	return compileFormat("response_format", rf.Type, schema)
}

func (tf *textFormat) grammar() (*grammar.Grammar, error) {
	if tf == nil || tf.Format == nil {
		return nil, nil
	}
	return compileFormat("text.format", tf.Format.Type, tf.Format.Schema)
}
