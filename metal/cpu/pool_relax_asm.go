//go:build amd64 || arm64

package cpu

// cpuRelax is one spin-wait hint (PAUSE on amd64, YIELD on arm64): it
// slows a polling loop down a little and frees core resources for a
// sibling hyperthread while a pool goroutine waits for work.
//
//go:noescape
func cpuRelax()
