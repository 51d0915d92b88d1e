package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
	"github.com/splash-inference/splash/tokenizer/chat"
)

// TestToolParserFromTemplate: the Qwen3 template describes <tool_call>
// calls (Hermes parser); the Llama 3 base template ignores tools (none);
// the flag overrides detection.
func TestToolParserFromTemplate(t *testing.T) {
	tests := []struct {
		tokenizer, flag, want, says string
	}{
		{"qwen3", "auto", toolParserHermes, "<tool_call>"},
		{"llama3", "auto", toolParserNone, "ignores tools"},
		{"llama3", "hermes", toolParserHermes, "--tool-parser"},
		{"qwen3", "none", toolParserNone, "--tool-parser"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if err := testmodel.CopyTokenizer(dir, tc.tokenizer); err != nil {
			t.Fatal(err)
		}
		tpl, err := chat.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if got := chooseToolParser(tc.flag, tpl, &out); got != tc.want || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%s with --tool-parser %s: %s, said %q; want %s", tc.tokenizer, tc.flag, got, out.String(), tc.want)
		}
	}
}
