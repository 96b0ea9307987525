package sim

import (
	"maps"
	"slices"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
)

// Links and stragglers (DESIGN.md section 12, docs/faults.md). A link
// fault runs the KVCR links of its workers at a factor of their bandwidth
// (kvcr.KVCR.StartLinkFault); a slow fault makes every pass that starts on
// its workers take factor times as long (engine.Worker.SetSlow). Both act
// only on workers that exist and are not removed when the fault starts,
// and neither tells the router.

// slowing is a slow fault in force: its workers and, by worker, the
// passes it had started when the fault began.
type slowing struct {
	key    int
	ids    []int32
	factor float64
	passes []int64 // by ids: the worker's passes started before the window
}

// faultable is the workers of ids a fault can act on: those the cluster
// holds, not removed.
func (c *Cluster) faultable(ids []int32) []int32 {
	var out []int32
	for _, id := range ids {
		if int(id) < len(c.workers) && c.status(c.workers[id]) != lifecycle.Removed && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// linkFault starts (on) or ends a link fault of scenario event key on workers ids.
func (c *Cluster) linkFault(now des.Time, key int, ids []int32, on bool) {
	if c.kv == nil {
		return // validation requires KVCR
	}
	if on {
		ev := &c.sc.Events[key]
		c.kv.StartLinkFault(now, des.Time(ev.End()), key, c.faultable(ids), ev.Link.Factor, ev.Link.Direction.Egress(), ev.Link.Direction.Ingress())
		c.applyKV()
		return
	}
	c.events.Faulted(key, report.EventFault{Pulls: c.kv.EndLinkFault(now, key)})
	c.applyKV()
}

// slowFault starts (on) or ends a slow fault of scenario event key on workers ids.
func (c *Cluster) slowFault(key int, ids []int32, on bool) {
	if on {
		s := &slowing{key: key, ids: c.faultable(ids), factor: c.sc.Events[key].Slow.Factor}
		c.faults.slow = append(c.faults.slow, s)
		for _, id := range s.ids {
			n := c.workers[id]
			c.settle(n) // the pass in progress keeps its duration
			s.passes = append(s.passes, n.w.Passes())
			n.w.SetSlow(c.slowFactor(id))
		}
		return
	}
	i := c.faults.slowIndex(key)
	if i < 0 {
		return
	}
	s := c.faults.slow[i]
	c.faults.slow = slices.Delete(c.faults.slow, i, i+1)
	for _, id := range s.ids {
		n := c.workers[id]
		c.settle(n) // the passes before now are counted, the one starting now is not slowed
		if c.status(n) != lifecycle.Removed {
			n.w.SetSlow(c.slowFactor(id))
		}
	}
	c.events.Faulted(key, report.EventFault{Passes: c.slowPasses(s)})
}

// slowIndex is the index in slow of the slow fault of scenario event key,
// -1 when it is not in force.
func (f *faults) slowIndex(key int) int {
	return slices.IndexFunc(f.slow, func(s *slowing) bool { return s.key == key })
}

// slowPasses is the passes s's workers started in its window so far: every
// stretch on them settled.
func (c *Cluster) slowPasses(s *slowing) int64 {
	var passes int64
	for j, id := range s.ids {
		passes += c.workers[id].w.Passes() - s.passes[j]
	}
	return passes
}

// slowFactor is the factor of the passes worker id starts: the largest of
// the slow faults in force on it (the slowest straggler wins), 1 without
// any.
func (c *Cluster) slowFactor(id int32) float64 {
	x := 1.0
	for _, s := range c.faults.slow {
		if slices.Contains(s.ids, id) {
			x = max(x, s.factor)
		}
	}
	return x
}

// linkSlowAtEnd reports what the link and slow faults still in force
// when the run ends (those without a length) did in their window: the
// factors stay as they are, since nothing runs after.
func (c *Cluster) linkSlowAtEnd() {
	for _, key := range slices.Sorted(maps.Keys(c.faults.ids)) { // map order never reaches the model
		if des.Time(c.sc.Events[key].End()) <= c.q.Now() {
			continue // its end has come: it ended (faultEnd) and said what it did then
		}
		switch ev := &c.sc.Events[key]; {
		case ev.Link != nil && c.kv != nil:
			c.events.Faulted(key, report.EventFault{Pulls: c.kv.LinkFaultPulls(key)})
		case ev.Slow != nil:
			if i := c.faults.slowIndex(key); i >= 0 {
				c.events.Faulted(key, report.EventFault{Passes: c.slowPasses(c.faults.slow[i])})
			}
		}
	}
}
