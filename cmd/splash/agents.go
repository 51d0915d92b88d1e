package main

// Agent launchers: `splash claude|codex|opencode|hermes [FLAGS] [-- AGENT ARGS]`
// check that a Splash server answers, ask it which model it serves, and
// exec the agent wired to it. The settings each agent reads (checked
// against each agent's documentation, 2026):
//
// Claude Code (Anthropic Messages API at BASE):
//
//	ANTHROPIC_BASE_URL=http://HOST:PORT        Claude Code appends /v1/messages
//	ANTHROPIC_AUTH_TOKEN=$SPLASH_API_KEY       sent as Authorization: Bearer; a
//	                                           placeholder when the server has no
//	                                           key, so Claude Code does not ask to log in
//	ANTHROPIC_MODEL, ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL,
//	ANTHROPIC_SMALL_FAST_MODEL=MODEL           every tier, background tasks included
//	ANTHROPIC_API_KEY                          removed, so a real Anthropic key is
//	                                           neither sent here nor in conflict
//
// Codex (Responses API), as -c overrides of ~/.codex/config.toml:
//
//	-c model_provider="splash" -c model="MODEL"
//	-c model_providers.splash.name="Splash"
//	-c model_providers.splash.base_url="http://HOST:PORT/v1"   Codex appends /responses
//	-c model_providers.splash.wire_api="responses"
//	-c model_providers.splash.env_key="SPLASH_API_KEY"         only with a key
//	-c model_context_window=N                                  when the server reports it
//
// OpenCode (OpenAI-compatible provider through @ai-sdk/openai-compatible):
// OPENCODE_CONFIG_CONTENT={"model":"splash/MODEL"} (outranks a project's
// opencode.json) and OPENCODE_CONFIG=<config dir>/splash/agents/opencode.json,
// which holds
//
//	{"provider": {"splash": {"npm": "@ai-sdk/openai-compatible", "name": "Splash",
//	  "options": {"baseURL": "http://HOST:PORT/v1", "apiKey": "{env:SPLASH_API_KEY}"},
//	  "models": {"MODEL": {"name": "MODEL", "limit": {"context": N, "output": N}}}}},
//	 "model": "splash/MODEL"}
//
// Hermes Agent (Nous Research) reads its endpoint only from config.yaml
// (its OPENAI_BASE_URL and LLM_MODEL variables were removed), so it runs with
// HERMES_HOME=<config dir>/splash/agents/hermes, whose config.yaml holds
//
//	model: {provider: custom, default: MODEL, base_url: http://HOST:PORT/v1,
//	        api_key: ${SPLASH_API_KEY} (only with a key), context_length: N}
//
// That home is separate from ~/.hermes: Hermes's memories, skills and keys
// there are not used while it talks to Splash.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v4"
)

// agentTarget is what the launcher learned about the server.
type agentTarget struct {
	baseURL       string // http://host:port, no trailing slash
	model         string
	contextLength int // 0 when the server does not say
	apiKey        string
	configDir     string // where generated agent configs live
}

// agentLaunch is how to start one agent: settings on top of the caller's
// environment, arguments before the user's, and config files to write.
type agentLaunch struct {
	env   map[string]string
	unset []string
	args  []string
	files map[string][]byte // absolute path -> content
}

// agentSpec is one supported agent.
type agentSpec struct {
	name    string // subcommand and executable
	title   string
	install string // how to install it, shown when it is missing
	wire    func(agentTarget) (agentLaunch, error)
}

// The supported agents; functions rather than variables so that nothing
// package-level can be changed.
func claudeAgent() agentSpec {
	return agentSpec{name: "claude", title: "Claude Code", install: "npm install -g @anthropic-ai/claude-code", wire: wireClaude}
}

func codexAgent() agentSpec {
	return agentSpec{name: "codex", title: "Codex", install: "npm install -g @openai/codex", wire: wireCodex}
}

func opencodeAgent() agentSpec {
	return agentSpec{name: "opencode", title: "OpenCode", install: "npm install -g opencode-ai", wire: wireOpenCode}
}

func hermesAgent() agentSpec {
	return agentSpec{name: "hermes", title: "Hermes Agent",
		install: "curl -fsSL https://hermes-agent.nousresearch.com/install.sh | bash", wire: wireHermes}
}

func newClaudeCmd(s *stdio) *ff.Command { return newAgentCmd(s, claudeAgent(), defaultAgentRunner()) }
func newCodexCmd(s *stdio) *ff.Command  { return newAgentCmd(s, codexAgent(), defaultAgentRunner()) }
func newOpencodeCmd(s *stdio) *ff.Command {
	return newAgentCmd(s, opencodeAgent(), defaultAgentRunner())
}
func newHermesCmd(s *stdio) *ff.Command { return newAgentCmd(s, hermesAgent(), defaultAgentRunner()) }

// agentRunner holds the launcher's I/O seams; tests replace exec so the
// agent runs as a child instead of replacing the test process.
type agentRunner struct {
	lookPath  func(string) (string, error)
	exec      func(path string, argv, env []string) error
	environ   func() []string
	configDir func() (string, error)
	client    *http.Client
}

func defaultAgentRunner() agentRunner {
	return agentRunner{lookPath: exec.LookPath, exec: execAgent, environ: os.Environ,
		configDir: func() (string, error) {
			d, err := os.UserConfigDir()
			return filepath.Join(d, "splash", "agents"), err
		},
		client: &http.Client{Timeout: 5 * time.Second}}
}

// agentFlags are the launcher's own flags; everything after them (or after
// "--") goes to the agent.
type agentFlags struct {
	host, apiKey, model string
	port                int
}

func newAgentCmd(s *stdio, spec agentSpec, r agentRunner) *ff.Command {
	var f agentFlags
	fs := ff.NewFlagSet(spec.name)
	fs.StringVar(&f.host, 0, "host", "127.0.0.1", "host of the Splash server")
	fs.IntVar(&f.port, 0, "port", 8000, "port of the Splash server")
	fs.StringVar(&f.apiKey, 0, "api-key", "", "the server's API key, passed on to the agent")
	fs.StringVar(&f.model, 0, "model", "", "model to use (default: the first the server lists)")
	return &ff.Command{
		Name:      spec.name,
		Usage:     "splash " + spec.name + " [FLAGS] [--] [" + strings.ToUpper(spec.name) + " ARGS...]",
		ShortHelp: "run " + spec.title + " against the local Splash server",
		LongHelp: "Checks that a Splash server answers at --host/--port (SPLASH_HOST, SPLASH_PORT), asks it for its model\n" +
			"and starts " + spec.title + " wired to it, passing SPLASH_API_KEY along. Put agent flags after \"--\".",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			return r.launch(ctx, s, spec, f, args)
		},
	}
}

// launch checks the server, writes the agent's config and execs it.
func (r agentRunner) launch(ctx context.Context, s *stdio, spec agentSpec, f agentFlags, args []string) error {
	path, err := r.lookPath(spec.name)
	if err != nil {
		return fmt.Errorf("%s: %s is not installed (no %q on PATH); install it with:\n  %s", spec.name, spec.title, spec.name, spec.install)
	}
	base := "http://" + net.JoinHostPort(connectHost(f.host), strconv.Itoa(f.port))
	if err := r.checkServer(ctx, base, f.port); err != nil {
		return fmt.Errorf("%s: %w", spec.name, err)
	}
	model, ctxLen, err := r.pickModel(ctx, base, f.apiKey, f.model)
	if err != nil {
		return fmt.Errorf("%s: %w", spec.name, err)
	}
	dir, err := r.configDir()
	if err != nil {
		return fmt.Errorf("%s: no config directory: %w", spec.name, err)
	}
	l, err := spec.wire(agentTarget{baseURL: base, model: model, contextLength: ctxLen, apiKey: f.apiKey, configDir: dir})
	if err != nil {
		return fmt.Errorf("%s: %w", spec.name, err)
	}
	for p, content := range l.files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("%s: %w", spec.name, err)
		}
		if err := os.WriteFile(p, content, 0o600); err != nil {
			return fmt.Errorf("%s: %w", spec.name, err)
		}
	}
	if f.apiKey != "" {
		l.env["SPLASH_API_KEY"] = f.apiKey
	}
	fmt.Fprintf(s.err, "starting %s on %s (model %s)\n", spec.title, base, model)
	argv := append(append([]string{spec.name}, l.args...), args...)
	return r.exec(path, argv, mergeEnv(r.environ(), l.env, l.unset))
}

// connectHost turns a listen-everywhere address into one to connect to.
func connectHost(h string) string {
	switch h {
	case "", "0.0.0.0", "::", "[::]":
		return "127.0.0.1"
	}
	return strings.Trim(h, "[]")
}

// checkServer asks GET /health, then /ready (a server still loading its
// model answers 503 there).
func (r agentRunner) checkServer(ctx context.Context, base string, port int) error {
	resp, err := r.get(ctx, base+"/health", "")
	if err != nil {
		return fmt.Errorf("no Splash server answers at %s (%v).\nStart one in another terminal:\n"+
			"  splash serve --model <directory or owner/repo> --port %d\n"+
			"or point --host/--port (SPLASH_HOST/SPLASH_PORT) at a running one", base, err, port)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server at %s answers /health with HTTP %d: is it a Splash server?", base, resp.StatusCode)
	}
	if resp, err := r.get(ctx, base+"/ready", ""); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			return fmt.Errorf("the server at %s is still loading its model: wait for its Ready line", base)
		}
	}
	return nil
}

// pickModel reads GET /v1/models and returns want (when set and served)
// or the first model, with its context length when the server reports it.
func (r agentRunner) pickModel(ctx context.Context, base, key, want string) (string, int, error) {
	resp, err := r.get(ctx, base+"/v1/models", key)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if key == "" {
			return "", 0, fmt.Errorf("the server at %s requires an API key: set SPLASH_API_KEY or --api-key", base)
		}
		return "", 0, fmt.Errorf("the server at %s rejects the API key (HTTP %d)", base, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return "", 0, fmt.Errorf("GET %s/v1/models: HTTP %d", base, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return "", 0, fmt.Errorf("GET %s/v1/models: %w", base, err)
	}
	var ids []string
	for _, m := range list.Data {
		if want == "" || m.ID == want {
			if m.ID != "" {
				return m.ID, m.MaxModelLen, nil
			}
		}
		ids = append(ids, m.ID)
	}
	if want != "" {
		return "", 0, fmt.Errorf("the server does not serve %q (it serves %s)", want, strings.Join(ids, ", "))
	}
	return "", 0, fmt.Errorf("the server at %s lists no models", base)
}

func (r agentRunner) get(ctx context.Context, url, key string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return r.client.Do(req)
}

// mergeEnv returns base without the unset names and with set applied.
func mergeEnv(base []string, set map[string]string, unset []string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok || slices.Contains(unset, name) {
			continue
		}
		out = append(out, kv)
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		out = append(out, k+"="+set[k])
	}
	return out
}

// execAgent replaces splash with the agent, so the agent owns the terminal,
// its signals and its exit status. Windows has no exec: the agent runs as a
// child and its exit status is passed on.
func execAgent(path string, argv, env []string) error {
	if runtime.GOOS != "windows" {
		if err := syscall.Exec(path, argv, env); err != nil {
			return fmt.Errorf("%s: exec %s: %w", argv[0], path, err)
		}
		return nil
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	return err
}

// localToken stands in for an API key when the server has none: Claude
// Code insists on some credential, and a keyless server ignores it.
const localToken = "splash-local"

func wireClaude(t agentTarget) (agentLaunch, error) {
	token := t.apiKey
	if token == "" {
		token = localToken
	}
	env := map[string]string{"ANTHROPIC_BASE_URL": t.baseURL, "ANTHROPIC_AUTH_TOKEN": token, "ANTHROPIC_MODEL": t.model}
	for _, k := range []string{"ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_SMALL_FAST_MODEL"} {
		env[k] = t.model
	}
	return agentLaunch{env: env, unset: []string{"ANTHROPIC_API_KEY"}}, nil
}

func wireCodex(t agentTarget) (agentLaunch, error) {
	set := []string{
		"model_provider=" + tomlString("splash"),
		"model=" + tomlString(t.model),
		"model_providers.splash.name=" + tomlString("Splash"),
		"model_providers.splash.base_url=" + tomlString(t.baseURL+"/v1"),
		"model_providers.splash.wire_api=" + tomlString("responses"),
	}
	if t.apiKey != "" {
		set = append(set, "model_providers.splash.env_key="+tomlString("SPLASH_API_KEY"))
	}
	if t.contextLength > 0 {
		set = append(set, "model_context_window="+strconv.Itoa(t.contextLength))
	}
	var args []string
	for _, kv := range set {
		args = append(args, "-c", kv)
	}
	return agentLaunch{env: map[string]string{}, args: args}, nil
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func wireOpenCode(t agentTarget) (agentLaunch, error) {
	type limit struct {
		Context int `json:"context"`
		Output  int `json:"output"`
	}
	type modelEntry struct {
		Name  string `json:"name"`
		Limit *limit `json:"limit,omitempty"`
	}
	m := modelEntry{Name: t.model}
	if t.contextLength > 0 {
		m.Limit = &limit{Context: t.contextLength, Output: t.contextLength}
	}
	options := map[string]string{"baseURL": t.baseURL + "/v1"}
	if t.apiKey != "" {
		options["apiKey"] = "{env:SPLASH_API_KEY}" // OpenCode substitutes it: the key stays off disk
	}
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"splash": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Splash", "options": options,
			"models": map[string]modelEntry{t.model: m},
		}},
		"model": "splash/" + t.model,
	}
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return agentLaunch{}, err
	}
	pin, err := json.Marshal(map[string]string{"model": "splash/" + t.model})
	if err != nil {
		return agentLaunch{}, err
	}
	p := filepath.Join(t.configDir, "opencode.json")
	// OPENCODE_CONFIG ranks below a project's opencode.json, which may name
	// another model; the inline OPENCODE_CONFIG_CONTENT ranks above it.
	return agentLaunch{env: map[string]string{"OPENCODE_CONFIG": p, "OPENCODE_CONFIG_CONTENT": string(pin)},
		files: map[string][]byte{p: append(raw, '\n')}}, nil
}

func wireHermes(t agentTarget) (agentLaunch, error) {
	home := filepath.Join(t.configDir, "hermes")
	var b strings.Builder
	b.WriteString("# Written by `splash hermes` at each launch; edits are overwritten.\nmodel:\n  provider: custom\n")
	fmt.Fprintf(&b, "  default: %s\n  base_url: %s\n", yamlString(t.model), yamlString(t.baseURL+"/v1"))
	if t.apiKey != "" {
		b.WriteString("  api_key: \"${SPLASH_API_KEY}\"\n") // Hermes expands it: the key stays off disk
	}
	if t.contextLength > 0 {
		fmt.Fprintf(&b, "  context_length: %d\n", t.contextLength)
	}
	return agentLaunch{env: map[string]string{"HERMES_HOME": home},
		files: map[string][]byte{filepath.Join(home, "config.yaml"): []byte(b.String())}}, nil
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escapes are
// valid there).
func yamlString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
