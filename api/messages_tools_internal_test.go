package api

import "testing"

func TestCloseTruncatedJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{`{"a": "tru`, `{"a": "tru"}`},
		{`{"a": 1, "b`, `{"a": 1}`},
		{`{"a": 1, "b":`, `{"a": 1}`},
		{`{"a": [1, 2`, `{"a": [1, 2]}`},
		{`{"a": {"b": "x\"y`, `{"a": {"b": "x\"y"}}`},
		{`{"a": tr`, `{}`},
		{`{"a": 1,`, `{"a": 1}`},
		{``, `{}`},
		{`{`, `{}`},
	} {
		if got := closeTruncatedJSON(tc.in); got != tc.want {
			t.Errorf("closeTruncatedJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
