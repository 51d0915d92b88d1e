package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"
)

// fakeAgentScript records how it was started: its arguments, environment
// and the config file it was pointed at.
const fakeAgentScript = `#!/bin/sh
out="$SPLASH_TEST_RECORD"
printf '%s\n' "$@" > "$out/args"
env > "$out/env"
if [ -n "$OPENCODE_CONFIG" ]; then cp "$OPENCODE_CONFIG" "$out/config"; fi
if [ -n "$HERMES_HOME" ]; then cp "$HERMES_HOME/config.yaml" "$out/config"; fi
exit 0
`

// fakeSplash answers /health, /ready and /v1/models like `splash serve`,
// requiring key on /v1/models when it is set.
func fakeSplash(t *testing.T, key string, ready bool) (host, port string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			w.Write([]byte(`{"status":"ok"}`))
		case "/ready":
			if !ready {
				http.Error(w, `{"error":"model is loading"}`, http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte(`{"status":"ready"}`))
		case "/v1/models":
			if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
				http.Error(w, `{"error":"invalid or missing API key"}`, http.StatusUnauthorized)
				return
			}
			w.Write([]byte(`{"object":"list","data":[{"id":"acme/tiny","object":"model","max_model_len":32768},{"id":"other"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	host, port, _ = net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	return host, port
}

// agentHarness installs fake agents on a PATH and runs them as children.
type agentHarness struct {
	record, config string
	runner         agentRunner
}

func newAgentHarness(t *testing.T) *agentHarness {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake agents are shell scripts")
	}
	bin, record, config := t.TempDir(), t.TempDir(), t.TempDir()
	for _, name := range []string{"claude", "codex", "opencode", "hermes"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fakeAgentScript), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	h := &agentHarness{record: record, config: config}
	h.runner = agentRunner{
		lookPath: func(name string) (string, error) {
			p := filepath.Join(bin, name)
			if _, err := os.Stat(p); err != nil {
				return "", exec.ErrNotFound
			}
			return p, nil
		},
		exec: func(path string, argv, env []string) error {
			cmd := exec.Command(path, argv[1:]...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				return errors.New(string(out) + err.Error())
			}
			return nil
		},
		environ: func() []string {
			return []string{"PATH=" + path, "SPLASH_TEST_RECORD=" + record, "ANTHROPIC_API_KEY=sk-real", "KEEP=me"}
		},
		configDir: func() (string, error) { return config, nil },
		client:    http.DefaultClient,
	}
	return h
}

func (h *agentHarness) run(spec agentSpec, args ...string) (stderr string, err error) {
	var errb bytes.Buffer
	cmd := newAgentCmd(&stdio{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &errb}, spec, h.runner)
	err = cmd.ParseAndRun(context.Background(), args, ff.WithEnvVarPrefix("SPLASH"))
	return errb.String(), err
}

func (h *agentHarness) recorded(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.record, name))
	if err != nil {
		t.Fatalf("the agent did not record %s: %v", name, err)
	}
	return string(b)
}

func TestAgentLaunchers(t *testing.T) {
	t.Setenv("SPLASH_API_KEY", "")
	t.Setenv("SPLASH_PORT", "")
	tests := []struct {
		spec        agentSpec
		key         string
		wantEnv     []string // NAME=value lines the agent must see
		wantNoEnv   []string // names the agent must not see
		wantArgs    string   // the agent's arguments, one a line
		wantConfig  []string // substrings of the config file it was pointed at
		noKeyConfig []string // substrings the config must not hold
	}{
		{spec: claudeAgent(), wantEnv: []string{"ANTHROPIC_BASE_URL=http://HOSTPORT", "ANTHROPIC_AUTH_TOKEN=" + localToken,
			"ANTHROPIC_MODEL=acme/tiny", "ANTHROPIC_DEFAULT_HAIKU_MODEL=acme/tiny", "ANTHROPIC_SMALL_FAST_MODEL=acme/tiny", "KEEP=me"},
			wantNoEnv: []string{"ANTHROPIC_API_KEY", "SPLASH_API_KEY"}, wantArgs: "-p\nhello\n"},
		{spec: claudeAgent(), key: "k3y", wantEnv: []string{"ANTHROPIC_AUTH_TOKEN=k3y", "SPLASH_API_KEY=k3y"},
			wantNoEnv: []string{"ANTHROPIC_API_KEY"}, wantArgs: "-p\nhello\n"},
		{spec: codexAgent(), key: "k3y", wantEnv: []string{"SPLASH_API_KEY=k3y"},
			wantArgs: "-c\nmodel_provider=\"splash\"\n-c\nmodel=\"acme/tiny\"\n-c\nmodel_providers.splash.name=\"Splash\"\n" +
				"-c\nmodel_providers.splash.base_url=\"http://HOSTPORT/v1\"\n-c\nmodel_providers.splash.wire_api=\"responses\"\n" +
				"-c\nmodel_providers.splash.env_key=\"SPLASH_API_KEY\"\n-c\nmodel_context_window=32768\n-p\nhello\n"},
		{spec: opencodeAgent(), wantEnv: []string{"OPENCODE_CONFIG=CONFIGDIR/opencode.json", `OPENCODE_CONFIG_CONTENT={"model":"splash/acme/tiny"}`}, wantArgs: "-p\nhello\n",
			wantConfig:  []string{`"npm": "@ai-sdk/openai-compatible"`, `"baseURL": "http://HOSTPORT/v1"`, `"model": "splash/acme/tiny"`, `"context": 32768`},
			noKeyConfig: []string{"apiKey"}},
		{spec: opencodeAgent(), key: "k3y", wantEnv: []string{"SPLASH_API_KEY=k3y"}, wantArgs: "-p\nhello\n",
			wantConfig: []string{`"apiKey": "{env:SPLASH_API_KEY}"`}, noKeyConfig: []string{"k3y"}},
		{spec: hermesAgent(), key: "k3y", wantEnv: []string{"HERMES_HOME=CONFIGDIR/hermes", "SPLASH_API_KEY=k3y"}, wantArgs: "-p\nhello\n",
			wantConfig: []string{"provider: custom", `default: "acme/tiny"`, `base_url: "http://HOSTPORT/v1"`,
				`api_key: "${SPLASH_API_KEY}"`, "context_length: 32768"}, noKeyConfig: []string{"k3y"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec.name+"/key="+tt.key, func(t *testing.T) {
			h := newAgentHarness(t)
			host, port := fakeSplash(t, tt.key, true)
			args := []string{"--host", host, "--port", port}
			if tt.key != "" {
				args = append(args, "--api-key", tt.key)
			}
			stderr, err := h.run(tt.spec, append(args, "--", "-p", "hello")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			fill := strings.NewReplacer("HOSTPORT", net.JoinHostPort(host, port), "CONFIGDIR", h.config)
			env := "\n" + h.recorded(t, "env")
			for _, kv := range tt.wantEnv {
				if !strings.Contains(env, "\n"+fill.Replace(kv)+"\n") {
					t.Errorf("agent env lacks %s", fill.Replace(kv))
				}
			}
			for _, name := range tt.wantNoEnv {
				if strings.Contains(env, "\n"+name+"=") {
					t.Errorf("agent env has %s", name)
				}
			}
			if got := h.recorded(t, "args"); got != fill.Replace(tt.wantArgs) {
				t.Errorf("agent args:\n%s\nwant:\n%s", got, fill.Replace(tt.wantArgs))
			}
			if len(tt.wantConfig) > 0 {
				cfg := h.recorded(t, "config")
				for _, want := range tt.wantConfig {
					if !strings.Contains(cfg, fill.Replace(want)) {
						t.Errorf("config lacks %s:\n%s", fill.Replace(want), cfg)
					}
				}
				for _, bad := range tt.noKeyConfig {
					if strings.Contains(cfg, bad) {
						t.Errorf("config holds %q:\n%s", bad, cfg)
					}
				}
				if tt.spec.name == "opencode" {
					var v map[string]any
					if err := json.Unmarshal([]byte(cfg), &v); err != nil {
						t.Errorf("opencode config is not JSON: %v", err)
					}
				}
			}
		})
	}
}

func TestAgentLauncherReadsSplashEnv(t *testing.T) {
	h := newAgentHarness(t)
	host, port := fakeSplash(t, "envkey", true)
	t.Setenv("SPLASH_HOST", host)
	t.Setenv("SPLASH_PORT", port)
	t.Setenv("SPLASH_API_KEY", "envkey")
	if stderr, err := h.run(claudeAgent(), "--model", "other"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	env := h.recorded(t, "env")
	for _, want := range []string{"ANTHROPIC_AUTH_TOKEN=envkey", "ANTHROPIC_MODEL=other"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
}

func TestAgentLauncherErrors(t *testing.T) {
	t.Setenv("SPLASH_API_KEY", "")
	t.Setenv("SPLASH_HOST", "")
	t.Setenv("SPLASH_PORT", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nobody answers on
	if err != nil {
		t.Fatal(err)
	}
	_, deadPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	host, port := fakeSplash(t, "k3y", true)
	loadingHost, loadingPort := fakeSplash(t, "", false)
	tests := []struct {
		name string
		spec agentSpec
		args []string
		want string
	}{
		{name: "no server", spec: claudeAgent(), args: []string{"--port", deadPort}, want: "splash serve --model"},
		{name: "loading", spec: codexAgent(), args: []string{"--host", loadingHost, "--port", loadingPort}, want: "still loading"},
		{name: "key needed", spec: codexAgent(), args: []string{"--host", host, "--port", port}, want: "SPLASH_API_KEY"},
		{name: "wrong key", spec: codexAgent(), args: []string{"--host", host, "--port", port, "--api-key", "nope"}, want: "rejects the API key"},
		{name: "unknown model", spec: opencodeAgent(), args: []string{"--host", host, "--port", port, "--api-key", "k3y", "--model", "x"}, want: "serves acme/tiny, other"},
		{name: "agent missing", spec: agentSpec{name: "nosuchagent", title: "No Such", install: "npm install -g nosuch"}, want: "npm install -g nosuch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newAgentHarness(t)
			_, err := h.run(tt.spec, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want it to mention %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(h.record, "args")); err == nil {
				t.Error("the agent ran despite the error")
			}
		})
	}
}

func TestAgentCommandsAreRegistered(t *testing.T) {
	for _, name := range []string{"claude", "codex", "opencode", "hermes"} {
		_, stderr, err := runSplash(t, name, "--help")
		if err != nil || !strings.Contains(stderr, "splash "+name) {
			t.Errorf("%s --help: %v\n%s", name, err, stderr)
		}
	}
}

func TestConnectHostAndQuoting(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0.0.0.0", "127.0.0.1"}, {"", "127.0.0.1"}, {"::", "127.0.0.1"}, {"[::1]", "::1"}, {"example.lan", "example.lan"},
	}
	for _, tt := range tests {
		if got := connectHost(tt.in); got != tt.want {
			t.Errorf("connectHost(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := tomlString("a\"b\\c\n"); got != `"a\"b\\c\u000A"` {
		t.Errorf("tomlString = %s", got)
	}
}

// TestAgentLauncherAgainstServe runs the launcher against a real `splash
// serve` of the embedded demo model, so the launcher reads the server's
// actual /health, /ready and /v1/models answers.
func TestAgentLauncherAgainstServe(t *testing.T) {
	t.Setenv("SPLASH_API_KEY", "")
	addr, _, stop := startServe(t, "--api-key", "sekret")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	host, port, _ := net.SplitHostPort(addr)
	h := newAgentHarness(t)
	if stderr, err := h.run(codexAgent(), "--host", host, "--port", port, "--api-key", "sekret", "exec", "hi"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	args := h.recorded(t, "args")
	for _, want := range []string{`model="splash-demo"`, "model_context_window=2048", `base_url="http://` + addr + `/v1"`, "exec\nhi\n"} {
		if !strings.Contains(args, want) {
			t.Errorf("codex args lack %s:\n%s", want, args)
		}
	}
}
