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
	for _, tc := range []struct{ in, want, wantErr string }{
		{`{"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":true,"enable_thinking":false}`,
			"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n", ""},
		{`{"messages":[]}`, "", "non-empty"},
		{`not json`, "", "jinja"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"template", "--tokenizer", dir}, &stdio{in: strings.NewReader(tc.in), out: &out, err: &errb})
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
