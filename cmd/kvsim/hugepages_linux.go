package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// heapAhead is the heap kvsim maps before a run for huge pages (hugeHeap).
// It is address space, not memory: no page of it is touched until the heap
// grows into it, and a run's peak RSS moves by a few MB (docs/performance.md).
// A GB holds the heap of 2048 workers; a larger heap grows past it in 4 KB
// pages.
const heapAhead = 1 << 30

// thpSetting is the file in which Linux says when it backs anonymous memory
// with transparent huge pages: "always [madvise] never" when only for the
// memory a program asks for them.
const thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// hugeHeap has Linux back the first heapAhead bytes of the heap with 2 MB
// pages where the system leaves huge pages to madvise, as many
// distributions and kvsim's benchmark machines do. Go asks for huge pages
// only for its own metadata, so a run's heap otherwise faults in 4 KB at a
// time, and on a virtual machine a fault costs about 10 µs: the
// conversation trace took 13,000 faults, a third of the run's CPU time.
// A goroutine beside the run's start allocates heapAhead bytes, which the
// runtime maps fresh and untouched, advises them MADV_HUGEPAGE and
// collects them: the mapping and the advice stay, and the heap grows into
// them. (The mapping costs the runtime about 5 ms of span tables and the
// collection 2-4 ms, off the run's path; the run's first few MB meanwhile
// come in 4 KB pages.) It does nothing where huge pages are always or
// never used, under GODEBUG=disablethp=1, or under a memory limit too small
// to map heapAhead. The channel it returns, nil when it does nothing, says
// once the heap is ready whether the advice was taken.
func hugeHeap() <-chan bool {
	b, err := os.ReadFile(thpSetting)
	if err != nil || !strings.Contains(string(b), "[madvise]") ||
		strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") || debug.SetMemoryLimit(-1) < 4*heapAhead {
		return nil
	}
	done := make(chan bool, 1)
	go func() {
		ahead := make([]byte, heapAhead)
		ok := syscall.Madvise(ahead, syscall.MADV_HUGEPAGE) == nil
		runtime.GC() // ahead is dead: this frees it, so the heap grows into it and the collector paces the run by what it keeps live
		done <- ok
	}()
	return done
}
