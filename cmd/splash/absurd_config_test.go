package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
)

// processArgsEnv carries the arguments of a splash process that
// TestSplashProcess runs in a child copy of the test binary.
const processArgsEnv = "SPLASH_TEST_PROCESS_ARGS"

// TestSplashProcess is not a test of its own: run by splashProcess with
// processArgsEnv set, it is the splash binary (main, with its exit status
// and whatever the runtime prints on a crash).
func TestSplashProcess(t *testing.T) {
	raw := os.Getenv(processArgsEnv)
	if raw == "" {
		t.Skip("runs only as a child of splashProcess")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	os.Args = append([]string{"splash"}, args...)
	main()
	os.Exit(0)
}

// splashProcess runs splash args in a child process and returns its exit
// status and stderr.
func splashProcess(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSplashProcess$")
	raw, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), processArgsEnv+"="+string(raw), "SPLASH_CACHE_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// TestAbsurdConfigExits checks that serve and generate refuse a checkpoint
// whose config.json is absurd with exit status 1 and a message naming the
// field: no out-of-memory crash, no goroutine dump.
func TestAbsurdConfigExits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		patch map[string]any
		field string
		args  []string // after --model DIR
	}{
		{"serve in place, layers", map[string]any{"num_hidden_layers": 1_000_000_000}, "num_hidden_layers",
			[]string{"serve", "--quant", "none", "--port", "0"}},
		{"serve packed, head_dim", map[string]any{"head_dim": 1 << 31}, "head_dim", []string{"serve", "--port", "0"}},
		{"generate, layers", map[string]any{"num_hidden_layers": 1_000_000_000}, "num_hidden_layers",
			[]string{"generate", "--prompt", "hi"}},
		{"generate, vocab", map[string]any{"vocab_size": 1 << 40}, "vocab_size", []string{"generate", "--prompt", "hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "absurd")
			s := testmodel.Tiny("qwen3")
			s.Vocab = 256
			if err := testmodel.Write(dir, s); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(filepath.Join(dir, "config.json"))
			cfg := map[string]any{}
			if err := json.Unmarshal(raw, &cfg); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.patch {
				cfg[k] = v
			}
			raw, _ = json.Marshal(cfg)
			if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{tc.args[0], "--model", dir}, tc.args[1:]...)
			code, stderr := splashProcess(t, args...)
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			if !strings.Contains(stderr, tc.field) {
				t.Errorf("stderr does not name %s:\n%s", tc.field, stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "fatal error") {
				t.Errorf("stderr has a crash dump:\n%s", stderr)
			}
		})
	}
}
