package sim

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
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
	ids  map[int][]int32 // by event: the workers its start acted on, kept after its end (chaosSettled)
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
	c.fault(now, key, c.faults.ids[key], false)
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
// time (scenario key chaos.settle; scheduled only with Options.Check): no
// pull a fault chaos drew acted on is still live, and no worker is down.
// A violation stops the run. A pull no fault acted on ends on its own,
// however long it takes: it is not chaos's doing and is not looked at. A
// pull a fault of the scenario's own acted on (alone or with chaos's) is
// the scenario's: it is passed over, and the run warns. While a fault of
// the scenario's own is in force (a down or a link down without for, say)
// nothing can have settled: the check is not made, and the run warns.
func (c *Cluster) chaosSettled(now des.Time) {
	to := des.Time(c.sc.Chaos.To)
	what := fmt.Sprintf("the check that the cluster settles after chaos, at %v (chaos.to + chaos.settle)", now)
	for i, ev := range c.sc.Events {
		if ev.Origin == scenarios.OriginScenario && ev.Fault() && des.Time(ev.At) <= now && now < des.Time(ev.End()) {
			c.warnings = append(c.warnings, fmt.Sprintf("%s, was not made: the scenario's own events[%d] (%s) is in force then", what, i, ev.Kind()))
			return
		}
	}
	if c.kv != nil {
		passed, first, by := 0, int64(0), 0 // the live pulls a fault of the scenario's own acted on
		for _, p := range c.kv.LiveBefore(to) {
			own, chaos := c.actedOn(now, p)
			switch {
			case own >= 0:
				if passed == 0 {
					first, by = p.ID, own
				}
				passed++
			case chaos >= 0:
				c.err = &InvariantError{Invariant: invChaosSettles, At: now, Err: fmt.Errorf("pull %d, which events[%d] (%s, drawn by chaos) acted on, is still live %v after the chaos window ended at %v",
					p.ID, chaos, c.sc.Events[chaos].Kind(), now-to, to)}
				return
			}
		}
		if passed > 0 {
			c.warnings = append(c.warnings, fmt.Sprintf("%s, passed over %d live pulls (the first, pull %d) that faults of the scenario's own acted on (the first, events[%d] (%s)): "+
				"their effects are not chaos's", what, passed, first, by, c.sc.Events[by].Kind()))
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

// actedOn is the first fault event of the scenario's own (own) and the
// first chaos drew (chaos) that acted on live pull p by now, -1 for none: a
// fault that struck it or delayed or lost its notice (Pull.Fault), or a
// link or down fault, started by now, whose window began before it ended
// and reached past p's staging, on its source or its target. (A slow fault
// acts on passes, not on pulls; a pull_errors fault that drew no error for
// p did nothing to it.)
func (c *Cluster) actedOn(now des.Time, p *kvcr.Pull) (own, chaos int) {
	own, chaos = -1, -1
	note := func(i int) {
		switch o := c.sc.Events[i].Origin; {
		case o == scenarios.OriginChaos && (chaos < 0 || i < chaos):
			chaos = i
		case o == scenarios.OriginScenario && (own < 0 || i < own):
			own = i
		}
	}
	if key, _, ok := p.Fault(); ok {
		note(key)
	}
	for i := range c.sc.Events {
		ev := &c.sc.Events[i]
		ids, started := c.faults.ids[i]
		if !started || (ev.Link == nil && ev.Down == nil) || des.Time(ev.At) > now || p.StagedNs >= des.Time(ev.End()) {
			continue
		}
		if slices.Contains(ids, p.Source) || slices.Contains(ids, p.Target) {
			note(i)
		}
	}
	return own, chaos
}
