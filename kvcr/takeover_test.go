package kvcr

import (
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestStoreTakesOverGivenUpSlots (rule: a store of a block whose slot is
// reserved for a write its target gave up on takes the slot over; the
// write's end frees only what its pull still holds). The rig's G2 of 4
// blocks, blocks of 2.5 MB: one block alone takes 2.5 ms at 1 GB/s;
// timeouts 4 and 8 ms.
//
//   - 0: worker 0 holds blocks 1-4. Pull A (request 1), a copy of 1-4 (10
//     MB) to worker 1, staged at 0: slots 1-4 reserved at worker 1, first
//     byte 1 ms, alone on the egress.
//   - 4 ms: A's target deadline: expired, answered with nothing; its write
//     runs on (source deadline 1 + min(4, 4) = 5 ms, then discarding). Its
//     slots 1-4 at worker 1 are discarded: held, unreadable.
//   - 6 ms: worker 1 stores 1-4, the blocks its request recomputed: they
//     take A's slots over and are ready at once (instant D2H), visible to
//     the router (the old rule skipped them as filling: none stored).
//   - 6.5 ms: worker 1 stores blocks 50-51: its G2 is full (1-4 ready,
//     unpinned), so 1 and 2, the least recent, are evicted.
//   - 7 ms: pull B (request 2) of 1-4 to worker 1: 1-2 missing (worker 0
//     holds them, pinned by A but ready), 3-4 destination hits, pinned at
//     worker 1. Room: 2 slots + 2 evictable hits = 4 = 4 - 4 used + 4
//     evictable. Reserving 1-2 evicts 50-51 (3-4 are pinned). B's 5 MB:
//     first byte 8 ms; target deadline 11 ms, source deadline 8 + min(4,
//     11 - 7) = 12 ms.
//   - 8 ms: A has sent 7 MB, 3 MB left; A and B share the egress, 0.5 GB/s
//     each. 11 ms: B expires; its slots 1-2 are discarded, B's now.
//   - 14 ms: A's last 3 MB at 0.5 GB/s are sent (B has 3 of its 5 MB). A's
//     write ends and frees what A still holds: nothing, every slot of A was
//     taken over at 6 ms. Worker 1 still holds 1-2 (discarded, B's) and 3-4
//     (ready, pinned by B): 4 held at 15 ms, 2 pins. (Freeing A's blocks
//     1-4 would free B's 1-2 and the ready 3-4; freeing those of A's
//     blocks that are discarded, B's 1-2.)
//   - 16 ms: B's last 2 MB, alone: its write ends, freeing 1-2 and letting
//     3-4 go.
//
// Worker 1's pool: 4 + 2 pulled in, 4 + 2 stored, 2 + 2 evicted, 4 taken
// over + 2 freed dropped: 2 held, 3-4 ready. g2_stores 4 (worker 0) + 4 +
// 2, none dropped, 4 evictions; 6 pins acquired and released.
func TestStoreTakesOverGivenUpSlots(t *testing.T) {
	g := newRig(Config{G2Capacity: 4, BlockBytes: 2_500_000})
	c := chain(1, 4)
	h := Hint{Source: 0, Blocks: all}
	g.k.Store(0, 0, stores(c))
	g.stage(0, 1, 1, c, h)
	store := func(at des.Time, first, n int) {
		g.q.Schedule(at, des.PhaseArrival, 0, probe(func(now des.Time) { g.k.Store(now, 1, stores(chain(first, n))) }), 0)
	}
	store(6*ms, 1, 4)
	store(6500*des.Microsecond, 50, 2)
	g.stage(7*ms, 1, 2, c, h)
	var at6 [4]bool
	g.q.Schedule(6*ms, des.PhaseSample, 0, probe(func(des.Time) {
		for i := range at6 {
			at6[i] = g.k.Pool(1).Ready(at(c, i)) && g.r().visible[[]string{"1/1", "1/2", "1/3", "1/4"}[i]]
		}
	}), 0)
	var used, pins int
	var held1 bool
	g.q.Schedule(15*ms, des.PhaseSample, 0, probe(func(des.Time) {
		used, pins, held1 = g.k.Pool(1).Used(), g.k.Pool(1).Pinned(), g.k.Pool(1).Has(at(c, 0))
	}), 0)
	g.run()
	if at6 != [4]bool{true, true, true, true} {
		t.Errorf("at 6 ms blocks 1-4 ready and visible at worker 1: %v, want all", at6)
	}
	wantPull(t, g.r().pulls[1], Expired, ms, 4*ms, 0)
	wantPull(t, g.r().pulls[2], Expired, 8*ms, 11*ms, 0)
	if a, b := g.r().pulls[1].WriteEndNs, g.r().pulls[2].WriteEndNs; a != 14*ms || b != 16*ms {
		t.Errorf("writes ended at %v and %v, want 14ms and 16ms", a, b)
	}
	if used != 4 || pins != 2 || !held1 {
		t.Errorf("at 15 ms worker 1 holds %d blocks, %d pins, block 1 %v; want 4, 2, true", used, pins, held1)
	}
	p := g.k.Pool(1)
	if f := p.Flows(); f != (Flows{Stored: 6, Pulled: 6, Evicted: 4, Dropped: 6}) || p.Used() != 2 ||
		!p.Ready(at(c, 2)) || !p.Ready(at(c, 3)) || p.Has(at(c, 0)) || p.Has(at(c, 1)) {
		t.Errorf("worker 1: flows %+v, used %d, blocks 1-4 held %v %v %v %v", f, p.Used(),
			p.Has(at(c, 0)), p.Has(at(c, 1)), p.Has(at(c, 2)), p.Has(at(c, 3)))
	}
	if c := g.k.C; c.G2Stores != 10 || c.G2StoresDropped != 0 || c.G2Evictions != 4 || c.PinsAcquired != 6 || c.PinsReleased != 6 {
		t.Errorf("g2_stores %d, dropped %d, evictions %d, pins %d / %d; want 10, 0, 4, 6 / 6",
			c.G2Stores, c.G2StoresDropped, c.G2Evictions, c.PinsAcquired, c.PinsReleased)
	}
	g.check(t)
}

// TestStoreSkipsLiveWrite (rule: a block filling for a write its target
// still waits for is skipped by a store: the pull will land it). A copy of
// blocks 1-4 (2 MB of the rig's 0.5 MB blocks) to worker 1, staged at 0:
// first byte 1 ms, lands at 3 ms. Worker 1 stores 1-4 at 2 ms: all four
// filling for the live write, skipped: nothing stored, none dropped. The
// pull lands them at 3 ms: success, 4 pulled in and ready.
func TestStoreSkipsLiveWrite(t *testing.T) {
	g := newRig(Config{})
	c := chain(1, 4)
	g.k.Store(0, 0, stores(c))
	g.stage(0, 1, 1, c, Hint{Source: 0, Blocks: all})
	g.q.Schedule(2*ms, des.PhaseArrival, 0, probe(func(now des.Time) { g.k.Store(now, 1, stores(c)) }), 0)
	g.run()
	wantPull(t, g.r().pulls[1], Success, ms, 3*ms, 4)
	if f := g.k.Pool(1).Flows(); f != (Flows{Pulled: 4}) || g.k.C.G2Stores != 4 || g.k.C.G2StoresDropped != 0 || !g.k.Pool(1).Ready(at(c, 0)) {
		t.Errorf("worker 1 flows %+v, g2_stores %d, dropped %d; want 4 pulled in, 4 (worker 0's), 0", f, g.k.C.G2Stores, g.k.C.G2StoresDropped)
	}
	g.check(t)
}
