package study

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// MachineMemory is the most memory a run may use on this machine, in
// bytes, and where that bound comes from: the least of GOMEMLIMIT (the
// limit the user gave Go, when set), the memory limit of the process's
// cgroup (v2 memory.max, v1 memory.limit_in_bytes, at the cgroup's path in
// /proc/self/cgroup and at the root, as a container shows its own) and the
// machine's MemTotal. 0 when none can be read (then nothing is refused).
func MachineMemory() (int64, string) {
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
	for _, f := range cgroupLimitFiles() {
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

// cgroupLimitFiles are the files that may hold the process's cgroup memory
// limit: at the root of the cgroup file systems, and at the process's own
// cgroup's path, from /proc/self/cgroup ("0::/PATH" for v2,
// "N:memory:/PATH" for v1's memory controller).
func cgroupLimitFiles() []string {
	files := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return files
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[2] == "/" {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			files = append(files, filepath.Join("/sys/fs/cgroup", f[2], "memory.max"))
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			files = append(files, filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.limit_in_bytes"))
		}
	}
	return files
}
