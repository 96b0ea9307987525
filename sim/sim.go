package sim

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/sim/des"
	"github.com/kvsim/kvsim/workload"
)

// RowSink receives request rows in request_id order.
type RowSink interface {
	Append(*report.RequestRow) error
}

// Options are the run's hooks; none changes the result.
type Options struct {
	Rows  RowSink // nil: rows are only summarised
	Check bool    // verify invariants after every pass; an error stops the run
	// Progress, when set, is called every ProgressEvery events with the
	// number of requests ended and the virtual time.
	Progress func(done int64, now des.Time)
}

// ProgressEvery is how many events pass between Progress calls.
const ProgressEvery = 1 << 16

// Cluster is one run in progress.
type Cluster struct {
	sc      *scenarios.Scenario
	opt     Options
	q       des.Queue
	workers []*node
	router  *scheduler.Router
	source  workload.Source
	next    *workload.Request // read ahead: the next arrival
	active  map[int64]*request
	rows    reorder
	stats   stats
	err     error
}

// node is a worker and what the simulation keeps beside it.
type node struct {
	w     *engine.Worker
	drive bool // a drive scan is scheduled at the current time
}

// request is a request between arrival and its row.
type request struct {
	req   *workload.Request
	route scheduler.Route
	seq   *engine.Seq
}

// Run simulates the scenario to the end and returns its summary. Cancelling
// ctx stops the run with ctx's error.
func Run(ctx context.Context, sc *scenarios.Scenario, opt Options) (*Summary, error) {
	if len(sc.Events) > 0 {
		return nil, &scenarios.InputError{File: displayFile(sc), Key: "events",
			Err: errors.New("lifecycle events (drain, remove, add) are not modeled in this build yet")}
	}
	rng := des.NewRNG(sc.Seed)
	c := &Cluster{sc: sc, opt: opt, active: map[int64]*request{}}
	r, err := scheduler.New(scheduler.Config{
		Policy: sc.Router.Policy, OverlapCredit: sc.Router.OverlapCredit, HostHitWeight: sc.Router.HostHitWeight,
		PrefillLoadScale: sc.Router.PrefillLoadScale, EventDelay: des.Time(sc.Router.EventDelay),
		BlockSize: sc.Cluster.Engine.BlockSize,
	}, rng.Stream("router"))
	if err != nil {
		return nil, err
	}
	c.router = r
	tm := timing(sc)
	for i := range sc.Cluster.Workers {
		w, err := engine.New(engineConfig(sc, int32(i)), tm, (*observer)(c))
		if err != nil {
			return nil, err
		}
		c.workers = append(c.workers, &node{w: w})
		r.AddWorker(int32(i))
	}
	src, closer, err := openSource(sc, rng)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	c.source = src
	c.readNext()
	c.q.Run(func() bool {
		if c.q.Fired()%ProgressEvery == 0 {
			if opt.Progress != nil {
				opt.Progress(c.stats.ended, c.q.Now())
			}
			if err := ctx.Err(); err != nil && c.err == nil {
				c.err = err
			}
		}
		return c.err != nil
	})
	if c.err != nil {
		return nil, c.err
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c.summary(), nil
}

// readNext reads the next request and schedules its arrival.
func (c *Cluster) readNext() {
	req, err := c.source.Next()
	if err == io.EOF {
		c.next = nil
		return
	}
	if err != nil {
		c.err = traceError(c.sc, err)
		return
	}
	if req.Arrival < c.q.Now() {
		panic(fmt.Sprintf("sim: request %d arrives at %v, before %v", req.ID, req.Arrival, c.q.Now()))
	}
	c.next = req
	c.q.Schedule(req.Arrival, des.PhaseArrival, uint64(req.ID), (*arrival)(c), 0)
}

// traceError names the trace file and the scenario key in a reader error.
func traceError(sc *scenarios.Scenario, err error) error {
	var pe *workload.ParseError
	if errors.As(err, &pe) {
		key := "workload.trace"
		if pe.Key != "" {
			key = pe.Key
		}
		return &scenarios.InputError{File: sc.Workload.Trace.Path, Line: pe.Line, Key: key, Err: pe.Err}
	}
	return err
}

type arrival Cluster

// Fire routes the arriving request and reads the one after it.
func (a *arrival) Fire(now des.Time, _, _ uint64) {
	c := (*Cluster)(a)
	req := c.next
	c.readNext()
	c.stats.arrived(req)
	e := c.sc.Cluster.Engine
	if (e.MaxModelLen > 0 && req.InputTokens+req.OutputTokens > e.MaxModelLen) || !c.workers[0].w.Fits(req) {
		c.end(&request{req: req, route: scheduler.Route{Worker: -1}}, report.OutcomeRejected, now)
		return
	}
	rt, ok := c.router.Pick(now, req)
	if !ok {
		c.end(&request{req: req, route: scheduler.Route{Worker: -1}}, report.OutcomeRejected, now)
		return
	}
	n := c.workers[rt.Worker]
	r := &request{req: req, route: rt, seq: n.w.Enqueue(req)}
	c.active[req.ID] = r
	c.wake(rt.Worker, now)
}

// wake schedules a drive scan of worker w at now, once. When no other event
// is pending at now, the scan would be the next event anyway: it runs at
// once, saving a trip through the queue. Call it last in a handler.
func (c *Cluster) wake(w int32, now des.Time) {
	n := c.workers[w]
	if n.drive || n.w.Busy() {
		return
	}
	n.drive = true
	if next, ok := c.q.Peek(); !ok || next > now {
		(*drive)(c).Fire(now, uint64(w), 0)
		return
	}
	c.q.Schedule(now, des.PhaseDrive, uint64(w), (*drive)(c), 0)
}

type drive Cluster

// Fire is a drive scan: an idle worker with work starts a pass.
func (d *drive) Fire(now des.Time, key, _ uint64) {
	c := (*Cluster)(d)
	n := c.workers[key]
	n.drive = false
	if n.w.Busy() || !n.w.HasWork() {
		return
	}
	if end, ok := n.w.StartPass(now); ok {
		c.q.Schedule(end, des.PhasePass, key, (*passDone)(c), 0)
		c.check(n)
	}
}

type passDone Cluster

// Fire ends a worker's pass and rescans it.
func (p *passDone) Fire(now des.Time, key, _ uint64) {
	c := (*Cluster)(p)
	n := c.workers[key]
	n.w.FinishPass(now)
	c.check(n)
	c.wake(int32(key), now)
}

// check verifies a worker's invariants after a pass starts or ends. A full
// O(G1) check runs every max(128, G1 blocks / 8) passes, keeping its
// amortised cost to a few operations a pass; the others get the
// O(running) check, and every worker gets a full one at the end.
func (c *Cluster) check(n *node) {
	if !c.opt.Check || c.err != nil {
		return
	}
	check := n.w.CheckQuick
	if n.w.Passes()%int64(max(128, n.w.G1Capacity()/8)) == 0 {
		check = n.w.Check
	}
	if err := check(); err != nil {
		c.err = &InvariantError{At: c.q.Now(), Err: err}
	}
}

// InvariantError is a broken model invariant found by --check.
type InvariantError struct {
	At  des.Time
	Err error
}

func (e *InvariantError) Error() string {
	return fmt.Sprintf("invariant violated at %v: %v", e.At, e.Err)
}

func (e *InvariantError) Unwrap() error { return e.Err }

// observer receives the workers' reports.
type observer Cluster

func (o *observer) BlockStored(w int32, h uint64) { o.router.Stored(o.q.Now(), w, h) }

func (o *observer) BlockRemoved(w int32, h uint64) { o.router.Removed(o.q.Now(), w, h) }

func (o *observer) FirstToken(now des.Time, s *engine.Seq) {
	o.router.FirstToken(o.active[s.Req.ID].route)
}

func (o *observer) Token(_ des.Time, _ *engine.Seq, gap des.Time) { o.stats.itl.Add(int64(gap)) }

func (o *observer) Finished(now des.Time, s *engine.Seq) {
	c := (*Cluster)(o)
	r := c.active[s.Req.ID]
	c.router.Finished(r.route, true)
	c.end(r, report.OutcomeCompleted, now)
}

// end writes a request's row and drops it from the active set.
func (c *Cluster) end(r *request, outcome string, now des.Time) {
	delete(c.active, r.req.ID)
	row := report.RequestRow{
		RequestID: r.req.ID, Worker: r.route.Worker, ArrivalNs: int64(r.req.Arrival),
		FirstTokenNs: -1, FinishNs: int64(now), InputTokens: int64(r.req.InputTokens),
		OutputTokens: int64(r.req.OutputTokens), HintSource: -1, Outcome: outcome,
	}
	if s := r.seq; s != nil {
		row.FirstTokenNs = int64(s.FirstTokenAt)
		row.G1HitTokens = int64(s.G1HitTokens)
		row.ComputedPromptTokens = int64(s.ComputedPromptTokens)
		row.Preemptions = int32(s.Preemptions)
	}
	if outcome == report.OutcomeUnfinished {
		row.FinishNs = -1
	}
	c.stats.ended++
	c.stats.add(&row)
	if err := c.rows.put(row, c.opt.Rows); err != nil && c.err == nil {
		c.err = err
	}
}

// finish ends the requests still active when the queue ran dry (none, unless
// a worker can never admit them) and checks the run's invariants.
func (c *Cluster) finish() error {
	var ids []int64
	for id := range c.active {
		ids = append(ids, id)
	}
	sortInt64(ids) // map order must not reach the rows
	for _, id := range ids {
		c.end(c.active[id], report.OutcomeUnfinished, c.q.Now())
	}
	if c.err != nil {
		return c.err
	}
	if c.rows.pending() != 0 {
		return fmt.Errorf("sim: %d request rows never written", c.rows.pending())
	}
	if c.opt.Check {
		for _, n := range c.workers {
			if err := n.w.Check(); err != nil {
				return &InvariantError{At: c.q.Now(), Err: err}
			}
			if n.w.G1Used() != 0 || n.w.HasWork() {
				return &InvariantError{At: c.q.Now(), Err: fmt.Errorf("worker %d ends with %d G1 blocks in use and %d requests",
					n.w.ID(), n.w.G1Used(), n.w.Requests())}
			}
		}
		if c.stats.ended != c.stats.arrivals {
			return &InvariantError{At: c.q.Now(), Err: fmt.Errorf("%d requests arrived, %d ended", c.stats.arrivals, c.stats.ended)}
		}
	}
	return nil
}
