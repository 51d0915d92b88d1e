package main

import (
	"bufio"
	"errors"
	"os"
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
