package api_test

import (
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
)

// TestMessagesMidConversationSystem: a "system" message inside Anthropic
// messages is served, in its place, not refused. Peers that refused it
// broke Claude Code, which sends them since 2.1.154 (MCP server
// instructions, reminders) as Anthropic's mid-conversation system
// messages; other unknown roles remain 400s (TestBadInput).
func TestMessagesMidConversationSystem(t *testing.T) {
	ts := startServer(t, api.Options{})
	res := ts.do(t, "POST", "/v1/messages", `{"max_tokens":2,"system":"top","messages":[{"role":"user","content":"a"},`+
		`{"role":"system","content":[{"type":"text","text":"mid"}]},{"role":"user","content":"b"}]}`)
	if res.status != 200 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	if got, want := ts.engine.LastText(), "<|system|>top\n<|user|>a\n<|system|>mid\n<|user|>b\n"; !strings.Contains(got, want) {
		t.Errorf("prompt %q, want %q in it", got, want)
	}
}
