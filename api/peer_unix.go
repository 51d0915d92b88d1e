//go:build unix

package api

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the client closed its end of c, without
// consuming any byte: a non-blocking MSG_PEEK read returns 0 at EOF. It
// lets a non-streamed request notice a client that left, which fasthttp
// does not report while the handler runs.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (n == 0 && err == nil) || errors.Is(err, syscall.ECONNRESET)
	})
	return closed
}
