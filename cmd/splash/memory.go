package main

import (
	"bufio"
	"errors"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// procMemTotal reads MemTotal from /proc/meminfo (Linux).
func procMemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no MemTotal in /proc/meminfo")
}

// defaultMemoryShare is the part of physical memory Splash plans to use
// when --max-memory is not given: the rest is left to the OS, the agents
// and their tools.
const defaultMemoryShare = 0.6

// limitGoMemory sets the Go runtime's soft memory limit to the plan's
// total plus a margin for what the plan does not count (tokenizer and
// grammar tables, requests in flight), and returns a func that restores the
// previous limit. The KV cache and packed weights live in the Go heap, so
// by default the collector, which runs when the heap has doubled since the
// last collection, would let garbage grow to their size, gigabytes of it,
// before collecting; under the limit it collects before the process passes
// the plan. A limit already set (GOMEMLIMIT, or another server in the same
// process) is kept.
func limitGoMemory(total int64) (restore func()) {
	prev := debug.SetMemoryLimit(-1)
	if prev != math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(total + max(total/8, planMargin))
	return func() { debug.SetMemoryLimit(prev) }
}

// planMargin is the least memory allowed beyond the plan's total.
const planMargin = 256 << 20
