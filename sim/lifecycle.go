package sim

import (
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/sim/des"
)

// The lifecycle event kinds, carried in the event's arg beside the
// scenario event index (the key).
const (
	lifeScenario     = iota // the scenario's event itself
	lifeReady               // an added worker finished starting (arg: kind | worker<<8)
	lifeDrainTimeout        // a drained worker's drain_timeout passed
	lifeRetire              // a draining worker's last pull ended (arg: kind | worker<<8)
)

// scheduleLifecycle puts the scenario's events on the queue.
func (c *Cluster) scheduleLifecycle() {
	for i, ev := range c.sc.Events {
		c.q.Schedule(des.Time(ev.At), des.PhaseLifecycle, uint64(i), (*lifecycle)(c), lifeScenario)
	}
}

type lifecycle Cluster

// Fire applies a lifecycle event.
func (l *lifecycle) Fire(now des.Time, key, arg uint64) {
	c := (*Cluster)(l)
	kind, w := arg&0xff, int32(arg>>8)
	switch kind {
	case lifeReady:
		n := c.workers[w]
		if n.status == kvcr.Starting {
			c.ready(now, n)
		}
		return
	case lifeDrainTimeout:
		if n := c.workers[w]; n.status == kvcr.Draining {
			c.remove(now, n, c.sc.Events[key].OnRemove == "fail")
		}
		return
	case lifeRetire:
		c.maybeRetire(now, c.workers[w])
		return
	}
	ev := c.sc.Events[key]
	switch {
	case ev.Add > 0:
		for range ev.Add {
			if err := c.addWorker(now, ev.Startup == 0); err != nil {
				c.err = err
				return
			}
			if ev.Startup > 0 {
				id := uint64(len(c.workers) - 1)
				c.q.Schedule(des.AddSat(now, des.Time(ev.Startup)), des.PhaseLifecycle, key, l, lifeReady|id<<8)
			}
		}
	case ev.Drain != nil:
		for _, id := range ev.Drain {
			n := c.workers[id]
			c.drain(now, n)
			if ev.DrainTimeout > 0 {
				c.q.Schedule(des.AddSat(now, des.Time(ev.DrainTimeout)), des.PhaseLifecycle, key, l,
					lifeDrainTimeout|uint64(id)<<8)
			}
		}
		for _, id := range ev.Drain {
			c.maybeRetire(now, c.workers[id])
		}
	case ev.Remove != nil:
		var seqs []*engine.Seq // every removed worker goes before any request is routed again
		for _, id := range ev.Remove {
			seqs = append(seqs, c.takeOut(now, c.workers[id])...)
		}
		c.requeue(now, seqs, ev.OnRemove == "fail")
	}
}

// drain stops routing to a worker; its requests and the pulls staged from
// it finish, new staging from it is rejected.
func (c *Cluster) drain(now des.Time, n *node) {
	if n.status == kvcr.Removed || n.status == kvcr.Draining {
		return
	}
	n.status, n.drainNs = kvcr.Draining, now
	c.router.SetSchedulable(n.id, false)
	if c.kv != nil {
		c.kv.SetStatus(n.id, kvcr.Draining)
	}
}

// maybeRetire removes a draining worker that has no requests, no pass in
// progress and no pins or pulls.
func (c *Cluster) maybeRetire(now des.Time, n *node) {
	if n.status != kvcr.Draining || n.w.HasWork() || n.w.Busy() {
		return
	}
	if c.kv != nil && c.kv.ActivePulls(n.id) > 0 {
		return
	}
	c.remove(now, n, false)
}

// remove takes a worker out at once: its G1 and G2 are gone, its pulls fail
// and its requests are routed again (or fail).
func (c *Cluster) remove(now des.Time, n *node, fail bool) {
	c.requeue(now, c.takeOut(now, n), fail)
}

// takeOut removes a worker and returns the requests it held.
func (c *Cluster) takeOut(now des.Time, n *node) []*engine.Seq {
	if n.status == kvcr.Removed {
		return nil
	}
	n.status, n.removedNs = kvcr.Removed, now
	c.router.SetSchedulable(n.id, false)
	c.settle(n)
	seqs := n.w.Drop()
	if c.kv != nil {
		c.kv.RemoveWorker(now, n.id)
	}
	return seqs
}

// requeue routes the requests of removed workers again, in order, or fails
// them.
func (c *Cluster) requeue(now des.Time, seqs []*engine.Seq, fail bool) {
	for _, s := range seqs {
		r := c.active[s.Req.ID]
		c.router.Finished(r.route, s.FirstTokenAt >= 0)
		r.priorPreemptions += s.Preemptions
		r.priorComputed += s.ComputedPromptTokens
		r.seq = nil
		if fail {
			c.end(r, report.OutcomeFailed, now)
			continue
		}
		r.reroutes++
		c.counts.rerouted++
		if w, ok := c.route(now, r); ok {
			c.wake(w, now, false)
		}
	}
}
