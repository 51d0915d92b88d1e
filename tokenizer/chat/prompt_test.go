package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/tokenizer"
)

// TestRenderPromptBenignCorpus: on the template test corpus, a prompt
// encoded with its content spans has exactly the ids the whole text has
// with special tokens parsed, as before spans existed, wherever the
// content holds no control token's text; the text itself is Render's.
func TestRenderPromptBenignCorpus(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3"} {
		tpl := vendored(t, name)
		tk, err := tokenizer.Load(filepath.Join(repoRoot(t), "testdata", name+"-tokenizer"))
		if err != nil {
			t.Fatal(err)
		}
		var cases []struct {
			Name string          `json:"name"`
			Vars json.RawMessage `json:"vars"`
		}
		raw, _ := os.ReadFile(filepath.Join("testdata", "cases-"+name+".json"))
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			req, err := ParseRequest(c.Vars)
			if err != nil {
				t.Fatal(err)
			}
			p, err := tpl.RenderPrompt(req)
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := tpl.Render(req); text != p.Text {
				t.Fatalf("%s %q: RenderPrompt's text differs from Render's", name, c.Name)
			}
			if len(p.Content) == 0 {
				t.Errorf("%s %q: no content spans", name, c.Name)
			}
			spans := make([]tokenizer.Span, len(p.Content))
			for i, sp := range p.Content {
				spans[i] = tokenizer.Span(sp)
				if slices.ContainsFunc(tk.AddedTokens(), func(tok string) bool { return strings.Contains(p.Text[sp.Start:sp.End], tok) }) {
					t.Fatalf("%s %q: content %q holds a control token", name, c.Name, p.Text[sp.Start:sp.End])
				}
			}
			if got, want := tk.EncodePrompt(p.Text, spans), tk.Encode(p.Text, true); !slices.Equal(got, want) {
				t.Errorf("%s %q: ids changed\n got %v\nwant %v", name, c.Name, got, want)
			}
		}
	}
}
