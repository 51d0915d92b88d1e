package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/bench"
	"github.com/splash-inference/splash/bench/benchtest"
)

func runSplash(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, &stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), errb.String(), err
}

func TestBenchCommandEndToEnd(t *testing.T) {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{TTFT: 5 * time.Millisecond, ITL: 2 * time.Millisecond}))
	defer srv.Close()
	dir := t.TempDir()
	reportA, reportB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, c := range []struct {
		report string
		api    string
	}{{reportA, "chat"}, {reportB, "messages"}} {
		stdout, stderr, err := runSplash(t, "bench", "--base-url", srv.URL, "--api", c.api,
			"--concurrency", "1,2", "--requests", "4", "--input-len", "16", "--output-len", "5",
			"--slo", "ttft=1s", "--json", c.report, "--plot", filepath.Join(dir, c.api+".svg"), "--plot", filepath.Join(dir, c.api+".png"))
		if err != nil {
			t.Fatalf("bench --api %s: %v\n%s", c.api, err, stderr)
		}
		if !strings.Contains(stdout, "c=1") || !strings.Contains(stdout, "c=2") {
			t.Errorf("table lacks the steps:\n%s", stdout)
		}
		if !strings.Contains(stderr, "step 2/2") {
			t.Errorf("no progress bar on stderr:\n%s", stderr)
		}
		r, err := bench.ReadReport(c.report)
		if err != nil {
			t.Fatal(err)
		}
		if r.Config.Model != "fake-model" { // discovered through GET /v1/models
			t.Errorf("model = %q, want fake-model", r.Config.Model)
		}
		if len(r.Steps) != 2 || r.Steps[1].Summary.Completed != 4 || len(r.Steps[1].Samples) != 4 {
			t.Errorf("report steps = %+v", r.Steps)
		}
		for _, ext := range []string{".svg", ".png"} {
			if fi, err := os.Stat(filepath.Join(dir, c.api+ext)); err != nil || fi.Size() == 0 {
				t.Errorf("plot %s not written: %v", ext, err)
			}
		}
	}
	stdout, _, err := runSplash(t, "bench", "--compare", reportA, reportB, "--plot", filepath.Join(dir, "ab.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, `runs differ in api: "chat" vs "messages"`) || !strings.Contains(stdout, "B/A") {
		t.Errorf("comparison output:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "ab.svg")); err != nil {
		t.Errorf("comparison plot not written: %v", err)
	}
}

func TestBenchCommandRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"both load shapes", []string{"--concurrency", "1", "--rate", "2"}, "not both"},
		{"bad length", []string{"--input-len", "9:3"}, "--input-len"},
		{"no bound", []string{"--requests", "0", "--duration", "0"}, "needs a bound"},
		{"bad slo", []string{"--slo", "speed=1"}, "unknown metric"},
		{"file workload without file", []string{"--workload", "file"}, "needs --file"},
		{"compare needs two", []string{"--compare", "a.json"}, "two reports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runSplash(t, append([]string{"bench", "--model", "m", "--quiet"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBenchCommandFailsWhenNothingCompletes(t *testing.T) {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{Status: 500}))
	defer srv.Close()
	stdout, _, err := runSplash(t, "bench", "--base-url", srv.URL, "--model", "m", "--quiet", "--concurrency", "1", "--requests", "2")
	if err == nil || !strings.Contains(err.Error(), "no request completed") {
		t.Fatalf("error = %v, want no request completed", err)
	}
	if !strings.Contains(stdout, "http_500×2") {
		t.Errorf("table does not show the errors:\n%s", stdout)
	}
}
