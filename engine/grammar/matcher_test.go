package grammar

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustCompile(t testing.TB, schema string) *Grammar {
	t.Helper()
	g, err := Compile([]byte(schema))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return g
}

// accepts reports whether the matcher takes all of doc and may end there.
func accepts(g *Grammar, doc []byte) bool {
	m := NewMatcher(g)
	return m.Advance(doc) && m.CanEnd()
}

func TestMatcherAgreesWithValidator(t *testing.T) {
	for _, c := range schemaCases {
		t.Run(c.name, func(t *testing.T) {
			g := mustCompile(t, c.schema)
			ref := newReferenceValidator(t, c.schema)
			valid := 0
			for _, doc := range c.docs {
				want := ref.valid([]byte(doc))
				if got := accepts(g, []byte(doc)); got != want {
					t.Errorf("%s: matcher accepts=%v, validator valid=%v", doc, got, want)
				}
				if want {
					valid++
				}
			}
			if valid == 0 || valid == len(c.docs) {
				t.Errorf("case needs both valid and invalid documents (%d of %d valid)", valid, len(c.docs))
			}
		})
	}
}

func TestJSONObjectAgreesWithEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, `{"a":1}`, `{"a":{"b":[1,2.5,-0,"x",true,false,null,{}]}}`, `{"":""}`,
		`[]`, `1`, `"x"`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1,}`, `{"a":[}`, `{"a":nul}`,
	}
	g := JSONObject()
	for _, doc := range docs {
		want := json.Valid([]byte(doc)) && strings.HasPrefix(doc, "{")
		if got := accepts(g, []byte(doc)); got != want {
			t.Errorf("%s: matcher accepts=%v, want %v", doc, got, want)
		}
	}
}

// TestOutputForm pins the spelling choices documented in doc.go: valid JSON
// that the grammar still rejects, because it generates one form only.
func TestOutputForm(t *testing.T) {
	g := mustCompile(t, `{"type":"object","properties":{"a":{"type":"integer"},"b":{"enum":["<"]}}}`)
	for _, doc := range []string{`{ "a":1}`, `{"a": 1}`, `{"a":1.0}`, `{"a":1e2}`, `{"\u0061":1}`, `{"b":"\u003c"}`, ` {}`, `{} `, `{"a":1,"a":2}`} {
		if accepts(g, []byte(doc)) {
			t.Errorf("%s accepted, want rejected (non-canonical form)", doc)
		}
	}
	for _, doc := range []string{`{"a":1}`, `{"b":"<"}`} {
		if !accepts(g, []byte(doc)) {
			t.Errorf("%s rejected, want accepted", doc)
		}
	}
}

func TestDoneAndCanEnd(t *testing.T) {
	tests := []struct {
		schema, prefix string
		done, canEnd   bool
	}{
		{`{"type":"object"}`, `{"a":1`, false, false},
		{`{"type":"object"}`, `{"a":1}`, true, true},
		{`{"type":"integer"}`, `12`, false, true},
		{`{"type":"integer"}`, `-`, false, false},
		{`{"enum":[1,12]}`, `1`, false, true},
		{`{"enum":["a","b"]}`, `"a"`, true, true},
		{`{"type":"boolean"}`, `tru`, false, false},
		{`{"type":"boolean"}`, `true`, true, true},
	}
	for _, tt := range tests {
		m := NewMatcher(mustCompile(t, tt.schema))
		if !m.Advance([]byte(tt.prefix)) {
			t.Fatalf("%s: prefix %q rejected", tt.schema, tt.prefix)
		}
		if m.Done() != tt.done || m.CanEnd() != tt.canEnd {
			t.Errorf("%s after %q: Done=%v CanEnd=%v, want %v %v", tt.schema, tt.prefix, m.Done(), m.CanEnd(), tt.done, tt.canEnd)
		}
	}
}

func TestAdvanceIsAllOrNothing(t *testing.T) {
	m := NewMatcher(mustCompile(t, `{"type":"object","properties":{"a":{"type":"string"}}}`))
	if !m.Advance([]byte(`{"a":"x`)) {
		t.Fatal("prefix rejected")
	}
	if m.Advance([]byte(`y"]`)) {
		t.Fatal("invalid continuation accepted")
	}
	if !m.Advance([]byte(`y"}`)) || !m.Done() {
		t.Fatal("matcher changed by the rejected Advance")
	}
}

func TestSnapshotRestoreAndClone(t *testing.T) {
	g := mustCompile(t, schemaCases[2].schema)
	m := NewMatcher(g)
	if !m.Advance([]byte(`{"id":7,"shape":{"kind":"`)) {
		t.Fatal("prefix rejected")
	}
	snap := m.Snapshot()
	clone := m.Clone()
	if !m.Advance([]byte(`circle","r":1}}`)) || !m.Done() {
		t.Fatal("circle branch rejected")
	}
	m.Restore(snap)
	if m.Done() {
		t.Fatal("Restore did not roll back")
	}
	if !m.Advance([]byte(`rect","w":1,"h":2}}`)) || !m.Done() {
		t.Fatal("rect branch rejected after Restore")
	}
	if clone.Done() || !clone.Advance([]byte(`circle","r":1}}`)) || !clone.Done() {
		t.Fatal("clone was affected by the original")
	}
	// Byte-by-byte rollback: every prefix restores to the same acceptance.
	doc := []byte(`{"id":"x","value":null,"shape":{"kind":"circle","r":1}}`)
	m = NewMatcher(g)
	var snaps []Snapshot
	for _, b := range doc {
		snaps = append(snaps, m.Snapshot())
		if !m.Accept(b) {
			t.Fatalf("byte %q rejected", b)
		}
	}
	for i := len(doc) - 1; i >= 0; i-- {
		m.Restore(snaps[i])
		if !m.Clone().Advance(doc[i:]) {
			t.Fatalf("after restoring to %d, the rest %q is rejected", i, doc[i:])
		}
		if m.Accept(0x01) {
			t.Fatalf("after restoring to %d, a control byte was accepted", i)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"$ref":"#/$defs/a"}`, "grammar: $ref is not supported"},
		{`{"type":"string","pattern":"a+"}`, "grammar: pattern is not supported"},
		{`{"type":"string","minLength":3,"maxLength":2}`, "matches nothing"},
		{`{"type":"string","maxLength":-1}`, "not a valid count"},
		{`{"type":"integer","minimum":0}`, "grammar: minimum is not supported"},
		{`{"oneOf":[{"type":"string"}]}`, "grammar: oneOf is not supported"},
		{`{"allOf":[{"type":"string"}]}`, "grammar: allOf is not supported"},
		{`{"type":"array","prefixItems":[]}`, "grammar: prefixItems is not supported"},
		{`{"type":"object","properties":{"a":{"not":{}}}}`, "grammar: not is not supported"},
		{`{"type":"object","properties":{"a":{}},"required":["b"]}`, "not declared"},
		{`{"type":"array","minItems":3,"maxItems":2}`, "matches nothing"},
		{`{"type":"string","enum":[1,2]}`, "no value of the declared type"},
		{`{"type":"wat"}`, "unknown type"},
		{`false`, "matches nothing"},
		{`{"type":"object","properties":{"a":{}},"additionalProperties":{"type":"string"}}`, "additionalProperties schema beside properties"},
		{`{`, "not valid JSON"},
	}
	for _, tt := range tests {
		_, err := Compile([]byte(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%s) = %v, want error containing %q", tt.schema, err, tt.want)
		}
	}
}
