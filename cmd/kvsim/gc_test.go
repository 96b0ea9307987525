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

// TestPercentFor checks the policy's figures. 32 MB of headroom is 800 %
// of 4 MB, so the cap holds up to 4 MB live, and 400 % of 8 MB. It is 33 %
// of 96 MB (32/96, rounded down), and 20 % of 160 MB: past that, the floor.
// Before any collection, the cap.
func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{{0, 800}, {1 << 20, 800}, {4 << 20, 800}, {8 << 20, 400}, {96 << 20, 33}, {160 << 20, 20}, {320 << 20, 20}} {
		if got := percentFor(c.live); got != c.want {
			t.Errorf("percentFor(%d MB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestTuneGC checks that the policy is set as soon as tuneGC is called,
// not after the next collection, and again after every collection: with
// 96 MB more live, GOGC at most 33, at least 20; with 320 MB more, 20.
func TestTuneGC(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 320 MB")
	}
	// GOGC is set back at the end, but the policy stays armed for the
	// package's later tests: its cleanup sets GOGC again every cycle.
	defer debug.SetGCPercent(gogc())
	debug.SetGCPercent(100)
	tuneGC()
	if p, want := gogc(), percentFor(liveHeap()); p != want {
		t.Fatalf("before any cleanup: GOGC is %d, want %d", p, want)
	}
	live := make([]byte, 96<<20)
	waitGOGC(t, "96 MB live", func(p int) bool { return p >= gcPercent && p <= 33 })
	runtime.KeepAlive(live)
	live = make([]byte, 320<<20)
	waitGOGC(t, "320 MB live", func(p int) bool { return p == gcPercent })
	runtime.KeepAlive(live)
}
