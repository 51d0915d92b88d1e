package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/tokenizer/jinja"
)

func repoRoot(t testing.TB) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod")
		}
		dir = filepath.Dir(dir)
	}
}

func vendored(t testing.TB, name string) *Template {
	t.Helper()
	tpl, err := Load(filepath.Join(repoRoot(t), "testdata", name+"-tokenizer"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// TestFixtures renders every case byte-identically to @huggingface/jinja.
func TestFixtures(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3"} {
		tpl := vendored(t, name)
		var cases []json.RawMessage
		raw, _ := os.ReadFile(filepath.Join("testdata", "cases-"+name+".json"))
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatal(err)
		}
		var want []struct{ Name, Output string }
		raw, _ = os.ReadFile(filepath.Join("testdata", "expected-"+name+".json"))
		if err := json.Unmarshal(raw, &want); err != nil || len(want) != len(cases) {
			t.Fatalf("%s: %d expected outputs for %d cases (%v)", name, len(want), len(cases), err)
		}
		for i, c := range cases {
			var wrapper struct {
				Vars json.RawMessage `json:"vars"`
			}
			json.Unmarshal(c, &wrapper)
			req, err := ParseRequest(wrapper.Vars)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render(req)
			if err != nil {
				t.Fatalf("%s %q: %v", name, want[i].Name, err)
			}
			if got != want[i].Output {
				t.Errorf("%s %q:\n--- got\n%s\n--- want\n%s", name, want[i].Name, got, want[i].Output)
			}
		}
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		config, want string
	}{
		{`{"chat_template": "{% if %}"}`, "line 1"},
		{`{"chat_template": "a\n{{ raise_exception('bad role') }}"}`, "line 2: bad role"},
		{`{"chat_template": "{% for x in 5 %}{% endfor %}"}`, "not iterable"},
		{`{}`, "no chat_template"},
	} {
		tpl, err := FromConfig([]byte(tc.config))
		if err == nil {
			_, err = tpl.Render(Request{Messages: []jinja.Value{}})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.config, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"messages": []}`, `{"messages": "x"}`, `{"messages": [{"role":"user"}], "enable_thinking": "yes"}`} {
		if _, err := ParseRequest([]byte(bad)); err == nil {
			t.Errorf("ParseRequest(%s) accepted", bad)
		}
	}
}

// BenchmarkRender50MessagesWithTools renders a 50-message conversation with
// tools and tool calls through the Qwen3 template.
func BenchmarkRender50MessagesWithTools(b *testing.B) {
	tpl := vendored(b, "qwen3")
	var msgs []string
	for i := 0; i < 25; i++ {
		msgs = append(msgs, `{"role":"user","content":"question number `+time.Duration(i).String()+` about the code base"}`,
			`{"role":"assistant","content":"Let me look.","tool_calls":[{"type":"function","function":{"name":"read_file","arguments":{"path":"main.go"}}}]}`)
	}
	body := `{"messages":[` + strings.Join(msgs, ",") + `],"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}],"add_generation_prompt":true}`
	req, err := ParseRequest([]byte(body))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tpl.Render(req); err != nil {
			b.Fatal(err)
		}
	}
}
