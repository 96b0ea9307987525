package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// The kinds of scenario event the log tells apart: the scenario's keys for
// them, events.parquet's kind.
const (
	kindDrain  = scenarios.KindDrain
	kindRemove = scenarios.KindRemove
	kindAdd    = scenarios.KindAdd
	kindDown   = scenarios.KindDown
)

// EventColumns is events.parquet's schema with the kinds of scenario
// event as its kind dictionary. A writer of events.parquet takes it.
var EventColumns = report.EventColumns(scenarios.Kinds)

// busyShare is how many requests routed in the window before an event make
// its workers' share of them mean something (the load-share warning).
const busyShare = 20

// EventLog records what each scenario event did: its events.parquet row.
// sim tells it what happens; it only observes, and nothing of the model
// reads it, so it changes no digest. Its methods do nothing on a nil log
// (a scenario without events).
type EventLog struct {
	window   des.Time   // report.event_window
	evs      []eventRec // by scenario index
	lastWork []des.Time // by worker: when a request or request pull last ended on it
	left     []leftAt   // by worker: what its G2 held when it was removed
	endedOn  []int32    // by request id: the worker it ended on (-1: none, or not yet ended)
	segs     timeline   // the tokens emitted, by piece of time between windows' edges (tokens.go)
	finished bool       // the windows hold their tokens (finish)
	leftOut  int        // a twin's log: the records of the events left out, last (NewTwinLog)
}

// leftAt is what a removed worker's G2 held: its blocks (-1: not removed)
// and its pool's flows then.
type leftAt struct {
	blocks int64
	flows  kvcr.Flows
}

// grown is s, grown with fill to hold index i.
func grown[T any](s []T, i int, fill T) []T {
	for len(s) <= i {
		s = append(s, fill)
	}
	return s
}

// eventRec is one event's record.
type eventRec struct {
	at    des.Time
	kind  string
	named []int32   // the workers it acts on, once fired
	flows []flowsAt // the G2 flows of those of them that existed, when it fired
	idle  []int32   // of those, the ones holding no work and no cache then
	again []int32   // of those, the ones an earlier event drained or removed already, on which it does nothing
	// all counts the requests first routed in [at-window, at), once it
	// has fired (Fired)
	all int64
	row report.EventRow // its at-event and after-event columns, as they happen
	// its orders (an evacuation or a prewarm): the blocks planned, the
	// blocks their pulls landed, and when the last pull ended
	orders, planned, landed int64
	ordersEnd               des.Time
	before                  eventWindow // [max(0, at-window), at)
	after                   eventWindow // [at, at+window), to the last arrival
	twin                    *eventRec   // the same record in its twin's log (Pair); nil without
	twinDigest              string      // the twin's digest
	inert                   bool        // every request's row is the same in its twin
	origin                  string      // events.parquet's origin
	late                    bool        // decided during the run (Append): its window before measures nothing
	rank                    int         // late: its window after starts at the rank-th edge at its instant (timeline.cutAfter)
	forNs                   int64       // a fault's length; -1 none
	fault                   report.EventFault
}

// flowsAt is a worker's G2 flows at an instant.
type flowsAt struct {
	id    int32
	flows kvcr.Flows
}

// eventWindow accumulates one window's figures.
type eventWindow struct {
	segs                                  []segment        // the segments of time it spans, once the log is finished (tokens.go): its arrivals for its cohort (cohort.go)
	ttft, e2e, tpot, queue                report.Dist      // completed requests arriving in it
	itl                                   report.Histogram // gaps of tokens emitted in it
	requests, input, g1, g2, pl, computed int64            // completed requests arriving in it, their prompt tokens by source
	completed, tokens                     int64            // requests completed and tokens emitted in it
}

// NewEventLog returns the log of sc's events, nil when it has none and no
// planner to add some (Append).
func NewEventLog(sc *scenarios.Scenario) *EventLog {
	if len(sc.Events) == 0 && !sc.HasPlanner() {
		return nil
	}
	return newLog(sc)
}

// NewTwinLog returns the log of the twin of the events at instants ats:
// the log of sc's events (sc is the scenario without them) and, last, a
// record of each event left out, which never fires but measures its
// windows as the run's record does, for Pair.
func NewTwinLog(sc *scenarios.Scenario, ats []des.Time) *EventLog {
	l := newLog(sc)
	for _, at := range ats {
		l.add(eventRec{at: at, ordersEnd: -1})
	}
	l.leftOut = len(ats)
	return l
}

// newLog is the log of sc's events, none or more.
func newLog(sc *scenarios.Scenario) *EventLog {
	l := &EventLog{window: des.Time(sc.Report.EventWindow)}
	for _, ev := range sc.Events {
		l.add(record(ev))
	}
	return l
}

// record is ev's record before it fires.
func record(ev scenarios.Event) eventRec {
	e := eventRec{at: des.Time(ev.At), kind: ev.Kind(), ordersEnd: -1, origin: "scenario", forNs: -1}
	if ev.Origin != scenarios.OriginScenario {
		e.origin = string(ev.Origin)
	}
	if ev.Fault() && ev.For > 0 {
		e.forNs = int64(ev.For)
	}
	return e
}

// Append adds the record of an event decided during the run (a planner's,
// at the current instant), after the scenario's events and those decided
// before it: its index is the run's next event's. In a twin's log it goes
// before the records of the events left out, which stay last. Its window
// before is not measured (nothing knew of it then): its row's window
// before is empty.
func (l *EventLog) Append(ev scenarios.Event) {
	e := record(ev)
	e.late = true
	l.add(e)
}

// add adds an event's record, and its windows' edges to the timeline:
// last, or in a twin's log before the records of the events left out.
func (l *EventLog) add(e eventRec) {
	i := len(l.evs) - l.leftOut
	l.evs = slices.Insert(l.evs, i, e)
	if e.late {
		l.evs[i].rank = l.segs.cutAfter(e.at)
	} else {
		l.segs.cut(max(0, e.at-l.window))
		l.segs.cut(e.at)
	}
	l.segs.cut(des.AddSat(e.at, l.window))
}

// Pair gives event key of the run the log of its twin (NewTwinLog), in
// which it is the j-th event left out, and the twin's digest, once both
// runs have ended: its row then holds the twin's window after and the
// difference. inert says every request's row was the same in both: the
// event changed nothing a request saw, which the run's warnings say.
func (l *EventLog) Pair(key int, twin *EventLog, j int, digest string, inert bool) {
	if l == nil {
		return
	}
	twin.finish()
	t := twin.evs[len(twin.evs)-twin.leftOut+j] // the one record, not the twin's whole log
	e := &l.evs[key]
	e.twin, e.twinDigest, e.inert = &t, digest, inert
}

// Faulted adds to what fault event key did (report.EventFault).
func (l *EventLog) Faulted(key int, f report.EventFault) {
	if l == nil {
		return
	}
	l.evs[key].fault.Add(f)
}

// WorkerAt is what a worker a scenario event names held when the event
// fired, before it acted: its requests running and waiting, the pulls it
// serves and receives, its G2 blocks and its G2 pool's flows so far,
// whether its G1 caches a block, and its status.
type WorkerAt struct {
	ID                                   int32
	Running, Waiting, Serving, Receiving int
	G2                                   int
	G2Flows                              kvcr.Flows
	Cached                               bool
	Status                               lifecycle.Status
}

// Fired records scenario event key as it happens, before it acts on ids:
// named is what those of them that exist (not the ones an add makes) held
// then, clusterRequests the requests on every worker and schedulable the
// ready workers.
func (l *EventLog) Fired(key int, ids []int32, named []WorkerAt, clusterRequests, schedulable int64) {
	if l == nil {
		return
	}
	e := &l.evs[key]
	e.named = ids
	r := &e.row
	r.Fired = true
	var share int64 // requests of the window before first routed to ids
	for _, n := range named {
		r.RunningAtEvent += int64(n.Running)
		r.WaitingAtEvent += int64(n.Waiting)
		r.PullsServingAtEvent += int64(n.Serving)
		r.PullsReceivingAtEvent += int64(n.Receiving)
		r.G2BlocksAtEvent += int64(n.G2)
		e.flows = append(e.flows, flowsAt{n.ID, n.G2Flows})
		if n.Status == lifecycle.Removed || n.Status == lifecycle.Draining && e.kind == kindDrain || n.Status == lifecycle.Down && e.kind == kindDown {
			e.again = append(e.again, n.ID)
		} else if n.Running+n.Waiting+n.Serving+n.Receiving+n.G2 == 0 && !n.Cached {
			e.idle = append(e.idle, n.ID)
		}
	}
	if !e.late { // decided now: nothing knew of it before
		from, to := l.before(e)
		e.all, share = l.segs.routedTo(from, to, ids)
	}
	r.RequestsAtEvent = r.RunningAtEvent + r.WaitingAtEvent
	r.LoadShare = ratio(share, e.all)
	r.ClusterRequestsAtEvent, r.SchedulableAtEvent = clusterRequests, schedulable
}

// Routed records that a request arriving at now was first routed to w.
func (l *EventLog) Routed(now des.Time, w int32) {
	if l != nil {
		l.segs.route(now, w)
	}
}

// Tokens records n tokens emitted at t, at most the current time, each
// gap after the one before it of its request (gap < 0: first tokens, no
// gap); open says t is at most the run's last arrival (a request is still
// to arrive, or t is at most the last that did).
func (l *EventLog) Tokens(t des.Time, n int, gap des.Time, open bool) {
	if l != nil {
		l.segs.add(t, n, gap, open)
	}
}

// finish gives every window the tokens emitted in it (tokens.go): a
// window before all of them, a window after those at most the last
// arrival. Once the run has ended; again, it does nothing.
func (l *EventLog) finish() {
	if l.finished {
		return
	}
	l.finished = true
	var ws []window
	for i := range l.evs {
		e := &l.evs[i]
		if !e.late {
			from, to := l.before(e)
			ws = append(ws, window{from: from, to: to, w: &e.before})
		}
		ws = append(ws, window{from: l.segs.first(e.at) + e.rank, to: l.segs.first(des.AddSat(e.at, l.window)), open: true, w: &e.after})
	}
	l.segs.finish(ws)
}

// before is event e's window before as segments [from, to) of the
// timeline: [max(0, at - window), at).
func (l *EventLog) before(e *eventRec) (from, to int) {
	return l.segs.first(max(0, e.at-l.window)), l.segs.first(e.at)
}

// Ended records a request's row as it ends, at the current time; open
// says its finish is at most the run's last arrival (as for Tokens).
func (l *EventLog) Ended(r *report.RequestRow, open bool) {
	if l == nil {
		return
	}
	if r.Worker >= 0 {
		l.worked(r.Worker, des.Time(r.FinishNs))
	}
	l.recordWorker(r.RequestID, r.Worker)
	if r.Outcome != report.OutcomeCompleted {
		return
	}
	l.segs.arrive(des.Time(r.ArrivalNs), arrivalOf(r))
	l.segs.complete(des.Time(r.FinishNs), open)
}

// TimedOut records that scenario event key's drain_timeout removed a
// worker, taking requests off it: rerouted routed again, failed failed.
func (l *EventLog) TimedOut(key int, rerouted, failed int64) {
	if l == nil {
		return
	}
	l.evs[key].row.RemovedByTimeout++
	l.TookOff(key, rerouted, failed)
}

// TookOff records the requests scenario event key (or its drain_timeout)
// took off the workers it names: rerouted routed again, failed failed.
func (l *EventLog) TookOff(key int, rerouted, failed int64) {
	if l == nil {
		return
	}
	r := &l.evs[key].row
	r.RequestsRerouted += rerouted
	r.RequestsFailed += failed
}

// PullDone records a finished pull: an order's landed blocks and end for
// the event that issued it (its Tag), a request pull's end as work on its
// source and target, and a pull that staging refused, by reason, for each
// event that named its source before the refusal: each that has fired (at
// or before now).
func (l *EventLog) PullDone(p *kvcr.Pull) {
	if l == nil {
		return
	}
	if p.Tag >= 0 {
		e := &l.evs[p.Tag]
		e.landed += int64(p.Landed)
		e.ordersEnd = max(e.ordersEnd, max(p.EndNs, p.WriteEndNs))
		orderEnded(&e.row.Ends, p)
	} else if p.Outcome != kvcr.Rejected { // a rejected pull never involved its source
		end := max(p.EndNs, p.WriteEndNs)
		l.worked(p.Source, end)
		l.worked(p.Target, end)
	}
	if p.Outcome != kvcr.Rejected {
		return
	}
	for i := range l.evs {
		e := &l.evs[i]
		if !e.row.Fired || !slices.Contains(e.named, p.Source) {
			continue
		}
		switch p.Rejection {
		case kvcr.RejectedDraining:
			e.row.PullsRejectedDraining++
		case kvcr.RejectedRemoved:
			e.row.PullsRejectedRemoved++
		case kvcr.RejectedNotReady:
			e.row.PullsRejectedNotReady++
		case kvcr.RejectedMissing:
			e.row.PullsRejectedMissing++
		}
	}
}

// orderEnded counts in ends how an order whose pull p finished ended
// against its plan: by what it landed, or, landing nothing, by its
// outcome.
func orderEnded(ends *report.KVEnds, p *kvcr.Pull) {
	planned, landed := int64(p.Planned), int64(p.Landed)
	switch p.Outcome {
	case kvcr.Success, kvcr.Partial:
		ends.LandedShort += max(0, planned-landed)
		ends.LandedExtra += max(0, landed-planned)
	case kvcr.Superseded:
		ends.LostSuperseded += planned
	case kvcr.Rejected:
		ends.LostRejected += planned
	case kvcr.Expired:
		ends.LostExpired += planned
	case kvcr.Failed:
		ends.LostFailed += planned
	}
}

// OrderUnstaged records that an order ended with no pull: dropped while
// it waited for its turn, or, at its first staging, with nothing to fetch.
// p is its unstaged pull: its event (Tag) and its plan.
func (l *EventLog) OrderUnstaged(p *kvcr.Pull, dropped bool) {
	if l == nil {
		return
	}
	ends := &l.evs[p.Tag].row.Ends
	if dropped {
		ends.LostDropped += int64(p.Planned)
	} else {
		ends.LostNothingToFetch += int64(p.Planned)
	}
}

// Planned records where the G2 blocks that scenario event key's orders
// could draw from went when they were planned.
func (l *EventLog) Planned(key int, plan report.KVPlan) {
	if l != nil {
		l.evs[key].row.Plan = plan
	}
}

// drained is, for a drain that removed every worker it named, the G2
// blocks they held when removed, how long after its last work (a request
// or request pull ending, or the event) the slowest was removed (the time
// its removal waited for its evacuation, or for nothing), and their G2
// flows from the event to their removals. -1, -1 and every flow -1
// otherwise. removed is each worker's removal time (-1: never).
func (l *EventLog) drained(removed []des.Time, e *eventRec) (left, delay int64, flows report.KVRemoval) {
	none := report.KVRemoval{StoredAfter: -1, PulledInAfter: -1, EvictedAfter: -1, MovedAwayAfter: -1, DroppedAfter: -1, LostAfter: -1}
	if e.kind != kindDrain || len(e.named) == 0 || len(e.flows) != len(e.named) {
		return -1, -1, none
	}
	for _, f := range e.flows {
		id := f.id
		if removed[id] < 0 || int(id) >= len(l.left) {
			return -1, -1, none
		}
		left += l.left[id].blocks
		work := e.at
		if int(id) < len(l.lastWork) {
			work = max(work, l.lastWork[id])
		}
		delay = max(delay, int64(removed[id]-work))
		addFlows(&flows, l.left[id].flows, f.flows)
	}
	return left, delay, flows
}

// addFlows adds to m the flows from reading then to reading now.
func addFlows(m *report.KVRemoval, now, then kvcr.Flows) {
	m.StoredAfter += now.Stored - then.Stored
	m.PulledInAfter += now.Pulled - then.Pulled
	m.EvictedAfter += now.Evicted - then.Evicted
	m.MovedAwayAfter += now.Moved - then.Moved
	m.DroppedAfter += now.Dropped - then.Dropped
	m.LostAfter += now.Lost - then.Lost
}

// worked records that a request or a request's pull ended on worker w at t.
func (l *EventLog) worked(w int32, t des.Time) {
	l.lastWork = grown(l.lastWork, int(w), -1)
	l.lastWork[w] = max(l.lastWork[w], t)
}

// Ordered records that scenario event key issued an order planned to send
// blocks.
func (l *EventLog) Ordered(key int, blocks int) {
	if l != nil {
		l.evs[key].orders++
		l.evs[key].planned += int64(blocks)
	}
}

// LeftBehind records that worker w was removed at now holding g2 blocks,
// its G2 pool's flows then, busy with requests or request pulls still.
func (l *EventLog) LeftBehind(now des.Time, w int32, g2 int, flows kvcr.Flows, busy bool) {
	if l == nil {
		return
	}
	if busy {
		l.worked(w, now)
	}
	l.left = grown(l.left, int(w), leftAt{blocks: -1})
	l.left[w] = leftAt{int64(g2), flows}
}

// rows are the events' rows at the run's end: removed each worker's
// removal time (-1: never), lastArrival the virtual time of its last
// arrival, which the windows after the events end at.
func (l *EventLog) rows(removed []des.Time, lastArrival des.Time) []report.EventRow {
	out := []report.EventRow{}
	if l == nil {
		return out
	}
	l.finish()
	for i := range l.evs {
		e := &l.evs[i]
		r := e.row
		r.Event, r.Kind, r.AtNs = int32(i), e.kind, int64(e.at)
		if !r.Fired {
			r.RequestsAtEvent, r.RunningAtEvent, r.WaitingAtEvent = -1, -1, -1
			r.PullsServingAtEvent, r.PullsReceivingAtEvent, r.G2BlocksAtEvent = -1, -1, -1
			r.ClusterRequestsAtEvent, r.SchedulableAtEvent, r.LoadShare = -1, -1, math.NaN()
		}
		r.Workers = idText(e.named, ",")
		r.RemovedAfterNs = -1
		r.Origin, r.ForNs, r.Fault = e.origin, e.forNs, e.fault
		if len(e.named) > 0 && (e.kind == kindDrain || e.kind == kindRemove) {
			r.RemovedAfterNs = 0
			for _, id := range e.named {
				if int(id) >= len(removed) || removed[id] < 0 {
					r.RemovedAfterNs = -1
					break
				}
				r.RemovedAfterNs = max(r.RemovedAfterNs, int64(removed[id]-e.at))
			}
		}
		r.Orders, r.BlocksPlanned, r.BlocksLanded, r.OrdersDoneAfterNs = e.orders, e.planned, e.landed, -1
		if e.ordersEnd >= 0 {
			r.OrdersDoneAfterNs = int64(e.ordersEnd - e.at)
		}
		r.G2BlocksLeft, r.RemovalDelayNs, r.Removal = l.drained(removed, e)
		r.WindowBeforeNs = int64(min(l.window, e.at))
		if e.late {
			r.WindowBeforeNs = 0 // inBefore measured nothing in it
		}
		r.WindowAfterNs = int64(max(0, min(l.window, lastArrival+1-e.at)))
		r.Before = e.before.row(r.WindowBeforeNs)
		r.After = e.after.row(r.WindowAfterNs)
		r.Twin, r.Delta = report.NoTwin()
		_, r.BeforeDelta = report.NoTwin()
		r.CohortAfter, r.CohortTwin = report.NoCohort(), report.NoCohort()
		if r.Fired {
			ids := l.cohort(e)
			r.CohortAfter = cohortOf(e.after.segs, ids)
			if e.twin != nil {
				r.Twinned, r.TwinDigest, r.Twin = true, e.twinDigest, e.twin.after.row(r.WindowAfterNs)
				r.Delta = r.After.Minus(r.Twin)
				if !e.late {
					r.BeforeDelta = r.Before.Minus(e.twin.before.row(r.WindowBeforeNs))
				}
				r.CohortTwin = cohortOf(e.twin.after.segs, ids)
			}
		}
		out = append(out, r)
	}
	return out
}

// row is the window's columns, its length ns nanoseconds.
func (w *eventWindow) row(ns int64) report.EventWindow {
	ttft, e2e := w.ttft.Percentiles(), w.e2e.Percentiles()
	out := report.EventWindow{TTFTP50Ms: ttft.P50, TTFTP99Ms: ttft.P99, ITLP99Ms: w.itl.Percentiles().P99,
		E2EP99Ms: e2e.P99, Requests: w.requests, HitG1: ratio(w.g1, w.input), HitG2: ratio(w.g2, w.input),
		HitPulled: ratio(w.pl, w.input), RequestsPerS: math.NaN(), OutputTokensPerS: math.NaN(),
		TPOTP99Ms: w.tpot.Percentiles().P99, QueueP99Ms: w.queue.Percentiles().P99, HitComputed: ratio(w.computed, w.input)}
	if ns > 0 { // a statistic of no sample is NaN already (report.NoPercentiles)
		secs := float64(ns) / 1e9
		out.RequestsPerS, out.OutputTokensPerS = float64(w.completed)/secs, float64(w.tokens)/secs
	}
	return out
}

// ratio is a/b, NaN when b is 0.
func ratio(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// idText writes ids joined by sep: "8,9,10".
func idText(ids []int32, sep string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, sep)
}

// idleFault is what a fault of kind that acted on nothing in its window
// did not do, for its warning; "" for a down, which acts by taking its
// engines down, and for an event that is not a fault.
func idleFault(kind string) string {
	switch kind {
	case scenarios.KindLink:
		return "no transfer ran on its links"
	case scenarios.KindSlow:
		return "no pass started on its workers"
	case scenarios.KindPullErrors:
		return "no pull it failed"
	case scenarios.KindNotices:
		return "no notice it delayed or lost"
	}
	return ""
}

// warnings are what the events found that may make a scale-in study
// mislead: drained or removed workers that hold nothing, that an earlier
// event took already, or that had little of the load, and a cluster too
// lightly loaded for the event to test much. trace says the workload is a
// trace (time_scale loads it); served, that a request completed (else
// the run's own warning says none did, and more load is no advice).
func (l *EventLog) warnings(rows []report.EventRow, trace, served bool) []string {
	if l == nil {
		return nil
	}
	var out []string
	drawn, drawnFired, drawnInert := 0, 0, true // the faults chaos drew: warned of once, as one what-if
	var drawnDid report.EventFault
	for i := range l.evs {
		e, r := &l.evs[i], &rows[i]
		if e.origin == string(scenarios.OriginPlanner) {
			continue // a planner drains idle workers and acts at light load by design: its own warning says when it did nothing
		}
		if e.origin == string(scenarios.OriginChaos) {
			drawn++
			if r.Fired {
				drawnFired++
				drawnInert = drawnInert && e.inert
			}
			drawnDid.Add(e.fault)
			continue
		}
		if e.inert && r.Fired {
			w := fmt.Sprintf("event %d (%s at %v) changed no request: every request's row is the same in the run without it; the what-if tests nothing for the requests",
				i, e.kind, time.Duration(e.at))
			if with := l.overlapping(i); len(with) > 0 {
				others := "event " + with[0] + " acts"
				if len(with) > 1 {
					others = "events " + strings.Join(with, ", ") + " act"
				}
				w += fmt.Sprintf(", alone: %s on the same workers while it is in force, and each twin keeps the others, so an effect they share shows against none of them (leave them out together to measure it)", others)
			}
			out = append(out, w)
		}
		if what := idleFault(e.kind); what != "" && r.Fired && e.fault == (report.EventFault{}) {
			out = append(out, fmt.Sprintf("event %d (%s at %v) acted on nothing in its window (%s): the fault tests nothing",
				i, e.kind, time.Duration(e.at), what))
		}
		if !r.Fired || (e.kind != kindDrain && e.kind != kindRemove && e.kind != kindDown) || len(e.named) == 0 {
			continue
		}
		verb, noun := "drains", "the drain"
		switch e.kind {
		case kindRemove:
			verb, noun = "removes", "the removal"
		case kindDown:
			verb, noun = "takes down", "the fault"
		}
		at := time.Duration(e.at)
		if len(e.idle) > 0 {
			hold, it := "hold", "them"
			if len(e.idle) == 1 {
				hold, it = "holds", "it"
			}
			out = append(out, fmt.Sprintf("event %d %s %s, which %s no work and no cache at %v: %s moves nothing off %s and tests only the capacity it takes away",
				i, verb, workerText(e.idle), hold, at, noun, it))
		}
		if len(e.again) > 0 {
			it := "them"
			if len(e.again) == 1 {
				it = "it"
			}
			earlier := "drained or removed"
			if e.kind == kindDown {
				earlier = "took down, drained or removed"
			}
			out = append(out, fmt.Sprintf("event %d %s %s, which an earlier event %s already: %s changes nothing for %s",
				i, verb, workerText(e.again), earlier, noun, it))
		}
		if r.SchedulableAtEvent == 0 {
			continue // no worker was ready: no share to compare, no load to spread
		}
		if even := math.Min(1, float64(len(e.named))/float64(r.SchedulableAtEvent)); e.all >= busyShare && r.LoadShare < even/4 {
			out = append(out, fmt.Sprintf("event %d %s %s, to which %.1f%% of the %d requests arriving in the %v before %v were first routed, "+
				"under a quarter of an even share (%d of %d schedulable workers: %.1f%%): the event tests little; "+
				"`pick: busiest` %s the busiest workers instead",
				i, verb, workerText(e.named), 100*r.LoadShare, e.all, time.Duration(r.WindowBeforeNs), at,
				len(e.named), r.SchedulableAtEvent, 100*even, verb))
		}
		if r.ClusterRequestsAtEvent < r.SchedulableAtEvent && served {
			load := "a time_scale below 1 loads it"
			if !trace {
				load = "a higher rate loads it"
			}
			flight := fmt.Sprintf("only %s in flight", Count(r.ClusterRequestsAtEvent, "request is", "requests are"))
			if r.ClusterRequestsAtEvent == 0 {
				flight = "no request is in flight"
			}
			out = append(out, fmt.Sprintf("%s on %s at %v: the cluster is lightly loaded; %s",
				flight, Count(r.SchedulableAtEvent, "worker", "workers"), at, load))
		}
	}
	switch {
	case drawnFired == 0:
	case drawnInert:
		out = append(out, fmt.Sprintf("the %s chaos drew changed no request: every request's row is the same in the run without chaos; the what-if tests nothing for the requests", drawnText(drawn)))
	case drawnDid == (report.EventFault{}) && drawnFired == drawn:
		they := "they count"
		if drawn == 1 {
			they = "it counts"
		}
		out = append(out, fmt.Sprintf("the %s chaos drew acted on nothing %s (no pull, pass, block or migration)", drawnText(drawn), they))
	}
	return out
}

// workerText is "worker 3" or "workers 3, 4".
func workerText(ids []int32) string { return idsText("worker", ids) }

// idsText names ids of a noun: "worker 3", "workers 3, 4" ("worker ",
// the noun and a space, with no id).
func idsText(noun string, ids []int32) string {
	if len(ids) <= 1 {
		return noun + " " + idText(ids, "")
	}
	return noun + "s " + idText(ids, ", ")
}

// overlapping lists, as "1 (slow at 5ms)", the other events that fired
// and act on a worker event i acts on while it is in force (a fault
// without for, a drain and a remove, to the end; a window [at, at + for)
// otherwise): the twin of each keeps the others, so an effect only their
// sum has shows in none. Faults chaos drew share one twin, without all of
// them, and a planner's actions have none; adds act on workers of their
// own.
func (l *EventLog) overlapping(i int) []string {
	e := &l.evs[i]
	end := func(e *eventRec) des.Time {
		if e.forNs >= 0 {
			return des.AddSat(e.at, des.Time(e.forNs))
		}
		return des.MaxTime
	}
	var out []string
	for j := range l.evs {
		o := &l.evs[j]
		bothDrawn := e.origin == string(scenarios.OriginChaos) && o.origin == string(scenarios.OriginChaos) // one twin: the run without either
		if j == i || bothDrawn || o.origin == string(scenarios.OriginPlanner) || !o.row.Fired || e.kind == kindAdd || o.kind == kindAdd ||
			o.at >= end(e) || e.at >= end(o) {
			continue
		}
		if len(e.named) == 0 || len(o.named) == 0 || slices.ContainsFunc(o.named, func(w int32) bool { return slices.Contains(e.named, w) }) {
			out = append(out, fmt.Sprintf("%d (%s at %v)", j, o.kind, time.Duration(o.at)))
		}
	}
	return out
}

// drawnText is how many faults chaos drew, after "the": "6 faults", "fault".
func drawnText(n int) string {
	if n == 1 {
		return "fault"
	}
	return fmt.Sprintf("%d faults", n)
}
