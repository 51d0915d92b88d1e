//go:build amd64 || arm64

package cpu

// prefetch asks the cache hierarchy for the lines of p[:n] (n bytes) ahead
// of their use: attention asks for the next cache stretch it will read
// while it computes on the current one, since the hardware prefetchers
// stop at the end of each stretch and restart cold on the next.
//
//go:noescape
func prefetch(p *uint16, n int)
