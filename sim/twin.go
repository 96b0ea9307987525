package sim

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/results"
)

// A scenario event's twin is the same scenario and seed without that event
// (DESIGN.md section 11). Both runs are identical up to the event's
// instant, so the difference between them after it is the event's effect,
// exactly: a trace's own spikes and lulls cancel. The twin is a run like
// any other, of its own scenario (Plan.twin), whose event log measures the
// left-out event's windows too (results.NewTwinLog); it streams no rows and
// writes nothing.

// runWithTwins simulates the cluster and, beside it, the twin of each of
// its scenario's events, at most GOMAXPROCS of them at once, and pairs each
// event with its twin before summarising. A twin's failure fails the run:
// the scenario without the event is as much the user's as the one with it.
func (c *Cluster) runWithTwins(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(c.sc.Events)
	logs := make([]*results.EventLog, n)
	digests, requests := make([]string, n), make([]string, n)
	errs := make([]error, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		finished := make(chan struct{}, n)
		for i := range n {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; finished <- struct{}{} }()
				defer CatchPanic(&errs[i])
				logs[i], digests[i], requests[i], errs[i] = c.plan.runTwin(ctx, i, c.opt.Check)
			}()
		}
		for range n {
			<-finished
		}
	}()
	err := c.simulate(ctx)
	if err != nil {
		cancel()
	}
	<-done
	if err != nil {
		return nil, err
	}
	for i, e := range errs {
		if e != nil {
			return nil, fmt.Errorf("the twin of event %d (the scenario without it): %w", i, e)
		}
		c.events.Pair(i, logs[i], digests[i], requests[i] == c.digest.RequestsSum())
	}
	return c.result()
}

// twin is the plan of the twin of scenario event i: the scenario without
// it, and without expect entries, which are the run's.
func (p *Plan) twin(i int) (*Plan, error) {
	sc := *p.Scenario
	sc.Events = slices.Delete(slices.Clone(sc.Events), i, i+1)
	sc.Expect = nil
	return Prepare(&sc)
}

// runTwin runs the twin of scenario event i, checking invariants when
// check says, and returns its event log, whose last record is event i's
// windows in the twin, its digest and the digest of its request rows
// alone (report.Digest.RequestsSum).
func (p *Plan) runTwin(ctx context.Context, i int, check bool) (log *results.EventLog, digest, requests string, err error) {
	tp, err := p.twin(i)
	if err != nil {
		return nil, "", "", err
	}
	log = results.NewTwinLog(tp.Scenario, des.Time(p.Scenario.Events[i].At))
	c, err := build(tp, Options{Check: check}, log)
	if err != nil {
		return nil, "", "", err
	}
	if err := c.simulate(ctx); err != nil {
		return nil, "", "", err
	}
	res, err := c.result()
	if err != nil {
		return nil, "", "", err
	}
	return log, res.Summary.Digest, c.digest.RequestsSum(), nil
}
