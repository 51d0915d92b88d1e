package toolcall

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestArgStream feeds call bodies byte by byte: streamable ones yield the
// name and argument deltas that add up to the parsed call's (compacted)
// arguments; other shapes yield nothing until the call closes.
func TestArgStream(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		streams    bool
		wantName   string
		firstDelta int // body bytes after which the first delta must have come (0: not checked)
	}{
		{"plain", `{"name": "read", "arguments": {"path": "a.go"}}`, true, "read", 0},
		{"spaces and newlines", "\n { \"name\" :\n\"w\" , \"arguments\" :{ \"s\" : \"a } b \\\" { c\" ,\n \"n\": [1, {\"x\": null}] } }\n", true, "w", 0},
		{"escaped name", `{"name": "a\"b", "arguments": {}}`, true, `a"b`, 0},
		{"unicode", `{"name": "é", "arguments": {"t": "日本 \u00e9"}}`, true, "é", 0},
		{"long text streams early", `{"name": "write", "arguments": {"text": "` + string(bytes.Repeat([]byte("xy"), 500)) + `"}}`, true, "write", 60},
		{"arguments first", `{"arguments": {"a": 1}, "name": "f"}`, false, "", 0},
		{"arguments as a string", `{"name": "f", "arguments": "{\"a\": 1}"}`, false, "", 0},
		{"empty name", `{"name": "", "arguments": {"a": 1}}`, false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a ArgStream
			var got bytes.Buffer
			first := -1
			for i := range len(tc.body) {
				d := a.Feed(tc.body[i : i+1])
				if d != "" && first < 0 {
					first = i + 1
				}
				got.WriteString(d)
			}
			name, ok := a.Name()
			if !tc.streams {
				if ok || got.Len() > 0 {
					t.Fatalf("streamed %q as %q for a shape that should not stream", got.String(), name)
				}
				return
			}
			call, err := parseCall(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if !ok || name != tc.wantName || name != call.Name || got.String() != string(call.Arguments) || a.Arguments() != got.String() {
				t.Fatalf("name %q (%v), streamed %q; parsed %q %s", name, ok, got.String(), call.Name, call.Arguments)
			}
			if !json.Valid(got.Bytes()) {
				t.Fatalf("streamed arguments %q are not JSON", got.String())
			}
			if tc.firstDelta > 0 && first > tc.firstDelta {
				t.Fatalf("first delta after %d bytes, want by %d", first, tc.firstDelta)
			}
		})
	}
}
