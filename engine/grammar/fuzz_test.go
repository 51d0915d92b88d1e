package grammar

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzJSONObjectMatcher checks the json_object matcher against
// encoding/json: it must accept exactly the valid JSON objects written in
// the grammar's form (compact, valid UTF-8), and stop at the same place
// byte by byte as it does on the whole input.
func FuzzJSONObjectMatcher(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `{"a":-0.5e+3}`,
		`{"a":}`, `{"a":1,}`, `[1]`, `{"a" :1}`, `{"a":"\xff"}`, `{"a":tru}`, `{"":{"":{"":[]}}}`,
		`{"a":01}`, `{"a":1.}`, `{"a":"\ud800"}`, "{\"a\":\"\x7f\"}",
	} {
		f.Add([]byte(seed))
	}
	g := JSONObject()
	f.Fuzz(func(t *testing.T, data []byte) {
		want := len(data) > 0 && data[0] == '{' && json.Valid(data) && utf8.Valid(data)
		if want {
			var compact bytes.Buffer
			if err := json.Compact(&compact, data); err != nil || !bytes.Equal(compact.Bytes(), data) {
				want = false
			}
		}
		m := NewMatcher(g)
		accepted := 0
		for accepted < len(data) && m.Accept(data[accepted]) {
			accepted++
		}
		got := accepted == len(data) && m.CanEnd()
		if got != want {
			t.Fatalf("%q: matcher accepts=%v (stopped at %d), encoding/json says %v", data, got, accepted, want)
		}
		if whole := NewMatcher(g).Advance(data); whole != (accepted == len(data)) {
			t.Fatalf("%q: Advance=%v but byte-by-byte accepted %d of %d", data, whole, accepted, len(data))
		}
	})
}
