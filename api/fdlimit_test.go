//go:build linux

package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/splash-inference/splash/api"
)

// fdChildEnv makes the test binary the server of TestServeUnderFileLimit:
// its value is the connection cap to serve with (0: the default).
const fdChildEnv = "SPLASH_TEST_FD_LIMIT_SERVER"

const (
	fdLimit   = 512 // as with ulimit -n 512
	idleConns = 600 // more than the server has descriptors for
)

// TestServeUnderFileLimit: a server limited to 512 open files, flooded
// with 600 connections that never send a byte, keeps answering new
// requests and stays up, whether its connection cap sits below the limit
// (the default) or above it (accept then fails with EMFILE).
func TestServeUnderFileLimit(t *testing.T) {
	if max, ok := os.LookupEnv(fdChildEnv); ok {
		serveUnderFileLimit(t, max)
		return
	}
	tests := []struct {
		name string
		max  int
	}{
		{"default cap", 0},
		{"cap above the limit", 100000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, stop := startLimitedServer(t, tt.max)
			for i := range idleConns {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatalf("idle connection %d: %v", i, err)
				}
				defer c.Close()
			}
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
			for i := range 20 {
				res, err := client.Post("http://"+addr+"/v1/chat/completions", "application/json",
					strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
				if err != nil {
					t.Fatalf("request %d after the flood: %v", i, err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Fatalf("request %d after the flood: %d %s", i, res.StatusCode, b)
				}
			}
			if err := stop(); err != nil {
				t.Errorf("server: %v", err)
			}
		})
	}
}

// startLimitedServer runs this test binary as a server under the file
// limit and returns its address and a stop function that reports how it
// ended.
func startLimitedServer(t *testing.T, max int) (string, func() error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeUnderFileLimit$")
	cmd.Env = append(os.Environ(), fdChildEnv+"="+strconv.Itoa(max))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	var addr string
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "addr "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		_ = cmd.Wait()
		t.Fatalf("the server did not start: %s", stderr.String())
	}
	return addr, func() error {
		stdin.Close() // the server's signal to shut down
		go io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("%w: %s", err, stderr.String())
		}
		return nil
	}
}

// serveUnderFileLimit is the server side: it lowers its open-file limit,
// serves and prints its address, and shuts down when stdin closes.
func serveUnderFileLimit(t *testing.T, max string) {
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: fdLimit, Max: fdLimit}); err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(max)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, api.Options{MaxConnections: n, Logger: stderrLogger{}})
	fmt.Printf("addr %s\n", strings.TrimPrefix(ts.url, "http://"))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// stderrLogger reports the server's connection errors on standard error,
// which the parent test shows if the server fails.
type stderrLogger struct{}

func (stderrLogger) Printf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
