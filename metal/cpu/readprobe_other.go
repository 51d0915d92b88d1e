//go:build !amd64

package cpu

func readProbeBlocks(b []byte) uint64 { return readProbeGo(b) }
