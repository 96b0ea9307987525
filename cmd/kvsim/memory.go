package main

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// machineMemory is the most memory a run may use on this machine, in
// bytes, and where that bound comes from: the least of GOMEMLIMIT (Go's
// own soft limit, when set), the cgroup's memory limit (v2 memory.max, v1
// memory.limit_in_bytes) and the machine's MemTotal. 0 when none can be
// read (then nothing is refused).
func machineMemory() (int64, string) {
	var limit int64
	var source string
	take := func(n int64, from string) {
		if n > 0 && (limit == 0 || n < limit) {
			limit, source = n, from
		}
	}
	if n := debug.SetMemoryLimit(-1); n < math.MaxInt64 {
		take(n, "GOMEMLIMIT")
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && n < 1<<60 {
				take(n, f)
			}
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if rest, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					take(kb<<10, "MemTotal in /proc/meminfo")
				}
			}
		}
	}
	return limit, source
}
