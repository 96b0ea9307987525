package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// kvsim's collector policy, unless the environment sets GOGC: collect when
// the heap has grown by gcPercent of what the last collection left live,
// but by at least gcHeadroom bytes. A run's heap is mostly pointer-free
// block tables that live as long as the run; the collector marks them
// without scanning them, so collecting at 20 % growth instead of Go's
// default 100 % costs little time and saves most of the headroom on a
// large run (a million-request run: 1.4 GB peak RSS instead of 2.3 GB, same
// wall time; docs/performance.md). A small run's heap (tens of MB) would be
// collected every few MB of allocation at 20 %: the headroom floor keeps
// its collections few. The floor never lets the heap grow past nine times
// what was live (gcMaxPercent), so a percentage set for a small heap and
// applied to a larger one (a collection that ends before the cleanup of the
// one before has run) stays bounded. At three times, the conversation
// trace's first 20 MB were collected three times over; at nine, once.
const (
	gcPercent    = 20
	gcMaxPercent = 800
	gcHeadroom   = 32 << 20
)

// tuneGC applies the policy: it sets GOGC to gcHeadroom over the heap the
// last collection left live, within [gcPercent, gcMaxPercent], at once and
// after every collection; before any collection, when nothing is known
// live, to gcMaxPercent (the runtime's first collection comes at 4 MB times
// GOGC/100). A cleanup on an unreachable sentinel runs once each cycle and
// arms the next. Starting from gcPercent instead set a 0.8 MB minimum heap:
// a run's first few MB were collected twice before the first cleanup
// raised it.
func tuneGC() {
	set := func() { debug.SetGCPercent(percentFor(liveHeap())) }
	var arm func()
	arm = func() {
		sentinel := new([16]byte) // not tiny-allocated: its cleanup runs
		runtime.AddCleanup(sentinel, func(struct{}) {
			set()
			arm()
		}, struct{}{})
	}
	set()
	arm()
}

// percentFor is the policy's GOGC when the last collection left live bytes
// live, 0 before any collection.
func percentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(max(gcPercent, gcHeadroom*100/live), gcMaxPercent))
}

// liveHeap is the heap the last collection left live, 0 before any.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}
