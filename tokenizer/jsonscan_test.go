package tokenizer

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestScanMatchesEncodingJSON: the fast scanners read what encoding/json
// reads, or give up.
func TestScanMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name, vocab, merges string
		giveUp              bool
	}{
		{name: "empty", vocab: `{}`, merges: `[]`},
		{name: "plain", vocab: ` { "a" : 1 , "b":2,"ab":-3 } `, merges: `["a b", "ab c"]`},
		{name: "pairs", vocab: `{"x":0}`, merges: "[ [\"a\", \"b\"] ,\n[\"a b\",\"c\"]]"},
		{name: "escapes", vocab: `{"\n":1,"\"q\"":2,"\\":3,"\/":4,"\b\f\r\t":5,"\u00e9\u2581":6}`, merges: `["\u2581 t", "\\ \""]`},
		{name: "surrogates", vocab: `{"\ud83d\ude00":1,"\ud83d":2,"\ude00x":3,"\ud83d\u0041":4}`, merges: `[["\ud83d\ude00", "\ud83dz"]]`},
		{name: "utf8", vocab: `{"漢字":1,"▁x":2,"😀":3}`, merges: `["漢 字"]`},
		{name: "float id", vocab: `{"a":1.5}`, merges: `["a"]`, giveUp: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, errV := scanVocab(json.RawMessage(tc.vocab))
			m, errM := scanMerges(json.RawMessage(tc.merges))
			if tc.giveUp {
				if errV == nil || errM == nil {
					t.Fatalf("scanners accepted %s / %s", tc.vocab, tc.merges)
				}
				return
			}
			if errV != nil || errM != nil {
				t.Fatalf("scan: %v, %v", errV, errM)
			}
			var wantV map[string]int32
			if err := json.Unmarshal([]byte(tc.vocab), &wantV); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(v, wantV) {
				t.Errorf("vocab %q, want %q", v, wantV)
			}
			var wantM [][2]string
			if json.Unmarshal([]byte(tc.merges), &wantM) != nil {
				var strs []string
				if err := json.Unmarshal([]byte(tc.merges), &strs); err != nil {
					t.Fatal(err)
				}
				wantM = nil
				for _, s := range strs {
					a, b, _ := strings.Cut(s, " ")
					wantM = append(wantM, [2]string{a, b})
				}
			}
			if !slices.Equal(m, wantM) {
				t.Errorf("merges %q, want %q", m, wantM)
			}
		})
	}
}
