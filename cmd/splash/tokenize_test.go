package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
)

func TestTokenizeCommand(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		in   string
		want string
	}{
		{nil, "Hello  world<|im_end|> 123 <think>x", "[9707,220,1879,27,91,318,6213,91,29,220,16,17,18,220,151667,87]"},
		{[]string{"--special"}, "Hello  world<|im_end|> 123 <think>x", "[9707,220,1879,151645,220,16,17,18,220,151667,87]"},
		{nil, " trailing\n", "[27748,198]"},
		{nil, "", "[]"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"tokenize", "--tokenizer", dir}, tc.args...)
		if err := run(context.Background(), args, &stdio{in: strings.NewReader(tc.in), out: &out, err: &errb}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out.String()); got != tc.want {
			t.Errorf("%v %q: %s, want %s", tc.args, tc.in, got, tc.want)
		}
	}
}
