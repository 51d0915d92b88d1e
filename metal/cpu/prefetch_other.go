//go:build !amd64 && !arm64

package cpu

// prefetch is a no-op where no prefetch instruction is wired up.
func prefetch(p *uint16, n int) {}
