package api

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns a random identifier such as "chatcmpl-3f2a…" (24 hex digits).
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}
