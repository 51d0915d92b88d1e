package api

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// Backoff of an accept loop out of file descriptors: it starts short,
// because a shed connection's descriptor is released as soon as its
// reader wakes up, and doubles up to a second while nothing can be shed.
const (
	minAcceptBackoff = time.Millisecond
	maxAcceptBackoff = time.Second
	// exhaustionLogEvery spaces out the log line about running out.
	exhaustionLogEvery = time.Minute
)

// limitedListener admits accepted connections through a connTable and
// treats running out of file descriptors as back-pressure: it sheds an
// idle connection and retries, never failing the accept loop (fasthttp
// gives up serving on any accept error but a timeout).
type limitedListener struct {
	net.Listener
	conns     *connTable
	closed    chan struct{}
	closeOnce sync.Once
}

func newLimitedListener(ln net.Listener, conns *connTable) *limitedListener {
	return &limitedListener{Listener: ln, conns: conns, closed: make(chan struct{})}
}

func (l *limitedListener) Accept() (net.Conn, error) {
	delay := time.Duration(0)
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !outOfDescriptors(err) {
				return nil, err
			}
			delay = l.backOff(err, delay)
			continue
		}
		delay = 0
		if tc := l.conns.admit(c); tc != nil {
			return tc, nil
		}
	}
}

// backOff sheds an idle connection, or waits when there is none, and
// returns the next wait; a Close ends the wait early.
func (l *limitedListener) backOff(err error, delay time.Duration) time.Duration {
	shed := l.conns.shedOne()
	switch {
	case shed || delay == 0:
		delay = minAcceptBackoff
	default:
		delay = min(2*delay, maxAcceptBackoff)
	}
	l.conns.logExhaustion(err, shed)
	select {
	case <-time.After(delay):
	case <-l.closed:
	}
	return delay
}

// Close closes the listener; closing it again is a no-op (Shutdown closes
// it before fasthttp does).
func (l *limitedListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closed)
		err = l.Listener.Close()
	})
	return err
}

// outOfDescriptors reports an accept error that more free descriptors or
// memory would cure: the pending connection stays queued meanwhile.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// logExhaustion reports running out of descriptors, once a minute at most.
func (t *connTable) logExhaustion(err error, shed bool) {
	t.mu.Lock()
	now := time.Now()
	due := now.Sub(t.lastLog) >= exhaustionLogEvery
	if due {
		t.lastLog = now
	}
	t.mu.Unlock()
	if !due {
		return
	}
	if shed {
		t.logf("api: accepting connections: %v: closing idle connections to make room (raise the file limit or lower --max-connections)", err)
	} else {
		t.logf("api: accepting connections: %v: no idle connection to close, waiting (raise the file limit or lower --max-connections)", err)
	}
}
