package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// heapAhead is the heap kvsim maps at start for huge pages (hugeHeap). It
// is address space, not memory: no page of it is touched until the heap
// grows into it. A larger heap grows past it in 4 KB pages.
const heapAhead = 1 << 30

// thpSetting is the file in which Linux says when it backs anonymous memory
// with transparent huge pages: "always [madvise] never" when only for the
// memory a program asks for them.
const thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// hugePagesOnRequest reports whether Linux backs memory with transparent
// huge pages only where a program asks (madvise): where they are always
// used, asking changes nothing, and where never, it cannot.
func hugePagesOnRequest() bool {
	b, err := os.ReadFile(thpSetting)
	return err == nil && strings.Contains(string(b), "[madvise]")
}

// hugeHeap has Linux back the first heapAhead bytes of the heap with 2 MB
// pages where it leaves huge pages to madvise: Go asks for them only for
// its own metadata, so a run's heap otherwise faults 4 KB at a time, and a
// fault is slow on a virtual machine (docs/performance.md#huge-pages has
// the figures). A goroutine beside the run's start allocates heapAhead
// bytes, which the runtime maps fresh and untouched, advises them
// MADV_HUGEPAGE and collects them: the mapping and the advice stay, and the
// heap grows into them. Collections are forced only from hugeHeap's call
// until the GB is collected: allocating it would otherwise start one of its
// own, which cannot free it and stopped the world for 3 ms at start. The
// goroutine then restores the collector's setting and calls afterGC, which
// sets the collector's policy (tuneGC).
//
// It does nothing where huge pages are not left to madvise; when
// GODEBUG turns Go's own use of them off (disablethp) or has it map memory
// again after releasing it (harddecommit, which would drop the advice);
// under a memory limit (GOMEMLIMIT), which the GB would count against until
// collected; and where mapping a GB could fail, which the runtime cannot
// survive: a 32-bit build, a finite address-space limit (ulimit -v), or a
// kernel that does not overcommit (vm.overcommit_memory 2). There it calls
// afterGC at once and returns nil; otherwise a channel on which the
// goroutine says, once the GB is collected and afterGC has returned,
// whether the advice was taken (the test waits for it; kvsim does not).
func hugeHeap(afterGC func()) <-chan bool {
	if !hugePagesOnRequest() || godebug("disablethp") || godebug("harddecommit") ||
		debug.SetMemoryLimit(-1) != math.MaxInt64 || !roomToMap() {
		afterGC()
		return nil
	}
	done := make(chan bool, 1)
	percent := debug.SetGCPercent(-1)
	go func() {
		ahead := make([]byte, heapAhead)
		advised := syscall.Madvise(ahead, syscall.MADV_HUGEPAGE) == nil
		runtime.GC() // ahead is dead: this frees it, so the heap grows into it and the collector paces the run by what it keeps live
		debug.SetGCPercent(percent)
		afterGC()
		done <- advised
	}()
	return done
}

// godebug reports whether GODEBUG sets name non-zero; its last setting
// counts, as the runtime reads it.
func godebug(name string) bool {
	on := false
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			n, err := strconv.Atoi(v)
			on = err == nil && n != 0
		}
	}
	return on
}

// roomToMap reports whether mapping heapAhead more bytes cannot fail: a
// 64-bit build, no address-space limit, and a kernel that overcommits.
func roomToMap() bool {
	if strconv.IntSize < 64 {
		return false
	}
	var as syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &as); err != nil || as.Cur != math.MaxUint64 {
		return false
	}
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && strings.TrimSpace(string(b)) != "2"
}
