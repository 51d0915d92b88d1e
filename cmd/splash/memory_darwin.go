package main

import "golang.org/x/sys/unix"

// physicalMemory returns the machine's memory in bytes (hw.memsize).
func physicalMemory() (int64, error) {
	v, err := unix.SysctlUint64("hw.memsize")
	return int64(v), err
}
