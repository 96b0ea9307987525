package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestHugeHeap: where Linux leaves huge pages to madvise, the heap a run
// grows into after hugeHeap is advised for them (VmFlags "hg" in
// /proc/self/smaps), and the memory it took is free again; the GB was
// collected once, by the goroutine, not also by a collection its
// allocation started; the collector's setting (GOGC 100 here) is restored
// and afterGC called. kvsim calls hugeHeap once, first thing: the test
// does so in a fresh process, the test binary run again for this test
// alone, without the GODEBUG and GOMEMLIMIT settings that would have
// hugeHeap stand aside, and without GOGC, so that the setting to restore
// is Go's default, 100.
func TestHugeHeap(t *testing.T) {
	if !hugePagesOnRequest() {
		t.Skipf("transparent huge pages are not left to madvise here (%s)", thpSetting)
	}
	if os.Getenv("KVSIM_TEST_HUGEHEAP") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeap$", "-test.count=1", "-test.v")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GODEBUG=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "KVSIM_TEST_HUGEHEAP=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if strings.Contains(string(out), "--- SKIP") {
			t.Skipf("in the fresh process:\n%s", out)
		}
		return
	}
	if !roomToMap() {
		t.Skip("mapping a GB could fail here (32-bit, ulimit -v, or no overcommit): hugeHeap stands aside")
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	called := false
	done := hugeHeap(func() { called = true })
	if done == nil {
		t.Fatal("hugeHeap stood aside")
	}
	if !<-done {
		t.Fatal("madvise refused MADV_HUGEPAGE")
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if gcs := m.NumGC - before.NumGC; gcs != 1 || m.NumForcedGC-before.NumForcedGC != 1 {
		t.Errorf("%d collections, %d forced, while hugeHeap ran; want its one", gcs, m.NumForcedGC-before.NumForcedGC)
	}
	if p := debug.SetGCPercent(100); p != 100 || !called {
		t.Errorf("after hugeHeap GOGC is %d, want 100 restored; afterGC called: %v", p, called)
	}
	if m.HeapAlloc > heapAhead/4 {
		t.Errorf("%d MB of heap allocated after hugeHeap: it kept its %d MB", m.HeapAlloc>>20, heapAhead>>20)
	}
	grown := make([]byte, 64<<20) // the heap grows into the advised mapping
	// It may begin in free pages just below it: look at its middle.
	addr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(grown)))) + 32<<20
	flags := vmFlags(t, addr)
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping at %#x has VmFlags %q, without hg", addr, flags)
	}
}

// TestGodebug: the last setting of a GODEBUG name counts, and any non-zero
// value turns it on, as the runtime reads them.
func TestGodebug(t *testing.T) {
	for _, c := range []struct {
		env  string
		want bool
	}{
		{"", false}, {"disablethp=1", true}, {"disablethp=2", true}, {"disablethp=0", false},
		{"disablethp=1,disablethp=0", false}, {"gctrace=1,disablethp=1", true}, {"xdisablethp=1", false},
	} {
		t.Setenv("GODEBUG", c.env)
		if got := godebug("disablethp"); got != c.want {
			t.Errorf("GODEBUG=%q: disablethp %v, want %v", c.env, got, c.want)
		}
	}
}

// vmFlags returns the VmFlags of the mapping holding addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uint64) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(lo, ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && a <= addr && addr < b
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}
