package sim

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/scenarios"
)

// The faults of DESIGN.md section 12 are scenario events with a window
// [at, at+for): faultStart acts at its start on the workers it names
// (picked then, as a drain's are) and faultEnd undoes it at its end. Each
// kind's rules are in its own file: links and stragglers
// (fault_link.go), pull errors and completion notices (fault_pulls.go),
// engines down and request migration (fault_down.go).

// faults is what the run keeps of the faults it has started: the workers
// each acts on, by scenario event.
type faults struct {
	ids  map[int][]int32 // by event: the workers its start acted on
	slow []*slowing      // the slow faults in force, in the order they started (fault_link.go)
}

// faultStart starts fault event key on workers ids.
func (c *Cluster) faultStart(now des.Time, key int, ids []int32) {
	if c.faults.ids == nil {
		c.faults.ids = map[int][]int32{}
	}
	c.faults.ids[key] = ids
	c.fault(now, key, ids, true)
}

// faultEnd ends fault event key's window: it undoes the fault on the
// workers its start acted on.
func (c *Cluster) faultEnd(now des.Time, key int) {
	ids := c.faults.ids[key]
	delete(c.faults.ids, key)
	c.fault(now, key, ids, false)
}

// fault starts (on) or ends fault event key on workers ids, by its kind.
func (c *Cluster) fault(now des.Time, key int, ids []int32, on bool) {
	switch ev := &c.sc.Events[key]; {
	case ev.Link != nil:
		c.linkFault(now, key, ids, on)
	case ev.Slow != nil:
		c.slowFault(key, ids, on)
	case ev.PullErrors != nil:
		c.pullErrors(key, on)
	case ev.Notices != nil:
		c.noticesFault(key, ids, on)
	case ev.Down != nil:
		c.downFault(now, key, ids, on)
	}
}

// chaosSettled is the check at the end of the chaos window and its settle
// time (scenario key chaos.settle; scheduled only with Options.Check):
// every pull staged before the window's end has ended, and no worker a
// fault took down is still down. A violation stops the run. While a fault
// of the scenario's own is in force (a down or a link down without for,
// say) nothing can have settled: the check is not made, and the run warns.
func (c *Cluster) chaosSettled(now des.Time) {
	to := des.Time(c.sc.Chaos.To)
	for i, ev := range c.sc.Events {
		if ev.Origin == scenarios.OriginScenario && ev.Fault() && des.Time(ev.At) <= now && now < des.Time(ev.End()) {
			c.warnings = append(c.warnings, fmt.Sprintf("the check that the cluster settles after chaos, at %v (chaos.to + chaos.settle), was not made: "+
				"the scenario's own events[%d] (%s) is in force then", now, i, ev.Kind()))
			return
		}
	}
	if c.kv != nil {
		if id, ok := c.kv.LiveBefore(to); ok {
			c.err = &InvariantError{Invariant: invChaosSettles, At: now, Err: fmt.Errorf("pull %d, staged before the chaos window ended at %v, is still live %v after it",
				id, to, now-to)}
			return
		}
	}
	for _, n := range c.workers {
		if c.status(n) == lifecycle.Down {
			c.err = &InvariantError{Invariant: invChaosSettles, At: now,
				Err: fmt.Errorf("worker %d is still down %v after the chaos window ended at %v", n.id, now-to, to)}
			return
		}
	}
}
