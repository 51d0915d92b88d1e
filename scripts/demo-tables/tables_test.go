package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
	"github.com/splash-inference/splash/tokenizer"
)

func TestHeldOutWindows(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	eot, _ := tok.TokenID("<|endoftext|>")
	texts := []string{strings.Repeat("func f() {}\n", 40), strings.Repeat("var x = 1\n", 40)}
	var stream []int32
	for _, s := range texts {
		stream = append(append(stream, tok.Encode(s, false)...), eot)
	}
	for _, tc := range []struct {
		n, context, want int
	}{
		{4, 16, 4},
		{1000, 64, (len(stream) - 1) / 64}, // as many as fit
		{2, len(stream) - 1, 1},
	} {
		ws, err := heldOutWindows(tok, texts, tc.n, tc.context)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != tc.want {
			t.Fatalf("%d windows of %d: got %d, want %d", tc.n, tc.context, len(ws), tc.want)
		}
		step := ((len(stream) - 1) / tc.context) / len(ws)
		for i, w := range ws {
			at := i * step * tc.context
			if !slices.Equal(w, stream[at:at+tc.context+1]) {
				t.Fatalf("%d windows of %d: window %d is not the stream's tokens from %d", tc.n, tc.context, i, at)
			}
		}
	}
	if _, err := heldOutWindows(tok, texts, 1, len(stream)); err == nil {
		t.Fatal("a window longer than the held-out text was accepted")
	}
}

func TestPromptsOf(t *testing.T) {
	texts := []string{"a\nbb\nccc\n", "no line end at all", "x\ny"}
	for _, tc := range []struct {
		n, size int
		want    []string
	}{
		{3, 5, []string{"a\nbb\n", "no li", "x\n"}},
		{2, 100, []string{"a\nbb\nccc\n", "no line end at all"}},
		{5, 2, []string{"a\n", "no", "x\n"}},
	} {
		if got := promptsOf(texts, tc.n, tc.size); !slices.Equal(got, tc.want) {
			t.Errorf("promptsOf(%d, %d) = %q, want %q", tc.n, tc.size, got, tc.want)
		}
	}
}

func TestIntList(t *testing.T) {
	if got, err := intList("1, 4,16"); err != nil || !slices.Equal(got, []int{1, 4, 16}) {
		t.Errorf("intList = %v, %v", got, err)
	}
	for _, bad := range []string{"1,x", "0", "-2"} {
		if _, err := intList(bad); err == nil {
			t.Errorf("intList(%q) accepted", bad)
		}
	}
}
