package sim

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// The planner in the loop (DESIGN.md section 13, docs/planner.md). Every
// interval, in the lifecycle phase after the scenario's own events of that
// instant, it reads the interval just ended as a planner scraping metrics
// would, and adds or drains workers through the same path as a scripted
// add or drain, each action an event of its own (origin planner).
//
// What it reads is kept exactly and cheaply: each worker's figures as last
// counted (node.meter), their totals over the ready workers, and the
// totals' integrals since the interval began. Whatever changes a worker's
// waiting requests, its G1 blocks in use or its status counts it again
// (meter) at once, so the totals are piecewise constant between counts and
// their integrals exact; --check verifies after every event that no change
// went uncounted (checkMeters). A run without a planner pays a nil check.

// plannerKey orders the decision after the scenario's lifecycle events of
// the same instant: what it reads, they have done.
const plannerKey = des.MaxKey

// planner is the autoscaler's state.
type planner struct {
	cfg      *scenarios.Planner
	capacity float64 // G1 blocks a worker
	// The ready workers' totals now, and their integrals over [from, last).
	waiting, used, ready             int64
	areaWaiting, areaUsed, areaReady area
	from, last                       des.Time
	arrivals                         int64 // in [from, now)
	next                             *des.Handle
	stopped                          des.Time // its last decision when planner.tail stopped it; 0 otherwise
	inFlight                         int      // the requests in flight then
	tied                             int      // its drains whose pick chose among tied workers by id
	timedOut                         int64    // the requests its drains' timeouts took off
	// acted is the workers of its last action and adding whether it added
	// them: it holds while one it added has not been ready, or one it
	// drained is draining.
	acted  []int32
	adding bool
	// wanted is what it wanted at the decisions within the scale-down
	// window that no later one there wanted as many as, most wanted first
	// (the target policy; remember).
	wanted []recommendation
	rows   []report.PlannerRow
}

// recommendation is what a decision wanted, and when.
type recommendation struct {
	at des.Time
	n  int
}

// meterState is a worker's figures as the planner last counted them: zero
// unless it is ready (ready 1).
type meterState struct {
	ready, waiting, used int64
}

// reading is what a decision reads of the interval just ended: the
// waiting requests a ready worker (queue) and the ready workers' G1 usage
// (kv), NaN when no worker was ready, and the arrival rate; and the same
// two over the whole cluster (the ready workers' waiting requests, their
// G1 usage in workers' worth), each the first times the ready workers
// averaged over the interval.
type reading struct {
	queue, kv, rate   float64
	waiting, kvWorker float64
}

// newPlanner is the planner of a plan, nil when its scenario has none.
func newPlanner(p *Plan) *planner {
	if !p.Scenario.HasPlanner() {
		return nil
	}
	return &planner{cfg: p.Scenario.Planner, capacity: float64(p.Engine.GPUBlocks)}
}

// schedulePlanner puts the first decision on the queue.
func (c *Cluster) schedulePlanner() {
	if p := c.planner; p != nil {
		p.next = c.q.ScheduleHandle(des.Time(p.cfg.Interval), des.PhaseLifecycle, plannerKey, (*plannerTick)(c), 0)
	}
}

// plannerDone cancels the next decision once the last request has ended.
func (c *Cluster) plannerDone() {
	if p := c.planner; p != nil && p.next != nil && c.next == nil && len(c.active) == 0 {
		c.q.Cancel(p.next)
		p.next = nil
	}
}

// meter counts n's figures again after a change (see the file's
// comment); without a planner, an inlined nil check.
func (c *Cluster) meter(n *node) {
	if c.planner != nil {
		c.recount(n)
	}
}

// recount integrates the planner's totals up to now and replaces n's
// figures in them with its figures now. Figures unchanged (a pass that
// moved no request in or out of waiting and no block) change no total:
// the integral, exact, is the same taken now or at the next change.
func (c *Cluster) recount(n *node) {
	p, m := c.planner, c.metered(n)
	if m == n.meter {
		return
	}
	p.advance(c.q.Now())
	p.waiting += m.waiting - n.meter.waiting
	p.used += m.used - n.meter.used
	p.ready += m.ready - n.meter.ready
	n.meter = m
}

// metered is n's figures now, as the planner counts them.
func (c *Cluster) metered(n *node) meterState {
	if c.status(n) != lifecycle.Ready {
		return meterState{}
	}
	return meterState{ready: 1, waiting: int64(n.w.Waiting()), used: int64(n.w.G1Used())}
}

// checkMeters verifies that every worker's figures were counted since they
// last changed.
func (c *Cluster) checkMeters() {
	for _, n := range c.workers {
		if m := c.metered(n); m != n.meter && c.err == nil {
			c.err = &InvariantError{Invariant: invPlannerMeter, At: c.q.Now(),
				Err: fmt.Errorf("worker %d shows %+v, the planner counted %+v", n.id, m, n.meter)}
		}
	}
}

// area is an integral of a count over nanoseconds, exact: 128 bits, so
// that no sum rounds (a float's would, past 2^53, and differently as the
// fast-forward and pass by pass split an interval differently).
type area struct{ hi, lo uint64 }

// add adds count x dt.
func (a *area) add(count int64, dt des.Time) {
	hi, lo := bits.Mul64(uint64(count), uint64(dt))
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, lo, 0)
	a.hi += hi + carry
}

// float is the area as a float64, rounded once.
func (a area) float() float64 { return float64(a.hi)*(1<<64) + float64(a.lo) }

// advance integrates the totals up to now.
func (p *planner) advance(now des.Time) {
	dt := now - p.last
	p.areaWaiting.add(p.waiting, dt)
	p.areaUsed.add(p.used, dt)
	p.areaReady.add(p.ready, dt)
	p.last = now
}

// read is the interval [from, now)'s reading; the next interval begins.
func (p *planner) read(now des.Time) reading {
	p.advance(now)
	dt := float64(now - p.from)
	r := reading{queue: math.NaN(), kv: math.NaN(), rate: float64(p.arrivals) / (dt / float64(des.Second)),
		waiting: p.areaWaiting.float() / dt, kvWorker: p.areaUsed.float() / (p.capacity * dt)}
	if ready := p.areaReady.float(); ready > 0 {
		r.queue = p.areaWaiting.float() / ready
		r.kv = p.areaUsed.float() / (p.capacity * ready)
	}
	p.areaWaiting, p.areaUsed, p.areaReady, p.arrivals, p.from = area{}, area{}, area{}, 0, now
	return r
}

// want is the count of workers the policy wants, given the reading and
// the workers ready or starting (active). target spreads the interval's
// load, as the ready workers carried it, at value a worker: the reading
// per ready worker times the ready workers averaged over the interval, not
// those ready at its end, of which one ready only now carried none of it
// (counted, it would be asked to carry a share of a load it never saw).
func (p *planner) want(r reading, active int) int {
	c := p.cfg
	switch c.Policy {
	case scenarios.PlannerLoad:
		l := c.Load
		switch {
		case r.queue > l.QueueUp || r.kv > l.KVUp:
			return active + c.Step
		case r.queue < l.QueueDown && r.kv < l.KVDown:
			return active - c.Step
		}
		return active
	case scenarios.PlannerThroughput:
		return workers(r.rate / c.Throughput.RequestsPerWorkerS)
	}
	t := c.Target
	m, load := r.queue, r.waiting
	if t.Metric == scenarios.TargetKV {
		m, load = r.kv, r.kvWorker
	}
	if math.IsNaN(m) || math.Abs(m/t.Value-1) <= t.Tolerance {
		return active
	}
	return workers(load / t.Value)
}

// workers is x workers rounded up, at most math.MaxInt32 (planner.parquet's
// wanted is an int32): a rate against a tiny requests_per_worker_s, or a
// load against a tiny target value, asks for more than any cluster holds.
func workers(x float64) int {
	if !(x < math.MaxInt32) { // +Inf too
		return math.MaxInt32
	}
	return int(math.Ceil(x))
}

// plannerTick is a decision.
type plannerTick Cluster

// Fire takes a decision and schedules the next, unless nothing but the
// sampler is pending (requests no worker can ever admit must not keep the
// run going) or the next would come more than planner.tail after the last
// arrival (stopped, which the warnings say). plannerDone cancels the next
// once the last request has ended.
func (t *plannerTick) Fire(now des.Time, _, _ uint64) {
	c := (*Cluster)(t)
	p := c.planner
	p.next = nil
	c.decide(now)
	next := des.AddSat(now, des.Time(p.cfg.Interval))
	switch {
	case c.q.Len() <= 1: // the sampler is pending while the planner is
	case c.next == nil && next > des.AddSat(c.stats.LastArrival(), des.Time(p.cfg.Tail)):
		p.stopped, p.inFlight = now, len(c.active)
	default:
		p.next = c.q.ScheduleHandle(next, des.PhaseLifecycle, plannerKey, t, 0)
	}
}

// decide reads the interval just ended, wants a count of workers and acts:
// an add or a drain through the lifecycle, or none, or a hold while its
// last action is in progress. Its row says which and why.
func (c *Cluster) decide(now des.Time) {
	p := c.planner
	r := p.read(now)
	t := &c.life
	ready, draining := t.Count(lifecycle.Ready), t.Count(lifecycle.Draining)
	starting := t.Count(lifecycle.Starting) + t.Count(lifecycle.Restarting) + t.Count(lifecycle.Down)
	active := ready + starting
	wanted := p.want(r, active)
	row := report.PlannerRow{AtNs: int64(now), Queue: r.queue, KV: r.kv, ArrivalRate: r.rate, Wanted: int32(wanted),
		Ready: int32(ready), Starting: int32(starting), Draining: int32(draining), Action: report.PlannerNone, Event: -1}
	defer func() { p.rows = append(p.rows, row) }()
	target := p.cfg.Policy == scenarios.PlannerTarget
	if target {
		p.remember(now, wanted)
	}
	if why := c.holding(); why != "" && (!target || p.cfg.Target.Hold) {
		row.Action, row.Why = report.PlannerHold, why
		return
	}
	goal, why := wanted, ""
	if most := p.windowMost(); target && goal < active && most > goal {
		goal, why = min(most, active), fmt.Sprintf("the scale-down window: it wanted %d within %v", most, des.Time(p.cfg.Target.ScaleDownWindow))
	}
	switch {
	case goal < p.cfg.MinWorkers:
		goal, why = p.cfg.MinWorkers, fmt.Sprintf("min_workers %d", p.cfg.MinWorkers)
	case goal > p.cfg.MaxWorkers:
		goal, why = p.cfg.MaxWorkers, fmt.Sprintf("max_workers %d", p.cfg.MaxWorkers)
	}
	delta := goal - active
	if d := max(-p.cfg.Step, min(p.cfg.Step, delta)); d != delta {
		delta, why = d, fmt.Sprintf("step %d", p.cfg.Step)
	}
	if drainable := max(ready-1, 0); delta < 0 && -delta > drainable { // as a scripted drain may not, it never drains the last ready worker
		delta, why = -drainable, fmt.Sprintf("%s ready, one kept", results.Count(ready, "worker", "workers"))
	}
	row.Why = why
	if delta == 0 {
		return
	}
	ev := p.cfg.AddEvent(now, delta)
	row.Action, row.Workers = report.PlannerAdd, int32(delta)
	if delta < 0 {
		ev = p.cfg.DrainEvent(now, -delta)
		row.Action, row.Workers = report.PlannerDrain, int32(-delta)
	}
	key := len(c.evs)
	c.evs = append(c.evs, ev)
	c.events.Append(ev)
	row.Event = int32(key)
	p.acted, p.adding = c.act(now, uint64(key)), delta > 0
}

// holding says why the planner holds: a worker it added is still starting
// or one it drained still draining; "" when it may decide.
func (c *Cluster) holding() string {
	p := c.planner
	for _, id := range p.acted {
		switch st := c.status(c.workers[id]); {
		case p.adding && c.workers[id].readyNs < 0 && st != lifecycle.Removed:
			return fmt.Sprintf("worker %d it added is starting", id) // or down before it was ever ready
		case !p.adding && st == lifecycle.Draining:
			return fmt.Sprintf("worker %d it drained is draining", id)
		}
	}
	return ""
}

// remember records what a decision at now wanted and forgets what fell out
// of the scale-down window (now - window, now]. It keeps only the
// recommendations no later one matches or passes, so they run from the
// most wanted down, and windowMost is the first: each is added and dropped
// once, where a scan of the window's every decision made a run of 1 ms
// decisions in a 5-minute window take minutes (TestWindowMost checks it
// against that scan).
func (p *planner) remember(now des.Time, n int) {
	w := des.Time(p.cfg.Target.ScaleDownWindow)
	i := 0
	for i < len(p.wanted) && p.wanted[i].at <= now-w {
		i++
	}
	kept := p.wanted[i:]
	for len(kept) > 0 && kept[len(kept)-1].n <= n {
		kept = kept[:len(kept)-1]
	}
	p.wanted = append(kept, recommendation{at: now, n: n})
}

// windowMost is the most workers wanted within the scale-down window, at
// the last decision remembered.
func (p *planner) windowMost() int {
	if len(p.wanted) == 0 {
		return 0
	}
	return p.wanted[0].n
}

// plannerWarnings say when a figure of the planner's run may mislead: its
// drains' picks chose by id among tied workers, planner.tail stopped it,
// or it took no action at all (the run is then the fixed fleet's).
func (c *Cluster) plannerWarnings() []string {
	p := c.planner
	if p == nil {
		return nil
	}
	var out []string
	if p.tied > 0 {
		why := "every one's cache empty, or every one's full"
		if pk := p.cfg.ScaleIn.Pick; pk == scenarios.PickBusiest || pk == scenarios.PickIdlest {
			why = "as many requests on each"
		}
		out = append(out, fmt.Sprintf("%d of the planner's drains picked by %s among ready workers tied on the pick's score (%s): "+
			"the lowest ids won, not the pick", p.tied, p.cfg.ScaleIn.Pick, why))
	}
	if p.stopped > 0 {
		why := "its workers had not finished them; they finished on the workers it had (a longer planner.tail lets it decide on)"
		if p.timedOut > 0 {
			why = "it was likely flapping, its drains' timeouts taking off requests its adds could not finish (look at planner.parquet's actions)"
		}
		out = append(out, fmt.Sprintf("the planner stopped deciding at %v, planner.tail (%v) after the last arrival, with %s still in flight: %s",
			p.stopped, des.Time(p.cfg.Tail), results.Count(p.inFlight, "request", "requests"), why))
	}
	acted := false
	whys := map[string]int{} // the rows' reasons, for a planner that never acted
	for _, r := range p.rows {
		acted = acted || r.Action == report.PlannerAdd || r.Action == report.PlannerDrain
		whys[r.Why]++
	}
	fleet := "fixed fleet of " + results.Count(c.sc.Cluster.Workers, "worker", "workers") // its, the
	if len(c.sc.WithoutChaos().Events) > 0 {
		fleet = "scenario's own workers (" + results.Count(c.sc.Cluster.Workers, "worker", "workers") + " and what its events did)"
	}
	switch {
	case len(p.rows) == 0:
		out = append(out, fmt.Sprintf("the run ended before the %s planner's first decision at %v: it is the %s",
			p.cfg.Policy, des.Time(p.cfg.Interval), fleet))
	case !acted:
		look := "look at planner.parquet's readings against its thresholds"
		if why, n := mostCommon(whys); why != "" {
			look = fmt.Sprintf("%d of them %s %q: look at planner.parquet's why", n, results.Plural(n, "says", "say"), why)
		}
		out = append(out, fmt.Sprintf("the %s planner took no action in its %s: the run is its %s (%s)",
			p.cfg.Policy, results.Count(len(p.rows), "decision", "decisions"), fleet, look))
	}
	return out
}

// mostCommon is the reason most rows give, the first in sorted order of
// those tied, and how many give it; "" when the most give none.
func mostCommon(whys map[string]int) (string, int) {
	best, n := "", 0
	for _, why := range slices.Sorted(maps.Keys(whys)) {
		if whys[why] > n {
			best, n = why, whys[why]
		}
	}
	return best, n
}
