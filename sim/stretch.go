package sim

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/scenarios"
)

// The decode fast-forward. A worker whose next passes are quiet (see
// engine.Worker.Stretch) goes through them as one stretch: its drive scan
// starts the first pass and schedules one pass-done event, cancellable, at
// the end of the last. Between them the stretch stands for a pass end
// (PhasePass, keyed by the worker) and a drive scan starting the next pass
// (PhaseDrive) at each boundary; as long as nothing acts on the worker,
// these change nothing anyone else sees but the blocks the decoding
// requests cross into: the sampler's other counts stay the same, G2
// receives no store. A crossing is taken as the drive scan starting its
// pass would take it, at the scan's place in the event order (the pass's
// start, PhaseDrive, keyed by the worker), or later but before any event
// that looks at what it changes, which cannot tell the difference:
//
//   - by default crossings wait on a queue of their own (deferred), one
//     pending a stretch, and the events that look (an arrival, which
//     routes and collects the chains the crossings dropped, a sample, a
//     lifecycle event) first take every crossing ordered before the place
//     the event order has reached (look), and settling a worker takes its
//     own. The events between, the workers' passes and drive scans and
//     KVCR's transfers and deadlines, read no other worker's G1, nor the
//     router's view (but for routing a retiring worker's requests, of which
//     it has none: checkSeen holds it), nor the chains' references, and
//     what they write commutes with what crossings write: the router's view
//     is a set of facts a worker, and the chains collect their dropped
//     segments in id order whatever order they were dropped in. Under
//     --check, the events that look and routing verify that they took the
//     crossings (checkLooked, checkSeen);
//   - with a planner, whose meter integrates the blocks in use at each
//     crossing, router.event_delay, which stamps each change with its
//     instant, or orders, whose walks read their target's G1, each
//     crossing is an event of the run's queue (cross), so the router hears
//     of the blocks it evicts, and the planner counts them, at the instant
//     passes one by one would.
//
// Whatever acts on the worker first settles the stretch (settle): an
// enqueue, a G2 load or pull ending, its removal. Each pass end rescans
// parked pulls (parked.go), which changes nothing but at an idle worker
// with a parked pull and at a parked order: a drive scan that leaves its
// worker so settles every stretch (settleAll), and an order, which parks
// in no drive scan, settles them after the event that parked it; no
// stretch starts while either is there. A pull parked at a busy worker
// lets them be: a rescan leaves that worker alone. A drive
// scan is never run inline during a stretch, where the queue's next event
// need not be the next one passes one by one would have.

// canStretch reports whether n's pass just started may become a stretch:
// the fast-forward is on, no stored blocks wait for its end to go to G2,
// and the pass ends it would stand for rescan no parked pull that could
// change: no order is parked and no idle worker has a parked pull.
func (c *Cluster) canStretch(n *node) bool {
	return !c.opt.PassByPass && len(n.stored) == 0 && (c.kv == nil || c.kv.ParkedOrders() == 0 && !c.idleParked())
}

// settle ends n's stretch, if any, at the current event, as passes one by
// one would have it: the boundaries ordered before the place the event
// order has reached (des.Queue.Reached: the current event's, by time,
// phase and key, unless one fired before it at this instant comes later)
// are applied, and the crossings deferred up to there taken; the worker is
// then busy with the pass in progress, its end an ordinary pass-done
// event, or idle between a pass end at this instant and the drive scan
// that starts the next.
func (c *Cluster) settle(n *node) {
	if n.ff == nil {
		return
	}
	c.noteSettle(n)
	c.q.Cancel(n.ff)
	n.ff = nil
	now, id := c.q.Now(), uint64(n.id)
	if end, busy := c.endStretch(n, now, c.q.Passed(des.PhasePass, id), c.q.Passed(des.PhaseDrive, id)); busy {
		c.q.Schedule(end, des.PhasePass, id, (*passDone)(c), n.downs)
		return
	}
	n.drive = true
	c.q.Schedule(now, des.PhaseDrive, id, (*drive)(c), 0)
}

// endStretch ends n's stretch, whose end event is no longer pending, at
// now (engine.Worker.Settle, ended and started as there): the crossings
// deferred up to there are taken first, the pending one dropped.
func (c *Cluster) endStretch(n *node, now des.Time, ended, started bool) (des.Time, bool) {
	c.stretches--
	c.dropCross(n)
	if c.deferred != nil {
		n.w.CrossTo(now, started)
	}
	return n.w.Settle(now, ended, started)
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
// parks in no drive scan (which settles them when it leaves its worker idle
// with a parked pull), and each pass end a stretch stands for would retry
// it.
func (c *Cluster) settleForOrders() {
	if c.stretches > 0 && c.kv != nil && c.kv.ParkedOrders() > 0 {
		c.settleAll()
	}
}

// deferCrossings reports whether a run's crossings wait for an event that
// looks: no planner meters them, no router.event_delay stamps them, no
// order walks a G1, and passes go by stretches at all.
func deferCrossings(sc *scenarios.Scenario, opt Options) bool {
	return !opt.PassByPass && !opt.crossEvents && !sc.HasPlanner() && !sc.Orders() && sc.Router.EventDelay == 0
}

// crossings is the queue the stretches' crossings wait on.
func (c *Cluster) crossings() *des.Queue {
	if c.deferred != nil {
		return c.deferred
	}
	return &c.q
}

// look takes every deferred crossing ordered before the place the event
// order has reached (des.Queue.Reached): the first step of every event of a
// phase that looks (looks) at a worker's G1, the router's view of it or
// the chains.
func (c *Cluster) look() {
	for c.unseen() {
		c.deferred.Step()
	}
}

// unseen reports whether a deferred crossing ordered before the place the
// event order has reached is left untaken.
func (c *Cluster) unseen() bool { return c.deferred != nil && c.deferred.Before(c.q.Reached()) }

// looks reports whether events of phase ph look at what crossings change:
// lifecycle events, arrivals and samples. The others, transfers, pass ends,
// deadlines and drive scans, read none of it: no other worker's G1, not
// the router's view (a pass end may retire an idle draining worker, whose
// requests, none, are routed again: checkSeen holds it), not the chains'
// references (what they write, the router's facts of other workers and
// references, commutes with what crossings write).
func looks(ph des.Phase) bool {
	return ph == des.PhaseLifecycle || ph == des.PhaseArrival || ph == des.PhaseSample
}

// checkLooked verifies, after an event of a phase that looks, that no
// deferred crossing ordered before the place reached is left: its handler
// called look. The loop calls it under --check.
func (c *Cluster) checkLooked() {
	if ph := c.q.Phase(); looks(ph) && c.unseen() {
		c.unseenError(fmt.Sprintf("a %s event", ph))
	}
}

// checkSeen is checkLooked for routing, wherever it is called from.
func (c *Cluster) checkSeen() {
	if c.opt.Check && c.unseen() {
		c.unseenError("routing")
	}
}

// unseenError fails the run: what read what a crossing left untaken
// changes.
func (c *Cluster) unseenError(what string) {
	if c.err == nil {
		c.err = &InvariantError{Invariant: invCrossingsSeen, At: c.q.Now(),
			Err: fmt.Errorf("%s came after a crossing it did not take", what)}
	}
}

type cross Cluster

// dropCross cancels n's pending crossing, if any: the caller takes those
// before the place reached (CrossTo), and Settle drops the rest with the
// stretch. A cancelled handle may still sit in its queue, so it is dropped;
// a fired one serves the next stretch.
func (c *Cluster) dropCross(n *node) {
	if n.cross != nil && c.crossings().Cancel(n.cross) {
		n.cross = nil
	}
}

// scheduleCross schedules n's stretch's next crossing, if any.
func (c *Cluster) scheduleCross(n *node) {
	t, ok := n.w.NextCross()
	if !ok {
		return
	}
	n.cross = c.crossings().ScheduleAgain(n.cross, t, des.PhaseDrive, uint64(n.id), (*cross)(c), 0)
}

// Fire has a worker in a stretch take the blocks its requests cross into:
// as an event of the run's queue, those of the pass it starts; deferred,
// those of every pass started before the place the run's order has reached
// (des.Queue.Reached) at the event that looks. It then schedules the next
// crossing, on the same handle.
func (e *cross) Fire(_ des.Time, key, _ uint64) {
	c := (*Cluster)(e)
	n := c.workers[key]
	started := c.deferred == nil || c.q.Passed(des.PhaseDrive, key) // as an event, at its own place
	// It takes at least the crossing it was scheduled for: as an event, its
	// pass starts now; deferred, look steps it only once its pass started.
	n.w.CrossTo(c.q.Now(), started)
	c.meter(n)
	c.check(n)
	c.scheduleCross(n)
}
