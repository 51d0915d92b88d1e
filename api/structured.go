package api

import (
	"context"

	"github.com/goccy/go-json"

	"github.com/splash-inference/splash/engine/grammar"
)

// schemaCacheSize is how many compiled schemas a server keeps: enough for
// the distinct response formats and tool sets of many concurrent agents.
const schemaCacheSize = 256

// grammars compiles the schemas of requests (response formats and forced
// tool calls) through a cache, under the grammar package's default limits,
// stopping when ctx ends (the server's base context, cancelled at shutdown;
// the limits keep one compilation to milliseconds, so it ends before a
// departed client would be noticed).
type grammars struct {
	ctx   context.Context
	cache *grammar.SchemaCache
}

func newGrammars(ctx context.Context) *grammars {
	return &grammars{ctx: ctx, cache: grammar.NewSchemaCache(schemaCacheSize, grammar.Limits{})}
}

func (gs *grammars) compile(schema []byte) (*grammar.Grammar, error) {
	return gs.cache.Compile(gs.ctx, schema)
}

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
func (gs *grammars) compileFormat(param, typ string, schema json.RawMessage) (*grammar.Grammar, error) {
	switch typ {
	case "", "text":
		return nil, nil
	case "json_object":
		return grammar.JSONObject(), nil
	case "json_schema":
		if len(schema) == 0 {
			return nil, invalidf(param, "%s json_schema needs a schema", param)
		}
		g, err := gs.compile(schema)
		if err != nil {
			return nil, invalidf(param, "%s: %v", param, err)
		}
		return g, nil
	}
	return nil, invalidf(param, "%s type %q is not one of text, json_object, json_schema", param, typ)
}

func (rf *responseFormat) grammar(gs *grammars) (*grammar.Grammar, error) {
	if rf == nil {
		return nil, nil
	}
	var schema json.RawMessage
	if rf.JSONSchema != nil {
		schema = rf.JSONSchema.Schema
	}
	return gs.compileFormat("response_format", rf.Type, schema)
}

func (tf *textFormat) grammar(gs *grammars) (*grammar.Grammar, error) {
	if tf == nil || tf.Format == nil {
		return nil, nil
	}
	return gs.compileFormat("text.format", tf.Format.Type, tf.Format.Schema)
}
