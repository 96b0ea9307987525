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
// its collections few. The floor never lets the heap grow past three times
// what was live (gcMaxPercent), so a percentage set for a small heap and
// applied, a cycle late, to a larger one stays bounded.
const (
	gcPercent    = 20
	gcMaxPercent = 200
	gcHeadroom   = 32 << 20
)

// tuneGC applies the policy: after every collection it sets GOGC to
// gcHeadroom over the heap left live, within [gcPercent, gcMaxPercent]. A
// cleanup on an unreachable sentinel runs once each cycle and arms the
// next.
func tuneGC() {
	debug.SetGCPercent(gcPercent)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		sentinel := new([16]byte) // not tiny-allocated: its cleanup runs
		runtime.AddCleanup(sentinel, func(struct{}) {
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > 0 {
				debug.SetGCPercent(int(min(max(gcPercent, gcHeadroom*100/live), gcMaxPercent)))
			}
			arm()
		}, struct{}{})
	}
	arm()
}
