// Package sim is the cluster simulation: Prepare turns a scenario into the
// model's configurations and checks them, and a Plan's Run builds workers,
// the router and KVCR, runs them on one event queue, and streams request,
// pull and sample rows and a summary out.
package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/workload"
)

// Sink receives the rows a run streams out: requests in request_id order,
// pulls in pull_id order, samples in time order. A row is the run's again
// once the call returns: a sink copies what it keeps.
type Sink interface {
	Request(*report.RequestRow) error
	Pull(*report.PullRow) error
	Sample(*report.SampleRow) error
}

// Options are the run's hooks. None changes the digest or a row a run
// streams; Twins adds each event's effect to its events.parquet row.
type Options struct {
	Sink  Sink // nil: rows are only summarised
	Check bool // verify invariants during the run; a violation stops it
	// PassByPass turns the decode fast-forward off: every pass is an event
	// of its own, as stretch.go describes. Tests set it to compare.
	PassByPass bool
	// Progress, when set, is called every ProgressEvery events with the
	// number of requests ended and the virtual time.
	Progress func(done int64, now des.Time)
	// Twins runs, beside the run, the twin of each of its scenario events
	// (twin.go): events.parquet then holds each event's effect.
	Twins bool
	// crossEvents makes every crossing of a stretch an event of the run's
	// queue, as a planner does, instead of deferring it (stretch.go): the
	// package's tests compare the two.
	crossEvents bool
}

// ProgressEvery is how many events pass between Progress calls.
const ProgressEvery = 1 << 16

// Result is what a run returns besides its streamed rows.
type Result struct {
	Summary  *results.Summary
	Workers  []report.WorkerRow  // by worker id
	Counters []report.CounterRow // in report order
	Planner  []report.PlannerRow // the planner's decisions, in time order; nil without a planner
}

// Cluster is one run in progress.
type Cluster struct {
	sc        *scenarios.Scenario
	plan      *Plan
	opt       Options
	q         des.Queue
	workers   []*node
	life      lifecycle.Table // every worker's status: the one copy, which the router and KVCR read
	router    *scheduler.Router
	kv        *kvcr.KVCR     // nil when KVCR is off
	chains    *block.Chains  // the requests' block chains, interned while they are in the cluster
	moveHints bool           // hints ask for move pulls (router.hints.mode)
	scanned   des.Time       // the last instant whose workers with parked pulls were woken
	rescan    []int32        // the workers a rescan of parked pulls may change, and perhaps some it no longer may (parked.go)
	instant   instantNote    // the current instant's start, as a rescan of parked pulls needs it (parked.go)
	stretches int            // workers in a stretch of quiet passes (stretch.go)
	met       fastForwardMet // the fast-forward's rarer turns, counted for the tests
	// rescanChecks counts the stretches started under Options.Check: every
	// max(1, workers/16)th checks the whole cluster (checkRescans).
	rescanChecks int
	// deferred holds the stretches' crossings while they wait for an event
	// that looks at what they change (stretch.go); nil when each crossing
	// is an event of q.
	deferred *des.Queue
	source   workload.Source
	// shared is its read-ahead when it shares one with its twins (twin.go);
	// nil when it reads its own.
	shared     *workload.Prefetched
	next       *workload.Request // read ahead: the next arrival
	active     map[int64]*request
	requests   reorder[report.RequestRow]
	pulls      reorder[report.PullRow]
	digest     *report.Digest
	sample     report.SampleRow // the sampler's row, handed to the sink a worker at a time
	sampleRows int64            // the time-series rows sampled so far, with a sink or not (runaway)
	stats      results.Stats
	counts     results.Counters  // the ones counted as the run goes (hints attached, requests rerouted); counters() fills in the rest
	events     *results.EventLog // what each scenario event did; nil without events
	warnings   []string          // what the run found that may make its results mislead
	unrouted   unrouted          // the requests that found no ready worker
	faults     faults            // the faults started, in force or ended (faults.go)
	// evs is the run's events: the scenario's, then its planner's as it
	// decides them (planner.go), each its index's events.parquet row.
	evs     []scenarios.Event
	planner *planner // nil without one
	err     error
}

// fastForwardMet counts two turns of the fast-forward that only some runs
// take, for the tests that make sure their cases take them.
type fastForwardMet struct {
	parkedStretches int // stretches started while a request's pull was parked (at a busy worker)
	idleSettles     int // drive scans that left their worker idle with a parked pull while stretches ran
}

// node is a worker and what the simulation keeps beside it.
type node struct {
	id     int32
	w      *engine.Worker
	drive  bool        // a drive scan is scheduled at the current time
	rescan bool        // listed in Cluster.rescan
	ff     *des.Handle // the end of the worker's stretch, when in one
	fired  *des.Handle // the last stretch's end, fired: the next stretch's, scheduled again (nil: none to reuse)
	cross  *des.Handle // the stretch's next crossing, pending or fired, on crossings(); nil before the first and once a settle or the stretch's end cancelled it (stretch.go)
	// stored is the blocks committed to G1 since the pass began, as runs in
	// the order committed, written to G2 at its end. It holds no segment
	// reference across the events in between: each block belongs to a
	// request on the worker (running, or waiting with its loaded blocks)
	// until that pass end, whose path keeps its segment.
	stored    []block.Run
	addedNs   des.Time
	readyNs   des.Time
	drainNs   des.Time
	removedNs des.Time
	completed int64
	// readyDue is when its pending lifeReady may make it ready.
	readyDue des.Time
	// The down faults (fault_down.go): the times it went down (a pass
	// end scheduled before one, whose arg is the count then, is stale
	// after it), the time spent down before downAt, downAt (-1 while up)
	// and the fault event that took it down.
	downs  uint64
	downNs des.Time
	downAt des.Time
	downBy int
	meter  meterState // its figures as the planner last counted them (planner.go)
}

// request is a request between arrival and its row.
type request struct {
	req   *workload.Request
	route scheduler.Route
	// seq is its attempt on its worker; nil until it is routed. Taken off
	// a worker it lost, it stays that attempt until the request is routed
	// again or ends (requeue): the row of one that ends then is of it.
	seq      *engine.Seq
	reroutes int32
	// of earlier attempts, on workers it lost
	priorPreemptions int
	priorComputed    int
	// Migration (fault_down.go): the request as it arrived (nil until it
	// migrates: req is then the attempt's, with the carried tokens in its
	// prompt), its migrations, and the first scheduling and first token
	// its user saw (-1: none yet).
	orig         *workload.Request
	migrations   int32
	firstSched   des.Time
	firstTokenAt des.Time
}

// Run prepares the scenario (Prepare) and simulates it to the end, as
// Plan.Run.
func Run(ctx context.Context, sc *scenarios.Scenario, opt Options) (*Result, error) {
	p, err := Prepare(sc)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, opt)
}

// InternalError is a panic: a bug in kvsim, not in its input. At is the
// virtual time of a run's panic, -1 for one outside a run.
type InternalError struct {
	Value any
	At    des.Time
	Stack []byte
}

func (e *InternalError) Error() string {
	at := ""
	if e.At >= 0 {
		at = fmt.Sprintf(" at virtual time %v", e.At)
	}
	return fmt.Sprintf("internal error%s: %v (a bug in kvsim: please report it with the command line and these lines)\n%s",
		at, e.Value, bytes.TrimSpace(e.Stack))
}

// CatchPanic, deferred at the top of a goroutine, turns its panic into an
// *InternalError in *err (a run's own panics are one already). Deferred
// functions run as a panic unwinds, so those deferred after it (an output
// directory's Abort) have run by then.
func CatchPanic(err *error) {
	if v := recover(); v != nil {
		*err = &InternalError{Value: v, At: -1, Stack: debug.Stack()}
	}
}

// illegalTransition is the panic of a change of state its table does not
// allow: a pull's (kvcr), a worker's (lifecycle) or a request's in a worker
// (engine), each a TransitionError naming the invariant it breaks.
type illegalTransition interface {
	error
	Invariant() string
}

// Run simulates the plan to the end. Cancelling ctx stops the run with
// ctx's error. A model bug that panics becomes an error: an InvariantError
// when an event was scheduled in the past or a state changed along no
// transition, an internal error otherwise.
func (p *Plan) Run(ctx context.Context, opt Options) (*Result, error) {
	c, err := build(p, opt, nil)
	if err != nil {
		return nil, err
	}
	if !opt.Twins || len(p.Scenario.Events) == 0 {
		return c.run(ctx)
	}
	return c.runWithTwins(ctx)
}

// run simulates a built cluster to the end, as Run.
func (c *Cluster) run(ctx context.Context) (*Result, error) {
	if err := c.simulate(ctx); err != nil {
		return nil, err
	}
	return c.result()
}

// simulate runs a built cluster's events to the end and checks its end
// state (finish). A panic becomes an error, as Run says.
func (c *Cluster) simulate(ctx context.Context) (err error) {
	sc := c.sc
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if pe, ok := r.(des.PastError); ok {
			err = &InvariantError{Invariant: invTimeMonotonic, At: pe.Now, Err: pe}
			return
		}
		if te, ok := r.(illegalTransition); ok {
			err = &InvariantError{Invariant: te.Invariant(), At: c.q.Now(), Err: te}
			return
		}
		err = &InternalError{Value: r, At: c.q.Now(), Stack: debug.Stack()}
	}()
	ahead := c.shared
	if ahead == nil {
		src, closer, err := c.plan.OpenSource()
		if err != nil {
			return err
		}
		defer closer.Close()
		ahead = workload.Prefetch(src, readAheadBatch, readAheadBatches)
	}
	defer ahead.Close() // before the trace closes: the run may end before the source does
	c.source = ahead
	c.readNext()
	if c.next == nil && c.err == nil {
		return errNoRequests(sc)
	}
	c.scheduleLifecycle()
	c.schedulePlanner()
	c.q.Schedule(0, des.PhaseSample, 0, (*sampler)(c), 0)
	c.loop(ctx)
	c.endStalled(ctx)
	if c.err != nil {
		return c.err
	}
	return c.finish()
}

// endStalled ends, once no event is left, the pulls whose writes links
// left down to the run's end hold (kvcr.EndStalled), runs what that lets
// happen (a draining worker they held retires; orders waiting their turn
// at a source stage, on the same link, and stall in turn), and so on until
// nothing stalls; then it warns of them.
func (c *Cluster) endStalled(ctx context.Context) {
	n, rounds, first := 0, 0, c.q.Now()
	for c.err == nil && c.kv != nil {
		k := c.kv.EndStalled(c.q.Now())
		if k == 0 {
			break
		}
		n, rounds = n+k, rounds+1
		c.applyKV()
		c.loop(ctx)
	}
	if rounds == 0 {
		return
	}
	when := fmt.Sprintf("%v (their write_end_ns)", first)
	if rounds > 1 {
		when = fmt.Sprintf("in %d rounds from %v to %v (their write_end_ns: each round let orders waiting their turn stage pulls that the links held in turn)",
			rounds, first, c.q.Now())
	}
	c.warnings = append(c.warnings, fmt.Sprintf("%d pull writes were still held by links down to the end of the run "+
		"(a link fault without `for`): the run cut them off at its end, %s, each pull ending as its target had answered", n, when))
}

// result is what a simulated cluster returns: its summary, with the digest,
// its workers' rows and its counters; with Check, an error when an event's
// KVCR ledger does not reconcile.
func (c *Cluster) result() (*Result, error) {
	sc := *c.sc
	sc.Events = c.evs // the events its rows are of: the scenario's, then its planner's
	added, removed := c.lifeTimes()
	sum, cs := results.Summarize(&c.stats, c.events, results.RunEnd{Scenario: &sc, EndNs: c.q.Now(), Events: c.q.Fired(),
		Counters: c.counters(), Added: added, Removed: removed, Warnings: c.endWarnings()})
	if c.opt.Check {
		if err := c.checkLedgers(sum.EventRows); err != nil {
			return nil, err
		}
	}
	sum.Digest = c.digest.Sum(cs)
	res := &Result{Summary: sum, Workers: c.workerRows(), Counters: cs}
	if c.planner != nil {
		res.Planner = c.planner.rows
	}
	return res, nil
}

// loop fires the run's events, one instant's in the order of the kernel's
// phases (des.Phase), until none is pending, the run fails or ctx is
// cancelled. Before an instant's first event it notes what a rescan of
// parked pulls at the instant needs (noteInstant). After each event its
// after-event steps run, by name, in this order (docs/model.md, "What
// happens at an instant"):
//
//  1. applyKV: what KVCR did in the event, when it was KVCR's, reaches the
//     workers, the router and the report (sim's own handlers apply it
//     after each call they make into KVCR);
//
// then, unless no event is left:
//
//  2. scanParked: once an instant at which anything happened, before its
//     drive scans, the parked orders are staged again and every idle
//     worker with a parked pull is woken to stage it again;
//  3. settleForOrders: an order parked in the event settles every stretch,
//     whose pass ends would have retried it;
//  4. progress: every ProgressEvery events, Options.Progress;
//  5. poll: whether ctx was cancelled, before the next event.
func (c *Cluster) loop(ctx context.Context) {
	for c.poll(ctx) {
		c.noteInstant()
		if !c.q.Step() {
			return
		}
		c.applyKV()
		if c.opt.Check {
			c.checkLooked()
			if c.planner != nil {
				c.checkMeters()
			}
		}
		if c.q.Len() == 0 {
			return
		}
		if c.q.Phase() < des.PhaseDrive {
			c.scanParked(c.q.Now())
		}
		c.settleForOrders()
		c.progress()
	}
}

// poll reports whether the run goes on: it has met no error and ctx is
// not cancelled (its error becomes the run's). ctx.Err is an atomic load,
// so the run asks after every event and stops within an event of a cancel.
func (c *Cluster) poll(ctx context.Context) bool {
	if err := ctx.Err(); err != nil && c.err == nil {
		c.err = err
	}
	return c.err == nil
}

// progress calls Options.Progress every ProgressEvery events with the
// requests ended and the virtual time.
func (c *Cluster) progress() {
	if c.opt.Progress != nil && c.q.Fired()%ProgressEvery == 0 {
		c.opt.Progress(c.stats.Ended(), c.q.Now())
	}
}

// The run reads its workload ahead on a goroutine of its own
// (workload.Prefetch), readAheadBatch requests a handover, at most
// readAheadBatches of them waiting: the event loop does only the model's
// work, and the trace's reading and the chains' hashing overlap it.
const (
	readAheadBatch   = 256
	readAheadBatches = 4
)

// build wires workers, router and KVCR for a plan.
// events is its event log; nil makes the log of the scenario's events.
func build(p *Plan, opt Options, events *results.EventLog) (*Cluster, error) {
	sc := p.Scenario
	rng := des.NewRNG(sc.Seed)
	if events == nil {
		events = results.NewEventLog(sc)
	}
	c := &Cluster{sc: sc, plan: p, opt: opt, active: map[int64]*request{}, digest: report.NewDigest(),
		moveHints: sc.Router.Hints.Mode == kvcr.ModeMove, scanned: -1, chains: &block.Chains{}, events: events,
		evs: slices.Clip(sc.Events), planner: newPlanner(p), stats: results.NewStats(sc)}
	rc := p.Router
	rc.Chains, rc.Workers, rc.HintCosts.RNG = c.chains, c.life.View(), rng.Stream("hints")
	r, err := scheduler.New(rc, rng.Stream("router"))
	if err != nil {
		return nil, err
	}
	c.router = r
	if deferCrossings(sc, opt) {
		c.deferred = &des.Queue{}
	}
	if p.KVCR != nil {
		kc := *p.KVCR
		kc.Chains, kc.Workers, kc.G1 = c.chains, c.life.View(), (*g1View)(c)
		c.kv = kvcr.New(kc, &c.q)
	}
	for range sc.Cluster.Workers {
		if err := c.addWorker(0, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// addWorker creates the next worker, ready at once or starting.
func (c *Cluster) addWorker(now des.Time, ready bool) error {
	id := c.life.Add(lifecycle.Starting)
	n := &node{id: id, addedNs: now, readyNs: -1, drainNs: -1, removedNs: -1, downAt: -1}
	var host engine.HostKV
	if c.kv != nil {
		host = &hostKV{c: c, w: id}
		c.kv.AddWorker(id)
	}
	cfg := c.plan.Engine
	cfg.ID, cfg.Chains = id, c.chains
	w, err := engine.New(cfg, c.plan.Timing, (*observer)(c), host)
	if err != nil {
		return err
	}
	n.w = w
	c.workers = append(c.workers, n)
	if ready {
		c.ready(now, n)
	}
	return nil
}

// ready makes a worker schedulable.
func (c *Cluster) ready(now des.Time, n *node) {
	c.life.Set(n.id, lifecycle.Ready)
	c.meter(n)
	if n.readyNs < 0 { // a restart after a down keeps the first
		n.readyNs = now
	}
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
	if req.ID > report.MaxID {
		c.err = c.sc.ErrAt("workload", "more than %d requests: request_id is an int32 in requests.parquet", report.MaxID+1)
		return
	}
	c.next = req
	c.q.Schedule(req.Arrival, des.PhaseArrival, uint64(req.ID), (*arrival)(c), 0)
}

type arrival Cluster

// Fire routes the arriving request and reads the one after it.
func (a *arrival) Fire(now des.Time, _, _ uint64) {
	c := (*Cluster)(a)
	c.look()
	req := c.next
	c.readNext()
	c.stats.Arrived(req.Arrival)
	if c.planner != nil {
		c.planner.arrivals++
	}
	r := &request{req: req, route: scheduler.Route{Worker: -1, HintSource: -1}, firstSched: -1, firstTokenAt: -1}
	e := c.sc.Cluster.Engine
	if (e.MaxModelLen > 0 && req.InputTokens+req.OutputTokens > e.MaxModelLen) || !c.workers[0].w.Fits(req) {
		c.end(r, report.OutcomeRejected, now)
		return
	}
	c.active[req.ID] = r
	c.chains.Collect() // between events: no Ref to a dropped segment is in flight
	req.Path = c.chains.Intern(req.Blocks, nil)
	if w, ok := c.route(now, r); ok {
		c.events.Routed(now, w)
		c.wake(w, now, true)
	}
}

// route sends an active request to a worker; with none schedulable it
// fails.
func (c *Cluster) route(now des.Time, r *request) (int32, bool) {
	c.checkSeen()
	rt, ok := c.router.Pick(now, r.req)
	if !ok {
		c.unrouted.add(now)
		c.end(r, report.OutcomeFailed, now)
		return -1, false
	}
	r.route = rt
	if rt.HintSource >= 0 {
		c.counts.HintsAttached++
	}
	n := c.workers[rt.Worker]
	c.settle(n)
	if s := r.seq; s != nil { // the attempt on a worker it lost (requeue) becomes an earlier one
		r.priorPreemptions += s.Preemptions
		r.priorComputed += s.ComputedPromptTokens
	}
	r.seq = n.w.Enqueue(r.req, rt.HintSource >= 0)
	c.meter(n)
	return rt.Worker, true
}

// wake makes worker w scan for work at now, once. inline lets the queue
// run the scan at once (des.Queue.FireOrSchedule): only the last action
// of a handler fired by the queue may ask for it. During a stretch the
// pass ends it stands for are not on the queue, which cannot tell then
// whether the scan would be the next event, so the scan is scheduled.
func (c *Cluster) wake(w int32, now des.Time, inline bool) {
	n := c.workers[w]
	if n.drive || c.status(n) == lifecycle.Removed || n.w.Busy() {
		return
	}
	n.drive = true
	if inline {
		c.scanParked(now) // their scans come first when their ids are lower
	}
	if inline && c.stretches == 0 {
		c.q.FireOrSchedule(des.PhaseDrive, uint64(w), (*drive)(c), 0)
		return
	}
	c.q.Schedule(now, des.PhaseDrive, uint64(w), (*drive)(c), 0)
}

type drive Cluster

// Fire is a drive scan: an idle worker with work starts a pass, or a
// stretch of passes (stretch.go).
func (d *drive) Fire(now des.Time, key, _ uint64) {
	c := (*Cluster)(d)
	n := c.workers[key]
	n.drive = false
	if st := c.status(n); st == lifecycle.Removed || st == lifecycle.Down || n.w.Busy() || !n.w.HasWork() {
		return
	}
	end, ok := n.w.StartPass(now)
	c.meter(n)
	if !ok {
		c.noteIdleParked(n)
		c.checkRescans(n)
		c.maybeRetire(now, n) // the scan may have rejected the last request a draining worker held
		return
	}
	last := end
	if c.canStretch(n) {
		last = n.w.Stretch(end, engine.MaxStretch)
	}
	if last != end {
		if c.kv != nil && c.kv.ParkedRequests() > 0 {
			c.met.parkedStretches++
		}
		n.ff, n.fired = c.q.ScheduleAgain(n.fired, last, des.PhasePass, key, (*passDone)(c), n.downs), nil
		c.stretches++
		c.scheduleCross(n)
	} else {
		c.q.Schedule(end, des.PhasePass, key, (*passDone)(c), n.downs)
	}
	c.check(n)
	c.checkRescans(n)
}

type passDone Cluster

// Fire ends a worker's pass, stores its new full blocks to G2 and rescans
// it.
func (p *passDone) Fire(now des.Time, key, downs uint64) {
	c := (*Cluster)(p)
	n := c.workers[key]
	if c.status(n) == lifecycle.Removed || downs != n.downs {
		return // the worker went with its pass, or its engine went down
	}
	if n.ff != nil { // the stretch's last pass ends
		n.ff, n.fired = nil, n.ff
		c.endStretch(n, now, false, false) // every pass but the last started before now
	}
	n.w.FinishPass(now)
	c.meter(n)
	if c.kv != nil && len(n.stored) > 0 {
		c.kv.Store(now, n.id, n.stored)
		c.applyKV()
		n.stored = n.stored[:0]
	}
	c.check(n)
	c.maybeRetire(now, n)
	c.wake(n.id, now, true)
}

// observer receives the workers' reports.
type observer Cluster

func (o *observer) BlocksStored(w int32, runs []block.Run) {
	c := (*Cluster)(o)
	c.router.Stored(c.q.Now(), w, scheduler.G1, runs)
	if c.kv != nil {
		n := c.workers[w]
		for _, r := range runs {
			n.stored = block.AppendRun(n.stored, r)
		}
	}
}

func (o *observer) BlocksRemoved(w int32, runs []block.Run) {
	o.router.Removed(o.q.Now(), w, scheduler.G1, runs)
}

func (o *observer) FirstToken(now des.Time, s *engine.Seq) {
	c := (*Cluster)(o)
	c.router.FirstToken(c.active[s.Req.ID].route)
	c.events.Tokens(now, 1, -1, c.byLastArrival(now))
}

func (o *observer) Token(now des.Time, _ *engine.Seq, gap des.Time) {
	c := (*Cluster)(o)
	c.stats.Token(gap)
	c.events.Tokens(now, 1, gap, c.byLastArrival(now))
}

func (o *observer) Tokens(ends []des.Time, n int) {
	c := (*Cluster)(o)
	c.stats.TokenSteps(ends, n)
	if c.events == nil {
		return
	}
	for j := 1; j < len(ends); j++ {
		c.events.Tokens(ends[j], n, ends[j]-ends[j-1], c.byLastArrival(ends[j]))
	}
}

// byLastArrival reports whether t, at most the current time, is at most
// the run's last arrival: a request is still to arrive (it arrives at the
// current time or later), or t is at most the last that did.
func (c *Cluster) byLastArrival(t des.Time) bool {
	return c.next != nil || t <= c.stats.LastArrival()
}

func (o *observer) Finished(now des.Time, s *engine.Seq) {
	c := (*Cluster)(o)
	r := c.active[s.Req.ID]
	c.router.Finished(r.route, true)
	c.workers[s.Worker].completed++
	c.end(r, report.OutcomeCompleted, now)
}

// Ignored ends a request its worker can never schedule again (without
// chunked prefill, its recompute after a preemption exceeds the budget) as
// rejected, on that worker.
func (o *observer) Ignored(now des.Time, s *engine.Seq) {
	c := (*Cluster)(o)
	r := c.active[s.Req.ID]
	c.router.Finished(r.route, s.FirstTokenAt >= 0)
	c.end(r, report.OutcomeRejected, now)
}

// end writes a request's row and drops it from the active set.
func (c *Cluster) end(r *request, outcome string, now des.Time) {
	delete(c.active, r.req.ID)
	c.chains.Release(r.req.Path)
	r.req.Path = nil
	req := r.req
	if r.orig != nil {
		req = r.orig // its own prompt, not the one it migrated with
	}
	row := report.RequestRow{
		RequestID: req.ID, Worker: r.route.Worker, ArrivalNs: int64(req.Arrival),
		FirstTokenNs: -1, FinishNs: int64(now), InputTokens: int64(req.InputTokens),
		OutputTokens: int64(req.OutputTokens), HintSource: r.route.HintSource, Outcome: outcome,
		Reroutes: r.reroutes, Migrations: r.migrations, Preemptions: int32(r.priorPreemptions),
		ComputedPromptTokens: int64(r.priorComputed), ScheduledNs: -1,
		MeasuredTTFTNs: -1, MeasuredE2ENs: -1, MeasuredQueueNs: -1, MeasuredPrefillNs: -1, MeasuredDecodeNs: -1,
		PrevRequestID: req.Prev,
	}
	if m := req.Measured; m != nil {
		row.MeasuredTTFTNs, row.MeasuredE2ENs, row.MeasuredQueueNs = int64(m.TTFT), int64(m.E2E), int64(m.Queue)
		row.MeasuredPrefillNs, row.MeasuredDecodeNs = int64(m.Prefill), int64(m.Decode)
	}
	if s := r.seq; s != nil {
		row.ScheduledNs = int64(s.ScheduledAt)
		row.FirstTokenNs = int64(s.FirstTokenAt)
		row.G1HitTokens = int64(s.G1HitTokens)
		row.G2HitTokens = int64(s.G2HitTokens)
		row.PulledTokens = int64(s.PulledTokens)
		row.ComputedPromptTokens += int64(s.ComputedPromptTokens)
		row.Preemptions += int32(s.Preemptions)
	}
	if r.firstTokenAt >= 0 { // a migrated request: the first token its user saw
		row.ScheduledNs, row.FirstTokenNs = int64(r.firstSched), int64(r.firstTokenAt)
	}
	if outcome == report.OutcomeUnfinished {
		row.FinishNs = -1
	}
	if c.opt.Check && c.err == nil {
		if err := checkCausal(&row); err != nil {
			c.err = &InvariantError{Invariant: invCausal, At: now, Err: err}
		}
	}
	c.stats.RequestEnded(&row)
	c.events.Ended(&row, c.byLastArrival(des.Time(row.FinishNs)))
	if err := c.requests.put(row.RequestID, row, c.releaseRequest); err != nil && c.err == nil {
		c.err = err
	}
	c.plannerDone()
}

// releaseRequest is where request rows leave, in request_id order: into
// the digest and the sink.
func (c *Cluster) releaseRequest(r *report.RequestRow) error {
	c.digest.Request(r)
	if c.opt.Sink == nil {
		return nil
	}
	return c.opt.Sink.Request(r)
}

// releasePull is releaseRequest for pull rows, in pull_id order.
func (c *Cluster) releasePull(r *report.PullRow) error {
	if r.PullID > report.MaxID {
		return fmt.Errorf("sim: more than %d pulls: pull_id is an int32 in pulls.parquet", report.MaxID+1)
	}
	c.digest.Pull(r)
	if c.opt.Sink == nil {
		return nil
	}
	return c.opt.Sink.Pull(r)
}

// finish ends the requests still active when the queue ran dry (none,
// unless a worker can never admit them), flushes the rows and checks the
// run's invariants.
func (c *Cluster) finish() error {
	c.linkSlowAtEnd()
	for _, id := range slices.Sorted(maps.Keys(c.active)) { // map order never reaches the model
		c.end(c.active[id], report.OutcomeUnfinished, c.q.Now())
	}
	if c.err != nil {
		return c.err
	}
	if n := c.requests.pending() + c.pulls.pending(); n != 0 {
		return fmt.Errorf("sim: %d rows never written", n)
	}
	if c.opt.Check {
		return c.checkEnd()
	}
	return nil
}

// status is n's place in its lifecycle.
func (c *Cluster) status(n *node) lifecycle.Status { return c.life.Of(n.id) }
