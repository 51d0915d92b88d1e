//go:build !amd64 && !arm64

package cpu

// cpuRelax is a no-op where no spin-wait hint is wired up.
func cpuRelax() {}
