package results

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
)

// Summary is a run's summary.json, less the wall time, which the caller
// adds.
type Summary struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Digest is the run's kvsim-digest-v1 (docs/digest.md): equal digests,
	// equal behaviour.
	Digest   string `json:"digest"`
	Workers  int    `json:"workers"`
	Requests struct {
		Total      int64 `json:"total"`
		Completed  int64 `json:"completed"`
		Rejected   int64 `json:"rejected"`
		Failed     int64 `json:"failed"`
		Unfinished int64 `json:"unfinished"`
	} `json:"requests"`
	Tokens struct {
		Input        int64 `json:"input"`           // prompt tokens of completed requests
		Output       int64 `json:"output"`          // output tokens of completed requests
		G1Hit        int64 `json:"g1_hit"`          // prompt tokens hit in G1 at first admission
		G2Hit        int64 `json:"g2_hit"`          // prompt tokens loaded from the worker's own G2
		Pulled       int64 `json:"pulled"`          // prompt tokens a KVCR pull landed
		ComputedPrpt int64 `json:"computed_prompt"` // prompt tokens computed, recompute included
	} `json:"tokens"`
	// HitRatio is the share of completed requests' prompt tokens served by
	// each tier.
	HitRatio struct {
		G1     float64 `json:"g1"`
		G2     float64 `json:"g2"`
		Pulled float64 `json:"pulled"`
	} `json:"hit_ratio"`
	TTFT report.Percentiles `json:"ttft"`
	TPOT report.Percentiles `json:"tpot"`
	ITL  report.Percentiles `json:"itl"`
	E2E  report.Percentiles `json:"e2e"`
	// Throughput is over the makespan, first arrival to last request end.
	Throughput struct {
		RequestsPerS     float64 `json:"requests_per_s"`
		OutputTokensPerS float64 `json:"output_tokens_per_s"`
	} `json:"throughput"`
	MakespanNs int64 `json:"makespan_ns"`
	// Cost is the worker-seconds the run provisioned.
	Cost Cost `json:"cost"`
	// Goodput is the completed requests meeting planner.slo; only when the
	// scenario sets one.
	Goodput *Goodput `json:"goodput,omitempty"`
	// Planner is what the planner did; only in a run with one
	// (planner.policy other than none).
	Planner *PlannerActions `json:"planner,omitempty"`
	// LastArrivalNs is the virtual time the last request arrived.
	LastArrivalNs int64  `json:"last_arrival_ns"`
	EndNs         int64  `json:"end_ns"` // virtual time of the last event
	Events        uint64 `json:"events"`
	Preempted     int64  `json:"preemptions"`
	// Fidelity compares the simulated latencies with those a real server
	// measured, when the trace carries them (otel); absent otherwise.
	Fidelity *report.Fidelity `json:"fidelity,omitempty"`
	// Counters are every run counter by name (counters.parquet).
	Counters map[string]int64 `json:"counters"`
	// PullsByKind breaks the pull counters out by kind of pull; only in
	// runs whose scenario issues orders (an evacuate or a prewarm).
	PullsByKind *PullsByKind `json:"pulls_by_kind,omitempty"`
	// EventRows are the lifecycle events' events.parquet rows, in event
	// order ("events" is the count of virtual-time events above).
	EventRows []report.EventRow `json:"lifecycle_events"`
	// Warnings are what the run found that may make its results mislead
	// (kvsim replay prints them on stderr); outside the digest.
	Warnings  []string `json:"warnings,omitempty"`
	WallTimeS float64  `json:"wall_time_s"` // set by the caller; outside any digest
}

// PullsByKind is summary.json's pulls_by_kind: the pulls of each kind
// (kvcr.Kinds). Move and Prefetch are the background counters of their
// kinds (kv_move_*, kv_prefetch_*); Request is the totals (pulls_*,
// blocks_pulled, bytes_pulled) less the two.
type PullsByKind struct {
	Request  KindPulls `json:"request"`
	Move     KindPulls `json:"move"`
	Prefetch KindPulls `json:"prefetch"`
}

// KindPulls are the pulls of one kind: those staged (pins taken and the
// request sent: pulls_staged's share), each outcome, and the blocks and bytes of those that landed.
// Events are the scenario events whose orders are of the kind: an
// evacuation by move's are moves, an evacuation by copy's and a prewarm's
// prefetches; none for requests.
type KindPulls struct {
	Events       []int32 `json:"events,omitempty"`
	Staged       int64   `json:"staged"`
	Success      int64   `json:"success"`
	Partial      int64   `json:"partial"`
	Failed       int64   `json:"failed"`
	Expired      int64   `json:"expired"`
	Rejected     int64   `json:"rejected"`
	Superseded   int64   `json:"superseded"`
	BlocksLanded int64   `json:"blocks_landed"`
	Bytes        int64   `json:"bytes"`
}

// less is k's figures less o's (not its events).
func (k KindPulls) less(o KindPulls) KindPulls {
	return KindPulls{Staged: k.Staged - o.Staged, Success: k.Success - o.Success, Partial: k.Partial - o.Partial,
		Failed: k.Failed - o.Failed, Expired: k.Expired - o.Expired, Rejected: k.Rejected - o.Rejected,
		Superseded: k.Superseded - o.Superseded, BlocksLanded: k.BlocksLanded - o.BlocksLanded, Bytes: k.Bytes - o.Bytes}
}

// ordersOf is the figures of one kind of order from its counters, staged
// of them staged.
func ordersOf(c *kvcr.KindCounters, staged int64) KindPulls {
	return KindPulls{Staged: staged, Success: c.Success, Partial: c.Partial, Failed: c.Failed, Expired: c.Expired,
		Rejected: c.Rejected, Superseded: c.Superseded, BlocksLanded: c.BlocksLanded, Bytes: c.Bytes}
}

// pullsByKind breaks c's pull totals out by kind for sc's events; staged
// is the pulls staged by kind, which no counter holds.
func pullsByKind(sc *scenarios.Scenario, c *Counters, staged *[numKinds]int64) *PullsByKind {
	p := &PullsByKind{Move: ordersOf(&c.Move, staged[kvcr.KindMove]), Prefetch: ordersOf(&c.Prefetch, staged[kvcr.KindPrefetch])}
	total := KindPulls{Staged: c.PullsStaged, Success: c.PullsSuccess, Partial: c.PullsPartial, Failed: c.PullsFailed,
		Expired: c.PullsExpired, Rejected: c.PullsRejected(), Superseded: c.PullsSuperseded,
		BlocksLanded: c.BlocksPulled, Bytes: c.BytesPulled}
	p.Request = total.less(p.Move).less(p.Prefetch)
	for i, ev := range sc.Events {
		switch { // as the lifecycle issues them
		case ev.Evacuate != nil && ev.Evacuate.Moves():
			p.Move.Events = append(p.Move.Events, int32(i))
		case ev.Evacuate != nil || ev.Prewarm != nil:
			p.Prefetch.Events = append(p.Prefetch.Events, int32(i))
		}
	}
	return p
}

// numKinds is the number of pull kinds (kvcr.Kinds), the last one's
// value plus one.
const numKinds = kvcr.KindPrefetch + 1

// CostHints reports whether the run reports the cost hint policy's
// counters: its scenario's router.hints.policy is cost.
func (s *Summary) CostHints() bool {
	in := false
	eachCounter(reflect.ValueOf(new(Counters)).Elem(), func(name, group string, _ reflect.Value) {
		if _, ok := s.Counters[name]; ok && group == groupCost {
			in = true
		}
	})
	return in
}

// Stats accumulates a run's summary as it goes: sim tells it of each
// arrival, each request's row as it ends, each pull as it finishes and
// each inter-token gap; Summarize reads it at the end.
type Stats struct {
	arrivals     int64
	firstArrival int64
	lastEnd      int64
	s            Summary
	ttft, tpot   report.Dist
	e2e          report.Dist
	itl          report.Histogram
	fidelity     report.FidelityCollector
	staged       [numKinds]int64 // by kind: the finished pulls whose transfers were staged
	goodput      *goodputCounts  // nil without planner.slo
}

// NewStats is the statistics of a run of sc, empty: with planner.slo set,
// they count the completed requests meeting it as they end (goodput).
func NewStats(sc *scenarios.Scenario) Stats {
	var st Stats
	if p := sc.Planner; p != nil && p.SLO != nil {
		st.goodput = &goodputCounts{slo: *p.SLO}
	}
	return st
}

// Pulled counts a finished pull: staged when its transfer was staged
// (pulls_staged counts it), whether or not a byte was then sent.
func (st *Stats) Pulled(p *kvcr.Pull) {
	if p.Staged() {
		st.staged[p.Kind]++
	}
}

// Arrived counts a request arriving at t, the latest arrival so far.
func (st *Stats) Arrived(t des.Time) {
	if st.arrivals == 0 {
		st.firstArrival = int64(t)
	}
	st.arrivals++
	st.s.LastArrivalNs = int64(t)
}

// Arrivals is the number of requests that arrived.
func (st *Stats) Arrivals() int64 { return st.arrivals }

// Ended is the number of requests that ended, in any outcome.
func (st *Stats) Ended() int64 { return st.s.Requests.Total }

// LastArrival is the time the latest request arrived.
func (st *Stats) LastArrival() des.Time { return des.Time(st.s.LastArrivalNs) }

// Token counts a token emitted gap after the one before it of its
// request: a sample of the inter-token latency.
func (st *Stats) Token(gap des.Time) { st.itl.Add(int64(gap)) }

// TokenSteps records n tokens at each of ends[1:], each ends[j]-ends[j-1]
// after the one before it of its request: n Token calls at each, at once.
func (st *Stats) TokenSteps(ends []des.Time, n int) { report.AddSteps(&st.itl, ends, n) }

// RequestEnded counts a request's row as it ends.
func (st *Stats) RequestEnded(row *report.RequestRow) {
	s := &st.s
	s.Requests.Total++
	st.fidelity.Add(row)
	st.lastEnd = max(st.lastEnd, row.FinishNs)
	s.Preempted += int64(row.Preemptions)
	switch row.Outcome {
	case report.OutcomeCompleted:
		s.Requests.Completed++
		s.Tokens.Input += row.InputTokens
		s.Tokens.Output += row.OutputTokens
		s.Tokens.G1Hit += row.G1HitTokens
		s.Tokens.G2Hit += row.G2HitTokens
		s.Tokens.Pulled += row.PulledTokens
		s.Tokens.ComputedPrpt += row.ComputedPromptTokens
		st.ttft.Add(row.FirstTokenNs - row.ArrivalNs)
		st.e2e.Add(row.FinishNs - row.ArrivalNs)
		if tpot, ok := tpotOf(row); ok {
			st.tpot.Add(tpot)
		}
		if st.goodput != nil {
			st.goodput.add(row)
		}
	case report.OutcomeRejected:
		s.Requests.Rejected++
	case report.OutcomeFailed:
		s.Requests.Failed++
	case report.OutcomeUnfinished:
		s.Requests.Unfinished++
	}
}

// CountRequests sets c's request counters (requests by outcome,
// preemptions) to the requests that ended.
func (st *Stats) CountRequests(c *Counters) {
	s := &st.s
	c.RequestsTotal = s.Requests.Total
	c.RequestsCompleted = s.Requests.Completed
	c.RequestsRejected = s.Requests.Rejected
	c.RequestsFailed = s.Requests.Failed
	c.RequestsUnfinished = s.Requests.Unfinished
	c.Preemptions = s.Preempted
}

// RunEnd is what a run knows at its end that its Stats and EventLog do
// not.
type RunEnd struct {
	Scenario *scenarios.Scenario
	EndNs    des.Time // the last event's time
	Events   uint64   // the events fired
	Counters Counters
	// Added and Removed are each worker's add and removal times, by id;
	// removal -1 for one never removed.
	Added, Removed []des.Time
	// Warnings are the run's own, after those Summarize finds.
	Warnings []string
}

// Summarize is the summary of a run that ended, st its statistics, l the
// log of its scenario's events (nil without events), end the rest; and
// its counters.parquet rows, of the groups its scenario reports
// (counterGroups).
func Summarize(st *Stats, l *EventLog, end RunEnd) (*Summary, []report.CounterRow) {
	sc := end.Scenario
	s := st.s
	s.Scenario, s.Seed, s.Workers = sc.Name, sc.Seed, sc.Cluster.Workers
	// A latency of no sample is no value (null), not 0 ms: no request
	// completed, or none had a second token (TPOT, ITL).
	s.TTFT, s.TPOT, s.E2E, s.ITL = st.ttft.Percentiles(), st.tpot.Percentiles(), st.e2e.Percentiles(), st.itl.Percentiles()
	if in := float64(s.Tokens.Input); in > 0 {
		s.HitRatio.G1 = float64(s.Tokens.G1Hit) / in
		s.HitRatio.G2 = float64(s.Tokens.G2Hit) / in
		s.HitRatio.Pulled = float64(s.Tokens.Pulled) / in
	}
	s.MakespanNs = st.lastEnd - st.firstArrival
	if s.MakespanNs > 0 {
		secs := float64(s.MakespanNs) / 1e9
		s.Throughput.RequestsPerS = float64(s.Requests.Completed) / secs
		s.Throughput.OutputTokensPerS = float64(s.Tokens.Output) / secs
	}
	s.Cost = costOf(end.Added, end.Removed, des.Time(st.lastEnd))
	if st.goodput != nil {
		s.Goodput = st.goodput.summary(s.MakespanNs)
	}
	s.Fidelity = st.fidelity.Result()
	s.EndNs = int64(end.EndNs)
	s.Events = end.Events
	rows := end.Counters.Rows(counterGroups(sc)...)
	s.Counters = map[string]int64{}
	for _, r := range rows {
		s.Counters[r.Name] = r.Value
	}
	if sc.Orders() {
		s.PullsByKind = pullsByKind(sc, &end.Counters, &st.staged)
	}
	s.EventRows = l.rows(end.Removed, des.Time(s.LastArrivalNs))
	if sc.HasPlanner() {
		s.Planner = plannerActions(s.EventRows)
		s.Planner.Policy = string(sc.Planner.Policy)
		s.Planner.Evacuate, s.Planner.Prewarm, s.Planner.KVCR = sc.Planner.ScaleIn.Evacuate != nil, sc.Planner.Prewarm != nil, sc.KVCR.Enabled
	}
	if s.Requests.Completed == 0 && s.Requests.Total > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("no request completed (%d rejected, %d failed, %d unfinished): the run's latencies have no value (null in summary.json), and an SLO on them does not hold",
			s.Requests.Rejected, s.Requests.Failed, s.Requests.Unfinished))
	}
	s.Warnings = append(s.Warnings, l.warnings(s.EventRows, sc.Workload.Trace != nil, s.Requests.Completed > 0)...)
	s.Warnings = append(s.Warnings, orderWarnings(sc, &s, &end.Counters, l)...)
	s.Warnings = append(s.Warnings, costWarnings(sc, &end.Counters)...)
	s.Warnings = append(s.Warnings, end.Warnings...)
	return &s, rows
}

// orderWarnings are what the events' orders found that may make a study
// of them mislead, from s's figures (its events' rows, its counters): an
// evacuation or a prewarm that planned no block; one whose pulls landed
// under half of the blocks it planned while orders of its kind were lost
// (expired, failed, dropped or rejected; without a loss the shortfall is
// blocks two of its orders both counted, sent once); and, with
// kvcr.background_inflight 0, a kind of order most of which expired or
// failed. c are the run's counters, s.Counters's values; l the log of
// the events s.EventRows are the rows of.
func orderWarnings(sc *scenarios.Scenario, s *Summary, c *Counters, l *EventLog) []string {
	k := s.PullsByKind
	if k == nil {
		return nil
	}
	kinds := []struct {
		noun  string
		pulls *KindPulls
		n     *kvcr.KindCounters
	}{{"moves", &k.Move, &c.Move}, {"prefetches", &k.Prefetch, &c.Prefetch}}
	var out []string
	for i := range s.EventRows {
		r := &s.EventRows[i]
		if !r.Fired || r.Origin == string(scenarios.OriginPlanner) {
			continue // a planner's orders are its summary line's, not a what-if of their own
		}
		for _, kd := range kinds {
			if !slices.Contains(kd.pulls.Events, r.Event) {
				continue
			}
			e := &l.evs[r.Event]
			ids := e.acted()
			named, at := workerText(ids), time.Duration(r.AtNs)
			what := "evacuation"
			switch {
			case r.BlocksPlanned > 0:
			case r.Kind == kindAdd:
				out = append(out, fmt.Sprintf("event %d prewarms %s, but the ready workers' G2 held no chain to send at %v: the prewarm tests nothing",
					r.Event, named, at))
				continue
			case len(ids) == 0:
				continue // it drained no worker, and says so (Warnings)
			case r.Plan.BlocksHeld == 0:
				out = append(out, fmt.Sprintf("event %d evacuates %s, which held nothing in G2 at %v: the evacuation tests nothing", r.Event, named, at))
				continue
			default:
				its := "its"
				if len(ids) > 1 {
					its = "their"
				}
				out = append(out, fmt.Sprintf("event %d evacuates %s, but none of %s %d G2 blocks could be sent at %v "+
					"(no worker was ready to take them, or those the router would send their chains to held them already): the evacuation tests nothing",
					r.Event, named, its, r.Plan.BlocksHeld, at))
				continue
			}
			n := kd.n
			lost := n.Expired + n.Failed + n.Dropped + n.Rejected
			if 2*r.BlocksLanded >= r.BlocksPlanned || lost == 0 {
				continue
			}
			knobs := "a longer kvcr.background_timeout or drain_timeout, or another kvcr.background_inflight,"
			if r.Kind == kindAdd {
				what, knobs = "prewarm", "a longer kvcr.background_timeout, or another kvcr.background_inflight,"
			} else if sc.Events[r.Event].DrainTimeout == 0 {
				knobs = "a longer kvcr.background_timeout, or another kvcr.background_inflight,"
			}
			rejected := ""
			if n.Rejected > 0 {
				rejected = fmt.Sprintf(", %d rejected", n.Rejected)
			}
			out = append(out, fmt.Sprintf("event %d's %s landed %d of the %d blocks it planned (%.1f%%): of the run's %d %s (%s), "+
				"%d expired, %d failed, %d dropped%s; %s lets more land",
				r.Event, what, r.BlocksLanded, r.BlocksPlanned, 100*float64(r.BlocksLanded)/float64(r.BlocksPlanned),
				n.Issued, kd.noun, EventsText(kd.pulls.Events), n.Expired, n.Failed, n.Dropped, rejected, knobs))
		}
	}
	if sc.KVCR.BackgroundInflight == 0 {
		for _, kd := range kinds {
			// late at the target's deadline (expired) or at the source's,
			// which gives up on its part first (failed)
			if n := kd.n; n.Issued > 0 && 2*(n.Expired+n.Failed) > n.Issued {
				out = append(out, fmt.Sprintf("kvcr.background_inflight 0 stages every order at once, and %d of the run's %d %s (%s) expired or failed: "+
					"sharing their sources' links, they all end late; kvcr.background_inflight 1 (the default) sends one at a time from each source",
					n.Expired+n.Failed, n.Issued, kd.noun, EventsText(kd.pulls.Events)))
			}
		}
	}
	return out
}

// costWarnings warn of a cost-policy run that withheld every hint it
// could attach (c the run's counters): no request pulled, as with hints
// off.
func costWarnings(sc *scenarios.Scenario, c *Counters) []string {
	if sc.Router.Hints.Policy != scheduler.HintsCost || c.HintsAttached > 0 || c.Cost.HintsWithheld == 0 {
		return nil
	}
	return []string{fmt.Sprintf("router.hints.policy cost withheld all %d hints the router could attach (recomputing was predicted cheaper every time): "+
		"no request pulled, as with hints off; router.hints.policy min_blocks attaches them", c.Cost.HintsWithheld)}
}

// EventsText names scenario events: "event 0", "events 1, 2", or "no
// event".
func EventsText(evs []int32) string {
	if len(evs) == 0 {
		return "no event"
	}
	return idsText("event", evs)
}

// tpotOf is a completed request's time per output token after the first,
// (finish − first token) / (output tokens − 1); false for one output token.
func tpotOf(r *report.RequestRow) (int64, bool) {
	if r.OutputTokens <= 1 {
		return 0, false
	}
	return (r.FinishNs - r.FirstTokenNs) / (r.OutputTokens - 1), true
}
