package api_test

import (
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
)

// TestSchemaBombIsRefused sends issue 40's schema (250 integer enum values
// 1e999999) through every route that compiles a schema: each is a 400 in
// the dialect's shape naming the enum-size limit, reached before any value
// is parsed (the grammar package's tests and BenchmarkCompileEnumBomb cover
// the cost), and the engine never sees the request.
func TestSchemaBombIsRefused(t *testing.T) {
	ts := startServer(t, api.Options{})
	bomb := `{"type":"object","properties":{"n":{"type":"integer","enum":[` +
		strings.TrimSuffix(strings.Repeat("1e999999,", 250), ",") + `]}}}`
	user := `"messages":[{"role":"user","content":"hi"}]`
	tool := `{"type":"function","function":{"name":"f","parameters":` + bomb + `}}`
	tests := []struct {
		name, path, body, typ string
	}{
		{"chat response_format", "/v1/chat/completions",
			`{` + user + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + bomb + `}}}`, "invalid_request_error"},
		{"chat required tool", "/v1/chat/completions",
			`{` + user + `,"tools":[` + tool + `],"tool_choice":"required"}`, "invalid_request_error"},
		{"responses text.format", "/v1/responses",
			`{"input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":` + bomb + `}}}`, "invalid_request_error"},
		{"responses named tool", "/v1/responses",
			`{"input":"hi","tools":[{"type":"function","name":"f","parameters":` + bomb + `}],"tool_choice":{"type":"function","name":"f"}}`, "invalid_request_error"},
		{"messages tool any", "/v1/messages",
			`{"max_tokens":16,` + user + `,"tools":[{"name":"f","input_schema":` + bomb + `}],"tool_choice":{"type":"any"}}`, "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 3 { // the second and third are answered from the schema cache
				res := ts.do(t, "POST", tt.path, tt.body)
				if res.status != 400 || !strings.Contains(res.body, tt.typ) || !strings.Contains(res.body, "more than 64 enum values") {
					t.Fatalf("got %d %s, want a 400 %s naming the enum limit", res.status, res.body, tt.typ)
				}
			}
		})
	}
	if last := ts.engine.Last(); last != nil {
		t.Errorf("the engine got a request: %+v", last)
	}
}
