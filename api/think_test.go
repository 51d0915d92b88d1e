package api

import (
	"strings"
	"testing"
)

// splitAll feeds chunks through a splitter and joins what comes out.
func splitAll(startsInThink bool, chunks []string) (reasoning, answer string) {
	t := newThinkSplitter(startsInThink)
	var r, a strings.Builder
	for _, c := range chunks {
		x, y := t.feed(c)
		r.WriteString(x)
		a.WriteString(y)
	}
	x, y := t.flush()
	r.WriteString(x)
	a.WriteString(y)
	return r.String(), a.String()
}

func TestThinkSplitter(t *testing.T) {
	tests := []struct {
		name          string
		startsInThink bool
		text          string
		reasoning     string
		answer        string
	}{
		{"no block", false, "Hello world", "", "Hello world"},
		{"block then answer", false, "<think>\nhmm\n</think>\n\nHi", "hmm\n", "Hi"},
		{"leading whitespace before block", false, "\n <think>a</think>b", "a", "b"},
		{"prompt opened the block", true, "\nreason</think>\n\nanswer", "reason", "answer"},
		{"empty block", false, "<think>\n\n</think>\n\nanswer", "", "answer"},
		{"late think tag is text", false, "Use <think> tags", "", "Use <think> tags"},
		{"close tag in answer is text", false, "a </think> b", "", "a </think> b"},
		{"unclosed block", false, "<think>still going", "still going", ""},
		{"unclosed with partial close tag", true, "abc</thi", "abc</thi", ""},
		{"partial open tag at the end", false, "<thi", "", "<thi"},
		{"lookalike tag", false, "<thinking>x", "", "<thinking>x"},
		{"less-than in reasoning", true, "a < b </ c</think>d", "a < b </ c", "d"},
		{"answer whitespace kept inside", false, "<think>r</think>x \n y", "r", "x \n y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every split into two chunks, and one byte at a time.
			chunkings := [][]string{{tt.text}}
			for i := range len(tt.text) {
				chunkings = append(chunkings, []string{tt.text[:i], tt.text[i:]})
			}
			chunkings = append(chunkings, strings.Split(tt.text, ""))
			for _, chunks := range chunkings {
				r, a := splitAll(tt.startsInThink, chunks)
				if r != tt.reasoning || a != tt.answer {
					t.Fatalf("chunks %q: reasoning %q answer %q, want %q %q", chunks, r, a, tt.reasoning, tt.answer)
				}
			}
		})
	}
}

func TestThinkSplitterStreamsEagerly(t *testing.T) {
	s := newThinkSplitter(false)
	if r, a := s.feed("<think>abc"); r != "abc" || a != "" {
		t.Errorf("got %q %q: reasoning held back", r, a)
	}
	if r, a := s.feed("de</"); r != "de" || a != "" {
		t.Errorf("got %q %q: only the possible tag prefix may wait", r, a)
	}
	if r, a := s.feed("think>ok"); r != "" || a != "ok" {
		t.Errorf("got %q %q after the close tag", r, a)
	}
}

func FuzzThinkSplitter(f *testing.F) {
	for _, seed := range []string{"<think>a</think>b", "x<think>y", "</think>", "<thi", "  <think>\n</think>\n"} {
		f.Add(seed, 3, false)
	}
	f.Fuzz(func(t *testing.T, text string, cut int, startsInThink bool) {
		whole := newThinkSplitter(startsInThink)
		r1, a1 := whole.feed(text)
		r2, a2 := whole.flush()
		if cut < 0 {
			cut = -cut
		}
		cut %= len(text) + 1
		r, a := splitAll(startsInThink, []string{text[:cut], text[cut:]})
		if r != r1+r2 || a != a1+a2 {
			t.Fatalf("split at %d changes the result: %q %q vs %q %q", cut, r, a, r1+r2, a1+a2)
		}
		if len(r)+len(a) > len(text) {
			t.Fatalf("output longer than input")
		}
	})
}
