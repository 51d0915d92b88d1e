package stop

import (
	"strings"
	"testing"
)

func TestCheckerAcrossPieces(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stops    []string
		pieces   []string
		emits    []string // per piece
		stopAt   int      // index of the piece that stops, -1 for none
		flushed  string
		combined string // all emitted text including the flush
	}{
		{"no stops", nil, []string{"ab", "cd"}, []string{"ab", "cd"}, -1, "", "abcd"},
		{"stop inside one piece", []string{"END"}, []string{"abENDcd"}, []string{"ab"}, 0, "", "ab"},
		{"stop spanning three pieces", []string{"</s>"}, []string{"hi <", "/", "s> tail"}, []string{"hi ", "", ""}, 2, "", "hi "},
		{"false alarm released", []string{"</s>"}, []string{"a <", "b"}, []string{"a ", "<b"}, -1, "", "a <b"},
		{"partial held at end is flushed", []string{"STOP"}, []string{"x ST"}, []string{"x "}, -1, "ST", "x ST"},
		{"earliest of several stops", []string{"bb", "a"}, []string{"xbba"}, []string{"x"}, 0, "", "x"},
		{"overlapping prefix", []string{"aab"}, []string{"aa", "aab"}, []string{"", "aa"}, 1, "", "aa"},
		{"multibyte stop", []string{"终止"}, []string{"好的终", "止了"}, []string{"好的", ""}, 1, "", "好的"},
		{"pieces after stop", []string{"x"}, []string{"ax", "more"}, []string{"a", ""}, 0, "", "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(tc.stops)
			var all strings.Builder
			stoppedAt := -1
			for i, p := range tc.pieces {
				emit, stopped := c.Push(p)
				if emit != tc.emits[i] {
					t.Fatalf("piece %d %q: emit %q, want %q", i, p, emit, tc.emits[i])
				}
				all.WriteString(emit)
				if stopped && stoppedAt < 0 {
					stoppedAt = i
				}
			}
			if stoppedAt != tc.stopAt {
				t.Fatalf("stopped at piece %d, want %d", stoppedAt, tc.stopAt)
			}
			f := c.Flush()
			if f != tc.flushed {
				t.Fatalf("flush %q, want %q", f, tc.flushed)
			}
			all.WriteString(f)
			if all.String() != tc.combined {
				t.Fatalf("combined %q, want %q", all.String(), tc.combined)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	c := Conditions{StopTokens: []int32{2, 7}, MaxTokens: 5, MaxContext: 20}
	for _, tc := range []struct {
		tok              int32
		generated, total int
		want             Reason
	}{
		{3, 1, 10, None},
		{7, 1, 10, Stop},
		{2, 5, 20, Stop}, // a stop token wins over length
		{3, 5, 10, Length},
		{3, 2, 20, Length},
	} {
		if got := c.Check(tc.tok, tc.generated, tc.total); got != tc.want {
			t.Errorf("Check(%d, %d, %d) = %q, want %q", tc.tok, tc.generated, tc.total, got, tc.want)
		}
	}
	var none Conditions
	if got := none.Check(0, 1000, 1000); got != None {
		t.Errorf("unlimited conditions stopped: %q", got)
	}
}
