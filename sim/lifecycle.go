package sim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
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
	lifeFaultEnd                     // a fault's window ended
	lifeChaosSettled                 // the chaos window and its settle time passed (the key is len(Events))
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
	if ch := c.sc.Chaos; ch != nil && c.opt.Check {
		at := des.AddSat(des.Time(ch.To), des.Time(ch.Settle))
		c.q.Schedule(at, des.PhaseLifecycle, uint64(len(c.sc.Events)), (*lifeEvent)(c), lifeArg{kind: lifeChaosSettled}.pack())
	}
}

type lifeEvent Cluster

// Fire applies a lifecycle event.
func (l *lifeEvent) Fire(now des.Time, key, arg uint64) {
	c := (*Cluster)(l)
	c.look()
	a := unpackLife(arg)
	switch a.kind {
	case lifeReady:
		n := c.workers[a.worker]
		if st := c.status(n); (st == lifecycle.Starting || st == lifecycle.Restarting) && now == n.readyDue { // not one a down's restart superseded
			c.ready(now, n)
		}
		return
	case lifeDrainTimeout:
		if n := c.workers[a.worker]; c.status(n) == lifecycle.Draining {
			q := c.remove(now, n, c.evs[key].OnRemove)
			c.events.TimedOut(int(key), q.rerouted, q.failed)
			if c.planner != nil && c.evs[key].Origin == scenarios.OriginPlanner {
				c.planner.timedOut += q.rerouted + q.failed
			}
			c.events.Faulted(int(key), report.EventFault{Migrated: q.migrated})
		}
		return
	case lifeRetire:
		c.maybeRetire(now, c.workers[a.worker])
		return
	case lifeFaultEnd:
		c.faultEnd(now, int(key))
		return
	case lifeChaosSettled:
		c.chaosSettled(now)
		return
	}
	c.act(now, key)
}

// act carries out event key of the run's events now and returns the
// workers it acted on (actsOn).
func (c *Cluster) act(now des.Time, key uint64) []int32 {
	l := (*lifeEvent)(c)
	ev := c.evs[key]
	ids := c.actsOn(now, key, ev)
	c.fired(int(key), ids)
	switch {
	case ev.Fault():
		c.faultStart(now, int(key), ids)
		if ev.For > 0 {
			c.q.Schedule(des.Time(ev.End()), des.PhaseLifecycle, key, l, lifeArg{kind: lifeFaultEnd}.pack())
		}
	case ev.Add > 0:
		for range ev.Add {
			if err := c.addWorker(now, ev.Startup == 0); err != nil {
				c.err = err
				return nil
			}
			if ev.Startup > 0 {
				n := c.workers[len(c.workers)-1]
				n.readyDue = des.AddSat(now, des.Time(ev.Startup))
				c.q.Schedule(n.readyDue, des.PhaseLifecycle, key, l, lifeArg{kind: lifeReady, worker: n.id}.pack())
			}
		}
		if ev.Prewarm != nil && c.kv != nil {
			c.prewarm(now, int(key), ids, ev.Prewarm.Blocks)
		}
	case ev.Drain != nil:
		var drained []int32 // a worker an earlier event drained or removed already is not the event's to act on
		for _, id := range ids {
			if !c.drain(now, c.workers[id]) {
				continue
			}
			drained = append(drained, id)
			if ev.DrainTimeout > 0 {
				timeout := lifeArg{kind: lifeDrainTimeout, worker: id}
				c.q.Schedule(des.AddSat(now, des.Time(ev.DrainTimeout)), des.PhaseLifecycle, key, l, timeout.pack())
			}
		}
		if ev.Evacuate != nil && c.kv != nil {
			c.evacuate(now, int(key), drained, ev.Evacuate) // every one is draining before any is evacuated
		}
		for _, id := range drained {
			c.maybeRetire(now, c.workers[id])
		}
	case ev.Remove != nil:
		var seqs []*engine.Seq // every removed worker goes before any request is routed again
		for _, id := range ids {
			seqs = append(seqs, c.takeOut(now, c.workers[id])...)
		}
		q := c.requeue(now, seqs, ev.OnRemove)
		c.events.TookOff(int(key), q.rerouted, q.failed)
		c.events.Faulted(int(key), report.EventFault{Migrated: q.migrated})
	}
	return ids
}

// fired tells the events' log what the workers ids scenario event key
// names (those that exist: not the ones an add makes) and the cluster hold
// as it fires, before it acts.
func (c *Cluster) fired(key int, ids []int32) {
	if c.events == nil {
		return
	}
	var named []results.WorkerAt
	for _, id := range ids {
		if int(id) >= len(c.workers) {
			continue // a worker the event adds
		}
		n := c.workers[id]
		at := results.WorkerAt{ID: id, Running: n.w.Running(), Waiting: n.w.Waiting(), Cached: n.w.G1Cached(), Status: c.status(n)}
		if c.kv != nil {
			at.Serving, at.Receiving, at.G2, at.G2Flows = c.kv.Serving(id), c.kv.Receiving(id), c.kv.Pool(id).Used(), c.kv.Pool(id).Flows()
		}
		named = append(named, at)
	}
	var requests, schedulable int64
	for _, n := range c.workers {
		requests += int64(n.w.Requests())
		if c.status(n) == lifecycle.Ready {
			schedulable++
		}
	}
	c.events.Fired(key, ids, named, requests, schedulable)
}

// actsOn is the workers scenario event key acts on now, in the order it
// acts on them: those it drains, removes or faults (selected: a list in its
// order, a pick in id order), or the ids the workers it adds get.
func (c *Cluster) actsOn(now des.Time, key uint64, ev scenarios.Event) []int32 {
	if sel := ev.Workers(); sel != nil {
		return c.selected(now, key, sel)
	}
	var ids []int32
	for i := range ev.Add {
		ids = append(ids, int32(len(c.workers)+i))
	}
	return ids
}

// pickKeys are the random keys of a random pick at instant now, by worker
// id: draws of the stream lifecycle/<now in ns> for a drain's or remove's
// pick, faults/pick/<now in ns> for a fault's (DESIGN.md section 12:
// random choices inside a fault come from the stream family faults), one
// a worker the run can hold, in id order. The pick takes the ready workers
// with the smallest keys. A worker's key depends on the seed, the instant
// and whether the pick is a fault's alone, not on which workers are ready
// or on the other events, so the twin of another event (the run without
// it) draws the same keys, and picks the same workers wherever the same
// ones are ready; two random picks of one family at one instant share the
// keys, the second taking the next smallest of the workers still ready.
func (c *Cluster) pickKeys(now des.Time, fault bool) []uint64 {
	name := fmt.Sprintf("lifecycle/%d", int64(now))
	if fault {
		name = fmt.Sprintf("faults/pick/%d", int64(now))
	}
	r := des.NewRNG(c.sc.Seed).Stream(name)
	keys := make([]uint64, max(c.plan.Workers, len(c.workers))) // a planner's adds may pass the plan's count
	for i := range keys {
		keys[i] = r.Uint64()
	}
	return keys
}

// selected is the workers a drain, remove or fault of scenario event key
// acts on: those it lists, in its order, or those its pick chooses now
// among the ready workers, in id order.
func (c *Cluster) selected(now des.Time, key uint64, sel *scenarios.Selection) []int32 {
	if !sel.Picked() {
		ids := make([]int32, len(sel.IDs))
		for i, id := range sel.IDs {
			ids[i] = int32(id)
		}
		return ids
	}
	var ready []*node
	for _, n := range c.workers {
		if c.status(n) == lifecycle.Ready {
			ready = append(ready, n)
		}
	}
	if len(ready) < sel.Count {
		c.warnings = append(c.warnings, fmt.Sprintf("events[%d] picks %d workers, but only %d are ready at %v: it takes those",
			key, sel.Count, len(ready), now))
	}
	k := min(sel.Count, len(ready))
	if sel.Pick == scenarios.PickRandom {
		keys := c.pickKeys(now, c.evs[key].Fault())
		// ready is in id order and the sort is stable: equal keys keep the lowest id first.
		slices.SortStableFunc(ready, func(a, b *node) int { return cmp.Compare(keys[a.id], keys[b.id]) })
	} else {
		score := c.pickScore(now, sel.Pick)
		// ready is in id order and the sort is stable: ties keep the lowest id first.
		slices.SortStableFunc(ready, func(a, b *node) int { return cmp.Compare(score(b), score(a)) })
		if k > 0 && k < len(ready) && score(ready[k-1]) == score(ready[k]) {
			// More workers share the score of the last place it takes
			// than the places left for them: it chose among them by id
			// alone (every G2 full, say, for most_cached).
			if c.evs[key].Origin == scenarios.OriginPlanner {
				c.planner.tied++ // one warning for all its drains (plannerWarnings)
			} else {
				last, tied := score(ready[k-1]), 0
				for _, n := range ready {
					if score(n) == last {
						tied++
					}
				}
				what := "share the top score, %d" // a count: the "least" picks score its negative
				if last != score(ready[0]) {
					what = "tie at a score of %d for its last places"
				}
				c.warnings = append(c.warnings, fmt.Sprintf("events[%d] picks %d by %s at %v, but %d ready workers %s: the lowest ids won, not the pick",
					key, sel.Count, sel.Pick, now, tied, fmt.Sprintf(what, max(last, -last))))
			}
		}
	}
	ids := make([]int32, k)
	for i, n := range ready[:k] {
		ids[i] = n.id
	}
	slices.Sort(ids)
	return ids
}

// pickScore is the score a pick takes its workers by at now, highest
// first. The cache-aware picks read the router's view (what a planner could
// ask the router), once for the whole pick, not the workers' own caches.
func (c *Cluster) pickScore(now des.Time, p scenarios.Pick) func(*node) int {
	switch p {
	case scenarios.PickIdlest:
		return func(n *node) int { return -n.w.Requests() }
	case scenarios.PickHighestID:
		return func(n *node) int { return int(n.id) }
	case scenarios.PickLeastCached, scenarios.PickFewestUnique:
		h := c.router.Holdings(now)
		if p == scenarios.PickLeastCached {
			return func(n *node) int { return -h[n.id].Held }
		}
		return func(n *node) int { return -h[n.id].Unique }
	case scenarios.PickMostCached:
		return func(n *node) int {
			if c.kv == nil {
				return 0
			}
			return c.kv.Pool(n.id).Used()
		}
	}
	return func(n *node) int { return n.w.Requests() } // busiest
}

// drain stops routing to a worker; its requests and the pulls staged from
// it finish, new staging from it is rejected. It reports whether it
// drained the worker: one draining or removed already is left as it is.
func (c *Cluster) drain(now des.Time, n *node) bool {
	if st := c.status(n); st == lifecycle.Removed || st == lifecycle.Draining {
		return false
	}
	c.life.Set(n.id, lifecycle.Draining)
	c.meter(n)
	n.drainNs = now
	if c.kv != nil {
		c.kv.Draining(n.id)
		c.applyKV()
	}
	return true
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
	c.remove(now, n, scenarios.RemoveReroute)
}

// remove takes a worker out at once: its G1 and G2 are gone, its pulls fail
// and its requests are handled as on_remove says (requeue).
func (c *Cluster) remove(now des.Time, n *node, action scenarios.RemoveAction) requeued {
	return c.requeue(now, c.takeOut(now, n), action)
}

// takeOut removes a worker and returns the requests it held.
func (c *Cluster) takeOut(now des.Time, n *node) []*engine.Seq {
	if c.status(n) == lifecycle.Removed {
		return nil
	}
	c.life.Set(n.id, lifecycle.Removed)
	n.removedNs = now
	n.up(now)
	if c.kv != nil {
		busy := n.w.HasWork() || n.w.Busy() || c.kv.RequestPulls(n.id) > 0
		c.events.LeftBehind(now, n.id, c.kv.Pool(n.id).Used(), c.kv.Pool(n.id).Flows(), busy)
	}
	c.settle(n)
	seqs := n.w.Drop(now)
	c.meter(n)
	if c.kv != nil {
		c.kv.RemoveWorker(now, n.id)
		c.applyKV()
	}
	return seqs
}
