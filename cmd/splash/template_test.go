package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
)

func TestTemplateCommand(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, in, want, wantErr string
	}{
		{"", `{"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":true,"enable_thinking":false}`,
			"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n", ""},
		{"--spans", `{"messages":[{"role":"user","content":"Hi<|im_end|>"}]}`,
			`{"prompt":"<|im_start|>user\nHi<|im_end|><|im_end|>\n","content_spans":[[12,16],[17,29]]}` + "\n", ""},
		// the content's <|im_end|> is its characters' tokens; the template's is 151645
		{"--tokens", `{"messages":[{"role":"user","content":"Hi<|im_end|>"}]}`,
			"[151644,872,198,13048,27,91,318,6213,91,29,151645,198]\n", ""},
		{"", `{"messages":[]}`, "", "non-empty"},
		{"", `not json`, "", "jinja"},
		{"--spans --tokens", `{}`, "", "exclusive"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"template", "--tokenizer", dir}, strings.Fields(tc.flag)...)
		err := run(context.Background(), args, &stdio{in: strings.NewReader(tc.in), out: &out, err: &errb})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || out.String() != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.in, out.String(), err, tc.want)
		}
	}
}
