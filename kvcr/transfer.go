package kvcr

import (
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

type firstByteEvent KVCR

// Fire puts a pull's transfer on the network one latency after staging.
func (f *firstByteEvent) Fire(now des.Time, _, id uint64) {
	k := (*KVCR)(f)
	if p := k.live[int64(id)]; p != nil {
		k.firstByte(now, p)
	}
}

// endTransfer closes a write that delivered its last byte to a source that
// had not given up: the source saw it succeed, so its pins go with a
// refresh, whether or not the target still waited, and a move's source
// removes the hinted blocks it sent. accepted says the target takes the
// blocks (its reserved slots turn ready); otherwise it drops them, and the
// moved blocks are lost.
func (k *KVCR) endTransfer(now des.Time, p *Pull, accepted bool) {
	moved := k.writeSucceeded(now, p)
	if !accepted {
		k.C.MoveLostBlocks += int64(moved) // gone at the source, not kept at the target
		k.releaseTarget(p)
		return
	}
	k.accept(p)
}

// writeSucceeded ends the source's part of a write it saw succeed: its pins
// go with a refresh and a move's source removes the hinted blocks it sent.
// It returns how many of those were ready there: the blocks the target
// alone now holds, or nobody if it drops them.
func (k *KVCR) writeSucceeded(now des.Time, p *Pull) int {
	k.writeLanded(now, p, true)
	sn := k.nodes[p.Source]
	moved := 0
	left := p.moves // the runs' first blocks that were moved
	for _, r := range p.runs {
		if left == 0 {
			break
		}
		r.Hi = min(r.Hi, r.Lo+int32(left))
		left -= r.Len()
		moved += k.markMoved(sn, r)
	}
	k.reportRemoved(sn)
	return moved
}

// accept lands a write's blocks at its target: its reserved slots turn
// ready, its hits are let go and its inflight slot is free.
func (k *KVCR) accept(p *Pull) {
	tn := k.nodes[p.Target]
	for _, r := range p.runs {
		tn.pool.makeReady(r)
	}
	k.emitRuns(tn.id, p.runs, true)
	p.Landed = block.Blocks(p.runs)
	k.C.BlocksPulled += int64(p.Landed)
	k.C.BytesPulled += p.Bytes
	k.unpinHits(tn, p)
	tn.inflight--
}

// writeLanded ends the source's part of a write that delivered its last
// byte. seen says the source had not given up and saw the write succeed:
// its pins go with a refresh; after it gave up they go without, and the
// write counts as cancelled to it (a move removes nothing).
func (k *KVCR) writeLanded(now des.Time, p *Pull, seen bool) {
	p.WriteEndNs = now
	sn := k.nodes[p.Source]
	sn.sent += p.Bytes
	k.unpinSource(sn, p, seen)
	k.releaseSource(sn, p)
}

// stopWrite ends the source's part of a pull whose write never started
// (the source gave up, or its source or target was removed, before the
// first byte) or stops before its last byte (its source or target is
// removed): the bytes so far are lost, the source's pins go without
// refresh.
func (k *KVCR) stopWrite(now des.Time, p *Pull) {
	k.net.cancel(now, &p.t)
	if p.FirstByteNs >= 0 {
		p.WriteEndNs = now
	}
	sn := k.nodes[p.Source]
	k.unpinSource(sn, p, false)
	k.releaseSource(sn, p)
}

// releaseTarget ends the target's part of a pull that will land nothing:
// its reserved slots are freed (of a pull given up, those no store took
// over) and its hits let go (a removed target's pool is gone already),
// and its inflight slot is free.
func (k *KVCR) releaseTarget(p *Pull) {
	tn := k.nodes[p.Target]
	slots := p.runs
	if p.given {
		slots = p.slots
		tn.given = slices.DeleteFunc(tn.given, func(q *Pull) bool { return q == p })
	}
	if k.status(tn) != lifecycle.Removed {
		for _, r := range slots {
			tn.pool.drop(r)
		}
		k.unpinHits(tn, p)
	}
	tn.inflight--
}

// giveUp: p's target answered without the write's blocks while its slots
// stay reserved, for the write may still run (or start). The write will
// land nothing there, so its slots are discarded: unreadable still, but a
// store of their blocks takes them over (takenOver) instead of skipping
// them, and the write's end frees only those left.
func (k *KVCR) giveUp(p *Pull) {
	tn := k.nodes[p.Target]
	p.given = true
	p.slots = append(p.slots[:0], p.runs...)
	for _, r := range p.slots {
		tn.pool.discard(r)
	}
	tn.given = append(tn.given, p)
}

// takenOver takes the discarded blocks stores just took over at n from the
// given-up pulls that reserved them (a block is discarded for one pull at
// a time), so that their writes' ends leave them alone.
func (k *KVCR) takenOver(n *node) {
	for _, t := range n.pool.taken {
		for _, p := range n.given {
			p.slots = cut(p.slots, t)
		}
	}
	n.pool.taken = n.pool.taken[:0]
}

// cut removes t's blocks from runs, keeping the rest in order.
func cut(runs []block.Run, t block.Run) []block.Run {
	var out []block.Run
	for i, x := range runs {
		if x.Seg != t.Seg || x.Hi <= t.Lo || t.Hi <= x.Lo {
			if out != nil {
				out = append(out, x)
			}
			continue
		}
		if out == nil {
			out = append(make([]block.Run, 0, len(runs)+1), runs[:i]...)
		}
		if x.Lo < t.Lo {
			out = append(out, block.Run{Seg: x.Seg, Lo: x.Lo, Hi: t.Lo})
		}
		if t.Hi < x.Hi {
			out = append(out, block.Run{Seg: x.Seg, Lo: t.Hi, Hi: x.Hi})
		}
	}
	if out == nil {
		return runs
	}
	return out
}

// unpinSource drops the pull's pins at the source; with refresh their
// recency is refreshed as one cohort, in chain order: the chain's first
// block least recent, its last most recent (p.runs are in chain order). A
// block a move left pending goes with its last pin.
func (k *KVCR) unpinSource(sn *node, p *Pull, refresh bool) {
	k.C.PinsReleased += int64(block.Blocks(p.runs))
	if k.status(sn) == lifecycle.Removed {
		return // the pins went with the worker's pool
	}
	for _, r := range p.runs {
		k.unpin(sn, r, refresh)
	}
	k.reportRemoved(sn)
}

// unpinHits releases the target's hold on its destination hits.
func (k *KVCR) unpinHits(tn *node, p *Pull) {
	for _, r := range p.hits {
		k.unpin(tn, r, false)
	}
	k.reportRemoved(tn)
}
