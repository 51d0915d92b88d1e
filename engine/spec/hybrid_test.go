package spec

import (
	"testing"

	"github.com/splash-inference/splash/metal"
)

func TestHybridChoosesSource(t *testing.T) {
	repetitive := []int32{1, 2, 3, 1, 2, 3, 1, 2} // n-gram finds "3 1 2"
	novel := []int32{1, 2, 3, 4, 5, 6, 7, 8}      // n-gram finds nothing
	for _, tc := range []struct {
		name      string
		withDraft bool
		tokens    []int32
		history   [][2]int // observations before proposing
		wantDraft bool     // the proposal comes from the draft model
		wantNone  bool
	}{
		{"ngram only, match", false, repetitive, nil, false, false},
		{"ngram only, no match", false, novel, nil, false, true},
		{"ngram first on a tie", true, repetitive, nil, false, false},
		{"draft when lookup finds nothing", true, novel, nil, true, false},
		{"draft when lookup keeps failing", true, repetitive, [][2]int{{3, 0}, {3, 0}, {3, 0}}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d *DraftModel
			if tc.withDraft {
				var err error
				if d, err = NewDraftModel(newPagedFake(11), 16, 4, metal.KVF16); err != nil {
					t.Fatal(err)
				}
			}
			h := NewHybrid(Ngram{}, d)
			for _, o := range tc.history {
				h.seq(7).lastDraft = false
				h.Observe(7, o[0], o[1])
			}
			wants := []Want{{Seq: 7, Tokens: tc.tokens, K: 3, Draft: make([]int32, 0, 3)}}
			if err := h.Propose(wants); err != nil {
				t.Fatal(err)
			}
			got := wants[0].Draft
			if tc.wantNone != (len(got) == 0) || h.seq(7).lastDraft != tc.wantDraft {
				t.Fatalf("draft %v from draft model = %v; want draft model %v, none %v", got, h.seq(7).lastDraft, tc.wantDraft, tc.wantNone)
			}
			if tc.wantDraft {
				if want := greedyContinuation(tc.tokens, 3, 11); len(got) != 3 || got[0] != want[0] {
					t.Fatalf("draft %v, want %v", got, want)
				}
			}
			h.Release(7)
			if d != nil {
				if err := d.CheckLeaks(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
