package kvcr

import (
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// Order is a request-independent hint: a kv.move (Move) or a kv.prefetch
// asking Target to pull into its G2 blocks of the chain whose path is
// given, from Source: those of its first Blocks blocks from block From on,
// past the target's G1 prefix when that is longer (G1View: a
// connector is never asked for blocks its G1 holds). Its pull follows a
// request pull's staging, pin, transfer, deadline and settlement rules,
// with four differences: nothing waits for it (no request is staged
// behind it), a draining source still serves it (an evacuation is its own
// drain's work), Config.BackgroundTimeout, when set, replaces both its
// timeouts, and a source stages at most Config.BackgroundInflight orders
// at a time.
type Order struct {
	Source, Target int32
	Move           bool
	Path           []block.Piece
	From, Blocks   int
	Tag            int32 // the caller's, carried to the pull (Pull.Tag)
	// Planned is the blocks the caller's plan counted on it sending,
	// carried to the pull (Pull.Planned) and to the effect of an order
	// that ends with none; KVCR does not read it.
	Planned int
}

// kind is the order's pull kind.
func (o *Order) kind() Kind {
	if o.Move {
		return KindMove
	}
	return KindPrefetch
}

// Issue takes order o: staged now, or, when its source already stages
// BackgroundInflight orders, once an earlier one ends. KVCR keeps o.Path
// (the caller must not change it after) and a reference on its last
// segment until the order ends.
func (k *KVCR) Issue(now des.Time, o Order) {
	p := &Pull{Req: -1, Kind: o.kind(), Tag: o.Tag, Planned: o.Planned, Source: o.Source, Target: o.Target, Move: o.Move,
		path: o.Path, first: o.From, limit: o.Blocks, EndNs: -1}
	if len(p.path) > 0 {
		k.cfg.Chains.Acquire(p.path[len(p.path)-1].Seg)
	}
	k.C.kind(p.Kind).Issued++
	sn := k.nodes[o.Source]
	sn.unstarted++
	if k.cfg.BackgroundInflight > 0 && sn.staged >= k.cfg.BackgroundInflight {
		sn.waiting = append(sn.waiting, p)
		return
	}
	k.stageOrder(now, p)
}

// stageOrder stages an order's pull, the first time (p not yet opened) or
// again while it is parked: the walk over the chain's first limit blocks
// from the order's first, or past the target's G1 prefix when that is
// longer, every one a remote candidate.
func (k *KVCR) stageOrder(now des.Time, p *Pull) {
	tn, sn := k.nodes[p.Target], k.nodes[p.Source]
	first := !p.opened
	var src *Pool
	if k.serves(sn) || k.status(sn) == lifecycle.Draining {
		src = sn.pool
	}
	f := k.orderWalk(tn, src, p.path, p.first, p.limit)
	if src != nil && p.Move {
		k.invalidateHits(sn, f, p.limit)
	}
	if f.first == p.limit { // nothing missing
		if first {
			k.C.kind(p.Kind).NothingToFetch++
			k.emit(Effect{Kind: OrderNothingToFetch, Worker: p.Target, Pull: p})
			k.orderEnded(now, p)
			return
		}
		k.supersede(now, p)
		return
	}
	if first {
		k.newPull(now, p)
		sn.staged++
	}
	k.stageFound(now, p, tn, sn, f, p.limit)
}

// RetryOrders stages every parked order again, in pull id order: at each
// instant at which anything happened, as the targets' drive scans retry
// their requests' parked pulls.
func (k *KVCR) RetryOrders(now des.Time) {
	if len(k.parkedOrders) == 0 {
		return
	}
	k.retry = append(k.retry[:0], k.parkedOrders...) // a staging may unpark any of them
	for _, p := range k.retry {
		if p.state == parked {
			k.stageOrder(now, p)
		}
	}
	clear(k.retry)
}

// ParkedOrders is the number of parked orders.
func (k *KVCR) ParkedOrders() int { return len(k.parkedOrders) }

// orderEnded closes an order: its pull (if it was staged) is done. Its
// source may stage the next waiting order, in an event of its own at this
// instant (this may run inside another pull's transition), and is idle
// when this order, never started, was all that held it.
func (k *KVCR) orderEnded(now des.Time, p *Pull) {
	if len(p.path) > 0 {
		k.cfg.Chains.Drop(p.path[len(p.path)-1].Seg)
		p.path = nil
	}
	sn := k.nodes[p.Source]
	if p.opened {
		sn.staged--
	}
	if len(sn.waiting) > 0 {
		k.q.Schedule(now, des.PhaseTransfer, uint64(sn.id), (*nextOrder)(k), 0)
	}
	if !p.started { // a started one's source said so when its part ended
		if sn.unstarted--; sn.idle() {
			k.emit(Effect{Kind: WorkerIdle, Worker: sn.id})
		}
	}
}

type nextOrder KVCR

// Fire stages source key's waiting orders while it has room for them.
func (e *nextOrder) Fire(now des.Time, key, _ uint64) {
	k := (*KVCR)(e)
	sn := k.nodes[key]
	for len(sn.waiting) > 0 && (k.cfg.BackgroundInflight == 0 || sn.staged < k.cfg.BackgroundInflight) {
		p := sn.waiting[0]
		sn.waiting = sn.waiting[1:]
		k.stageOrder(now, p)
	}
}

// Draining tells KVCR that w drains: it takes no new order, so the orders
// waiting for their turn to send to it are dropped (counted, no pull).
// Those already staged, parked ones included, run on, as a request's pull
// staged before a drain does; the orders w is the source of (its
// evacuation) are unchanged.
func (k *KVCR) Draining(w int32) {
	k.drop(func(p *Pull) bool { return p.Target == w })
}

// drop ends, unstaged, the waiting orders that match: counted as dropped,
// with no pull. A source they alone held is idle.
func (k *KVCR) drop(match func(*Pull) bool) {
	for _, n := range k.nodes {
		if n == nil || len(n.waiting) == 0 {
			continue
		}
		n.waiting = slices.DeleteFunc(n.waiting, func(p *Pull) bool {
			if !match(p) {
				return false
			}
			k.C.kind(p.Kind).Dropped++
			k.emit(Effect{Kind: OrderDropped, Worker: p.Target, Pull: p})
			if len(p.path) > 0 {
				k.cfg.Chains.Drop(p.path[len(p.path)-1].Seg)
			}
			n.unstarted--
			return true
		})
		if n.idle() {
			k.emit(Effect{Kind: WorkerIdle, Worker: n.id})
		}
	}
}

// Recent appends to dst the n most recently used ready blocks of w's G2
// (all of them when it holds fewer), as runs, most recent first: each run
// the most recent part of one extent.
func (k *KVCR) Recent(dst []block.Run, w int32, n int) []block.Run {
	p := k.nodes[w].pool
	for e := p.lru.Tail(); e >= 0 && n > 0; e = p.ext[e].Prev() {
		x := p.ext[e].V
		m := min(int32(n), x.Hi-x.Lo)
		dst = append(dst, block.Run{Seg: x.Seg, Lo: x.Hi - m, Hi: x.Hi})
		n -= int(m)
	}
	return dst
}

// Sendable is how many blocks an order's pull staged now would send from
// source to target over blocks [from, limit) of the chain whose path is
// given (the walk of stageOrder, whatever the source's status).
func (k *KVCR) Sendable(target, source int32, path []block.Piece, from, limit int) int {
	return block.Blocks(k.orderWalk(k.nodes[target], k.nodes[source].pool, path, from, limit).runs)
}

// Stop is why an order's walk ended before its last block.
type Stop uint8

// The reasons.
const (
	StopNone          Stop = iota // it reached its last block
	StopTargetFilling             // at a block the target is still filling: it must settle first
	StopTargetPending             // at a block the target is removing after a move: a failed read
	StopTargetFull                // at the target's G2 capacity
	StopSourceGap                 // at a block the source does not hold ready (absent, filling or moved away)
)

// Walk is what an order's pull staged now would find over its chain's
// blocks: where it starts, the target's G2 hits it skips, the blocks it
// sends, where it stops and why. Its slices are KVCR's own, valid until
// the next walk or staging.
type Walk struct {
	Start int         // the first block walked: From, or past the target's G1 prefix when that is longer
	Hits  []block.Run // the blocks the target holds ready in G2, in chain order: not sent
	Sends []block.Run // the blocks it sends, in chain order
	End   int         // where it stopped: every block of [Start, End) is a hit or sent
	Stop  Stop        // why it stopped before its limit; StopNone at it
}

// WalkOrder is Sendable's walk from source to target over blocks [from,
// limit) of the chain whose path is given, in full.
func (k *KVCR) WalkOrder(target, source int32, path []block.Piece, from, limit int) Walk {
	tn := k.nodes[target]
	f := k.orderWalk(tn, k.nodes[source].pool, path, from, limit)
	w := Walk{Start: f.start, Hits: f.hits, Sends: f.runs, End: f.end}
	if f.end < limit {
		w.Stop = stopAt(tn, path, f)
	}
	return w
}

// stopAt is why walk f into tn stopped at f.end, its first block neither
// side could supply (walk's tests, in walk's order).
func stopAt(tn *node, path []block.Piece, f *fetch) Stop {
	seg, off := block.Locate(path, f.end)
	switch st, _ := tn.pool.at(seg, off); {
	case st == pending:
		return StopTargetPending
	case st.unlanded():
		return StopTargetFilling
	case block.Blocks(f.hits)+block.Blocks(f.runs) >= tn.pool.Capacity():
		return StopTargetFull
	}
	return StopSourceGap
}

// orderWalk is an order's walk at target tn from src (nil: the source may
// not be asked) into k.scratch: the chain's blocks [from, limit), past the
// target's G1 prefix when that is longer, every one a remote candidate.
func (k *KVCR) orderWalk(tn *node, src *Pool, path []block.Piece, from, limit int) *fetch {
	f := &k.scratch
	k.walk(f, tn, src, path, max(from, k.cfg.G1.G1Prefix(tn.id, path, limit)), limit, limit)
	return f
}

// FirstHeld is the first of the chain's first limit blocks that w's G2
// holds ready; limit when it holds none of them.
func (k *KVCR) FirstHeld(w int32, path []block.Piece, limit int) int {
	p := k.nodes[w].pool
	i := 0
	for _, pc := range path {
		for off := int32(0); off < pc.N && i < limit; {
			st, end := p.at(pc.Seg, off)
			if st == ready {
				return i
			}
			end = min(end, pc.N)
			i += int(end - off)
			off = end
		}
		if i >= limit {
			break
		}
	}
	return limit
}
