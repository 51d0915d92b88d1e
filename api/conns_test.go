package api_test

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
)

// dial opens a raw connection to ts, closed when the test ends.
func dial(t *testing.T, ts *testServer) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// untilClosed reads c until the server closes it and returns what came;
// it fails the test if the server keeps it open for hangGuard.
func untilClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	const hangGuard = 10 * time.Second
	_ = c.SetReadDeadline(time.Now().Add(hangGuard))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept the connection open (read so far: %q)", b)
	}
	return string(b)
}

// TestSlowClientsAreCut: connections that send nothing, stop in the middle
// of their headers or body, or speak TLS to the plain-HTTP port are closed
// after the read timeout, and idle keep-alive ones after the idle timeout.
func TestSlowClientsAreCut(t *testing.T) {
	ts := startServer(t, api.Options{ReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
	clientHello := "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + strings.Repeat("\x00", 32)
	tests := []struct {
		name, send, want string // want: what the answer must contain ("" for none)
	}{
		{"nothing sent", "", ""},
		{"headers cut short", head + "Content-Len", "408"},
		{"body shorter than its length", head + "Content-Length: 100\r\n\r\n{\"messages\":", "408"},
		{"TLS ClientHello", clientHello, ""},
		{"idle keep-alive", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "200 OK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, ts)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			if got := untilClosed(t, c); !strings.Contains(got, tt.want) {
				t.Errorf("answer %q, want %q in it", got, tt.want)
			}
		})
	}
}

// TestLongStreamsAreNotCut: a stream that keeps sending lasts many times
// the read, idle and write-stall timeouts and still completes.
func TestLongStreamsAreNotCut(t *testing.T) {
	eng := fake.New()
	eng.Words = strings.Split(strings.Repeat("word ", 8), " ")
	eng.Delay = 50 * time.Millisecond
	const timeout = 10 * time.Millisecond
	ts := startServer(t, api.Options{Engine: eng, ReadTimeout: timeout, IdleTimeout: timeout, WriteStallTimeout: timeout, KeepAlive: time.Hour})
	res := ts.do(t, "POST", "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 200 || !strings.HasSuffix(res.body, "data: [DONE]\n\n") {
		t.Errorf("%d %q", res.status, res.body)
	}
}

// TestIdleConnectionsAreShed: at a cap, a new connection takes the place
// of the longest-idle one, so idle connections cannot lock clients out.
func TestIdleConnectionsAreShed(t *testing.T) {
	tests := []struct {
		name          string
		max, maxPerIP int
	}{
		{"total", 3, 5},
		{"per IP", 10, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, api.Options{MaxConnections: tt.max, MaxConnectionsPerIP: tt.maxPerIP})
			idle := make([]net.Conn, 3)
			for i := range idle {
				idle[i] = dial(t, ts)
			}
			for range idle {
				if res := ts.do(t, "GET", "/health", "", "Connection: close"); res.status != 200 {
					t.Fatalf("with idle connections at the cap: %d %s", res.status, res.body)
				}
			}
			if got := untilClosed(t, idle[0]); got != "" { // the first request took its place
				t.Errorf("the longest-idle connection got %q", got)
			}
			if m := ts.do(t, "GET", "/metrics", "").body; !strings.Contains(m, "splash_http_connections_shed_total ") ||
				strings.Contains(m, "splash_http_connections_shed_total 0\n") {
				t.Errorf("no shed connection counted:\n%s", m)
			}
		})
	}
}

// TestConnectionCapsRefuse: at a cap with no idle connection to shed, a
// new connection is refused, 503 at the total cap and 429 at the per-IP
// one, in the OpenAI error shape.
func TestConnectionCapsRefuse(t *testing.T) {
	tests := []struct {
		name          string
		max, maxPerIP int
		status        string
	}{
		{"total", 3, 5, "503"},
		{"per IP", 10, 3, "429"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := fake.New()
			eng.Hold = make(chan struct{}) // streams stay open: their connections are busy
			ts := startServer(t, api.Options{Engine: eng, MaxConnections: tt.max, MaxConnectionsPerIP: tt.maxPerIP, KeepAlive: time.Hour})
			for range 3 {
				openStream(t, t.Context(), ts, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			}
			got := untilClosed(t, dial(t, ts))
			if !strings.HasPrefix(got, "HTTP/1.1 "+tt.status) || !strings.Contains(got, `{"error":{"message":"too many connections`) ||
				!strings.Contains(got, "Retry-After: 1") {
				t.Errorf("refusal %q", got)
			}
			close(eng.Hold) // the streams end, so /metrics gets a connection
			// A poll made before the streams end is refused too, so the
			// count is at least one, not exactly one.
			var metrics string
			waitFor(t, "a connection for /metrics", func() bool {
				res := ts.do(t, "GET", "/metrics", "", "Connection: close")
				metrics = res.body
				return res.status == 200
			})
			if n := metricValue(metrics, "splash_http_connections_refused_total"); n < 1 {
				t.Errorf("refused connections counted: %v, want at least 1", n)
			}
		})
	}
}

// TestStalledReaderIsCut: a client that stops reading a stream is cut
// once a write has waited WriteStallTimeout, and its generation cancelled.
func TestStalledReaderIsCut(t *testing.T) {
	eng := fake.New()
	eng.Words = make([]string, 2000) // 8 MiB of text: more than the socket buffers hold
	for i := range eng.Words {
		eng.Words[i] = strings.Repeat("x", 4096)
	}
	ts := startServer(t, api.Options{Engine: eng, WriteStallTimeout: 100 * time.Millisecond, KeepAlive: time.Hour})
	c := dial(t, ts)
	if err := c.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	body := `{"stream":true,"max_tokens":2000,"messages":[{"role":"user","content":"hi"}]}`
	if _, err := io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	// ... and reads nothing. (Producing megabytes takes a while on a loaded
	// machine, hence a hang guard of its own.)
	for guard := time.Now().Add(10 * time.Second); eng.Cancelled() != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(guard) {
			t.Fatal("the stalled stream was never cut")
		}
	}
}

// metricValue is the value of an unlabelled metric in a Prometheus text
// page, or -1 if the page does not have it.
func metricValue(page, name string) float64 {
	for line := range strings.Lines(page) {
		value, ok := strings.CutPrefix(strings.TrimSpace(line), name+" ")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			return v
		}
	}
	return -1
}
