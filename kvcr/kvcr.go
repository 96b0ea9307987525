// Package kvcr models KVCR, the runtime that moves KV-cache blocks between
// a worker's GPU memory (G1), its host DRAM pool (G2) and peers' G2 pools
// over RDMA: per-worker G2 pools with LRU eviction and pins, D2H stores and
// H2D loads, hint staging, pulls with deadlines in copy or move mode, and
// links whose bandwidth is shared by processor sharing.
package kvcr

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// Config holds KVCR's knobs, resolved from the scenario.
type Config struct {
	BlockBytes    int64   // bytes of one KV block: block_size x kv_bytes_per_token
	G2Capacity    int     // blocks per worker; 0 disables G2
	D2HGbps       float64 // G1 to G2 store link; 0 = instant
	H2DGbps       float64 // G2 to G1 load link; 0 = instant
	Latency       des.Time
	BandwidthGbps float64 // each worker's RDMA egress
	// DescriptorCost is the time to post one transfer descriptor, and
	// DescriptorsPerBlock how many a block takes (0 counts as 1). Posting
	// overlaps the bytes: a worker's egress serves pull bytes at the
	// slower of its bandwidth and the descriptor rate (EgressGbps).
	DescriptorCost      des.Time
	DescriptorsPerBlock int
	// SessionSetup delays the first transfer of each (source, target)
	// pair once, from the source's receipt of the first request.
	SessionSetup des.Time
	IngressGbps  float64 // each worker's RDMA ingress; 0 = unbounded
	// FairNet shares the links max-min fairly over egress and ingress
	// (fairNet) even without IngressGbps: a run with a link fault on
	// ingress needs it, from its start, and so do its twins, so that each
	// is the same run up to its event (sim sets it).
	FairNet          bool
	OperationTimeout des.Time
	AbandonTimeout   des.Time
	// BackgroundTimeout replaces both timeouts for an order's pull (the
	// target's wait and the source's limit); 0: an order's pull has a
	// request pull's timeouts for its mode.
	BackgroundTimeout des.Time
	// BackgroundInflight is how many orders a source stages at a time; the
	// rest wait, in issue order, until one ends. 0: no limit.
	BackgroundInflight int
	MaxInflightPulls   int // started pulls a target may have; 0 = unlimited
	// LossNotice is how long after its source is removed a pull's target
	// learns it; 0: never, the target fails at its own deadline.
	LossNotice    des.Time
	Opportunistic bool // also fetch, as copies, blocks past the hint that the source holds
	// Chains is the run's chain store; each G2 pool holds a reference on
	// the segment of every block it holds. nil: none.
	Chains *block.Chains
	// Workers is the workers' lifecycle (sim owns it): the staging guard
	// reads it, and so do transfers and refreshes, which skip a removed
	// worker. Required.
	Workers lifecycle.View
	// G1 is the workers' G1 prefixes, which an order's staging reads.
	// Required when orders are issued.
	G1 G1View
}

// Hint is the router's kv.fetch hint for a request: the source, the mode,
// and how many leading blocks of the request's chain it lists (the prefix
// the router saw at the source when it routed the request).
type Hint struct {
	Source int32
	Move   bool
	Blocks int
}

// G1View answers the one question KVCR asks of the workers: how many
// leading blocks, at most limit, of the chain whose path is given worker
// w's G1 holds. An order's fetch starts past them, as a request's does
// past its G1 prefix (a connector is never asked for blocks its G1 holds).
type G1View interface {
	G1Prefix(w int32, path []block.Piece, limit int) int
}

// node is KVCR's part of one worker.
type node struct {
	id         int32
	pool       *Pool
	d2h, h2d   *Link
	pulls      int     // live pulls it is the target of, or the source of while their transfer runs
	serving    int     // of those, the ones it is the source of
	inflight   int     // pulls it is the target of whose transfer runs
	parked     int     // parked pulls it is the target of
	ops        []*op   // loads and stores in flight
	sent       int64   // bytes of its pulls whose transfers completed
	orderPulls int     // of pulls, those of orders
	staged     int     // orders it is the source of that are staged (live)
	unstarted  int     // orders it is the source of, waiting or staged, whose transfer has not started
	waiting    []*Pull // orders it is the source of, not yet staged, in issue order
	given      []*Pull // pulls into it given up while holding slots (giveUp), until they free them
	// agentDown: its whole process is down (a down fault with its G2
	// lost): it serves no pull until its engine restarts.
	agentDown bool
}

// KVCR is every worker's G2 pool, links and pulls.
type KVCR struct {
	cfg          Config
	q            *des.Queue
	fx           [2]effects // the batch being filled (fx[cur]) and the one last taken
	cur          int
	nodes        []*node
	net          network         // carries the pulls
	parked       map[int64]*Pull // by request
	live         map[int64]*Pull // by pull id: every pull not done
	parkedOrders []*Pull         // the parked orders' pulls, in id order
	retry        []*Pull         // scratch: the parked orders RetryOrders stages again
	nextPull     int64
	nextXfer     uint64
	sessions     map[uint64]des.Time // by (source, target): when the pair's session is set up; nil without SessionSetup
	broken       error               // the first block served while not readable
	spare        []*op               // finished loads and stores, for reuse
	removed      []block.Run         // scratch: blocks a move removed, reported in one batch
	scratch      fetch               // the fetch of the staging in progress
	errFaults    []*PullErrors       // the pull_errors faults in force, by key
	noticeFaults []*Notices          // the notices faults in force, by key
	linkFaults   []*linkFault        // the link faults in force, in the order they started
	// C holds the run's counters.
	C Counters
}

// New returns KVCR with no workers.
func New(cfg Config, q *des.Queue) *KVCR {
	k := &KVCR{cfg: cfg, q: q, parked: map[int64]*Pull{}, live: map[int64]*Pull{}}
	if cfg.IngressGbps > 0 || cfg.FairNet {
		k.net = newFairNet(q, cfg.EgressGbps(), cfg.IngressGbps, cfg.BandwidthGbps)
	} else {
		k.net = &egressLinks{q: q, gbps: cfg.EgressGbps()}
	}
	if cfg.SessionSetup > 0 {
		k.sessions = map[uint64]des.Time{}
	}
	return k
}

// EgressGbps is the rate at which a worker's egress serves pull bytes
// (GB/s, bytes a nanosecond).
// Posting a write's descriptors overlaps its bytes (NIXL's per-descriptor
// cost is flat from 4 KB to 256 KB), so the link serves at the slower of
// its bandwidth and one block every DescriptorsPerBlock x DescriptorCost,
// shared by its writes as its bandwidth is.
func (c Config) EgressGbps() float64 {
	if c.DescriptorCost <= 0 {
		return c.BandwidthGbps
	}
	perBlock := float64(max(c.DescriptorsPerBlock, 1)) * float64(c.DescriptorCost) // ns
	return min(c.BandwidthGbps, float64(c.BlockBytes)/perBlock)                    // bytes per ns = GB/s
}

// AddWorker adds worker id (ids are dense, from 0) with an empty G2.
func (k *KVCR) AddWorker(id int32) {
	n := &node{id: id, pool: NewPool(k.cfg.G2Capacity, k.cfg.Chains),
		d2h: NewLink(fmt.Sprintf("d2h/%d", id), k.cfg.D2HGbps, k.q),
		h2d: NewLink(fmt.Sprintf("h2d/%d", id), k.cfg.H2DGbps, k.q)}
	for int(id) >= len(k.nodes) {
		k.nodes = append(k.nodes, nil)
	}
	k.nodes[id] = n
}

// status is n's worker's place in its lifecycle.
func (k *KVCR) status(n *node) lifecycle.Status { return k.cfg.Workers.Of(n.id) }

// Pool is worker w's G2 pool.
func (k *KVCR) Pool(w int32) *Pool { return k.nodes[w].pool }

// ActivePulls is the number of live pulls w takes part in, and of orders
// it is the source of whose transfer has not started (waiting or parked).
func (k *KVCR) ActivePulls(w int32) int { return k.nodes[w].pulls + k.nodes[w].unstarted }

// RequestPulls is the number of live pulls of requests w takes part in:
// ActivePulls less everything of orders.
func (k *KVCR) RequestPulls(w int32) int { return k.nodes[w].pulls - k.nodes[w].orderPulls }

// Serving is the number of live pulls w is the source of, their write not
// yet over.
func (k *KVCR) Serving(w int32) int { return k.nodes[w].serving }

// Receiving is the number of live pulls w is the target of, parked ones
// included.
func (k *KVCR) Receiving(w int32) int { return k.nodes[w].pulls - k.nodes[w].serving }

// ParkedRequests is the number of parked request pulls.
func (k *KVCR) ParkedRequests() int { return len(k.parked) }

// ParkedAt reports whether w is the target of a parked request pull.
func (k *KVCR) ParkedAt(w int32) bool { return k.nodes[w].parked > 0 }

// LiveBefore is the live pulls first staged before t, in id order.
func (k *KVCR) LiveBefore(t des.Time) []*Pull {
	var ps []*Pull
	for _, p := range k.live {
		if p.StagedNs < t {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *Pull) int { return cmp.Compare(a.ID, b.ID) }) // map order never reaches the check
	return ps
}

// Moved is the bytes of completed pull transfers sent by w.
func (k *KVCR) Moved(w int32) int64 {
	return k.net.movedBy(w)
}

func (k *KVCR) xferID() uint64 {
	k.nextXfer++
	return k.nextXfer
}

// reportEvicted tells the router which blocks eviction took from n's pool.
func (k *KVCR) reportEvicted(n *node) {
	if ev := n.pool.evicted; len(ev) > 0 {
		k.C.G2Evictions += int64(block.Blocks(ev))
		k.emitRuns(n.id, ev, false)
		n.pool.evicted = ev[:0]
	}
}

// RemoveWorker is the abrupt loss of w, whose status is already Removed:
// its loads and stores stop, pulls to it end at once, the writes of pulls
// from it stop now and their targets learn it at their own deadlines (or
// LossNotice later), its G2 is gone (every block it held is removed), and
// the orders from or to it still waiting for their turn are dropped.
func (k *KVCR) RemoveWorker(now des.Time, w int32) {
	n := k.nodes[w]
	k.drop(func(p *Pull) bool { return p.Source == w || p.Target == w })
	for _, o := range n.ops {
		o.t.link.Cancel(now, &o.t)
	}
	n.ops = nil
	k.endPulls(now, w, true)
	gone := n.pool.visible(nil)
	n.pool.release()
	k.emitRuns(w, gone, false)
}

// endPulls ends, in id order, the live pulls w is the target of, as for a
// removed target, and with source those it serves, as for a removed
// source. It returns how many it ended as their target.
func (k *KVCR) endPulls(now des.Time, w int32, source bool) (targeted int) {
	for _, id := range slices.Sorted(maps.Keys(k.live)) { // map order must not reach the model
		switch p := k.live[id]; {
		case p.Target == w:
			k.targetRemoved(now, p)
			targeted++
		case p.Source == w && source:
			k.sourceRemoved(now, p)
		}
	}
	return targeted
}

// EngineDown takes worker w's engine down (a down fault, DESIGN.md section
// 12): the orders waiting to send to it are dropped, its G2 loads and
// stores in flight stop (a store's slots are freed, a load's pins
// released) and the pulls it is the target of end as for a removed
// target. With lost the whole process died: the pulls it serves fail as
// for a removed source, and its G2 is gone (reported removed) and starts
// again empty. It returns the pulls it ended as their target and the G2
// blocks lost.
func (k *KVCR) EngineDown(now des.Time, w int32, lost bool) (pulls, blocks int) {
	n := k.nodes[w]
	k.drop(func(p *Pull) bool { return p.Target == w || lost && p.Source == w })
	for _, o := range n.ops {
		o.t.link.Cancel(now, &o.t)
		for _, r := range o.runs {
			if o.store {
				n.pool.drop(r)
			} else {
				k.unpin(n, r, false)
			}
		}
		k.spare = append(k.spare, o)
	}
	n.ops = nil
	k.reportRemoved(n)
	pulls = k.endPulls(now, w, lost)
	if !lost {
		return pulls, 0
	}
	gone := n.pool.visible(nil)
	blocks = block.Blocks(gone)
	old := n.pool
	old.release()
	n.pool = NewPool(k.cfg.G2Capacity, k.cfg.Chains)
	n.pool.peak, n.pool.flows = old.peak, old.flows
	n.pool.flows.Lost += int64(old.used)
	n.agentDown = true
	k.emitRuns(w, gone, false)
	return pulls, blocks
}

// EngineUp restarts worker w's engine after EngineDown: its KVCR agent
// serves again (its G2 as it was, or empty when it was lost).
func (k *KVCR) EngineUp(w int32) { k.nodes[w].agentDown = false }

// serves reports whether sn may be a request pull's source: ready, or with
// its engine down or restarting and its KVCR agent up (DESIGN.md section
// 12).
func (k *KVCR) serves(sn *node) bool {
	st := k.status(sn)
	return st == lifecycle.Ready || st == lifecycle.Restarting || st == lifecycle.Down && !sn.agentDown
}

// served records the first time a block that is not readable (absent,
// filling, or removed by a move), b, is served: an invariant violation.
func (k *KVCR) served(now des.Time, n *node, b block.Ref, what string, id int64) {
	if k.broken == nil {
		k.broken = fmt.Errorf("at %v worker %d served block %x to %s %d while not readable", now, n.id, b.Hash, what, id)
	}
}

// The invariants KVCR checks, by name. docs/invariants.md states every
// invariant, with its test.
const (
	InvServedReadable = "blocks are served only when readable"
	InvPullsEnd       = "every pull ends exactly once"
	InvPinsReleased   = "every pin is released"
	InvLinkBytes      = "a link moves the bytes of its completed transfers"
	InvTransitions    = "pulls move only along the state machine's transitions"
	InvOrdersEnd      = "every order ends exactly once"
)

// Violation is a broken invariant: its name and what broke.
type Violation struct {
	Invariant string
	Err       error
}

// CheckEnd verifies KVCR at the end of a run and returns every violation:
// no block was served while not readable, no pull is live, every order
// ended once (unstaged, or by its pull's outcome) and, when all did, no
// worker still counts a pull or an order, every pin acquired was released
// and no G2 block stays pinned, and each worker's egress moved exactly the
// bytes of the pulls whose transfers completed from it.
func (k *KVCR) CheckEnd() []Violation {
	var vs []Violation
	add := func(inv string, err error) { vs = append(vs, Violation{inv, err}) }
	if k.broken != nil {
		add(InvServedReadable, k.broken)
	}
	if len(k.live) > 0 {
		ids := slices.Sorted(maps.Keys(k.live))
		p := k.live[ids[0]]
		add(InvPullsEnd, fmt.Errorf("%d pulls never ended, the first pull %d (request %d, %s)", len(ids), ids[0], p.Req, p.state))
	}
	ended := len(k.live) == 0 // every pull and, below, every order ended
	for _, kc := range []*KindCounters{&k.C.Move, &k.C.Prefetch} {
		if kc.Issued != kc.Ended() {
			add(InvOrdersEnd, fmt.Errorf("%d orders issued, %d ended", kc.Issued, kc.Ended()))
			ended = false
		}
	}
	if b, n := k.C.Move.Bytes+k.C.Prefetch.Bytes, k.C.Move.BlocksLanded+k.C.Prefetch.BlocksLanded; b > k.C.BytesPulled || n > k.C.BlocksPulled {
		add(InvLinkBytes, fmt.Errorf("orders landed %d blocks, %d bytes; every pull %d blocks, %d bytes", n, b, k.C.BlocksPulled, k.C.BytesPulled))
	}
	if k.C.PinsAcquired != k.C.PinsReleased {
		add(InvPinsReleased, fmt.Errorf("pins acquired %d, released %d", k.C.PinsAcquired, k.C.PinsReleased))
	}
	for _, n := range k.nodes {
		if ended && (n.pulls != 0 || n.serving != 0 || n.inflight != 0 || n.parked != 0 || n.orderPulls != 0 || len(n.given) != 0) {
			add(InvPullsEnd, fmt.Errorf("worker %d: every pull ended, yet it counts %d pulls (%d served, %d inflight, %d parked, %d of orders, %d given up holding slots)",
				n.id, n.pulls, n.serving, n.inflight, n.parked, n.orderPulls, len(n.given)))
		}
		if ended && (n.staged != 0 || n.unstarted != 0 || len(n.waiting) != 0) {
			add(InvOrdersEnd, fmt.Errorf("worker %d: every order ended, yet it counts %d orders staged, %d unstarted, %d waiting",
				n.id, n.staged, n.unstarted, len(n.waiting)))
		}
		if k.status(n) == lifecycle.Removed {
			continue
		}
		if p := n.pool.Pinned(); p != 0 {
			add(InvPinsReleased, fmt.Errorf("worker %d: %d G2 pins left", n.id, p))
		}
		if moved := k.Moved(n.id); moved != n.sent {
			add(InvLinkBytes, fmt.Errorf("worker %d: egress moved %d bytes, its completed pulls %d", n.id, moved, n.sent))
		}
	}
	return vs
}
