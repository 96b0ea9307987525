package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gogc reads the current GOGC.
func gogc() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitGOGC collects until the policy's cleanup has set GOGC to a value
// ok accepts, or fails after 5 s.
func waitGOGC(t *testing.T, what string, ok func(int) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		if ok(gogc()) {
			return
		}
	}
	t.Fatalf("%s: GOGC is %d", what, gogc())
}

// TestTuneGC checks the headroom floor. With a few MB live, 32 MB of
// headroom is more than 200 %, so GOGC is the cap, 200. With 96 MB more
// live, 32 MB is at most a third of it: GOGC at most 33, at least 20. With
// 320 MB more live, 32 MB is under 10 %: GOGC is the floor, 20.
func TestTuneGC(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 320 MB")
	}
	// GOGC is set back at the end, but the policy stays armed for the
	// package's later tests: its cleanup sets GOGC again every cycle.
	defer debug.SetGCPercent(gogc())
	tuneGC()
	waitGOGC(t, "a small heap", func(p int) bool { return p == gcMaxPercent })
	live := make([]byte, 96<<20)
	waitGOGC(t, "96 MB live", func(p int) bool { return p >= gcPercent && p <= 33 })
	runtime.KeepAlive(live)
	live = make([]byte, 320<<20)
	waitGOGC(t, "320 MB live", func(p int) bool { return p == gcPercent })
	runtime.KeepAlive(live)
}
