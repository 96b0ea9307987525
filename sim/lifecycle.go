package sim

import (
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// lifeKind is the kind of a lifecycle event. The key of each is the index
// of the scenario event it comes from (len(Events) for lifeRetire).
type lifeKind uint8

// The lifecycle event kinds.
const (
	lifeScenario     lifeKind = iota // the scenario's event itself
	lifeReady                        // an added worker finished starting
	lifeDrainTimeout                 // a drained worker's drain_timeout passed
	lifeRetire                       // a draining worker's last pull ended
)

// lifeArg is the arg of a lifecycle event: its kind and the worker it is
// about (0 for lifeScenario). pack and unpackLife are its only encoding.
type lifeArg struct {
	kind   lifeKind
	worker int32
}

// pack encodes a: the kind in the low 8 bits, the worker's 32 bits above
// them. Every lifeKind and every int32 fits, so no worker id overflows.
func (a lifeArg) pack() uint64 { return uint64(a.kind) | uint64(uint32(a.worker))<<8 }

// unpackLife decodes an arg that pack encoded.
func unpackLife(x uint64) lifeArg { return lifeArg{lifeKind(x & 0xff), int32(uint32(x >> 8))} }

// scheduleLifecycle puts the scenario's events on the queue.
func (c *Cluster) scheduleLifecycle() {
	for i, ev := range c.sc.Events {
		c.q.Schedule(des.Time(ev.At), des.PhaseLifecycle, uint64(i), (*lifeEvent)(c), lifeArg{kind: lifeScenario}.pack())
	}
}

type lifeEvent Cluster

// Fire applies a lifecycle event.
func (l *lifeEvent) Fire(now des.Time, key, arg uint64) {
	c := (*Cluster)(l)
	a := unpackLife(arg)
	switch a.kind {
	case lifeReady:
		n := c.workers[a.worker]
		if c.status(n) == lifecycle.Starting {
			c.ready(now, n)
		}
		return
	case lifeDrainTimeout:
		if n := c.workers[a.worker]; c.status(n) == lifecycle.Draining {
			c.events.timedOut(int(key), c.remove(now, n, c.sc.Events[key].OnRemove == scenarios.RemoveFail))
		}
		return
	case lifeRetire:
		c.maybeRetire(now, c.workers[a.worker])
		return
	}
	ev := c.sc.Events[key]
	c.events.fired(c, int(key), c.actsOn(ev))
	switch {
	case ev.Add > 0:
		for range ev.Add {
			if err := c.addWorker(now, ev.Startup == 0); err != nil {
				c.err = err
				return
			}
			if ev.Startup > 0 {
				ready := lifeArg{kind: lifeReady, worker: c.workers[len(c.workers)-1].id}
				c.q.Schedule(des.AddSat(now, des.Time(ev.Startup)), des.PhaseLifecycle, key, l, ready.pack())
			}
		}
	case ev.Drain != nil:
		for _, id := range ev.Drain {
			n := c.workers[id]
			c.drain(now, n)
			if ev.DrainTimeout > 0 {
				timeout := lifeArg{kind: lifeDrainTimeout, worker: n.id}
				c.q.Schedule(des.AddSat(now, des.Time(ev.DrainTimeout)), des.PhaseLifecycle, key, l, timeout.pack())
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
		c.events.tookOff(int(key), c.requeue(now, seqs, ev.OnRemove == scenarios.RemoveFail))
	}
}

// drain stops routing to a worker; its requests and the pulls staged from
// it finish, new staging from it is rejected.
func (c *Cluster) drain(now des.Time, n *node) {
	if st := c.status(n); st == lifecycle.Removed || st == lifecycle.Draining {
		return
	}
	c.life.Set(n.id, lifecycle.Draining)
	n.drainNs = now
}

// maybeRetire removes a draining worker that has no requests, no pass in
// progress and no pins or pulls.
func (c *Cluster) maybeRetire(now des.Time, n *node) {
	if c.status(n) != lifecycle.Draining || n.w.HasWork() || n.w.Busy() {
		return
	}
	if c.kv != nil && c.kv.ActivePulls(n.id) > 0 {
		return
	}
	c.remove(now, n, false)
}

// remove takes a worker out at once: its G1 and G2 are gone, its pulls fail
// and its requests are routed again (or fail).
func (c *Cluster) remove(now des.Time, n *node, fail bool) requeued {
	return c.requeue(now, c.takeOut(now, n), fail)
}

// takeOut removes a worker and returns the requests it held.
func (c *Cluster) takeOut(now des.Time, n *node) []*engine.Seq {
	if c.status(n) == lifecycle.Removed {
		return nil
	}
	c.life.Set(n.id, lifecycle.Removed)
	n.removedNs = now
	c.settle(n)
	seqs := n.w.Drop()
	if c.kv != nil {
		c.kv.RemoveWorker(now, n.id)
	}
	return seqs
}

// requeued counts the requests requeue took: routed again, or failed.
type requeued struct{ rerouted, failed int64 }

// requeue routes the requests of removed workers again, in order, or fails
// them (also when no worker is left to route one to).
func (c *Cluster) requeue(now des.Time, seqs []*engine.Seq, fail bool) requeued {
	var q requeued
	for _, s := range seqs {
		r := c.active[s.Req.ID]
		c.router.Finished(r.route, s.FirstTokenAt >= 0)
		r.priorPreemptions += s.Preemptions
		r.priorComputed += s.ComputedPromptTokens
		r.seq = nil
		if fail {
			c.end(r, report.OutcomeFailed, now)
			q.failed++
			continue
		}
		r.reroutes++
		c.counts.RequestsRerouted++
		if w, ok := c.route(now, r); ok {
			c.wake(w, now, false)
			q.rerouted++
		} else {
			q.failed++
		}
	}
	return q
}
