package api_test

import (
	"context"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
	"github.com/splash-inference/splash/api/webui"
)

// webuiScreenshot, when set, is where the browser test saves a PNG of the
// chat page after a reply (go test ./http -run WebUIBrowser -webui-screenshot=/tmp/page.png).
var webuiScreenshot = flag.String("webui-screenshot", "", "save a screenshot of the chat page here")

func TestWebUIFiles(t *testing.T) {
	ts := startServer(t, api.Options{})
	type want struct {
		path, contentType, contains string
	}
	tests := []want{{"/", "text/html; charset=utf-8", "<title>Splash</title>"}}
	for _, a := range webui.Assets() {
		ct := "text/css; charset=utf-8"
		if strings.HasSuffix(a, ".js") {
			ct = "text/javascript; charset=utf-8"
		}
		tests = append(tests, want{a, ct, ""})
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := ts.do(t, "GET", tt.path, "")
			if res.status != 200 {
				t.Fatalf("status %d, body %s", res.status, res.body)
			}
			if got := res.header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
			if !strings.Contains(res.body, tt.contains) || res.body == "" {
				t.Errorf("body does not contain %q", tt.contains)
			}
			if got := res.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if csp := res.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("Content-Security-Policy = %q, want default-src 'self'", csp)
			}
		})
	}
}

func TestWebUIRouting(t *testing.T) {
	tests := []struct {
		name    string
		opts    api.Options
		path    string
		headers []string
		status  int
	}{
		{"page", api.Options{}, "/", nil, 200},
		{"missing asset", api.Options{}, "/webui/missing.js", nil, 404},
		{"page file only at root", api.Options{}, "/webui/index.html", nil, 404},
		{"no climbing out", api.Options{}, "/webui/..%2fwebui.go", nil, 404},
		{"disabled page", api.Options{NoWebUI: true}, "/", nil, 404},
		{"disabled asset", api.Options{NoWebUI: true}, "/webui/app.js", nil, 404},
		{"disabled keeps health", api.Options{NoWebUI: true}, "/health", nil, 200},
		{"foreign host", api.Options{}, "/", []string{"Host: evil.example"}, 403},
		{"foreign host asset", api.Options{}, "/webui/app.js", []string{"Host: evil.example:8000"}, 403},
		{"allowed host", api.Options{AllowedHosts: []string{"box.lan"}}, "/", []string{"Host: box.lan:8000"}, 200},
		{"page public with a key", api.Options{APIKey: "sekrit"}, "/", nil, 200},
		{"asset public with a key", api.Options{APIKey: "sekrit"}, "/webui/app.js", nil, 200},
		{"disabled page with a key", api.Options{APIKey: "sekrit", NoWebUI: true}, "/", nil, 404},
		{"api still needs the key", api.Options{APIKey: "sekrit"}, "/v1/models", nil, 401},
		{"api with the key", api.Options{APIKey: "sekrit"}, "/v1/models", []string{"Authorization: Bearer sekrit"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, tt.opts)
			res := ts.do(t, "GET", tt.path, "", tt.headers...)
			if res.status != tt.status {
				t.Errorf("GET %s: status %d, want %d (body %s)", tt.path, res.status, tt.status, res.body)
			}
		})
	}
}

// chromiumPath is where Debian's chromium package (scripts/install-chromium.sh)
// puts the browser.
const chromiumPath = "/usr/bin/chromium"

// newBrowser starts headless Chromium for one test, with a fresh profile and
// everything that would reach the network turned off.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("SKIP headless browser test: %s not found; install it with scripts/install-chromium.sh", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 700),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	return ctx
}

// waitInPage polls a JavaScript condition in the page. Each wait is bounded,
// so a broken page fails the test quickly with a message instead of running
// into the browser's overall timeout.
func waitInPage(t *testing.T, ctx context.Context, cond, what string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// openChat loads the page and waits until it shows the served model.
func openChat(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	waitInPage(t, ctx, `document.getElementById("model-name").textContent === "`+testModel+`"`, "model name never shown")
}

// ask types a message and clicks Send.
func ask(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("prompt"), text), chromedp.Click(chromedp.ID("send"))); err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
}

// evalString runs a JavaScript expression in the page.
func evalString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

// TestWebUIBrowser drives the page in headless Chromium. Each subtest
// starts its server before its browser, so the browser (and every socket
// it holds open, preconnected ones included) is gone before the server's
// graceful shutdown waits for connections to end.
func TestWebUIBrowser(t *testing.T) {
	t.Run("streamed reply", func(t *testing.T) {
		eng := fake.New()
		eng.Words = []string{"Here", " is", " **bold**", " and", " `code`", "."}
		eng.Delay = 40 * time.Millisecond // spread over ~0.5 s, so the page can time a rate
		ts := startServer(t, api.Options{Engine: eng})
		ctx := newBrowser(t)
		openChat(t, ctx, ts.url)
		ask(t, ctx, "Say something")
		waitInPage(t, ctx, `document.querySelector(".msg.assistant.done") !== null`, "reply never finished")
		if got, want := evalString(t, ctx, `document.querySelector(".msg.assistant .content").textContent`), "Here is bold and code."; got != want {
			t.Errorf("reply text = %q, want %q", got, want)
		}
		if got := evalString(t, ctx, `document.querySelector(".msg.assistant .content").innerHTML`); !strings.Contains(got, "<strong>bold</strong>") || !strings.Contains(got, "<code>code</code>") {
			t.Errorf("reply not rendered as Markdown: %s", got)
		}
		if got, want := evalString(t, ctx, `document.querySelector(".msg.assistant .thoughts").textContent`), "Let me think about it."; got != want {
			t.Errorf("reasoning = %q, want %q", got, want)
		}
		if got := evalString(t, ctx, `String(document.querySelector(".msg.assistant details.reasoning").open)`); got != "false" {
			t.Errorf("reasoning block open = %s, want folded once the answer came", got)
		}
		if got := evalString(t, ctx, `document.querySelector(".msg.user").textContent`); got != "Say something" {
			t.Errorf("user message = %q", got)
		}
		stats := evalString(t, ctx, `document.getElementById("stats").textContent`)
		if !regexp.MustCompile(`^14 tokens · [0-9.]+ tok/s · first token [0-9]+ ms$`).MatchString(stats) {
			t.Errorf("stats = %q, want 14 tokens (usage: 6 thoughts, </think>, \\n\\n, 6 words), a rate and the time to first token", stats)
		}
		t.Logf("stats: %s", stats)
		if *webuiScreenshot != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if err := os.WriteFile(*webuiScreenshot, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("conversation", func(t *testing.T) {
		eng := fake.New()
		ts := startServer(t, api.Options{Engine: eng})
		ctx := newBrowser(t)
		openChat(t, ctx, ts.url)
		prompt := func() string { return fake.Tokenizer{}.Decode(eng.Last().Prompt, false) }
		replies := func(n string) string { return `document.querySelectorAll(".msg.assistant.done").length === ` + n }
		ask(t, ctx, "first")
		waitInPage(t, ctx, replies("1"), "first reply never finished")
		ask(t, ctx, "second")
		waitInPage(t, ctx, replies("2"), "second reply never finished")
		// The page sends the whole conversation, answers without their reasoning.
		if got, want := prompt(), "<|user|>first\n<|assistant|>Hello there, this is a fake model talking.\n<|user|>second\n"; !strings.HasPrefix(got, want) {
			t.Errorf("second prompt = %q, want it to start with %q", got, want)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("new-chat"))); err != nil {
			t.Fatalf("click new chat: %v", err)
		}
		if got := evalString(t, ctx, `String(document.querySelectorAll(".msg").length)`); got != "0" {
			t.Errorf("%s messages left after New chat", got)
		}
		ask(t, ctx, "third")
		waitInPage(t, ctx, replies("1"), "reply after New chat never finished")
		if got, want := prompt(), "<|user|>third\n"; !strings.HasPrefix(got, want) {
			t.Errorf("prompt after New chat = %q, want it to start with %q", got, want)
		}
	})

	t.Run("stop aborts the stream", func(t *testing.T) {
		eng := fake.New()
		eng.Words = strings.Fields(strings.Repeat("word ", 500))
		eng.Delay = 20 * time.Millisecond // 10 s in all: far longer than the test waits
		ts := startServer(t, api.Options{Engine: eng})
		ctx := newBrowser(t)
		openChat(t, ctx, ts.url)
		ask(t, ctx, "Talk for a long time")
		waitInPage(t, ctx, `document.querySelector(".msg.assistant .content").textContent.length > 0`, "reply never started")
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("stop"))); err != nil {
			t.Fatalf("click stop: %v", err)
		}
		waitInPage(t, ctx, `document.querySelector(".msg.assistant.done") !== null`, "reply never ended after stop")
		if got := evalString(t, ctx, `document.querySelector(".msg.assistant .note").textContent`); got != "stopped" {
			t.Errorf("note = %q, want stopped", got)
		}
		deadline := time.Now().Add(5 * time.Second)
		for eng.Cancelled() != 1 || eng.Running() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("server did not cancel the generation: cancelled %d, running %d", eng.Cancelled(), eng.Running())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got := evalString(t, ctx, `String(document.getElementById("send").hidden)`); got != "false" {
			t.Errorf("send button hidden = %s after stop", got)
		}
	})

	t.Run("api key", func(t *testing.T) {
		ts := startServer(t, api.Options{APIKey: "sekrit"})
		ctx := newBrowser(t)
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.url+"/")); err != nil {
			t.Fatalf("navigate: %v", err)
		}
		waitInPage(t, ctx, `!document.getElementById("error").hidden && document.getElementById("error").textContent.includes("API key")`, "page did not ask for the API key")
		// Enter in the field commits it (a change event), as a user would.
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("api-key"), "sekrit\r")); err != nil {
			t.Fatalf("type key: %v", err)
		}
		waitInPage(t, ctx, `document.getElementById("model-name").textContent === "`+testModel+`"`, "models not listed with the key")
		if got := evalString(t, ctx, `localStorage.getItem("splash.apiKey")`); got != "sekrit" {
			t.Errorf("stored key = %q", got)
		}
		openChat(t, ctx, ts.url) // a reload finds the stored key
		ask(t, ctx, "Hello")
		waitInPage(t, ctx, `document.querySelector(".msg.assistant.done") !== null`, "reply never finished")
		if got := evalString(t, ctx, `document.querySelector(".msg.assistant .note").textContent`); got != "" {
			t.Errorf("reply note = %q, want none", got)
		}
	})

	t.Run("markdown", func(t *testing.T) {
		ts := startServer(t, api.Options{})
		ctx := newBrowser(t)
		openChat(t, ctx, ts.url)
		tests := []struct{ in, want string }{
			{"plain", "<p>plain</p>"},
			{"<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"},
			{`<img src=x onerror="alert(1)">`, "<p>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</p>"},
			{"**bold** and *it* and _it_", "<p><strong>bold</strong> and <em>it</em> and <em>it</em></p>"},
			{"a `x < y` b", "<p>a <code>x &lt; y</code> b</p>"},
			{"`**not bold**`", "<p><code>**not bold**</code></p>"},
			{"```go\nif a < b {\n}\n```", `<pre><code class="language-go">if a &lt; b {` + "\n}</code></pre>"},
			{"```\nunclosed", "<pre><code>unclosed</code></pre>"},
			{"# Title\n## Sub", "<h1>Title</h1>\n<h2>Sub</h2>"},
			{"- one\n- **two**", "<ul><li>one</li><li><strong>two</strong></li></ul>"},
			{"1. one\n2. two", "<ol><li>one</li><li>two</li></ol>"},
			{"line 1\nline 2\n\nnext", "<p>line 1<br>line 2</p>\n<p>next</p>"},
			{"[site](https://example.com/a?b=1&c=2)", `<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">site</a></p>`},
			{"[bad](javascript:alert(1))", "<p>bad)</p>"}, // a link URL ends at the first ")"
			{`[x](https://e.com/"onmouseover=alert(1))`, `<p><a href="https://e.com/&quot;onmouseover=alert(1" target="_blank" rel="noopener noreferrer">x</a>)</p>`},
			{"[proto](//evil.example)", "<p>proto</p>"},
			{"nul \x00 stripped", "<p>nul  stripped</p>"},
			{"[`code` label](https://e.com)", `<p><a href="https://e.com" target="_blank" rel="noopener noreferrer"><code>code</code> label</a></p>`},
			{"[**b** `c`](/p)", `<p><a href="/p" target="_blank" rel="noopener noreferrer"><strong>b</strong> <code>c</code></a></p>`},
			{"`[not](/a/link)`", "<p><code>[not](/a/link)</code></p>"},
			{"[x](/\\evil.com)", "<p>x</p>"},
			{"[x](/\x01/evil.com)", "<p>x</p>"},
			{"[x](/\x7f/evil.com)", "<p>x</p>"},
			{"[x](https:evil.com)", "<p>x</p>"},
			{"[x](data:text/html,hi)", "<p>x</p>"},
			{"[x](HTTPS://e.com)", `<p><a href="HTTPS://e.com" target="_blank" rel="noopener noreferrer">x</a></p>`},
			{"[x](mailto:a@e.com)", `<p><a href="mailto:a@e.com" target="_blank" rel="noopener noreferrer">x</a></p>`},
			{"[x](/docs/a)", `<p><a href="/docs/a" target="_blank" rel="noopener noreferrer">x</a></p>`},
			{"[x](#top)", `<p><a href="#top" target="_blank" rel="noopener noreferrer">x</a></p>`},
			{"[x](/ spaced)", "<p>[x](/ spaced)</p>"},
			{"snake_case_name and _em_", "<p>snake_case_name and <em>em</em></p>"},
			{"**a *b* c**", "<p><strong>a <em>b</em> c</strong></p>"},
			{"# Title ##\n## C#", "<h1>Title</h1>\n<h2>C#</h2>"},
			{"```   \nx\n   ```", "<pre><code>x</code></pre>"},
		}
		for _, tt := range tests {
			got := evalString(t, ctx, "renderMarkdown("+jsString(tt.in)+")")
			if got != tt.want {
				t.Errorf("renderMarkdown(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		}
	})
}

// TestWebUIMarkdownAdversarial renders 64K-character replies built to
// make a backtracking renderer go quadratic (each opener scanning the rest of
// the line for a closer that is not there): they must render, and render
// right. The page re-renders the whole reply every frame while it streams,
// so the time each takes is logged.
func TestWebUIMarkdownAdversarial(t *testing.T) {
	ts := startServer(t, api.Options{})
	ctx := newBrowser(t)
	openChat(t, ctx, ts.url)
	const n = 1 << 16
	for _, tt := range []struct {
		name, js, want string
	}{
		{"open brackets", `"[".repeat(65536)`, "<p>" + strings.Repeat("[", n) + "</p>"},
		{"unclosed link URLs", `"[a](".repeat(16384)`, "<p>" + strings.Repeat("[a](", n/4) + "</p>"},
		{"heading of spaces", `"# " + " ".repeat(65536) + "x"`, "<h1>x</h1>"},
		{"heading of hashes", `"# x" + " #".repeat(32768) + "y"`, "<h1>x" + strings.Repeat(" #", n/2) + "y</h1>"},
		{"fence of spaces", `"` + "```" + `" + " ".repeat(65536) + "x y"`, "<p>```" + strings.Repeat(" ", n) + "x y</p>"},
		{"word underscores", `"_a".repeat(32768)`, "<p>" + strings.Repeat("_a", n/2) + "</p>"},
		{"unclosed code", `"` + "`" + `a".repeat(32768)`, "<p>" + strings.Repeat("<code>a</code>a", n/4) + "</p>"},
		{"unclosed stars", `"* a".repeat(21845)`, "<ul><li>a" + strings.Repeat("* a", n/3-1) + "</li></ul>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := evalString(t, ctx, `(() => { const t0 = performance.now(); const h = renderMarkdown(`+tt.js+`);
				return (performance.now() - t0).toFixed(1) + " " + h; })()`)
			ms, html, _ := strings.Cut(got, " ")
			if html != tt.want {
				t.Errorf("render of %d characters differs: got %.200s…", n, html)
			}
			t.Logf("%s: %s ms", tt.name, ms)
		})
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
