package sim

import (
	"context"
	"fmt"
	"runtime"

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

// twin is what one twin's run gave: its event log, whose last record is
// the left-out event's, its digest and the digest of its request rows
// alone (report.Digest.RequestsSum); or why the event has none.
type twin struct {
	log              *results.EventLog
	digest, requests string
	none             string
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
	n := len(c.sc.Events)
	twins := make([]twin, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		finished := make(chan struct{}, n)
		started := 0
	launch:
		for i := range n {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				break launch
			}
			started++
			go func() {
				defer func() { <-sem; finished <- struct{}{} }()
				twins[i] = c.plan.runTwin(ctx, i, c.opt)
			}()
		}
		for range started {
			<-finished
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
	for i, t := range twins {
		if t.none != "" {
			c.warnings = append(c.warnings, fmt.Sprintf("event %d has no twin: %s; its effect is not measured", i, t.none))
			continue
		}
		c.events.Pair(i, t.log, t.digest, t.requests == requests)
	}
	return c.result()
}

// TwinsAtOnce is how many twins a run of the plan with Options.Twins runs
// at once beside it: one an event, at most GOMAXPROCS.
func (p *Plan) TwinsAtOnce() int {
	return min(len(p.Scenario.Events), runtime.GOMAXPROCS(0))
}

// twin is the plan of the twin of scenario event i: the scenario without
// it (scenarios.Scenario.Without), or why there is none.
func (p *Plan) twin(i int) (*Plan, error) {
	sc, err := p.Scenario.Without(i)
	if err != nil {
		return nil, err
	}
	return Prepare(sc)
}

// runTwin runs the twin of scenario event i, checking invariants and
// passing pass by pass as opt says.
func (p *Plan) runTwin(ctx context.Context, i int, opt Options) (t twin) {
	tp, err := p.twin(i)
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
	log := results.NewTwinLog(tp.Scenario, des.Time(p.Scenario.Events[i].At))
	c, err := build(tp, Options{Check: opt.Check, PassByPass: opt.PassByPass}, log)
	if err == nil {
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
