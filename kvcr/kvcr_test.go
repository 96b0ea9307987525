package kvcr

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/lifecycle"
)

// recorder keeps what KVCR's effects report, as the rig takes them.
type recorder struct {
	ended   map[int64]string // request -> "time landed"
	pulls   map[int64]*Pull  // by request
	visible map[string]bool  // "worker/hash"
	idle    []int32
	orders  []*Pull       // the orders' pulls, in the order they ended
	ends    []string      // the orders that ended with no pull: "nothing to fetch 2" (its blocks planned), "dropped 2"
	g1      [3]int        // by worker: the leading blocks of every chain its G1 holds (G1Prefix)
	chains  *block.Chains // names the blocks reported
}

func newRecorder(chains *block.Chains) *recorder {
	return &recorder{ended: map[int64]string{}, pulls: map[int64]*Pull{}, visible: map[string]bool{}, chains: chains}
}

// apply records a batch of effects that happened at now.
func (r *recorder) apply(now des.Time, fx []Effect) {
	for _, e := range fx {
		switch e.Kind {
		case PullAnswered:
			r.ended[e.Req] = fmt.Sprintf("%v %d", now, e.Landed)
		case BlocksVisible, BlocksRemoved:
			for _, b := range e.Runs {
				for _, h := range r.chains.Hashes(b.Seg)[b.Lo:b.Hi] {
					r.visible[fmt.Sprintf("%d/%d", e.Worker, h)] = e.Kind == BlocksVisible
				}
			}
		case PullFinished:
			if e.Pull.Kind != KindRequest {
				r.orders = append(r.orders, e.Pull)
			} else {
				r.pulls[e.Pull.Req] = e.Pull
			}
		case WorkerIdle:
			r.idle = append(r.idle, e.Worker)
		case OrderNothingToFetch:
			r.ends = append(r.ends, fmt.Sprintf("nothing to fetch %d", e.Pull.Planned))
		case OrderDropped:
			r.ends = append(r.ends, fmt.Sprintf("dropped %d", e.Pull.Planned))
		}
	}
}

// G1Prefix: the rig's workers' G1 holds the first g1[w] blocks of every
// chain.
func (r *recorder) G1Prefix(w int32, _ []block.Piece, limit int) int { return min(r.g1[w], limit) }

// rig is KVCR over three ready workers with instant G2 links, 1 GB/s
// egress, 1 ms latency and 0.5 MB blocks.
type rig struct {
	q    des.Queue
	k    *KVCR
	rc   *recorder
	life lifecycle.Table
}

// r is the rig's record of KVCR's effects, every one so far taken.
func (g *rig) r() *recorder {
	g.rc.apply(g.q.Now(), g.k.TakeEffects())
	return g.rc
}

// run fires the rig's events to the end, taking KVCR's effects after each,
// as sim's loop does.
func (g *rig) run() {
	g.r()
	for g.q.Step() {
		g.r()
	}
}

func newRig(cfg Config) *rig {
	g := &rig{}
	if cfg.BlockBytes == 0 {
		cfg.BlockBytes = 500_000
	}
	if cfg.G2Capacity == 0 {
		cfg.G2Capacity = 100
	}
	cfg.Latency, cfg.BandwidthGbps = ms, 1
	if cfg.OperationTimeout == 0 {
		cfg.OperationTimeout, cfg.AbandonTimeout = 4*ms, 8*ms
	}
	if cfg.Chains == nil {
		cfg.Chains = testChains
	}
	g.rc = newRecorder(cfg.Chains)
	cfg.Workers, cfg.G1 = g.life.View(), g.rc
	g.k = New(cfg, &g.q)
	for range 3 {
		g.k.AddWorker(g.life.Add(lifecycle.Ready))
	}
	return g
}

// all is a hint length past every chain here: the hint lists every block.
const all = 1000

// chain is blocks first..first+n-1.
func chain(first, n int) []uint64 {
	c := make([]uint64, n)
	for i := range c {
		c[i] = uint64(first + i)
	}
	return c
}

// testChains is the tests' chain store, which names their chains' blocks
// as the simulator's store does; the tests never collect it.
var testChains = &block.Chains{}

// path is chain c's path in testChains.
func path(c []uint64) []block.Piece { return testChains.Intern(block.Hashed(c), nil) }

// at is block k of chain c as a Ref with its name in testChains.
func at(c []uint64, k int) block.Ref { return block.RefAt(c, path(c), k) }

// runOf is block b as a run.
func runOf(b block.Ref) block.Run { return block.Run{Seg: b.Seg, Lo: b.Off, Hi: b.Off + 1} }

// stores is a chain's blocks as runs, for stores.
func stores(c []uint64) []block.Run { return block.AppendPath(nil, path(c), 0, len(c)) }

// stageAt stages request req on target at time at, pulling from source;
// the target holds the chain's first g1 blocks in G1.
type stageAt struct {
	g      *rig
	target int32
	req    int64
	c      []uint64
	g1     int
	h      Hint
	got    *engine.Staging
}

func (s *stageAt) Fire(now des.Time, _, _ uint64) {
	*s.got = s.g.k.Stage(now, s.target, s.req, path(s.c), len(s.c), s.g1, s.h)
}

func (g *rig) stage(at des.Time, target int32, req int64, c []uint64, h Hint) *engine.Staging {
	return g.stageHeld(at, target, req, c, 0, h)
}

func (g *rig) stageHeld(at des.Time, target int32, req int64, c []uint64, g1 int, h Hint) *engine.Staging {
	var res engine.Staging
	g.q.Schedule(at, des.PhaseDrive, uint64(req), &stageAt{g, target, req, c, g1, h, &res}, 0)
	return &res
}

func (g *rig) check(t *testing.T) {
	t.Helper()
	for _, v := range g.k.CheckEnd() {
		t.Errorf("%s: %v", v.Invariant, v.Err)
	}
	for w := range int32(3) {
		if g.life.Of(w) == lifecycle.Removed {
			continue // its pool went with it
		}
		if err := g.k.Pool(w).Check(); err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
}

func wantPull(t *testing.T, p *Pull, out Outcome, firstByte, end des.Time, landed int) {
	t.Helper()
	if p == nil {
		t.Fatal("no pull row")
	}
	if p.Outcome != out || p.FirstByteNs != firstByte || p.EndNs != end || p.Landed != landed {
		t.Errorf("pull %d: %v first byte %v end %v landed %d; want %v %v %v %d",
			p.ID, p.Outcome, p.FirstByteNs, p.EndNs, p.Landed, out, firstByte, end, landed)
	}
}

// TestConcurrentPullsShareEgress: worker 0 holds every block. Two pulls of
// 2 blocks (1 MB) to workers 1 and 2 staged at 0: first bytes at 1 ms, 0.5
// GB/s each, so 2 ms each: both land at 3 ms. Three pulls of 2, 4 and 6
// blocks (1, 2, 3 MB) from 0: three share until the 1 MB one has its MB (1
// + 3 = 4 ms), two share the 1 and 2 MB left until 6 ms, the last MB goes
// alone: 7 ms (with timeouts long enough: landing at or after a 4 ms
// deadline would not count).
func TestConcurrentPullsShareEgress(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 20)))
	h := Hint{Source: 0, Blocks: all}
	g.stage(0, 1, 10, chain(1, 2), h)
	g.stage(0, 2, 11, chain(1, 2), h)
	g.run()
	wantPull(t, g.r().pulls[10], Success, ms, 3*ms, 2)
	wantPull(t, g.r().pulls[11], Success, ms, 3*ms, 2)
	if g.r().ended[10] != "3ms 2" || !g.r().visible["1/2"] {
		t.Errorf("request 10 ended %q; block 2 visible at worker 1: %v", g.r().ended[10], g.r().visible["1/2"])
	}
	g.check(t)

	g = newRig(Config{OperationTimeout: 100 * ms, AbandonTimeout: 200 * ms})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.stage(0, 1, 20, chain(1, 2), h)
	g.stage(0, 2, 21, chain(1, 4), h)
	g.stageHeld(0, 1, 22, chain(1, 16), 10, h) // blocks 11-16: worker 1's G1 holds 1-10
	g.run()
	wantPull(t, g.r().pulls[20], Success, ms, 4*ms, 2)
	wantPull(t, g.r().pulls[21], Success, ms, 6*ms, 4)
	wantPull(t, g.r().pulls[22], Success, ms, 7*ms, 6)
	g.check(t)
}

// TestExpiredWriteKeepsItsShare (rule: a write cannot be recalled: after
// its first byte it runs to its last, keeping its share of the link, its
// source pins and its target's slots, and lands nothing). Operation
// timeout 4 ms. A (20 blocks, 10 MB) staged at 0: first byte 1 ms, target
// deadline 4 ms, source deadline 1 + 4 = 5 ms. B (2 blocks, 1 MB) staged at
// 3 ms: first byte 4 ms, target deadline 7 ms. A is alone for 1-4 ms (3
// MB). At 4 ms A's target gives up (expired, end_ns 4 ms), and B starts:
// each gets 0.5 GB/s. At 5 ms A's source gives up too, but its write runs
// on: B gets its MB at 0.5 GB/s and lands at 6 ms. (Under the old rule A's
// bytes stopped at 5 ms, when B had 0.5 MB; alone, B's last 0.5 MB took 0.5
// ms: 5.5 ms. B ends later by exactly that 0.5 ms.) A has 4 MB at 6 ms and
// its last 6 MB alone end the write at 12 ms: its pins and its target's 20
// slots are held until then (seen at 11 ms), then released; nothing
// landed, and the source treats the write as cancelled (no refresh).
func TestExpiredWriteKeepsItsShare(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 30)))
	h := Hint{Source: 0, Blocks: all}
	g.stage(0, 1, 1, chain(1, 20), h)
	g.stageHeld(3*ms, 2, 2, chain(1, 22), 20, h) // blocks 21-22
	var pinned, slots int
	g.q.Schedule(11*ms, des.PhaseSample, 0, probe(func(des.Time) {
		pinned, slots = g.k.Pool(0).Pinned(), g.k.Pool(1).Used()
	}), 0)
	g.run()
	wantPull(t, g.r().pulls[1], Expired, ms, 4*ms, 0)
	wantPull(t, g.r().pulls[2], Success, 4*ms, 6*ms, 2)
	if a := g.r().pulls[1]; a.WriteEndNs != 12*ms || g.r().pulls[2].WriteEndNs != 6*ms {
		t.Errorf("writes ended at %v and %v, want 12ms and 6ms", a.WriteEndNs, g.r().pulls[2].WriteEndNs)
	}
	if g.r().ended[1] != "4ms 0" {
		t.Errorf("A released at %q, want at its 4 ms deadline", g.r().ended[1])
	}
	if pinned != 20 || slots != 20 {
		t.Errorf("at 11 ms: %d source pins, %d target slots; want 20, 20", pinned, slots)
	}
	if g.k.Pool(1).Used() != 0 || g.k.C.PullsExpired != 1 || g.k.C.BytesPulled != 1_000_000 || g.k.Moved(0) != 11_000_000 {
		t.Errorf("target slots %d, expired %d, bytes pulled %d, egress moved %d",
			g.k.Pool(1).Used(), g.k.C.PullsExpired, g.k.C.BytesPulled, g.k.Moved(0))
	}
	g.check(t)
}

// TestPartialPull: the request's chain has 4 blocks past the target's
// prefix; the source holds only the first 2: the pull is partial (2 of 4
// requested landed).
func TestPartialPull(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 2)))
	g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Blocks: all})
	g.run()
	p := g.r().pulls[1]
	wantPull(t, p, Partial, ms, 2*ms, 2) // 1 MB alone at 1 GB/s
	if p.Requested != 4 {
		t.Errorf("requested %d", p.Requested)
	}
	g.check(t)
}

// TestParkedPull: max_inflight_pulls 1. A pull to worker 1 starts at 0 (1
// MB: lands at 2 ms); a second one to worker 1, staged at 0.5 ms, is parked.
// Staged again at a later scan (3 ms), it starts: first byte 4 ms, lands at
// 5 ms. Its staged time stays the first attempt.
func TestParkedPull(t *testing.T) {
	g := newRig(Config{MaxInflightPulls: 1, OperationTimeout: 100 * ms, AbandonTimeout: 200 * ms})
	g.k.Store(0, 0, stores(chain(1, 10)))
	h := Hint{Source: 0, Blocks: all}
	first := g.stage(0, 1, 1, chain(1, 2), h)
	parked := g.stageHeld(500*des.Microsecond, 1, 2, chain(1, 6), 4, h) // blocks 5-6
	again := g.stageHeld(3*ms, 1, 2, chain(1, 6), 4, h)
	g.run()
	if *first != engine.StageWait || *parked != engine.StageParked || *again != engine.StageWait {
		t.Errorf("results %v %v %v", *first, *parked, *again)
	}
	wantPull(t, g.r().pulls[2], Success, 4*ms, 5*ms, 2)
	if p := g.r().pulls[2]; p.StagedNs != 500*des.Microsecond || g.k.C.PullsParked != 1 {
		t.Errorf("staged %v parked %d", p.StagedNs, g.k.C.PullsParked)
	}
	g.check(t)
}

// TestParkedPullExpires: no room ever appears (the target's G2 of 2 blocks
// is full and one is pinned, so one slot can be had; the pull needs 2): the parked pull expires at its deadline, 4 ms after its
// first staging, having pinned nothing.
func TestParkedPullExpires(t *testing.T) {
	g := newRig(Config{G2Capacity: 2})
	g.k.Store(0, 0, stores(chain(1, 2)))
	g.k.Store(0, 1, stores(chain(50, 2)))
	g.k.Pool(1).pin(runOf(at(chain(50, 2), 0))) // worker 1's pool: full, one block pinned
	res := g.stage(0, 1, 1, chain(1, 2), Hint{Source: 0, Blocks: all})
	g.run()
	if *res != engine.StageParked || g.r().ended[1] != "4ms 0" {
		t.Errorf("result %v, ended %q", *res, g.r().ended[1])
	}
	wantPull(t, g.r().pulls[1], Expired, -1, 4*ms, 0)
	if g.k.C.PinsAcquired != 0 {
		t.Errorf("pins %d", g.k.C.PinsAcquired)
	}
}

// TestPullCountsRunBlocksItMayEvict: worker 1's G2 of 2 blocks holds a
// pinned block and block 2 of the chain 1-2, not block 1. Block 2 is a
// destination hit, held (pinned) for the pull's length so that reserving a
// slot for block 1 cannot evict it; block 1 then needs a slot of its own:
// 2 slots, 1 to be had. The pull parks (it once took the one slot, evicted
// block 2 and found no slot left for it) and expires at its deadline, 4
// ms, having pinned nothing.
func TestPullCountsRunBlocksItMayEvict(t *testing.T) {
	g := newRig(Config{G2Capacity: 2})
	c := chain(1, 2)
	g.k.Store(0, 0, stores(c))
	g.k.Store(0, 1, stores(chain(50, 1)))
	g.k.Pool(1).pin(runOf(at(chain(50, 1), 0)))
	g.k.Store(0, 1, []block.Run{runOf(at(c, 1))})
	res := g.stage(0, 1, 1, c, Hint{Source: 0, Blocks: all})
	g.run()
	if *res != engine.StageParked || g.k.C.PinsAcquired != 0 {
		t.Errorf("result %v, pins %d", *res, g.k.C.PinsAcquired)
	}
	wantPull(t, g.r().pulls[1], Expired, -1, 4*ms, 0)
}

// TestStagingGuard: a draining, removed or starting source is rejected at
// staging and nothing is pinned; a source without the blocks is rejected
// as missing; a target holding everything needs no pull.
func TestStagingGuard(t *testing.T) {
	for _, c := range []struct {
		st      lifecycle.Status
		counter func(*Counters) int64
	}{
		{lifecycle.Draining, func(c *Counters) int64 { return c.PullsRejectedDraining }},
		{lifecycle.Removed, func(c *Counters) int64 { return c.PullsRejectedRemoved }},
		{lifecycle.Starting, func(c *Counters) int64 { return c.PullsRejectedNotReady }},
	} {
		g := newRig(Config{})
		src := g.life.Add(lifecycle.Starting) // worker 3, which changes status only as sim would
		g.k.AddWorker(src)
		g.k.Store(0, src, stores(chain(1, 4)))
		if c.st != lifecycle.Starting {
			g.life.Set(src, c.st)
		}
		if res := g.k.Stage(0, 1, 1, path(chain(1, 4)), 4, 0, Hint{Source: src, Blocks: all}); res != engine.StageProceed {
			t.Errorf("%v: %v", c.st, res)
		}
		if c.counter(&g.k.C) != 1 || g.k.C.PinsAcquired != 0 || g.r().pulls[1].Outcome != Rejected {
			t.Errorf("%v: counters %+v", c.st, g.k.C)
		}
	}
	g := newRig(Config{})
	g.k.Store(0, 1, stores(chain(1, 4)))
	if res := g.k.Stage(0, 1, 1, path(chain(1, 4)), 4, 0, Hint{Source: 0, Blocks: all}); res != engine.StageProceed || g.k.C.HintsNothingToFetch != 1 || len(g.r().pulls) != 0 {
		t.Errorf("nothing to fetch: %v %+v", res, g.k.C)
	}
	if res := g.k.Stage(0, 2, 2, path(chain(1, 4)), 4, 0, Hint{Source: 0, Blocks: all}); res != engine.StageProceed || g.k.C.PullsRejectedMissing != 1 {
		t.Errorf("missing: %v %+v", res, g.k.C)
	}
}

// TestMoveWithTargetHoldingSome: the target holds blocks 1-2 in G2, the
// source 1-4. Staging a move invalidates the source's 1-2 at once, pulls
// 3-4 (1 MB: lands at 2 ms), then removes the source's 3-4: four blocks
// removed, none left at the source, all four readable at the target.
func TestMoveWithTargetHoldingSome(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 4)))
	g.k.Store(0, 1, stores(chain(1, 2)))
	if res := g.k.Stage(0, 1, 1, path(chain(1, 4)), 4, 0, Hint{Source: 0, Move: true, Blocks: all}); res != engine.StageWait {
		t.Fatalf("stage: %v", res)
	}
	if g.k.C.MoveRemovedBlocks != 2 || g.r().visible["0/1"] {
		t.Errorf("at staging: removed %d, block 1 still visible at the source", g.k.C.MoveRemovedBlocks)
	}
	g.run()
	wantPull(t, g.r().pulls[1], Success, ms, 2*ms, 2)
	if g.k.C.MoveRemovedBlocks != 4 || g.k.Pool(0).Used() != 0 || g.k.Pool(1).Prefix(path(chain(1, 4)), 0, 4) != 4 {
		t.Errorf("removed %d, source used %d, target prefix %d", g.k.C.MoveRemovedBlocks, g.k.Pool(0).Used(), g.k.Pool(1).Prefix(path(chain(1, 4)), 0, 4))
	}
	g.check(t)
}

// TestMoveLost: max_inflight_pulls 1; worker 2 is busy with a 2 MB pull
// until 3 ms, so a move to it staged at 0 is parked. A parked pull's target
// deadline runs from its first staging: 0 + abandon 8 ms. Staged again at
// 7 ms it starts with 1 ms left: its source deadline is 7 + 1 (latency) +
// min(4, 1) = 9 ms, its first byte at 8 ms, and its 0.5 MB lands at 8.5
// ms: after the target gave up at 8 ms (its end_ns; the write's end is 8.5
// ms). The source saw a successful write
// and removed its copy; the target dropped the data: the block is lost.
func TestMoveLost(t *testing.T) {
	g := newRig(Config{MaxInflightPulls: 1})
	g.k.Store(0, 0, stores(chain(1, 30)))
	g.stageHeld(0, 2, 0, chain(1, 28), 24, Hint{Source: 0, Blocks: all}) // blocks 25-28
	g.stage(0, 2, 1, chain(1, 1), Hint{Source: 0, Move: true, Blocks: all})
	g.stage(7*ms, 2, 1, chain(1, 1), Hint{Source: 0, Move: true, Blocks: all})
	g.run()
	wantPull(t, g.r().pulls[1], Expired, 8*ms, 8*ms, 0)
	if we := g.r().pulls[1].WriteEndNs; we != 8500*des.Microsecond {
		t.Errorf("write ended at %v, want 8.5ms", we)
	}
	if g.r().ended[1] != "8ms 0" || g.k.C.MoveLostBlocks != 1 || g.k.Pool(0).Ready(at(chain(1, 1), 0)) || g.k.Pool(2).Has(at(chain(1, 1), 0)) {
		t.Errorf("ended %q, lost %d; source has block 1: %v; target has it: %v",
			g.r().ended[1], g.k.C.MoveLostBlocks, g.k.Pool(0).Ready(at(chain(1, 1), 0)), g.k.Pool(2).Has(at(chain(1, 1), 0)))
	}
	g.check(t)
}

// TestRemoveSource (rule: a lost source is noticed at the target's
// deadline): the source of a 10-block copy (5 MB, first byte 1 ms, landing
// at 6 ms) is removed at 2 ms. Its write stops at once (write_end_ns 2
// ms), but a source that is gone sends no notice: the target waits for a
// write_done that never comes, holding its 10 reserved slots (seen at 3.5
// ms), and fails at its own deadline, 0 + 4 ms: failed, end_ns 4 ms. With
// kvcr.loss_notice 500µs the target learns it at 2.5 ms instead. (The old
// rule told the target one latency after the removal, at 3 ms.)
func TestRemoveSource(t *testing.T) {
	for _, tc := range []struct {
		notice, end des.Time
		slots       int
	}{{0, 4 * ms, 10}, {500 * des.Microsecond, 2500 * des.Microsecond, 0}} {
		g := newRig(Config{LossNotice: tc.notice})
		g.k.Store(0, 0, stores(chain(1, 10)))
		g.stage(0, 1, 1, chain(1, 10), Hint{Source: 0, Blocks: all})
		g.q.Schedule(2*ms, des.PhaseLifecycle, 0, removeAt{g, 0}, 0)
		slots := -1
		g.q.Schedule(3500*des.Microsecond, des.PhaseSample, 0, probe(func(des.Time) { slots = g.k.Pool(1).Used() }), 0)
		g.run()
		wantPull(t, g.r().pulls[1], Failed, ms, tc.end, 0)
		if g.r().ended[1] != fmt.Sprintf("%v 0", tc.end) || slots != tc.slots || g.k.Pool(1).Used() != 0 || g.r().pulls[1].WriteEndNs != 2*ms {
			t.Errorf("loss notice %v: ended %q, target slots %d at 3.5 ms and %d at the end, write ended %v",
				tc.notice, g.r().ended[1], slots, g.k.Pool(1).Used(), g.r().pulls[1].WriteEndNs)
		}
		if !slices.Contains(g.r().idle, 1) {
			t.Error("target never idle")
		}
		g.check(t)
	}
}

// removeAt removes worker w as sim does: its status first, then KVCR's
// part.
type removeAt struct {
	g *rig
	w int32
}

func (r removeAt) Fire(now des.Time, _, _ uint64) {
	r.g.life.Set(r.w, lifecycle.Removed)
	r.g.k.RemoveWorker(now, r.w)
}

// TestCheckEndFindsLivePull: a pull still in flight at the end is a
// violation naming the pull and its request, and so are its pins.
func TestCheckEndFindsLivePull(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 4)))
	g.k.Stage(0, 1, 7, path(chain(1, 4)), 4, 0, Hint{Source: 0, Blocks: all})
	vs := g.k.CheckEnd()
	if len(vs) < 2 || vs[0].Invariant != InvPullsEnd || !strings.Contains(vs[0].Err.Error(), "pull 0 (request 7,") ||
		vs[1].Invariant != InvPinsReleased {
		t.Errorf("violations %+v", vs)
	}
}

// TestCheckEndServedNotReadable: a load of blocks 1-4 for request 5 from
// worker 0's G2, which holds none of them (the worker never asks for that:
// it loads only the blocks HostPrefix found), serves blocks that are not
// readable; CheckEnd reports it, naming the worker and the request, and
// nothing else.
func TestCheckEndServedNotReadable(t *testing.T) {
	g := newRig(Config{})
	if !g.k.Load(0, 0, 5, path(chain(1, 4)), 0, 4) {
		t.Fatal("an instant load did not land at once")
	}
	vs := g.k.CheckEnd()
	if len(vs) != 1 || vs[0].Invariant != InvServedReadable || !strings.Contains(vs[0].Err.Error(), "worker 0 served block") ||
		!strings.Contains(vs[0].Err.Error(), "to load for request 5 while not readable") {
		t.Errorf("violations %+v", vs)
	}
}

// TestMoveAllCached (rule: a move invalidates the destination hits at the
// source, also when every block is a hit). Worker 1 holds blocks 1-4 in
// G2, the source worker 0 holds them too. Staging a move of 1-4 finds
// nothing missing: no pull, and worker 0 removes its four copies (the old
// all-cached path returned before invalidating them). When worker 1 holds
// the blocks in G1 instead, they are no part of the fetch: the source
// keeps its copies.
func TestMoveAllCached(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 4)))
	g.k.Store(0, 1, stores(chain(1, 4)))
	if res := g.k.Stage(0, 1, 1, path(chain(1, 4)), 4, 0, Hint{Source: 0, Move: true, Blocks: all}); res != engine.StageProceed {
		t.Fatalf("stage: %v", res)
	}
	if g.k.C.HintsNothingToFetch != 1 || g.k.C.MoveRemovedBlocks != 4 || g.k.Pool(0).Used() != 0 ||
		g.r().visible["0/1"] || len(g.r().pulls) != 0 {
		t.Errorf("counters %+v; source used %d; block 1 visible at the source %v", g.k.C, g.k.Pool(0).Used(), g.r().visible["0/1"])
	}
	g.check(t)

	g = newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 4)))
	g.k.Store(0, 1, stores(chain(1, 4)))
	if res := g.k.Stage(0, 1, 1, path(chain(1, 4)), 4, 4, Hint{Source: 0, Move: true, Blocks: all}); res != engine.StageProceed ||
		g.k.C.MoveRemovedBlocks != 0 || g.k.Pool(0).Used() != 4 {
		t.Errorf("G1 holds all: %v, removed %d, source used %d", res, g.k.C.MoveRemovedBlocks, g.k.Pool(0).Used())
	}
}

// probe is an event that runs a function, to look at the rig mid-run.
type probe func(des.Time)

func (p probe) Fire(now des.Time, _, _ uint64) { p(now) }

// TestMoveRemovalPublishedWhenRemoved (rule: the router hears of a moved
// block when it is removed, not when it is marked). Timeouts 100 and 200
// ms. Worker 0 holds blocks
// 1-6. A copy of 1-6 (3 MB) to worker 2 and a move of 1-2 (1 MB) to worker
// 1 start at 0 and share the egress from 1 ms: the move lands at 3 ms, the
// copy, alone for its last 2 MB, at 5 ms. At 3 ms the source marks blocks
// 1-2 pending: absent to readers, but the copy still pins them, so they
// are not removed and the router still sees them (at 4 ms). They go, and
// the router hears it, when the copy's pins drop at 5 ms.
func TestMoveRemovalPublishedWhenRemoved(t *testing.T) {
	g := newRig(Config{OperationTimeout: 100 * ms, AbandonTimeout: 200 * ms})
	g.k.Store(0, 0, stores(chain(1, 6)))
	g.stage(0, 2, 1, chain(1, 6), Hint{Source: 0, Blocks: all})
	g.stage(0, 1, 2, chain(1, 2), Hint{Source: 0, Move: true, Blocks: all})
	var readable, visible bool
	g.q.Schedule(4*ms, des.PhaseSample, 0, probe(func(des.Time) {
		readable, visible = g.k.Pool(0).Ready(at(chain(1, 2), 0)), g.r().visible["0/1"]
	}), 0)
	g.run()
	wantPull(t, g.r().pulls[2], Success, ms, 3*ms, 2)
	wantPull(t, g.r().pulls[1], Success, ms, 5*ms, 6)
	if readable || !visible {
		t.Errorf("at 4 ms block 1 readable at the source %v (want false), visible to the router %v (want true)", readable, visible)
	}
	if g.r().visible["0/1"] || g.k.C.MoveRemovedBlocks != 2 || g.k.Pool(0).Used() != 4 {
		t.Errorf("at the end: visible %v, removed %d, source used %d", g.r().visible["0/1"], g.k.C.MoveRemovedBlocks, g.k.Pool(0).Used())
	}
	g.check(t)
}

// TestSourceFailureReachesTargetLater (rule: a failure the source detects
// reaches the target one latency later). A move of 20 blocks (10 MB) staged
// at 0: target deadline 0 + 8 ms (abandon), source deadline 1 (receipt) +
// min(4, 8) = 5 ms. The transfer needs 10 ms from its first byte at 1 ms:
// at 5 ms the source gives up (the source keeps its blocks); the target
// hears it at 6 ms: failed, end_ns 6 ms. The write cannot be recalled: it
// runs to its last byte at 11 ms, holding the source's pins and the
// target's slots until then, and lands nothing.
func TestSourceFailureReachesTargetLater(t *testing.T) {
	g := newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 20)))
	g.stage(0, 1, 1, chain(1, 20), Hint{Source: 0, Move: true, Blocks: all})
	g.run()
	wantPull(t, g.r().pulls[1], Failed, ms, 6*ms, 0)
	if g.r().ended[1] != "6ms 0" || g.r().pulls[1].WriteEndNs != 11*ms || g.k.Pool(0).Used() != 20 || g.k.Pool(1).Used() != 0 || g.k.C.MoveRemovedBlocks != 0 {
		t.Errorf("target answered %q; source used %d, target used %d, removed %d", g.r().ended[1],
			g.k.Pool(0).Used(), g.k.Pool(1).Used(), g.k.C.MoveRemovedBlocks)
	}
	g.check(t)
}

// TestRefreshAfterLateLanding (rule: the source refreshes its blocks after
// every completed write, whether or not the target still waited).
// Operation timeout 2 ms. Worker 0's G2 of 4 blocks holds 1-4, block 1 the
// least recently used. A copy of 1-2 (1 MB) staged at 0 lands at 2 ms
// (first byte 1 ms), at its target's deadline: too late to count
// (expired), but the write succeeded, so blocks 1 and 2 become the most
// recently used. A store of block 9 at 3 ms then evicts block 3, not 1.
// (The old rule refreshed only when the target accepted, and block 1 went.)
func TestRefreshAfterLateLanding(t *testing.T) {
	g := newRig(Config{G2Capacity: 4, OperationTimeout: 2 * ms, AbandonTimeout: 4 * ms})
	c := chain(1, 4)
	g.k.Store(0, 0, stores(c))
	g.stage(0, 1, 1, chain(1, 2), Hint{Source: 0, Blocks: all})
	g.q.Schedule(3*ms, des.PhaseArrival, 0, probe(func(now des.Time) { g.k.Store(now, 0, stores(chain(9, 1))) }), 0)
	g.run()
	wantPull(t, g.r().pulls[1], Expired, ms, 2*ms, 0)
	if !g.k.Pool(0).Ready(at(c, 0)) || g.k.Pool(0).Ready(at(c, 2)) {
		t.Errorf("block 1 kept %v (want true), block 3 kept %v (want false)",
			g.k.Pool(0).Ready(at(c, 0)), g.k.Pool(0).Ready(at(c, 2)))
	}
	g.check(t)
}

// TestSourceRefreshInChainOrder (rule: a completed write refreshes the
// source's blocks as one cohort in chain order, the chain's first block
// least recent). Worker 0's G2 of 4 blocks holds the chain 4000, 3000,
// 2000, 1000 (hashes descending along the chain), 4000 the least recently
// used. A copy of the first two blocks (1 MB) staged at 0 lands at 2 ms
// (first byte 1 ms): the source refreshes 4000 then 3000, so the LRU list
// is 2000 1000 4000 3000. A store of three new blocks at 3 ms evicts the
// three least recent and keeps 3000. The old rule, ascending hash order,
// refreshed 3000 then 4000 and kept 4000.
func TestSourceRefreshInChainOrder(t *testing.T) {
	g := newRig(Config{G2Capacity: 4})
	c := []uint64{4000, 3000, 2000, 1000}
	g.k.Store(0, 0, stores(c))
	g.stage(0, 1, 1, c[:2], Hint{Source: 0, Blocks: all})
	g.q.Schedule(3*ms, des.PhaseArrival, 0, probe(func(now des.Time) { g.k.Store(now, 0, stores(chain(5000, 3))) }), 0)
	g.run()
	wantPull(t, g.r().pulls[1], Success, ms, 2*ms, 2)
	var kept []uint64
	for i, h := range c {
		if g.k.Pool(0).Ready(at(c, i)) {
			kept = append(kept, h)
		}
	}
	if !slices.Equal(kept, []uint64{3000}) {
		t.Errorf("source kept %v, want [3000]", kept)
	}
	g.check(t)
}

// TestPendingRemovalAtTargetFailsRead (rule: a target block pending
// removal is a failed read; the fetch stops there, does not wait and does
// not ask the source for it). The source, worker 0, holds blocks 1-6. The
// target, worker 1, holds block 3, moved away by a move it served and
// still pinned by another reader: pending removal. A request for 1-6 staged
// at 0: blocks 1-2 are missing and the source has them, block 3 stops the
// walk. The pull sends 1-2 (1 MB: first byte 1 ms, lands 2 ms) and is
// partial, 6 requested, 2 landed; nothing parks. With block 1 pending
// instead, the walk stops at once: nothing to send, rejected at staging,
// and the request goes on at 0. (The old rule parked both until the
// removal finished.)
func TestPendingRemovalAtTargetFailsRead(t *testing.T) {
	c := chain(1, 6)
	for _, tc := range []struct {
		pending int // the target's block pending removal
		res     engine.Staging
		out     Outcome
		end     des.Time
		landed  int
	}{
		{2, engine.StageWait, Partial, 2 * ms, 2},
		{0, engine.StageProceed, Rejected, 0, 0},
	} {
		g := newRig(Config{})
		g.k.Store(0, 0, stores(c))
		b := runOf(at(c, tc.pending))
		g.k.Store(0, 1, []block.Run{b})
		g.k.Pool(1).pin(b)
		g.k.Pool(1).markPending(b, nil)
		res := g.stage(0, 1, 1, c, Hint{Source: 0, Blocks: all})
		g.run()
		first := des.Time(-1)
		if tc.landed > 0 {
			first = ms
		}
		p := g.r().pulls[1]
		wantPull(t, p, tc.out, first, tc.end, tc.landed)
		if *res != tc.res || p.Requested != 6 || g.k.C.PullsParked != 0 {
			t.Errorf("block %d pending: staging %v, requested %d, parked %d; want %v, 6, 0",
				tc.pending+1, *res, p.Requested, g.k.C.PullsParked, tc.res)
		}
		g.k.Pool(1).unpin(b, false, nil) // the other reader lets go: the block goes
		g.check(t)
	}
}

// TestDescriptorAndSessionCosts (rules: posting descriptors overlaps the
// bytes, so a source's egress serves at the slower of its bandwidth and its
// descriptor rate; the first transfer of a (source, target) pair waits
// once for the session's setup). Blocks of 0.5 MB, 4 descriptors a block
// at 250 µs each: the source posts one block a ms, 0.5 GB/s, below its 1
// GB/s bandwidth. Session setup 5 ms; timeouts 100 and 200 ms.
//   - A (2 blocks, 1 MB, to worker 1) staged at 0 reaches the source at 1
//     ms; the pair's session is set up at 1 + 5 = 6 ms: first byte 6 ms.
//   - B (2 blocks, to worker 1) staged at 2 ms reaches the source at 3 ms
//     and waits for the same session: first byte 6 ms. A and B share the
//     0.5 GB/s, 0.25 GB/s each: both land at 6 + 4 = 10 ms.
//   - C (2 blocks, to worker 2) staged at 20 ms: a new pair, set up from
//     21 to 26 ms; alone at 0.5 GB/s it lands at 28 ms.
//
// With both costs zero A lands at 1 + 1 = 2 ms (1 MB at 1 GB/s).
func TestDescriptorAndSessionCosts(t *testing.T) {
	g := newRig(Config{DescriptorCost: 250 * des.Microsecond, DescriptorsPerBlock: 4, SessionSetup: 5 * ms,
		OperationTimeout: 100 * ms, AbandonTimeout: 200 * ms})
	g.k.Store(0, 0, stores(chain(1, 10)))
	h := Hint{Source: 0, Blocks: all}
	g.stage(0, 1, 1, chain(1, 2), h)
	g.stageHeld(2*ms, 1, 2, chain(1, 4), 2, h) // blocks 3-4
	g.stage(20*ms, 2, 3, chain(1, 2), h)
	g.run()
	wantPull(t, g.r().pulls[1], Success, 6*ms, 10*ms, 2)
	wantPull(t, g.r().pulls[2], Success, 6*ms, 10*ms, 2)
	wantPull(t, g.r().pulls[3], Success, 26*ms, 28*ms, 2)
	g.check(t)

	g = newRig(Config{})
	g.k.Store(0, 0, stores(chain(1, 10)))
	g.stage(0, 1, 1, chain(1, 2), h)
	g.run()
	wantPull(t, g.r().pulls[1], Success, ms, 2*ms, 2)
}

// TestIllegalTransitionsPanic: an event a pull's state does not allow
// panics with a TransitionError naming the pull, its state and the event,
// and the invariant it breaks, InvTransitions.
func TestIllegalTransitionsPanic(t *testing.T) {
	g := newRig(Config{})
	for _, c := range []struct {
		state pullState
		event string
		fire  func(*Pull)
	}{
		{parked, "first byte", func(p *Pull) { g.k.firstByte(0, p) }},
		{requested, "transfer landed", func(p *Pull) { g.k.landed(0, p) }},
		{parked, "source deadline", func(p *Pull) { g.k.sourceDeadline(0, p) }},
		{discarding, "first byte", func(p *Pull) { g.k.firstByte(0, p) }},
		{flowing, "failure notice", func(p *Pull) { g.k.notice(0, p) }},
		{abandonedFlowing, "target deadline", func(p *Pull) { g.k.targetDeadline(0, p) }},
		{done, "target removed", func(p *Pull) { g.k.targetRemoved(0, p) }},
		{requested, "park", func(p *Pull) { g.k.park(p) }},
		{awaitingNotice, "failure notice", func(p *Pull) { g.k.notice(0, p) }},
		{awaitingNotice, "first byte", func(p *Pull) { g.k.firstByte(0, p) }},
		{flowing, "write done", func(p *Pull) { g.k.writeDone(0, p) }},
	} {
		p := &Pull{ID: 7, state: c.state, targetDeadline: des.MaxTime}
		func() {
			defer func() {
				te, ok := recover().(TransitionError)
				if !ok || te.Pull != 7 || te.State != c.state.String() || te.Event != c.event || te.Invariant() != InvTransitions {
					t.Errorf("%s while %s: recovered %+v", c.event, c.state, te)
				}
			}()
			c.fire(p)
		}()
	}
}
