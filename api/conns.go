package api

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// connTable holds the server's open connections. It caps them in total and
// per client IP, knows which ones wait idle for a request (new ones before
// their first byte, keep-alive ones between requests), and sheds the
// longest-idle one when a new connection needs its place or the process
// runs out of file descriptors: an idle connection costs a descriptor and
// serves no one, so a flood of them must not lock out the clients that
// send requests (nginx reuses idle keep-alive connections the same way).
type connTable struct {
	max, maxPerIP int
	// writeStall is how long one write may wait for the client to read;
	// it bounds a client that stops reading, never a stream that flows.
	writeStall time.Duration
	logf       func(format string, args ...any)

	shed, rejected atomic.Int64 // connections closed idle / refused at a cap

	mu      sync.Mutex // guards the fields below
	open    int
	perIP   map[string]int
	idle    list.List // of *trackedConn waiting for a request, longest-idle first
	conns   map[*trackedConn]struct{}
	lastLog time.Time // of the last descriptor-exhaustion message
}

func newConnTable(max, maxPerIP int, writeStall time.Duration, logf func(string, ...any)) *connTable {
	return &connTable{max: max, maxPerIP: maxPerIP, writeStall: writeStall, logf: logf,
		perIP: map[string]int{}, conns: map[*trackedConn]struct{}{}}
}

// trackedConn is a connection in a connTable.
type trackedConn struct {
	net.Conn
	table *connTable
	ip    string
	// idle is its place in table.idle while it waits for a request; gone
	// is set once it left the table. Both guarded by table.mu.
	idle *list.Element
	gone bool
}

// Write gives every write writeStall to complete: a client that reads is
// never cut however long its stream lasts, one that stopped reading is.
// (fasthttp's WriteTimeout would bound the whole response instead, which
// cuts long SSE streams.)
func (c *trackedConn) Write(p []byte) (int, error) {
	if c.table.writeStall > 0 {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.table.writeStall)); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// Close removes the connection from its table and closes it.
func (c *trackedConn) Close() error {
	c.table.mu.Lock()
	c.table.releaseLocked(c)
	c.table.mu.Unlock()
	return c.Conn.Close()
}

// SyscallConn exposes the socket, for peerClosed.
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("api: the connection has no socket")
}

// admit adds an accepted connection, shedding an idle one when a cap is
// reached; without one to shed the new connection is refused (429 at the
// per-IP cap, 503 at the total) and admit returns nil.
func (t *connTable) admit(c net.Conn) *trackedConn {
	ip := remoteIP(c)
	var victims []*trackedConn
	t.mu.Lock()
	if t.perIP[ip] >= t.maxPerIP {
		v := t.shedLocked(ip)
		if v == nil {
			t.mu.Unlock()
			t.refuse(c, &apiError{kind: kindRateLimit, retryAfter: 1,
				message: fmt.Sprintf("too many connections from your address (limit %d); retry later", t.maxPerIP)})
			return nil
		}
		victims = append(victims, v)
	}
	if t.open >= t.max {
		v := t.shedLocked("")
		if v == nil {
			t.mu.Unlock()
			closeAll(victims)
			t.refuse(c, &apiError{kind: kindUnavailable, retryAfter: 1,
				message: fmt.Sprintf("too many connections (limit %d); retry later", t.max)})
			return nil
		}
		victims = append(victims, v)
	}
	tc := &trackedConn{Conn: c, table: t, ip: ip}
	t.open++
	t.perIP[ip]++
	t.conns[tc] = struct{}{}
	tc.idle = t.idle.PushBack(tc) // idle until its first byte
	t.mu.Unlock()
	closeAll(victims)
	return tc
}

// shedLocked takes the longest-idle connection (of ip, when not "") out of
// the table and returns it for the caller to close once unlocked; nil when
// none is idle.
func (t *connTable) shedLocked(ip string) *trackedConn {
	for e := t.idle.Front(); e != nil; e = e.Next() {
		c := e.Value.(*trackedConn)
		if ip == "" || c.ip == ip {
			t.releaseLocked(c)
			t.shed.Add(1)
			return c
		}
	}
	return nil
}

// shedOne closes the longest-idle connection; false when none is idle.
func (t *connTable) shedOne() bool {
	t.mu.Lock()
	v := t.shedLocked("")
	t.mu.Unlock()
	if v == nil {
		return false
	}
	v.Conn.Close()
	return true
}

func (t *connTable) releaseLocked(c *trackedConn) {
	if c.gone {
		return
	}
	c.gone = true
	if c.idle != nil {
		t.idle.Remove(c.idle)
		c.idle = nil
	}
	delete(t.conns, c)
	t.open--
	if t.perIP[c.ip]--; t.perIP[c.ip] <= 0 {
		delete(t.perIP, c.ip)
	}
}

// state is fasthttp's ConnState hook: it moves connections in and out of
// the idle list.
func (t *connTable) state(c net.Conn, st fasthttp.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tc.gone {
		return
	}
	switch st {
	case fasthttp.StateActive, fasthttp.StateHijacked:
		if tc.idle != nil {
			t.idle.Remove(tc.idle)
			tc.idle = nil
		}
	case fasthttp.StateIdle:
		if tc.idle == nil {
			tc.idle = t.idle.PushBack(tc)
		}
	}
}

// busy is the number of connections reading a request or answering one.
func (t *connTable) busy() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open - t.idle.Len()
}

// writeMetrics emits the connection counts in the Prometheus text format.
func (t *connTable) writeMetrics(w io.Writer) {
	t.mu.Lock()
	open, idle := t.open, t.idle.Len()
	t.mu.Unlock()
	fmt.Fprintln(w, "# HELP splash_http_connections Open connections, by whether they wait idle for a request.")
	fmt.Fprintln(w, "# TYPE splash_http_connections gauge")
	fmt.Fprintf(w, "splash_http_connections{state=\"busy\"} %d\n", open-idle)
	fmt.Fprintf(w, "splash_http_connections{state=\"idle\"} %d\n", idle)
	for _, c := range []struct {
		name, help string
		v          int64
	}{
		{"splash_http_connections_shed_total", "Idle connections closed to make room at a cap or when out of file descriptors.", t.shed.Load()},
		{"splash_http_connections_refused_total", "Connections refused at a cap with none idle to close.", t.rejected.Load()},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", c.name, c.help, c.name, c.name, c.v)
	}
}

// closeEvery closes all connections and returns how many were busy.
func (t *connTable) closeEvery() int {
	t.mu.Lock()
	busy := t.open - t.idle.Len()
	all := make([]*trackedConn, 0, len(t.conns))
	for c := range t.conns {
		t.releaseLocked(c)
		all = append(all, c)
	}
	t.mu.Unlock()
	closeAll(all)
	return busy
}

func closeAll(conns []*trackedConn) {
	for _, c := range conns {
		c.Conn.Close()
	}
}

// refusalWriteTime bounds writing a refusal (a few hundred bytes into a
// fresh socket's buffer, so it only waits on a broken peer).
const refusalWriteTime = time.Second

// refuse answers a connection it will not serve with e and closes it. No
// request has been read, so the answer is in the OpenAI shape.
func (t *connTable) refuse(c net.Conn, e *apiError) {
	t.rejected.Add(1)
	body, _ := marshal(errorBody(dialectOpenAI, e))
	status := e.kind.status()
	_ = c.SetWriteDeadline(time.Now().Add(refusalWriteTime))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nRetry-After: %d\r\nConnection: close\r\n\r\n%s",
		status, fasthttp.StatusMessage(status), len(body), e.retryAfter, body)
	c.Close()
}

// remoteIP is the client address without its port.
func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}
