package kvcr

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// issueAt issues order o at time at.
func (g *rig) issueAt(at des.Time, o Order) {
	g.q.Schedule(at, des.PhaseLifecycle, 0, probe(func(now des.Time) { g.k.Issue(now, o) }), 0)
}

// order is the order of chain c's blocks from source to target.
func order(source, target int32, c []uint64, move bool) Order {
	return Order{Source: source, Target: target, Move: move, Path: path(c), Blocks: len(c), Tag: 7}
}

// orderPull is the pull of the order whose target is w.
func (g *rig) orderPull(t *testing.T, w int32) *Pull {
	t.Helper()
	for _, p := range g.r().orders {
		if p.Target == w {
			return p
		}
	}
	t.Fatalf("no order pull to worker %d (orders %+v)", w, g.r().orders)
	return nil
}

// TestOrderSharesEgressWithRequest (rules: an order's pull is staged at
// once, by a request pull's rules, and shares its source's egress with
// request pulls as one more transfer; a move removes the source's copies
// after its write). Worker 0 holds blocks 1-20 (0.5 MB each, 1 GB/s, 1 ms
// latency). At 0 a move of blocks 1-4 (2 MB) to worker 1 and a request's
// pull of blocks 1-2 (1 MB) to worker 2 are staged: both first bytes at
// 1 ms, 0.5 GB/s each; the request's MB is in at 3 ms, when the move has 1
// MB of its 2; its last MB alone takes 1 ms: 4 ms. The move lands its 4
// blocks (2,000,000 bytes), and worker 0 removes blocks 1-4 then (the
// request pull's pins on 1-2 went at 3 ms). Nothing waits for the order:
// no request is told; its row has request_id -1, kind move, the order's
// tag.
func TestOrderSharesEgressWithRequest(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.issueAt(0, order(0, 1, chain(1, 4), true))
	g.stage(0, 2, 10, chain(1, 2), Hint{Source: 0, Blocks: all})
	g.run()
	wantPull(t, g.r().pulls[10], Success, ms, 3*ms, 2)
	p := g.orderPull(t, 1)
	wantPull(t, p, Success, ms, 4*ms, 4)
	if p.Req != -1 || p.Kind != KindMove || p.Tag != 7 || p.Bytes != 2_000_000 || p.StagedNs != 0 {
		t.Errorf("order pull %+v", p)
	}
	if _, told := g.r().ended[-1]; told || len(g.r().ended) != 1 {
		t.Errorf("requests told %v: only request 10 waits", g.r().ended)
	}
	if g.r().visible["0/1"] || g.r().visible["0/4"] || !g.r().visible["0/5"] || !g.r().visible["1/4"] {
		t.Errorf("after the move: worker 0 holds 1 %v, 4 %v, 5 %v; worker 1 holds 4 %v",
			g.r().visible["0/1"], g.r().visible["0/4"], g.r().visible["0/5"], g.r().visible["1/4"])
	}
	c := g.k.C
	if c.Move.Issued != 1 || c.Move.Success != 1 || c.Move.BlocksLanded != 4 || c.Move.Bytes != 2_000_000 ||
		c.PullsSuccess != 2 || c.MoveRemovedBlocks != 4 || c.BytesPulled != 3_000_000 {
		t.Errorf("counters %+v", c)
	}
	g.check(t)
}

// TestOrderMoveLandingLate (rules: kvcr.background_timeout bounds an
// order's pull at both ends; a move whose write lands after its target
// gave up loses the blocks). Background timeout 2 ms. A move of blocks 1-4
// (2 MB) from worker 0 to 1, staged at 0: target deadline 2 ms, source
// deadline its receipt (1 ms) + min(2 ms, the 2 ms left) = 3 ms. Its write
// starts at 1 ms and needs 2 ms: at 2 ms the target gives up (expired,
// end_ns 2 ms); the write cannot be recalled and lands at 3 ms, before the
// source's deadline, so the source saw it succeed and removes blocks 1-4,
// which the target dropped: move_lost_blocks 4. Without the background
// timeout the move has the abandon timeout (8 ms) and lands at 3 ms.
func TestOrderMoveLandingLate(t *testing.T) {
	g := newRig(Config{BackgroundTimeout: 2 * ms})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.issueAt(0, order(0, 1, chain(1, 4), true))
	g.run()
	p := g.orderPull(t, 1)
	wantPull(t, p, Expired, ms, 2*ms, 0)
	if p.WriteEndNs != 3*ms || g.k.C.MoveLostBlocks != 4 || g.k.C.Move.Expired != 1 || g.r().visible["0/1"] || g.r().visible["1/1"] {
		t.Errorf("write end %v, lost %d, counters %+v; block 1 at 0 %v, at 1 %v",
			p.WriteEndNs, g.k.C.MoveLostBlocks, g.k.C.Move, g.r().visible["0/1"], g.r().visible["1/1"])
	}
	g.check(t)

	g = newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.issueAt(0, order(0, 1, chain(1, 4), true))
	g.run()
	wantPull(t, g.orderPull(t, 1), Success, ms, 3*ms, 4)
	g.check(t)
}

// TestOrdersTakeTurns (rule: a source stages at most
// kvcr.background_inflight orders at a time, the rest in issue order as
// earlier ones end). Two prefetches of blocks 1-2 (1 MB) from worker 0, to
// workers 1 and 2, issued at 0. With one at a time: the first is staged at
// 0 and lands at 1 + 1 = 2 ms; the second is staged then, its first byte
// at 3 ms, landing at 4 ms. With no limit both are staged at 0 and share
// the egress: both land at 3 ms. The source's blocks stay (a copy).
func TestOrdersTakeTurns(t *testing.T) {
	for _, tc := range []struct {
		inflight            int
		staged2, end1, end2 des.Time
	}{{1, 2 * ms, 2 * ms, 4 * ms}, {0, 0, 3 * ms, 3 * ms}} {
		g := newRig(Config{BackgroundInflight: tc.inflight})
		g.k.Store(0, 0, stores(chain(1, 20)))
		g.issueAt(0, order(0, 1, chain(1, 2), false))
		g.issueAt(0, order(0, 2, chain(1, 2), false))
		var active int
		g.q.Schedule(ms, des.PhaseSample, 0, probe(func(des.Time) { active = g.k.ActivePulls(0) }), 0)
		g.run()
		a, b := g.orderPull(t, 1), g.orderPull(t, 2)
		wantPull(t, a, Success, ms, tc.end1, 2)
		wantPull(t, b, Success, tc.staged2+ms, tc.end2, 2)
		if b.StagedNs != tc.staged2 || b.Kind != KindPrefetch || !g.r().visible["0/1"] || active != 2 {
			t.Errorf("inflight %d: second staged at %v, kind %v; source keeps block 1: %v; active pulls at 1 ms %d (want 2: one waiting counts)",
				tc.inflight, b.StagedNs, b.Kind, g.r().visible["0/1"], active)
		}
		g.check(t)
	}
}

// TestDrainingSourceServesOrders (rule: the staging guard lets a draining
// source serve orders, its evacuation, and rejects a request's pull from
// it). Worker 0 drains at 0 holding blocks 1-20: a move of 1-2 to worker 1
// and a copy of blocks 31-32 (another chain it holds) to worker 2 share its
// egress from 1 ms and both land at 3 ms; a request's pull from it is
// rejected (draining).
func TestDrainingSourceServesOrders(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.k.Store(0, 0, stores(chain(31, 2)))
	g.life.Set(0, lifecycle.Draining)
	g.issueAt(0, order(0, 1, chain(1, 2), true))
	g.issueAt(0, order(0, 2, chain(31, 2), false))
	g.stage(0, 2, 10, chain(5, 2), Hint{Source: 0, Blocks: all})
	g.run()
	wantPull(t, g.orderPull(t, 1), Success, ms, 3*ms, 2)
	wantPull(t, g.orderPull(t, 2), Success, ms, 3*ms, 2)
	if g.r().pulls[10].Rejection != RejectedDraining {
		t.Errorf("request pull from a draining source: %v", g.r().pulls[10].Rejection)
	}
	if c := g.k.C; c.Move.Success != 1 || c.Prefetch.Success != 1 || c.PullsRejectedDraining != 1 {
		t.Errorf("counters %+v", c)
	}
	g.check(t)
}

// TestOrderEndsUnstaged (rules: an order whose target already holds every
// block ends at its first staging with no pull, nothing_to_fetch; an order
// still waiting for its source's turn when its target is removed ends with
// no pull, dropped; each says so, with the blocks its issuer planned).
// Worker 1 holds blocks 1-2: a prefetch of them from 0 (planned as 2)
// ends at once. One order at a time: a prefetch of 1-4 to worker 2 (2 MB,
// lands at 3 ms), then one of 5-6 to worker 1 (planned as 2), which is
// removed at 1 ms while it waits: dropped. Three issued, three ended, one
// pull, whose row carries its plan (4).
func TestOrderEndsUnstaged(t *testing.T) {
	g := newRig(Config{BackgroundInflight: 1})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.k.Store(0, 1, stores(chain(1, 2)))
	for _, o := range []Order{order(0, 1, chain(1, 2), false), order(0, 2, chain(1, 4), false), order(0, 1, chain(5, 2), false)} {
		o.Planned = o.Blocks
		g.issueAt(0, o)
	}
	g.q.Schedule(ms, des.PhaseLifecycle, 1, probe(func(now des.Time) {
		g.life.Set(1, lifecycle.Removed)
		g.k.RemoveWorker(now, 1)
	}), 0)
	g.run()
	p := g.orderPull(t, 2)
	wantPull(t, p, Success, ms, 3*ms, 4)
	if c := g.k.C.Prefetch; c.Issued != 3 || c.NothingToFetch != 1 || c.Dropped != 1 || c.Success != 1 || len(g.r().orders) != 1 {
		t.Errorf("prefetch counters %+v, pulls %d", c, len(g.r().orders))
	}
	if want := []string{"nothing to fetch 2", "dropped 2"}; !slices.Equal(g.r().ends, want) || p.Planned != 4 {
		t.Errorf("orders ended unstaged %q, the pull's plan %d; want %q, 4", g.r().ends, p.Planned, want)
	}
	g.check(t)
}

// TestParkedOrderRetried (rule: an order's pull that finds no room parks,
// holding nothing, and is staged again at each RetryOrders, as a request's
// parked pull is at each drive scan). G2 holds 2 blocks a worker; timeouts
// 10 and 20 ms. Worker 1 pulls blocks 5-6 from worker 2 for a request at 0
// (its 2 slots filling until 2 ms). A prefetch of blocks 1-2 from worker 0
// to worker 1 at 0.5 ms finds no room: parked, staged_ns 0.5 ms. A retry at 1 ms
// still finds none; at 2.5 ms blocks 5-6 are ready and unpinned, so it
// evicts them and starts: first byte 3.5 ms, landing at 4.5 ms, before
// its 10 ms deadline.
func TestParkedOrderRetried(t *testing.T) {
	g := newRig(Config{G2Capacity: 2, OperationTimeout: 10 * ms, AbandonTimeout: 20 * ms})
	g.k.Store(0, 0, stores(chain(1, 2)))
	g.k.Store(0, 2, stores(chain(5, 2)))
	g.stage(0, 1, 10, chain(5, 2), Hint{Source: 2, Blocks: all})
	g.issueAt(500*des.Microsecond, order(0, 1, chain(1, 2), false))
	parked := -1
	for _, at := range []des.Time{ms, 2500 * des.Microsecond} {
		g.q.Schedule(at, des.PhaseDrive, 99, probe(func(now des.Time) {
			if parked < 0 {
				parked = g.k.ParkedOrders()
			}
			g.k.RetryOrders(now)
		}), 0)
	}
	g.run()
	wantPull(t, g.r().pulls[10], Success, ms, 2*ms, 2)
	p := g.orderPull(t, 1)
	wantPull(t, p, Success, 3500*des.Microsecond, 4500*des.Microsecond, 2)
	if parked != 1 || p.StagedNs != 500*des.Microsecond || g.k.C.PullsParked != 1 || g.k.C.G2Evictions != 2 {
		t.Errorf("parked %d at 1 ms, staged at %v, pulls parked %d, evictions %d", parked, p.StagedNs, g.k.C.PullsParked, g.k.C.G2Evictions)
	}
	g.check(t)
}

// TestCheckEndOrders: CheckEnd reports an order that never ended (one
// waiting for its turn when the run stops) under "every order ends exactly
// once", kinds' landed bytes beyond the totals under the link bytes
// invariant, and, with every pull and order over, a worker still counting
// an order's pull or an unstarted order under the pulls' and the orders'
// invariants.
func TestCheckEndOrders(t *testing.T) {
	g := newRig(Config{BackgroundInflight: 1})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.k.Issue(0, order(0, 1, chain(1, 2), false))
	g.k.Issue(0, order(0, 2, chain(1, 2), false)) // waits; the queue is never run
	got := map[string]bool{}
	for _, v := range g.k.CheckEnd() {
		got[v.Invariant] = true
	}
	if !got[InvOrdersEnd] || !got[InvPullsEnd] {
		t.Errorf("violations %v, want %q and %q", got, InvOrdersEnd, InvPullsEnd)
	}
	g = newRig(Config{})
	g.k.C.Move.Bytes, g.k.C.Move.BlocksLanded = 1, 1
	if vs := g.k.CheckEnd(); len(vs) != 1 || vs[0].Invariant != InvLinkBytes {
		t.Errorf("violations %v, want one of %q", vs, InvLinkBytes)
	}
	for _, tc := range []struct {
		inv   string
		count func(*node) *int
	}{{InvPullsEnd, func(n *node) *int { return &n.orderPulls }}, {InvOrdersEnd, func(n *node) *int { return &n.unstarted }}} {
		g = newRig(Config{})
		*tc.count(g.k.nodes[1]) = 1
		if vs := g.k.CheckEnd(); len(vs) != 1 || vs[0].Invariant != tc.inv {
			t.Errorf("violations %v, want one of %q", vs, tc.inv)
		}
	}
}

// TestOrderStartsPastTargetG1 (rule: an order's fetch, like a request's,
// starts past the target's G1 prefix: those blocks are never sent and
// never invalidated at the source). Worker 1's G1 holds the first 2 blocks
// of every chain: a move of blocks 1-4 from worker 0 sends 3-4 (1 MB,
// landing at 2 ms) and worker 0 keeps 1-2.
func TestOrderStartsPastTargetG1(t *testing.T) {
	g := newRig(Config{})
	g.r().g1[1] = 2
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.issueAt(0, order(0, 1, chain(1, 4), true))
	g.run()
	p := g.orderPull(t, 1)
	wantPull(t, p, Success, ms, 2*ms, 2)
	if p.Requested != 2 || !g.r().visible["0/1"] || !g.r().visible["0/2"] || g.r().visible["0/3"] || g.r().visible["1/1"] || !g.r().visible["1/3"] {
		t.Errorf("requested %d; worker 0 holds 1 %v, 2 %v, 3 %v; worker 1's G2 holds 1 %v, 3 %v", p.Requested,
			g.r().visible["0/1"], g.r().visible["0/2"], g.r().visible["0/3"], g.r().visible["1/1"], g.r().visible["1/3"])
	}
	g.check(t)
}

// TestWalkOrder (rule: an order's walk skips the target's G1 prefix and
// its G2 hits, sends what the source holds ready, and stops at the first
// block neither side can supply: WalkOrder says where and why). Chain 1-8
// (or 1-6), from block 0 to its end, from worker 0:
//
//   - to worker 1, whose G1 holds the first 2 blocks and G2 holds 3-4:
//     starts at block 2, hits 3-4, sends 5-8, reaches the end;
//   - worker 0 holding 1-2 and 5-8 only, to worker 2: sends 1-2 and stops
//     at block 3, which the source lacks (a gap);
//   - to worker 2, which an order staged just before is filling with 1-4:
//     stops at block 1, filling;
//   - to worker 1, whose 1-4 a move took away while a reader pins them:
//     stops at block 1, pending removal;
//   - G2 of 4 blocks: worker 0 holds 1 and 4-6, worker 1 holds 2-3: over
//     chain 1-6 sends 1, hits 2-3, sends 4 and stops at block 5, the
//     target's capacity taken.
func TestWalkOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity int
		n        int      // the chain: blocks 1..n
		held     [][2]int // the chain's blocks [lo, hi) worker 0 holds
		target   int32
		setup    func(g *rig, p []block.Piece)
		start    int
		hits     int
		sends    int
		end      int
		stop     Stop
	}{
		{"to the end", 0, 8, [][2]int{{0, 8}}, 1, func(g *rig, p []block.Piece) {
			g.r().g1[1] = 2
			g.k.Store(0, 1, block.AppendPath(nil, p, 2, 4))
		}, 2, 2, 4, 8, StopNone},
		{"source gap", 0, 8, [][2]int{{0, 2}, {4, 8}}, 2, func(*rig, []block.Piece) {}, 0, 0, 2, 2, StopSourceGap},
		{"target filling", 0, 8, [][2]int{{0, 8}}, 2, func(g *rig, _ []block.Piece) {
			g.k.Issue(0, order(0, 2, chain(1, 4), false))
		}, 0, 0, 0, 0, StopTargetFilling},
		{"target pending", 0, 8, [][2]int{{0, 8}}, 1, func(g *rig, p []block.Piece) {
			r := block.AppendPath(nil, p, 0, 4)
			g.k.Store(0, 1, r)
			g.k.Pool(1).pin(r[0])
			g.k.Pool(1).markPending(r[0], nil)
		}, 0, 0, 0, 0, StopTargetPending},
		{"target full", 4, 6, [][2]int{{0, 1}, {3, 6}}, 1, func(g *rig, p []block.Piece) {
			g.k.Store(0, 1, block.AppendPath(nil, p, 1, 3))
		}, 0, 2, 2, 4, StopTargetFull},
	} {
		g := newRig(Config{G2Capacity: tc.capacity})
		p := path(chain(1, tc.n))
		for _, h := range tc.held {
			g.k.Store(0, 0, block.AppendPath(nil, p, h[0], h[1]))
		}
		tc.setup(g, p)
		w := g.k.WalkOrder(tc.target, 0, p, 0, tc.n)
		if w.Start != tc.start || block.Blocks(w.Hits) != tc.hits || block.Blocks(w.Sends) != tc.sends || w.End != tc.end || w.Stop != tc.stop {
			t.Errorf("%s: start %d, %d hits, %d sent, end %d, stop %d; want %d, %d, %d, %d, %d", tc.name,
				w.Start, block.Blocks(w.Hits), block.Blocks(w.Sends), w.End, w.Stop, tc.start, tc.hits, tc.sends, tc.end, tc.stop)
		}
	}
}

// TestOrderFrom (rules: an order's fetch starts at its From block, or past
// the target's G1 prefix when that is longer; FirstHeld is the first block
// of a chain a G2 holds). Worker 0's G2 (20 blocks) holds blocks 1-20;
// storing 31-32 evicts its least recent two, 1-2: FirstHeld of chain 1-20
// is 2. A prefetch of chain 1-4 from block 2 sends 3-4 (1 MB, landing at
// 2 ms), though the target's G1 holds nothing; with the target's G1
// holding 3 blocks it sends block 4 alone.
func TestOrderFrom(t *testing.T) {
	for _, tc := range []struct {
		g1, landed int
		end        des.Time
	}{{0, 2, 2 * ms}, {3, 1, 1500 * des.Microsecond}} {
		g := newRig(Config{G2Capacity: 20})
		g.r().g1[1] = tc.g1
		g.k.Store(0, 0, stores(chain(1, 20)))
		g.k.Store(0, 0, stores(chain(31, 2)))
		if got := g.k.FirstHeld(0, path(chain(1, 20)), 20); got != 2 {
			t.Fatalf("FirstHeld %d, want 2", got)
		}
		o := order(0, 1, chain(1, 4), false)
		o.From = 2
		g.issueAt(0, o)
		g.run()
		wantPull(t, g.orderPull(t, 1), Success, ms, tc.end, tc.landed)
		g.check(t)
	}
}

// TestDroppedOrdersIdleSource (rule: a draining source is told it is idle
// when its last order ends, a dropped one included). Worker 0 drains
// holding blocks 1-20 and 31-32, one order at a time: a move of 1-2 to
// worker 1 is staged at 0 (first byte at 1 ms), one of 31-32 to worker 2
// waits. At
// 0.5 ms one event removes worker 1, which ends the first order (its
// source's next is due in an event of its own), then worker 2, which drops
// the second before its turn: worker 0 then has no pull and no order, and
// is told so.
func TestDroppedOrdersIdleSource(t *testing.T) {
	g := newRig(Config{BackgroundInflight: 1})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.k.Store(0, 0, stores(chain(31, 2)))
	g.life.Set(0, lifecycle.Draining)
	g.issueAt(0, order(0, 1, chain(1, 2), true))
	g.issueAt(0, order(0, 2, chain(31, 2), true))
	g.q.Schedule(500*des.Microsecond, des.PhaseLifecycle, 1, probe(func(now des.Time) {
		for _, w := range []int32{1, 2} {
			g.life.Set(w, lifecycle.Removed)
			g.k.RemoveWorker(now, w)
		}
	}), 0)
	g.run()
	if c := g.k.C.Move; c.Issued != 2 || c.Failed != 1 || c.Dropped != 1 {
		t.Errorf("move counters %+v", c)
	}
	if !slices.Contains(g.r().idle, 0) || g.k.ActivePulls(0) != 0 {
		t.Errorf("idle %v, active pulls of worker 0 %d: want worker 0 idle", g.r().idle, g.k.ActivePulls(0))
	}
	g.check(t)
}

// TestSourceIdleWhenItsWriteEnds (rule: a draining source is idle when it
// takes part in no pull and no order from it waits to start: the rule
// ActivePulls, which a retirement checks, counts by; an order whose write
// from it is over holds it no longer). Worker 0 drains holding blocks
// 1-20; a move of 1-9 (4.5 MB) to worker 1 is staged at 0: first byte at
// 1 ms, source deadline 1 + min(4, 8) = 5 ms, while it writes: the target
// hears at 6 ms. The write lands at 5.5 ms, after the source gave up: worker
// 0's part is over then (idle, no active pull), though the order ends
// only at 6 ms (failed).
func TestSourceIdleWhenItsWriteEnds(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.life.Set(0, lifecycle.Draining)
	g.issueAt(0, order(0, 1, chain(1, 9), true))
	idle, active := false, -1
	g.q.Schedule(5700*des.Microsecond, des.PhaseSample, 0, probe(func(des.Time) {
		idle, active = slices.Contains(g.r().idle, 0), g.k.ActivePulls(0)
	}), 0)
	g.run()
	p := g.orderPull(t, 1)
	if p.Outcome != Failed || p.EndNs != 6*ms || p.WriteEndNs != 5500*des.Microsecond {
		t.Errorf("order pull %+v", p)
	}
	if !idle || active != 0 {
		t.Errorf("at 5.7 ms worker 0 idle %v, active pulls %d; want idle, 0", idle, active)
	}
	g.check(t)
}

// TestDrainingTargetDropsWaitingOrders (rule: a draining worker takes no
// new order: the orders waiting to send to it are dropped; a staged one
// runs on). One order at a time from worker 0: a prefetch of blocks 1-2
// to worker 1 (staged at 0, landing at 2 ms) and one to worker 2, waiting.
// Worker 2 drains at 0.5 ms: its order is dropped, with no pull. Then
// worker 1 drains at 1 ms: its staged order lands at 2 ms all the same.
func TestDrainingTargetDropsWaitingOrders(t *testing.T) {
	g := newRig(Config{BackgroundInflight: 1})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.issueAt(0, order(0, 1, chain(1, 2), false))
	g.issueAt(0, order(0, 2, chain(1, 2), false))
	for _, d := range []struct {
		at des.Time
		w  int32
	}{{500 * des.Microsecond, 2}, {ms, 1}} {
		g.q.Schedule(d.at, des.PhaseLifecycle, 1, probe(func(now des.Time) {
			g.life.Set(d.w, lifecycle.Draining)
			g.k.Draining(d.w)
		}), 0)
	}
	g.run()
	wantPull(t, g.orderPull(t, 1), Success, ms, 2*ms, 2)
	if c := g.k.C.Prefetch; c.Issued != 2 || c.Dropped != 1 || c.Success != 1 || len(g.r().orders) != 1 {
		t.Errorf("prefetch counters %+v, pulls %d", c, len(g.r().orders))
	}
	g.check(t)
}
