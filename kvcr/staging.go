package kvcr

import (
	"cmp"
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/lifecycle"
)

// fetch is what one staging attempt finds on the request's reusable chain
// past the target's G1 prefix: the fetch. It is walked block by block from
// the G1 prefix: a block the target holds ready in G2 is a destination hit
// (not sent); a block the target is still filling must settle first; a
// block whose removal is pending there is a failed read, where the walk
// stops; a missing block joins the transfer when the hint listed it (or
// the query is opportunistic) and the source holds it ready. The walk
// stops at the first block neither side can supply.
type fetch struct {
	start     int         // the walk's first block: the target's G1 prefix
	first     int         // first block the target lacks: the end of its G2 prefix
	end       int         // the walk's end: every block of [g1, end) is a hit or sent
	hits      []block.Run // the hits, in chain order
	hitIdx    []int       // the block index of each hit run's first block
	runs      []block.Run // the missing blocks the transfer carries, in chain order
	moves     int         // the first moves blocks of runs are the hint's
	unsettled bool        // the walk stopped at a target block still filling
}

// walk fills f for the fetch [g1, limit) of the chain whose path is given
// at target tn, with the hint's first hintEnd blocks as remote candidates
// at src (nil: the source may not be asked; only the target is walked, up
// to its first missing block). It goes by runs: a run of hits ends with
// its extent at the target, a run sent where the target's gap, the
// source's ready extent, the capacity or the hint ends.
func (k *KVCR) walk(f *fetch, tn *node, src *Pool, path []block.Piece, g1, limit, hintEnd int) {
	f.start, f.first, f.moves, f.unsettled = g1, -1, 0, false
	f.hits, f.hitIdx, f.runs = f.hits[:0], f.hitIdx[:0], f.runs[:0]
	capacity := tn.pool.Capacity()
	taken := 0                 // blocks hit or sent
	i, piece, base := g1, 0, 0 // base: the chain index of the piece's first block
	for i < limit {
		for piece < len(path) && base+int(path[piece].N) <= i {
			base += int(path[piece].N)
			piece++
		}
		seg, off, n := int32(-1), int32(0), int32(limit-i) // past the path: a block no pool holds
		if piece < len(path) {
			seg, off = path[piece].Seg, int32(i-base)
			n = min(n, path[piece].N-off)
		}
		st, end := tn.pool.at(seg, off)
		if st == ready {
			h := min(n, end-off)
			f.hits = append(f.hits, block.Run{Seg: seg, Lo: off, Hi: off + h})
			f.hitIdx = append(f.hitIdx, i)
			taken += int(h)
			i += int(h)
			continue
		}
		if f.first < 0 {
			f.first = i
		}
		if st == pending {
			break // a failed read: the runtime rejects it, and the source is not asked
		}
		if st.unlanded() {
			f.unsettled = true // a discarded block settles when its write ends, or a store takes it over
			break
		}
		if src == nil || taken >= capacity || (i >= hintEnd && !k.cfg.Opportunistic) {
			break
		}
		sst, send := src.at(seg, off)
		if sst != ready {
			break
		}
		m := min(n, end-off, send-off, int32(capacity-taken))
		if !k.cfg.Opportunistic {
			m = min(m, int32(hintEnd-i))
		}
		f.moves += max(0, min(i+int(m), hintEnd)-i)
		f.runs = append(f.runs, block.Run{Seg: seg, Lo: off, Hi: off + m})
		taken += int(m)
		i += int(m)
	}
	if f.first < 0 {
		f.first = i
	}
	f.end = i
}

// Stage is called when the target's scheduler reaches a hinted request with
// a free sequence slot and token budget, and again at each later scan while
// its pull is parked. path is the request's chain as a path in the chain
// store, limit how many of its blocks may be reused, g1 how many the
// target holds in G1. It returns what the target's scheduler does with the
// request: the answer engine.HostKV's Stage gives the worker.
func (k *KVCR) Stage(now des.Time, target int32, req int64, path []block.Piece, limit, g1 int, h Hint) engine.Staging {
	p := k.parked[req]
	tn, sn := k.nodes[target], k.nodes[h.Source]
	hintEnd := min(h.Blocks, limit)
	var src *Pool
	if k.serves(sn) {
		src = sn.pool
	}
	f := &k.scratch
	k.walk(f, tn, src, path, g1, limit, hintEnd)
	if src != nil && h.Move {
		k.invalidateHits(sn, f, hintEnd)
	}
	if f.first == limit { // nothing missing
		if p == nil {
			k.C.HintsNothingToFetch++
			return engine.StageProceed
		}
		k.supersede(now, p)
		return engine.StageProceed
	}
	if p == nil {
		p = k.newPull(now, &Pull{Req: req, Source: h.Source, Target: target, Move: h.Move, Tag: -1})
	}
	return k.stageFound(now, p, tn, sn, f, limit)
}

// stageFound ends a staging whose walk f found blocks missing at the
// target: the source guard (a draining source serves orders, its
// evacuation, but no request's pull), then a rejection when the source
// holds none of them, a park when blocks must settle first or the target
// has no room or inflight slot, or the transfer's start.
func (k *KVCR) stageFound(now des.Time, p *Pull, tn, sn *node, f *fetch, limit int) engine.Staging {
	p.from, p.Requested = f.first, limit-f.first
	switch st := k.status(sn); {
	case st == lifecycle.Draining && p.Kind == KindRequest:
		k.reject(now, p, RejectedDraining)
		return engine.StageProceed
	case st == lifecycle.Removed:
		k.reject(now, p, RejectedRemoved)
		return engine.StageProceed
	case st == lifecycle.Starting:
		k.reject(now, p, RejectedNotReady)
		return engine.StageProceed
	case st == lifecycle.Down && sn.agentDown: // the whole process died: as removed
		k.reject(now, p, RejectedRemoved)
		return engine.StageProceed
	case len(f.runs) == 0 && !f.unsettled:
		k.reject(now, p, RejectedMissing)
		return engine.StageProceed
	case f.unsettled || (k.cfg.MaxInflightPulls > 0 && tn.inflight >= k.cfg.MaxInflightPulls) ||
		!tn.pool.Room(block.Blocks(f.runs)+evictable(tn.pool, f.hits)):
		k.park(p)
		return engine.StageParked
	}
	p.whole = f.end == limit
	k.start(now, p, tn, sn, f, p.Move)
	return engine.StageWait
}

// evictable counts the blocks of rs that eviction could take.
func evictable(pool *Pool, rs []block.Run) int {
	n := 0
	for _, r := range rs {
		n += pool.unpinnedIn(r)
	}
	return n
}

// invalidateHits removes at a move's source the blocks of the hint that
// the target already holds in G2 (its destination hits): the target has
// them, so the source lets its copies go.
func (k *KVCR) invalidateHits(sn *node, f *fetch, hintEnd int) {
	for j, r := range f.hits {
		i := f.hitIdx[j]
		if i >= hintEnd {
			break
		}
		r.Hi = min(r.Hi, r.Lo+int32(hintEnd-i))
		k.markMoved(sn, r)
	}
	k.reportRemoved(sn)
}

// newPull opens pull p (its request or order, source, target and mode
// set) at its first staging: its target deadline runs from now.
func (k *KVCR) newPull(now des.Time, p *Pull) *Pull {
	p.ID, p.StagedNs, p.FirstByteNs, p.EndNs, p.WriteEndNs, p.opened = k.nextPull, now, -1, -1, -1, true
	k.nextPull++
	p.targetDeadline = des.AddSat(now, k.targetTimeout(p))
	k.live[p.ID] = p
	k.nodes[p.Target].pulls++
	if p.Kind != KindRequest {
		k.nodes[p.Target].orderPulls++
	}
	k.q.Schedule(p.targetDeadline, des.PhaseDeadline, uint64(p.ID), (*deadline)(k), evTargetDeadline)
	return p
}

// targetTimeout is how long p's target waits from its first staging: the
// operation timeout for a copy, the abandon timeout for a move, or, for an
// order, the background timeout when one is set.
func (k *KVCR) targetTimeout(p *Pull) des.Time {
	switch {
	case p.Kind != KindRequest && k.cfg.BackgroundTimeout > 0:
		return k.cfg.BackgroundTimeout
	case p.Move:
		return k.cfg.AbandonTimeout
	}
	return k.cfg.OperationTimeout
}

// sourceTimeout is the source's own limit on p from its receipt: the
// operation timeout, or, for an order, the background timeout when one is
// set.
func (k *KVCR) sourceTimeout(p *Pull) des.Time {
	if p.Kind != KindRequest && k.cfg.BackgroundTimeout > 0 {
		return k.cfg.BackgroundTimeout
	}
	return k.cfg.OperationTimeout
}

// supersede ends parked pull p, whose staging found nothing left to fetch:
// the blocks reached the target otherwise.
func (k *KVCR) supersede(now des.Time, p *Pull) {
	k.unpark(p)
	k.settle(p, Superseded)
	k.finish(now, p)
}

// reject ends a pull at staging: its source failed the guard or holds none
// of the missing blocks, why. Nothing is pinned; the request goes on.
func (k *KVCR) reject(now des.Time, p *Pull, why Rejection) {
	p.Rejection = why
	k.unpark(p)
	k.settle(p, Rejected)
	k.finish(now, p)
}

// park makes a pull wait, holding nothing, until a later scan stages it
// again.
func (k *KVCR) park(p *Pull) {
	switch p.state {
	case parked:
		return
	case staging:
	default:
		illegal(p, "park")
	}
	p.state = parked
	k.C.PullsParked++
	if p.Kind != KindRequest {
		k.parkedOrders = append(k.parkedOrders, p) // parked at its first staging, so in id order
		return
	}
	k.parked[p.Req] = p
	k.nodes[p.Target].parked++
}

// unpark takes a pull in staging off the parked list, if it is there.
func (k *KVCR) unpark(p *Pull) {
	switch p.state {
	case staging:
		return
	case parked:
	default:
		illegal(p, "unpark")
	}
	p.state = staging
	if p.Kind != KindRequest {
		i, _ := slices.BinarySearchFunc(k.parkedOrders, p.ID, func(q *Pull, id int64) int { return cmp.Compare(q.ID, id) })
		k.parkedOrders = slices.Delete(k.parkedOrders, i, i+1)
		return
	}
	delete(k.parked, p.Req)
	k.nodes[p.Target].parked--
}

// start begins a pull's transfer: pins on the source's blocks and on the
// target's hits, target slots reserved for the blocks sent (evicting as a
// store does), the first byte one latency later (or once the pair's
// session is set up), the source's deadline.
func (k *KVCR) start(now des.Time, p *Pull, tn, sn *node, f *fetch, move bool) {
	k.unpark(p)
	p.state = requested
	k.C.PullsStaged++
	p.runs = append(p.runs[:0], f.runs...)
	p.hits = append(p.hits[:0], f.hits...)
	if move {
		p.moves = f.moves
	}
	for _, r := range p.runs {
		if off := sn.pool.notReady(r); off >= 0 {
			k.served(now, sn, k.cfg.Chains.Ref(r.Seg, off), "pull", p.ID)
		}
		sn.pool.pin(r)
	}
	sent := block.Blocks(p.runs)
	k.C.PinsAcquired += int64(sent)
	for _, r := range p.hits {
		tn.pool.pin(r)
	}
	for _, r := range p.runs {
		tn.pool.fill(r)
	}
	k.reportEvicted(tn)
	tn.inflight++
	sn.pulls++
	sn.serving++
	p.started = true
	if p.Kind != KindRequest {
		sn.orderPulls++
		sn.unstarted--
	}
	// The row's Bytes waits for the first byte: a write that never starts
	// sends none.
	p.t = Transfer{ID: k.xferID(), Bytes: int64(sent) * k.cfg.BlockBytes, index: -1}
	receipt := des.AddSat(now, k.cfg.Latency)
	// The source's deadline runs from its receipt of the request for the
	// shorter of its own operation timeout and the time the target had
	// left when it sent the request.
	p.sourceDeadline = des.AddSat(receipt, min(k.sourceTimeout(p), p.targetDeadline-now))
	k.q.Schedule(k.sessionReady(p, receipt), des.PhaseTransfer, p.t.ID, (*firstByteEvent)(k), uint64(p.ID))
	k.q.Schedule(p.sourceDeadline, des.PhaseDeadline, uint64(p.ID), (*deadline)(k), evSourceDeadline)
}

// sessionReady is when p's write may start, its request having reached the
// source at receipt: then, or once the (source, target) pair's session is
// set up. The first request of a pair sets it up, SessionSetup from its
// receipt; later ones wait for that, if it is still under way.
func (k *KVCR) sessionReady(p *Pull, receipt des.Time) des.Time {
	if k.sessions == nil {
		return receipt
	}
	pair := uint64(uint32(p.Source))<<32 | uint64(uint32(p.Target))
	ready, ok := k.sessions[pair]
	if !ok {
		ready = des.AddSat(receipt, k.cfg.SessionSetup)
		k.sessions[pair] = ready
	}
	return max(receipt, ready)
}
