//go:build !darwin

package main

// physicalMemory returns the machine's memory in bytes (/proc/meminfo).
func physicalMemory() (int64, error) { return procMemTotal() }
