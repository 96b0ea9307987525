package kvcr

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/kvsim/kvsim/sim/des"
	"github.com/kvsim/kvsim/workload"
)

// Config holds KVCR's knobs, resolved from the scenario.
type Config struct {
	BlockBytes       int64   // bytes of one KV block: block_size x kv_bytes_per_token
	G2Capacity       int     // blocks per worker; 0 disables G2
	D2HGbps          float64 // G1 to G2 store link; 0 = instant
	H2DGbps          float64 // G2 to G1 load link; 0 = instant
	Latency          des.Time
	BandwidthGbps    float64 // each worker's RDMA egress
	IngressGbps      float64 // each worker's RDMA ingress; 0 = unbounded
	OperationTimeout des.Time
	AbandonTimeout   des.Time
	MaxInflightPulls int // started pulls a target may have; 0 = unlimited
}

// Status is a worker's lifecycle state, as the staging guard sees it.
type Status uint8

// The statuses.
const (
	Starting Status = iota // added, not ready yet
	Ready
	Draining
	Removed
)

// Outcome is how a pull ended.
type Outcome uint8

// The outcomes. Pending is a pull not ended yet.
const (
	Pending  Outcome = iota
	Success          // every missing prompt block landed
	Partial          // the pull landed a prefix of the missing blocks
	Failed           // source cancelled or removed: nothing landed
	Expired          // the target's deadline passed first
	Rejected         // refused at staging
)

var outcomeNames = [...]string{"pending", "success", "partial", "failed", "expired", "rejected"}

func (o Outcome) String() string { return outcomeNames[o] }

// Hint is the router's kv.fetch hint for a request.
type Hint struct {
	Source int32
	Move   bool
}

// StageResult tells the target's scheduler what to do with a hinted request.
type StageResult uint8

// The staging results.
const (
	Proceed StageResult = iota // no pull: admit the request now
	Wait                       // a pull is in flight: skip the request until PullEnded
	Parked                     // no room yet: skip it and stage again at the next scan
)

// Listener hears what KVCR does that the rest of the cluster must know.
type Listener interface {
	// Loaded: the H2D load for request req on worker w has landed in G1.
	Loaded(now des.Time, w int32, req int64)
	// PullEnded: request req on target w may be admitted. landed blocks,
	// from block index from, are readable in w's G2.
	PullEnded(now des.Time, w int32, req int64, from, landed int)
	// Inventory: blocks became readable (visible) in w's G2, or stopped
	// being. The slice is only valid during the call.
	Inventory(now des.Time, w int32, blocks []workload.Ref, visible bool)
	// PullDone: p has its final outcome and times.
	PullDone(p *Pull)
	// Idle: w no longer takes part in any pull.
	Idle(now des.Time, w int32)
}

// Pull is one peer pull, from staging (or its first parking) to its end.
// The exported fields are its pulls.parquet row.
type Pull struct {
	ID          int64
	Req         int64
	Source      int32
	Target      int32
	Move        bool
	Requested   int   // missing blocks at staging
	Landed      int   // blocks that landed in the target's G2
	Bytes       int64 // bytes of the transfer
	StagedNs    des.Time
	FirstByteNs des.Time // -1: none
	EndNs       des.Time // transfer end (completion or cancel), or the outcome time
	Outcome     Outcome

	from           int            // index of the first missing block
	blocks         []workload.Ref // the run the source sends
	srcSlots       []int32
	dstSlots       []int32 // target slots reserved, for the run's blocks the target had no slot for
	dstBlocks      []workload.Ref
	targetDeadline des.Time
	sourceDeadline des.Time
	t              Transfer
	started        bool // pins taken, slots reserved
	invalidated    bool // move: blocks the target held were invalidated at the source
}

// node is KVCR's part of one worker.
type node struct {
	id       int32
	status   Status
	pool     *Pool
	d2h, h2d *Link
	pulls    int   // live pulls it is the source (started) or target of
	inflight int   // started pulls it is the target of
	ops      []*op // loads and stores in flight
	sent     int64 // bytes of its pulls whose transfers completed
}

// op is a load or a store in flight on a worker's H2D or D2H link.
type op struct {
	t      Transfer
	n      *node
	store  bool
	req    int64
	slots  []int32
	blocks []workload.Ref // a store's blocks, reported when it lands
	at     int            // index in n.ops
	done   func(des.Time, *Transfer)
}

// KVCR is every worker's G2 pool, links and pulls.
type KVCR struct {
	cfg      Config
	q        *des.Queue
	l        Listener
	nodes    []*node
	net      network // carries the pulls
	parked   map[int64]*Pull
	live     map[int64]*Pull
	nextPull int64
	nextXfer uint64
	broken   error          // the first block served while not readable
	spare    []*op          // finished loads and stores, for reuse
	moved    []workload.Ref // scratch: blocks a move made absent
	order    []int          // scratch: pinned blocks in hash order
	// C holds the run's counters.
	C Counters
}

// New returns KVCR with no workers.
func New(cfg Config, q *des.Queue, l Listener) *KVCR {
	k := &KVCR{cfg: cfg, q: q, l: l, parked: map[int64]*Pull{}, live: map[int64]*Pull{}}
	if cfg.IngressGbps > 0 {
		k.net = newFairNet(q, cfg.BandwidthGbps, cfg.IngressGbps)
	} else {
		k.net = &egressLinks{q: q, gbps: cfg.BandwidthGbps}
	}
	return k
}

// AddWorker adds worker id (ids are dense, from 0) with an empty G2.
func (k *KVCR) AddWorker(id int32, st Status) {
	n := &node{id: id, status: st, pool: NewPool(k.cfg.G2Capacity),
		d2h: NewLink(fmt.Sprintf("d2h/%d", id), k.cfg.D2HGbps, k.q),
		h2d: NewLink(fmt.Sprintf("h2d/%d", id), k.cfg.H2DGbps, k.q)}
	for int(id) >= len(k.nodes) {
		k.nodes = append(k.nodes, nil)
	}
	k.nodes[id] = n
}

// SetStatus changes what the staging guard sees of w.
func (k *KVCR) SetStatus(w int32, st Status) { k.nodes[w].status = st }

// Pool is worker w's G2 pool.
func (k *KVCR) Pool(w int32) *Pool { return k.nodes[w].pool }

// ActivePulls is the number of live pulls w takes part in.
func (k *KVCR) ActivePulls(w int32) int { return k.nodes[w].pulls }

// Moved is the bytes of completed pull transfers sent by w.
func (k *KVCR) Moved(w int32) int64 {
	return k.net.movedBy(w)
}

func (k *KVCR) xferID() uint64 {
	k.nextXfer++
	return k.nextXfer
}

// reportEvicted tells the router which blocks eviction took from n's pool.
func (k *KVCR) reportEvicted(now des.Time, n *node) {
	if ev := n.pool.evicted; len(ev) > 0 {
		k.C.G2Evictions += int64(len(ev))
		k.l.Inventory(now, n.id, ev, false)
		n.pool.evicted = ev[:0]
	}
}

// Store writes the blocks a pass committed to w's G1 into its G2, as one
// D2H transfer; they become readable (and visible) when it completes.
// Blocks G2 already has are skipped; a block with no slot to take is
// dropped.
func (k *KVCR) Store(now des.Time, w int32, blocks []workload.Ref) {
	n := k.nodes[w]
	if n.pool.Capacity() == 0 {
		return
	}
	o := k.newOp(n, true, 0)
	for _, b := range blocks {
		if n.pool.Has(b) {
			continue
		}
		if !n.pool.Room(1) {
			k.C.G2StoresDropped++
			continue
		}
		o.slots = append(o.slots, n.pool.Fill(b))
		o.blocks = append(o.blocks, b)
	}
	k.reportEvicted(now, n)
	if len(o.slots) == 0 {
		k.spare = append(k.spare, o)
		return
	}
	k.startOp(now, o, n.d2h)
}

// newOp returns a load or store to fill, reusing a finished one.
func (k *KVCR) newOp(n *node, store bool, req int64) *op {
	var o *op
	if len(k.spare) > 0 {
		o = k.spare[len(k.spare)-1]
		k.spare = k.spare[:len(k.spare)-1]
		o.slots, o.blocks = o.slots[:0], o.blocks[:0]
	} else {
		o = &op{}
		o.done = func(now des.Time, _ *Transfer) { k.opDone(now, o) }
	}
	o.n, o.store, o.req = n, store, req
	return o
}

// HostPrefix counts the blocks of chain from index from on that w's G2
// holds readable, up to the first it does not.
func (k *KVCR) HostPrefix(w int32, chain []uint64, from int) int {
	return k.nodes[w].pool.Prefix(chain, from)
}

// Load copies blocks [from, from+count) of chain (readable in w's G2) to w's
// G1 for request req over the H2D link, pinning them meanwhile. It reports
// true when they landed at once (instant link); otherwise Loaded follows.
func (k *KVCR) Load(now des.Time, w int32, req int64, chain []uint64, from, count int) bool {
	n := k.nodes[w]
	o := k.newOp(n, false, req)
	for i := from; i < from+count; i++ {
		b := workload.RefOf(chain, i)
		s := n.pool.slot(b)
		k.mustServe(now, n, s, b, "load for request", req)
		n.pool.Pin(s)
		o.slots = append(o.slots, s)
	}
	k.C.G2HitsBlocks += int64(count)
	if n.h2d.Instant() {
		k.finishLoad(o)
		k.spare = append(k.spare, o)
		return true
	}
	k.startOp(now, o, n.h2d)
	return false
}

func (k *KVCR) startOp(now des.Time, o *op, l *Link) {
	o.t = Transfer{ID: k.xferID(), Bytes: int64(len(o.slots)) * k.cfg.BlockBytes}
	o.at = len(o.n.ops)
	o.n.ops = append(o.n.ops, o)
	l.Start(now, &o.t, o.done)
}

func (k *KVCR) opDone(now des.Time, o *op) {
	n := o.n
	last := n.ops[len(n.ops)-1]
	n.ops[o.at], last.at = last, o.at
	n.ops = n.ops[:len(n.ops)-1]
	if o.store {
		for _, s := range o.slots {
			n.pool.MakeReady(s)
		}
		k.C.G2Stores += int64(len(o.slots))
		k.l.Inventory(now, n.id, o.blocks, true)
		k.spare = append(k.spare, o)
		return
	}
	k.finishLoad(o)
	k.l.Loaded(now, n.id, o.req)
	k.spare = append(k.spare, o)
}

func (k *KVCR) finishLoad(o *op) {
	for _, s := range o.slots {
		o.n.pool.Unpin(s, true) // read: most recently used
	}
}

// Stage is called when the target's scheduler reaches a hinted request with
// a free sequence slot and token budget, and again at each later scan while
// its pull is parked. chain is the request's block chain, limit how many
// of its blocks may be reused, g1 how many the target holds in G1.
func (k *KVCR) Stage(now des.Time, target int32, req int64, chain []uint64, limit, g1 int, h Hint) StageResult {
	p := k.parked[req]
	wasParked := p != nil
	tn, sn := k.nodes[target], k.nodes[h.Source]
	held := g1 + tn.pool.Prefix(chain[:limit], g1)
	if held >= limit {
		k.C.HintsNothingToFetch++
		if p != nil { // parked earlier; the blocks arrived meanwhile
			delete(k.parked, req)
			p.from, p.Requested = held, 0
			k.end(now, p, Success)
			k.release(now, tn)
		}
		return Proceed
	}
	if p == nil {
		p = &Pull{ID: k.nextPull, Req: req, Source: h.Source, Target: target, Move: h.Move,
			StagedNs: now, FirstByteNs: -1, EndNs: -1}
		k.nextPull++
		timeout := k.cfg.OperationTimeout
		if h.Move {
			timeout = k.cfg.AbandonTimeout
		}
		p.targetDeadline = des.AddSat(now, timeout)
	}
	p.from, p.Requested = held, limit-held
	switch sn.status {
	case Draining:
		k.reject(now, p, tn, &k.C.PullsRejectedDraining)
		return Proceed
	case Removed:
		k.reject(now, p, tn, &k.C.PullsRejectedRemoved)
		return Proceed
	case Starting:
		k.reject(now, p, tn, &k.C.PullsRejectedNotReady)
		return Proceed
	}
	if h.Move && !p.invalidated {
		p.invalidated = true
		for i := range held {
			b := workload.RefOf(chain, i)
			if s := sn.pool.slot(b); s >= 0 {
				k.markMoved(sn, s, b)
			}
		}
		k.reportMoved(now, sn)
	}
	run := min(sn.pool.Prefix(chain[:limit], held), tn.pool.Capacity())
	if run == 0 {
		k.reject(now, p, tn, &k.C.PullsRejectedMissing)
		return Proceed
	}
	if (k.cfg.MaxInflightPulls > 0 && tn.inflight >= k.cfg.MaxInflightPulls) || !tn.pool.Room(slotsNeeded(tn.pool, chain, held, run)) {
		if !wasParked {
			k.parked[req] = p
			k.live[p.ID] = p
			k.C.PullsParked++
			tn.pulls++
			k.q.Schedule(p.targetDeadline, des.PhaseDeadline, uint64(p.ID), (*deadline)(k), targetDeadline)
		}
		return Parked
	}
	if wasParked {
		delete(k.parked, req)
	} else {
		k.live[p.ID] = p
		tn.pulls++
		k.q.Schedule(p.targetDeadline, des.PhaseDeadline, uint64(p.ID), (*deadline)(k), targetDeadline)
	}
	runBlocks := make([]workload.Ref, run)
	for i := range runBlocks {
		runBlocks[i] = workload.RefOf(chain, held+i)
	}
	k.begin(now, p, tn, sn, runBlocks)
	return Wait
}

// mustServe records the first time a block that is not readable (absent,
// filling, or removed by a move) is served: an invariant violation.
func (k *KVCR) mustServe(now des.Time, n *node, s int32, b workload.Ref, what string, id int64) {
	if (s < 0 || n.pool.slots[s].st != ready) && k.broken == nil {
		k.broken = fmt.Errorf("at %v worker %d served block %x to %s %d while not readable", now, n.id, b.Hash, what, id)
	}
}

// slotsNeeded is how many slots a pull of blocks [from, from+n) of chain
// may take in pool: one for each block it has no slot for, and one for
// each it holds evictable, which filling an earlier block of the run may
// evict before its turn comes.
func slotsNeeded(pool *Pool, chain []uint64, from, n int) int {
	count := 0
	for i := from; i < from+n; i++ {
		if s := pool.slot(workload.RefOf(chain, i)); s < 0 || pool.evictableSlot(s) {
			count++
		}
	}
	return count
}

// begin starts a pull: pins on the source's run, slots at the target, the
// first byte one latency later, the source's deadline.
func (k *KVCR) begin(now des.Time, p *Pull, tn, sn *node, run []workload.Ref) {
	k.C.PullsStaged++
	p.started = true
	p.blocks = run
	for _, b := range run {
		s := sn.pool.slot(b)
		k.mustServe(now, sn, s, b, "pull", p.ID)
		sn.pool.Pin(s)
		p.srcSlots = append(p.srcSlots, s)
	}
	k.C.PinsAcquired += int64(len(run))
	for _, b := range run {
		if !tn.pool.Has(b) { // else already arriving by a store or another pull
			p.dstSlots = append(p.dstSlots, tn.pool.Fill(b))
			p.dstBlocks = append(p.dstBlocks, b)
		}
	}
	k.reportEvicted(now, tn)
	tn.inflight++
	sn.pulls++
	p.Bytes = int64(len(run)) * k.cfg.BlockBytes
	p.t = Transfer{ID: k.xferID(), Bytes: p.Bytes, index: -1}
	receipt := des.AddSat(now, k.cfg.Latency)
	// The source's deadline runs from its receipt of the request for the
	// shorter of its own operation timeout and the time the target had
	// left when it sent the request.
	p.sourceDeadline = des.AddSat(receipt, min(k.cfg.OperationTimeout, p.targetDeadline-now))
	k.q.Schedule(receipt, des.PhaseTransfer, p.t.ID, (*firstByte)(k), uint64(p.ID))
	k.q.Schedule(p.sourceDeadline, des.PhaseDeadline, uint64(p.ID), (*deadline)(k), sourceDeadline)
}

func (k *KVCR) reject(now des.Time, p *Pull, tn *node, counter *int64) {
	*counter++
	if k.parked[p.Req] != nil {
		delete(k.parked, p.Req)
		k.release(now, tn)
	}
	k.end(now, p, Rejected)
}

// markMoved makes a source block absent to readers after a move; it goes
// when its last pin drops. reportMoved tells the router.
func (k *KVCR) markMoved(sn *node, s int32, b workload.Ref) {
	if sn.status == Removed || sn.pool.slots[s].st != ready {
		return
	}
	k.moved = append(k.moved, b)
	if sn.pool.MarkPending(s) {
		k.C.MoveRemovedBlocks++
	}
}

// reportMoved tells the router which blocks markMoved made absent.
func (k *KVCR) reportMoved(now des.Time, sn *node) {
	if len(k.moved) > 0 {
		k.l.Inventory(now, sn.id, k.moved, false)
		k.moved = k.moved[:0]
	}
}

type firstByte KVCR

// Fire puts a pull's transfer on the network one latency after staging.
func (f *firstByte) Fire(now des.Time, _, id uint64) {
	k := (*KVCR)(f)
	p := k.live[int64(id)]
	if p == nil || k.ended(p) {
		return // cancelled before its first byte
	}
	p.FirstByteNs = now
	done := func(now des.Time, _ *Transfer) { k.arrived(now, p) }
	k.net.start(now, &p.t, p.Source, p.Target, done)
}

// ended reports whether a started pull's transfer is over (cancelled).
func (k *KVCR) ended(p *Pull) bool { return p.EndNs >= 0 }

// arrived: the pull's last byte landed at the target.
func (k *KVCR) arrived(now des.Time, p *Pull) {
	p.EndNs = now
	tn, sn := k.nodes[p.Target], k.nodes[p.Source]
	sn.sent += p.Bytes
	landed := p.Outcome == Pending && now < p.targetDeadline
	k.unpinSource(sn, p, landed)
	if landed {
		for _, s := range p.dstSlots {
			tn.pool.MakeReady(s)
		}
		k.l.Inventory(now, tn.id, p.dstBlocks, true)
		p.Landed = len(p.blocks)
		k.C.BlocksPulled += int64(p.Landed)
		k.C.BytesPulled += p.Bytes
	} else {
		for _, s := range p.dstSlots {
			tn.pool.Drop(s)
		}
	}
	if p.Move { // the source saw a successful write and lets the blocks go
		for i, s := range p.srcSlots {
			if !landed && sn.pool.slots[s].st == ready {
				k.C.MoveLostBlocks++ // gone at the source, not kept at the target
			}
			k.markMoved(sn, s, p.blocks[i])
		}
		k.reportMoved(now, sn)
	}
	tn.inflight--
	switch {
	case !landed:
		k.settle(now, p, Expired)
	case p.Landed < p.Requested:
		k.settle(now, p, Partial)
	default:
		k.settle(now, p, Success)
	}
	k.finish(now, p)
}

// unpinSource drops the pull's pins at the source; after a landed pull
// their recency is refreshed, in ascending hash order.
func (k *KVCR) unpinSource(sn *node, p *Pull, refresh bool) {
	k.C.PinsReleased += int64(len(p.srcSlots))
	if sn.status == Removed {
		return // the pins went with the worker's pool
	}
	if !refresh {
		for _, s := range p.srcSlots {
			if sn.pool.Unpin(s, false) {
				k.C.MoveRemovedBlocks++
			}
		}
		return
	}
	// Refreshed in ascending hash order.
	k.order = k.order[:0]
	for i := range p.srcSlots {
		k.order = append(k.order, i)
	}
	slices.SortFunc(k.order, func(a, b int) int { return cmp.Compare(p.blocks[a].Hash, p.blocks[b].Hash) })
	for _, i := range k.order {
		if sn.pool.Unpin(p.srcSlots[i], true) {
			k.C.MoveRemovedBlocks++
		}
	}
}

// The deadline kinds, carried in the event's arg.
const (
	targetDeadline = iota
	sourceDeadline
	sourceGone // a removed source's targets learn it one latency later
)

type deadline KVCR

// Fire handles a pull's target deadline, source deadline or the news of its
// source's removal.
func (d *deadline) Fire(now des.Time, id, kind uint64) {
	k := (*KVCR)(d)
	p := k.live[int64(id)]
	if p == nil {
		return
	}
	tn := k.nodes[p.Target]
	switch kind {
	case targetDeadline:
		if p.Outcome != Pending {
			return
		}
		p.Outcome = Expired
		if k.parked[p.Req] == p {
			delete(k.parked, p.Req)
			k.end(now, p, Expired)
			k.release(now, tn)
		}
		k.l.PullEnded(now, tn.id, p.Req, p.from, 0)
	case sourceDeadline:
		if k.ended(p) {
			return
		}
		k.cancel(now, p)
		k.settle(now, p, Failed)
		k.finish(now, p)
	case sourceGone:
		k.settle(now, p, Failed)
		k.finish(now, p)
	}
}

// settle gives a pull's request its outcome, unless it already has one:
// the blocks landed (none unless Success or Partial) and the request goes
// on.
func (k *KVCR) settle(now des.Time, p *Pull, out Outcome) {
	if p.Outcome != Pending {
		return
	}
	p.Outcome = out
	landed := 0
	if out == Success || out == Partial {
		landed = p.Landed
	}
	k.l.PullEnded(now, p.Target, p.Req, p.from, landed)
}

// cancel stops a started pull's transfer: pins released without refresh,
// the target's slots freed.
func (k *KVCR) cancel(now des.Time, p *Pull) {
	k.net.cancel(now, &p.t)
	p.EndNs = now
	k.unpinSource(k.nodes[p.Source], p, false)
	tn := k.nodes[p.Target]
	if tn.status != Removed {
		for _, s := range p.dstSlots {
			tn.pool.Drop(s)
		}
	}
	tn.inflight--
}

// finish closes a started pull whose transfer and outcome are both settled.
func (k *KVCR) finish(now des.Time, p *Pull) {
	if p.Outcome == Pending || !k.ended(p) {
		return
	}
	k.end(now, p, p.Outcome)
	k.release(now, k.nodes[p.Source])
	k.release(now, k.nodes[p.Target])
}

// end records a pull's outcome and hands its row over.
func (k *KVCR) end(now des.Time, p *Pull, out Outcome) {
	p.Outcome = out
	if p.EndNs < 0 {
		p.EndNs = now
	}
	switch out {
	case Success:
		k.C.PullsSuccess++
	case Partial:
		k.C.PullsPartial++
	case Failed:
		k.C.PullsFailed++
	case Expired:
		k.C.PullsExpired++
	}
	delete(k.live, p.ID)
	k.l.PullDone(p)
}

// release drops one pull from w's count and says when it has none left.
func (k *KVCR) release(now des.Time, n *node) {
	n.pulls--
	if n.pulls == 0 {
		k.l.Idle(now, n.id)
	}
}

// RemoveWorker is the abrupt loss of w: its loads and stores stop, pulls to
// it fail at once, pulls from it stop now and their targets learn it one
// latency later, and its G2 is gone (every readable block turns invisible).
func (k *KVCR) RemoveWorker(now des.Time, w int32) {
	n := k.nodes[w]
	n.status = Removed
	for _, o := range n.ops {
		o.t.link.Cancel(now, &o.t)
	}
	n.ops = nil
	for _, id := range slices.Sorted(maps.Keys(k.live)) { // map order must not reach the model
		p := k.live[id]
		switch {
		case p.Target == w && !p.started:
			delete(k.parked, p.Req)
			k.end(now, p, Failed)
			k.release(now, n)
		case p.Target == w:
			if !k.ended(p) {
				k.cancel(now, p)
			}
			p.Outcome = Failed // even when it had expired: its target is gone
			k.finish(now, p)
		case p.Source == w && p.started && !k.ended(p):
			k.cancel(now, p)
			k.q.Schedule(des.AddSat(now, k.cfg.Latency), des.PhaseDeadline, uint64(p.ID), (*deadline)(k), sourceGone)
		}
	}
	var gone []workload.Ref
	for s, b := range n.pool.slots {
		if b.st == ready {
			gone = append(gone, n.pool.ref(int32(s)))
		}
	}
	k.l.Inventory(now, w, gone, false)
}

// The invariants KVCR checks, by name.
const (
	InvServedReadable = "blocks are served only when readable"
	InvPullsEnd       = "every pull ends exactly once"
	InvPinsReleased   = "every pin is released"
	InvLinkBytes      = "a link moves the bytes of its completed transfers"
)

// Violation is a broken invariant: its name and what broke.
type Violation struct {
	Invariant string
	Err       error
}

// CheckEnd verifies KVCR at the end of a run and returns every violation:
// no block was served while not readable, no pull is live, every pin
// acquired was released and no G2 block stays pinned, and each worker's
// egress moved exactly the bytes of the pulls whose transfers completed
// from it.
func (k *KVCR) CheckEnd() []Violation {
	var vs []Violation
	add := func(inv string, err error) { vs = append(vs, Violation{inv, err}) }
	if k.broken != nil {
		add(InvServedReadable, k.broken)
	}
	if len(k.live) > 0 {
		ids := slices.Sorted(maps.Keys(k.live))
		add(InvPullsEnd, fmt.Errorf("%d pulls never ended, the first pull %d (request %d)", len(ids), ids[0], k.live[ids[0]].Req))
	}
	if k.C.PinsAcquired != k.C.PinsReleased {
		add(InvPinsReleased, fmt.Errorf("pins acquired %d, released %d", k.C.PinsAcquired, k.C.PinsReleased))
	}
	for _, n := range k.nodes {
		if n.status == Removed {
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
