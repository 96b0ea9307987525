package sim

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
)

// fate is where the plan of an event's orders put one G2 block of a
// source: planned (sent by one of its orders, or more), or left out for a
// reason.
type fate uint8

// The fates. notReady is no block of the ledger (the source does not hold
// it ready: counted apart, as filling or pending, or not held); unplaced is
// a ready block the plan has not reached yet.
const (
	notReady            fate = iota
	unplaced                 // ready, not reached yet: none is left at the end
	planned                  // an order of the plan sends it
	leftAtDestination        // the destination held it: in its G1 prefix, or ready in its G2
	leftBehindGap            // past a block of its chain the source does not hold ready
	leftDestinationBusy      // past a block the destination was filling, or removing after a move
	leftDestinationFull      // past the destination's G2 capacity
	leftBudget               // the budget ran out before it was sent
	leftNoDestination        // no worker was ready to take it
	leftOtherSource          // its chain was dealt from another worker (a prewarm)
	fates
)

// ledger is where the plan of one scenario event's orders put each G2
// block their sources held at the event (docs/scale-in.md, "The ledger"):
// the blocks not readable, counted by their state, and every ready block
// given one fate. A block planned stays planned; a block left out keeps
// the first reason it met. Counting only: it changes nothing it reads.
type ledger struct {
	kv     *kvcr.KVCR
	chains *block.Chains
	plan   report.KVPlan
	blocks map[int32]map[int32]*segFates // by source, then segment: its ready blocks' fates
	count  [fates]int64                  // ready blocks by fate
	sends  []block.Run                   // scratch: the blocks the walk in hand sends
}

// segFates are the fates of a source's blocks of one segment, from
// offset lo on.
type segFates struct {
	lo int32
	of []fate
}

// newLedger returns the ledger of an event's orders.
func newLedger(kv *kvcr.KVCR, chains *block.Chains) *ledger {
	return &ledger{kv: kv, chains: chains, blocks: map[int32]map[int32]*segFates{}}
}

// source counts worker w's G2 as one of the event's sources: every block
// it holds, those still filling and pending removal apart, and its ready
// ones (runs) unplaced.
func (l *ledger) source(w int32, runs []block.Run) {
	pool := l.kv.Pool(w)
	fills, pends := pool.Unreadable()
	l.plan.BlocksHeld += int64(pool.Used())
	l.plan.LeftFilling += int64(fills)
	l.plan.LeftPending += int64(pends)
	span := map[int32]block.Run{} // by segment: from its first ready block to its last
	for _, r := range runs {
		if sp, ok := span[r.Seg]; ok {
			r.Lo, r.Hi = min(r.Lo, sp.Lo), max(r.Hi, sp.Hi)
		}
		span[r.Seg] = r
	}
	segs := make(map[int32]*segFates, len(span))
	for _, r := range runs {
		s := segs[r.Seg]
		if s == nil {
			sp := span[r.Seg]
			s = &segFates{lo: sp.Lo, of: make([]fate, sp.Len())}
			segs[r.Seg] = s
		}
		for off := r.Lo; off < r.Hi; off++ {
			s.of[off-s.lo] = unplaced
		}
		l.count[unplaced] += int64(r.Len())
	}
	l.blocks[w] = segs
}

// at is the fate of source w's block (seg, off); nil when it is no ready
// block of w.
func (l *ledger) at(w, seg, off int32) *fate {
	s := l.blocks[w][seg]
	if s == nil || off < s.lo || int(off-s.lo) >= len(s.of) || s.of[off-s.lo] == notReady {
		return nil
	}
	return &s.of[off-s.lo]
}

// walked records the walk of an order of source w over blocks [from,
// length) of the chain whose path is given, but for what it sends: the
// blocks before its start (the destination's G1 prefix) and its hits are
// at the destination; those past its end are left for the reason it
// stopped. It returns a copy of the blocks the walk sends, for sent,
// valid until the next walked.
func (l *ledger) walked(w int32, path []block.Piece, from, length int, walk kvcr.Walk) []block.Run {
	l.leave(w, path, walk.End, length, stopFate[walk.Stop])
	for _, r := range walk.Hits {
		for off := r.Lo; off < r.Hi; off++ {
			l.settle(w, r.Seg, off, leftAtDestination)
		}
	}
	l.leave(w, path, from, walk.Start, leftAtDestination)
	l.sends = append(l.sends[:0], walk.Sends...)
	return l.sends
}

// sent records the blocks sends of source w that an order's walk sends,
// the budget cutting its chain at block cut: planned before the cut, left
// to the budget from it.
func (l *ledger) sent(w int32, sends []block.Run, cut int) {
	for _, r := range sends {
		l.send(w, r, cut)
	}
}

// stopFate is the fate of the blocks past a walk's end, by why it stopped
// (none past a walk that reached its limit).
var stopFate = [...]fate{kvcr.StopNone: leftBehindGap, kvcr.StopSourceGap: leftBehindGap,
	kvcr.StopTargetFilling: leftDestinationBusy, kvcr.StopTargetPending: leftDestinationBusy,
	kvcr.StopTargetFull: leftDestinationFull}

// send records the blocks of run r an order sends: planned before chain
// block cut, left to the budget from it.
func (l *ledger) send(w int32, r block.Run, cut int) {
	pos := l.chains.Pos(r.Seg)
	for off := r.Lo; off < r.Hi; off++ {
		if pos+int(off) >= cut {
			l.settle(w, r.Seg, off, leftBudget)
			continue
		}
		switch f := l.at(w, r.Seg, off); {
		case f == nil: // sent, yet not ready at the source: counted nowhere, the check fails
		case *f == planned:
			l.plan.PlannedAgain++
		default:
			l.count[*f]--
			l.count[planned]++
			*f = planned
		}
	}
}

// settle gives source w's block (seg, off), when it is ready and unplaced,
// fate to.
func (l *ledger) settle(w, seg, off int32, to fate) {
	if f := l.at(w, seg, off); f != nil && *f == unplaced {
		*f = to
		l.count[unplaced]--
		l.count[to]++
	}
}

// leave gives source w's unplaced blocks among blocks [lo, hi) of the
// chain whose path is given fate to. It goes from the last back and stops
// at a block already placed: the plan places every block of a chain it
// reaches, so each block before that one, a block of the same chain, has
// its fate already.
func (l *ledger) leave(w int32, path []block.Piece, lo, hi int, to fate) {
	end := 0
	for _, pc := range path {
		end += int(pc.N)
	}
	for i := len(path) - 1; i >= 0 && hi > lo; i-- {
		pc := path[i]
		base := end - int(pc.N)
		end = base
		for k := min(hi, base+int(pc.N)) - 1; k >= max(lo, base); k-- {
			f := l.at(w, pc.Seg, int32(k-base))
			switch {
			case f == nil:
			case *f != unplaced:
				return
			default:
				*f = to
				l.count[unplaced]--
				l.count[to]++
			}
		}
	}
}

// skip leaves every chain of source w in ends unplanned, for fate to: the
// plan stopped before them.
func (l *ledger) skip(w int32, ends []chainEnd, to fate) {
	var path []block.Piece
	for _, e := range ends {
		var length int
		path, length = e.path(l.chains, path)
		l.leave(w, path, 0, length, to)
	}
}

// result is the plan's part of the event's ledger. A block still unplaced
// is counted in no fate, and the ledger's check finds it.
func (l *ledger) result() report.KVPlan {
	p := l.plan
	p.LeftAtDestination = l.count[leftAtDestination]
	p.LeftBehindGap = l.count[leftBehindGap]
	p.LeftDestinationBusy = l.count[leftDestinationBusy]
	p.LeftDestinationFull = l.count[leftDestinationFull]
	p.LeftBudget = l.count[leftBudget]
	p.LeftNoDestination = l.count[leftNoDestination]
	p.LeftOtherSource = l.count[leftOtherSource]
	return p
}
