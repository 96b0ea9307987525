package sim

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload"
)

// A scenario event's twin is the same scenario and seed without that event
// (DESIGN.md section 11). Both runs are identical up to the event's
// instant, so the difference between them after it is the event's effect,
// exactly: a trace's own spikes and lulls cancel. The twin is a run like
// any other, of its own scenario (Plan.twin), whose event log measures the
// left-out event's windows too (results.NewTwinLog); it streams no rows and
// writes nothing. The run and the twins that start with it (as many as
// GOMAXPROCS) read their common workload once (workload.PrefetchShared),
// each request a copy of its own; the twins that start later read their
// own.

// twin is what one twin's run gave: its event log, whose last records are
// the left-out events', its digest and the digest of its request rows
// alone (report.Digest.RequestsSum); or why the event has none.
type twin struct {
	log              *results.EventLog
	digest, requests string
	none             string
}

// twinGroups are the sets of events that share a twin, each left out of
// it together: one a scenario event, and every event of origin chaos in
// one (DESIGN.md section 12: the drawn faults share the run without them).
func twinGroups(sc *scenarios.Scenario) [][]int {
	var groups [][]int
	var chaos []int
	for i, ev := range sc.Events {
		if ev.Origin == scenarios.OriginChaos {
			chaos = append(chaos, i)
			continue
		}
		groups = append(groups, []int{i})
	}
	if len(chaos) > 0 {
		groups = append(groups, chaos)
	}
	return groups
}

// runWithTwins simulates the cluster and, beside it, the twin of each of
// its scenario's events, at most GOMAXPROCS of them at once, and pairs each
// event with its twin before summarising. An event whose scenario without
// it is not valid (a later event names a worker only it adds), or whose
// twin fails (the run without it stalls, say), has no twin, and a warning
// says why: the run itself stands.
func (c *Cluster) runWithTwins(ctx context.Context) (*Result, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	groups := twinGroups(c.sc)
	n := len(groups)
	twins := make([]twin, n)
	// The run and the twins that start with it read the workload once.
	sharing := c.plan.TwinsAtOnce()
	reads := make([]*workload.Prefetched, n)
	if src, closer, err := c.plan.OpenSource(); err == nil { // else the run meets the error itself
		shared := workload.PrefetchShared(src, readAheadBatch, readAheadBatches, 1+sharing)
		defer func() {
			shared.Wait() // every consumer has left: the run's, the twins'
			closer.Close()
		}()
		c.shared = shared.Consumer(0)
		for i := range sharing {
			reads[i] = shared.Consumer(1 + i)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { // the twins that never started leave the shared read
			for _, r := range reads {
				if r != nil {
					r.Close()
				}
			}
		}()
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := range n {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Go(func() {
				defer func() { <-sem }()
				twins[i] = c.plan.runTwin(ctx, groups[i], c.opt, reads[i])
			})
		}
	}()
	err := c.simulate(ctx)
	if err != nil {
		cancel() // the twins: the run failed
	}
	<-done
	if err != nil {
		return nil, err
	}
	if err := parent.Err(); err != nil { // cancelled while the twins ran
		return nil, err
	}
	requests := c.digest.RequestsSum()
	for g, t := range twins {
		if t.none != "" {
			what, its := fmt.Sprintf("event %d has", groups[g][0]), "its"
			if c.sc.Events[groups[g][0]].Origin == scenarios.OriginChaos {
				what, its = fmt.Sprintf("the %d events chaos drew have", len(groups[g])), "their"
			}
			c.warnings = append(c.warnings, fmt.Sprintf("%s no twin: %s; %s effect is not measured", what, t.none, its))
			continue
		}
		for j, i := range groups[g] {
			c.events.Pair(i, t.log, j, t.digest, t.requests == requests)
		}
	}
	return c.result()
}

// TwinsAtOnce is how many twins a run of the plan with Options.Twins runs
// at once beside it: one a scenario event (one for all the events chaos
// drew), at most GOMAXPROCS.
func (p *Plan) TwinsAtOnce() int {
	return min(len(twinGroups(p.Scenario)), runtime.GOMAXPROCS(0))
}

// twin is the plan of the twin of the scenario events left: the scenario
// without them (scenarios.Scenario.Without, or WithoutChaos for the events
// chaos drew), or why there is none.
func (p *Plan) twin(left []int) (*Plan, error) {
	var sc *scenarios.Scenario
	var err error
	if p.Scenario.Events[left[0]].Origin == scenarios.OriginChaos {
		sc = p.Scenario.WithoutChaos()
	} else if sc, err = p.Scenario.Without(left[0]); err != nil {
		return nil, err
	}
	tp, err := Prepare(sc)
	if err != nil {
		return nil, err
	}
	if tp.KVCR != nil && p.KVCR != nil {
		// The same network as the run's, so that the twin is the same
		// run up to the event (an ingress link fault left out needs it).
		tp.KVCR.FairNet = p.KVCR.FairNet
	}
	return tp, nil
}

// runTwin runs the twin of the scenario events left, checking invariants
// and passing pass by pass as opt says, reading the workload from read
// when it is not nil and the twin's workload is the run's (the twin of an
// event is, always), which it closes.
func (p *Plan) runTwin(ctx context.Context, left []int, opt Options, read *workload.Prefetched) (t twin) {
	if read != nil {
		defer read.Close()
	}
	tp, err := p.twin(left)
	if err != nil {
		return twin{none: fmt.Sprintf("the scenario without it is not valid (%v)", err)}
	}
	var panicked error
	defer func() {
		if panicked != nil {
			t = twin{none: fmt.Sprintf("the run without it failed: %v", panicked)}
		}
	}()
	defer CatchPanic(&panicked)
	ats := make([]des.Time, len(left))
	for j, i := range left {
		ats[j] = des.Time(p.Scenario.Events[i].At)
	}
	log := results.NewTwinLog(tp.Scenario, ats)
	c, err := build(tp, Options{Check: opt.Check, PassByPass: opt.PassByPass, crossEvents: opt.crossEvents}, log)
	if err == nil {
		if read != nil && reflect.DeepEqual(tp.Scenario.Workload, p.Scenario.Workload) {
			c.shared = read
		}
		err = c.simulate(ctx)
	}
	var res *Result
	if err == nil {
		res, err = c.result()
	}
	if err != nil {
		return twin{none: fmt.Sprintf("the run without it failed: %v", err)}
	}
	return twin{log: log, digest: res.Summary.Digest, requests: c.digest.RequestsSum()}
}
