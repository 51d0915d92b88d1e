//go:build unix

package actors

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used: on
// cores shared with other processes it measures a benchmark's own work more
// steadily than the wall clock does.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
