package sim

import "github.com/kvsim/kvsim/des"

// The decode fast-forward. A worker whose next passes are quiet (see
// engine.Worker.Stretch) goes through them as one stretch: its drive scan
// starts the first pass and schedules one pass-done event, cancellable, at
// the end of the last. Between them the stretch stands for a pass end
// (PhasePass, keyed by the worker) and a drive scan starting the next pass
// (PhaseDrive) at each boundary; as long as nothing acts on the worker,
// these change nothing anyone else sees but the blocks the decoding
// requests cross into: the sampler's other counts stay the same, G2
// receives no store. A crossing is taken by a cross event at the drive
// scan's place in the event order (the pass's start, PhaseDrive, keyed by
// the worker), one pending at a time, so the router hears of the blocks
// it evicts, the sampler and the planner count its blocks, at the instant
// passes one by one would.
//
// Whatever acts on the worker first settles the stretch (settle): an
// enqueue, a G2 load or pull ending, its removal. A pull parking anywhere
// settles every stretch (settleAll), since each pass end rescans parked
// pulls; no stretch starts while one is parked. An order, which parks in
// no drive scan, settles them after the event that parked it. A drive
// scan is never run inline during a stretch, where the queue's next event
// need not be the next one passes one by one would have.

// canStretch reports whether n's pass just started may become a stretch:
// the fast-forward is on, no stored blocks wait for its end to go to G2,
// and no pull is parked.
func (c *Cluster) canStretch(n *node) bool {
	return !c.opt.PassByPass && len(n.stored) == 0 && !c.parked()
}

// parked reports whether any pull is parked: a request's or an order's.
func (c *Cluster) parked() bool {
	return c.kv != nil && (len(c.kv.ParkedTargets()) > 0 || c.kv.ParkedOrders() > 0)
}

// settle ends n's stretch, if any, at the current event, as passes one by
// one would have it: the boundaries ordered before the current event by
// (time, phase, key) are applied; the worker is then busy with the pass in
// progress, its end an ordinary pass-done event, or idle between a pass end
// at this instant and the drive scan that starts the next.
func (c *Cluster) settle(n *node) {
	if n.ff == nil {
		return
	}
	c.q.Cancel(n.ff)
	n.ff = nil
	c.stretches--
	if n.cross != nil && c.q.Cancel(n.cross) {
		n.cross = nil // cancelled, it may still sit in the queue; a fired one serves the next stretch
	}
	now, ph, key, id := c.q.Now(), c.q.Phase(), c.q.Key(), uint64(n.id)
	ended := ph > des.PhasePass || ph == des.PhasePass && key > id
	started := ph > des.PhaseDrive || ph == des.PhaseDrive && key > id
	if end, busy := n.w.Settle(now, ended, started); busy {
		c.q.Schedule(end, des.PhasePass, id, (*passDone)(c), n.downs)
		return
	}
	n.drive = true
	c.q.Schedule(now, des.PhaseDrive, id, (*drive)(c), 0)
}

// settleAll settles every stretch, in worker order.
func (c *Cluster) settleAll() {
	for _, n := range c.workers {
		if c.stretches == 0 {
			return
		}
		c.settle(n)
	}
}

// settleForOrders settles every stretch when an order is parked: an order
// parks in no drive scan (which settles them when a request's pull parks),
// and each pass end a stretch stands for would retry it.
func (c *Cluster) settleForOrders() {
	if c.stretches > 0 && c.kv != nil && c.kv.ParkedOrders() > 0 {
		c.settleAll()
	}
}

type cross Cluster

// scheduleCross schedules n's stretch's next crossing, if any.
func (c *Cluster) scheduleCross(n *node) {
	t, ok := n.w.NextCross()
	if !ok {
		return
	}
	n.cross = c.q.ScheduleAgain(n.cross, t, des.PhaseDrive, uint64(n.id), (*cross)(c), 0)
}

// Fire has a worker in a stretch take the blocks its requests cross into
// at a pass start, then schedules its next crossing, on the same handle.
func (e *cross) Fire(_ des.Time, key, _ uint64) {
	c := (*Cluster)(e)
	n := c.workers[key]
	n.w.Cross()
	c.meter(n)
	c.check(n)
	c.scheduleCross(n)
}
