//go:build !unix

package api

import "net"

// peerClosed cannot tell without consuming input on this platform, so
// non-streamed requests run to completion when their client leaves.
func peerClosed(net.Conn) bool { return false }
