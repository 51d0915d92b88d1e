package cpu

//go:noescape
func readProbeAVX2(p *byte, blocks int) uint64

// readProbeBlocks sums len(b)/128 blocks of 128 bytes.
func readProbeBlocks(b []byte) uint64 {
	if len(b) < 128 || !hasAVX2() {
		return readProbeGo(b)
	}
	return readProbeAVX2(&b[0], len(b)/128)
}
