package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
)

// EventRow is one row of events.parquet: what one lifecycle event of the
// scenario did. Times are virtual nanoseconds; -1 means none, NaN a ratio
// or a statistic of nothing (null in events.parquet: EventColumns). docs/outputs.md defines every column.
type EventRow struct {
	Event   int32  // index in the scenario's events, from 0
	Kind    string // the scenario's word for it: drain, remove or add
	AtNs    int64  // its time
	Workers string // the workers it acted on, as "8,9,10"
	Fired   bool   // it happened before the run ended
	// At the event, before it acted: the named workers' requests running
	// and waiting, the pulls they serve and receive and their G2 blocks;
	// the requests on every worker, the ready workers, and the named
	// workers' share of the requests routed in the window before.
	RequestsAtEvent        int64
	RunningAtEvent         int64
	WaitingAtEvent         int64
	PullsServingAtEvent    int64
	PullsReceivingAtEvent  int64
	G2BlocksAtEvent        int64
	ClusterRequestsAtEvent int64
	SchedulableAtEvent     int64
	LoadShare              float64
	// After the event: until its last named worker was removed, how many
	// its drain_timeout removed, staging refused with a named worker as
	// source by reason, and the requests taken off the named workers by the
	// event or its timeout that were routed again or failed.
	RemovedAfterNs        int64
	RemovedByTimeout      int64
	PullsRejectedDraining int64
	PullsRejectedRemoved  int64
	PullsRejectedNotReady int64
	PullsRejectedMissing  int64
	RequestsRerouted      int64
	RequestsFailed        int64
	// Its orders (evacuate, prewarm): how many, the blocks planned and landed, and
	// when the last order's pull ended after the event (-1 none); for a
	// drain whose named workers were all removed, the G2 blocks they held
	// then and how long after its last work the slowest was removed (-1
	// otherwise, and with KVCR off).
	Orders            int64
	BlocksPlanned     int64
	BlocksLanded      int64
	OrdersDoneAfterNs int64
	G2BlocksLeft      int64
	RemovalDelayNs    int64
	// Where the G2 blocks of its orders went: its ledger (docs/outputs.md
	// states each identity).
	Plan    KVPlan
	Ends    KVEnds
	Removal KVRemoval
	// The windows before and after the event, report.event_window clipped
	// to the run, and what they measured.
	WindowBeforeNs int64
	WindowAfterNs  int64
	Before, After  EventWindow
	// The twin: whether it ran (the same scenario and seed without this
	// event, DESIGN.md section 11), its digest (a replay of the scenario
	// without the event prints the same), what it measured over the window
	// after (the same interval as After) and the run minus the twin, metric
	// by metric: the event's effect. Without a twin (--twins=false, or an
	// event that never fired), the digest is "", Twin's numbers are -1 and
	// NaN and Delta's NaN.
	Twinned    bool
	TwinDigest string
	Twin       EventWindow
	Delta      EventDelta
	// The displaced cohort (DESIGN.md section 11): of the completed
	// requests arriving in the window after, those whose previous turn
	// ended on a worker the event drains or removes, or, for an add, those
	// that ended on a new worker; what they measured in the run and, the
	// same requests, in the twin. Requests -1 for an event that never
	// fired (CohortTwin too without a twin); NaN a statistic of none.
	CohortAfter, CohortTwin EventCohort
	// Origin is where the event comes from: "scenario", "chaos" for a
	// fault the scenario's chaos drew, or "planner" for an add or drain
	// the planner decided. ForNs is a fault's length (-1: to
	// the end of the run, and for an event that is not a fault).
	Origin string
	ForNs  int64
	// Fault is what a fault did over its window (all 0 for another event).
	Fault EventFault
	// BeforeDelta is the window before against the same interval of the
	// twin, metric by metric. The two runs are the same up to the event,
	// so it is 0 unless the event changed requests that arrived before it,
	// in flight when it fired: an effect the window after, which holds the
	// requests arriving from the event on, does not see. (Chaos's drawn
	// faults share one twin, the run without any of them: there it holds
	// the earlier faults' effects too.) NaN without a twin.
	BeforeDelta EventDelta
}

// EventFault is what a fault did over its window: the pulls it acted on
// (a link's transfers it slowed or stalled, the pulls it failed, the
// notices it delayed or lost), the passes it slowed, the blocks it lost
// (a move's copy whose notice came too late or never, a lost G2) and the
// requests it made migrate.
type EventFault struct {
	Pulls, Passes, BlocksLost, Migrated int64
}

// Add adds g's counts to f's.
func (f *EventFault) Add(g EventFault) {
	f.Pulls += g.Pulls
	f.Passes += g.Passes
	f.BlocksLost += g.BlocksLost
	f.Migrated += g.Migrated
}

// EventCohort is what an event's displaced cohort measured: how many
// requests, their TTFT (ms, nearest rank) and their prompt tokens by
// source over their prompt tokens.
type EventCohort struct {
	Requests                             int64
	TTFTP50Ms, TTFTP99Ms                 float64
	HitG1, HitG2, HitPulled, HitComputed float64
}

// NoCohort is the cohort of an event that never fired, or of a twin that
// did not run: every number -1 or NaN.
func NoCohort() EventCohort {
	n := math.NaN()
	return EventCohort{Requests: -1, TTFTP50Ms: n, TTFTP99Ms: n, HitG1: n, HitG2: n, HitPulled: n, HitComputed: n}
}

// KVPlan is where, when an event's orders were planned, each G2 block went
// that their sources held at the event: the drained workers of an
// evacuating drain, the ready workers of a prewarming add. BlocksHeld =
// the blocks planned (EventRow.BlocksPlanned - PlannedAgain, each once) +
// every Left count. All 0 for an event without orders.
type KVPlan struct {
	BlocksHeld   int64 // G2 blocks the sources held (Pool.Used: ready, filling and pending)
	PlannedAgain int64 // of BlocksPlanned, the counts of blocks an earlier order of the plan sends too
	// Left out, by reason: not readable at the event (still filling,
	// pending removal after a move); readable, but the destination held
	// them (its G1 prefix or G2), the walk stopped before them (past a
	// block of the chain the source lacks, or one the destination was
	// filling or removing, or past the destination's G2 capacity), the
	// budget ran out, no worker was ready to take them, or (a prewarm) the
	// same chain was dealt from another worker.
	LeftFilling         int64
	LeftPending         int64
	LeftAtDestination   int64
	LeftBehindGap       int64
	LeftDestinationBusy int64
	LeftDestinationFull int64
	LeftBudget          int64
	LeftNoDestination   int64
	LeftOtherSource     int64
}

// LeftOut is the blocks left out, for every reason.
func (p *KVPlan) LeftOut() int64 {
	return p.LeftFilling + p.LeftPending + p.LeftAtDestination + p.LeftBehindGap + p.LeftDestinationBusy +
		p.LeftDestinationFull + p.LeftBudget + p.LeftNoDestination + p.LeftOtherSource
}

// KVEnds is how the blocks an event's orders planned (EventRow.BlocksPlanned)
// ended: BlocksPlanned = BlocksLanded - LandedExtra + LandedShort + every
// Lost count. An order that landed (success, partial) counts the
// difference between its plan and what it landed, short or extra; one
// that landed nothing counts its plan by how it ended. All 0 for an event
// without orders.
type KVEnds struct {
	LandedShort        int64 // planned blocks the orders that landed did not land
	LandedExtra        int64 // blocks the orders that landed landed past their plan
	LostNothingToFetch int64
	LostSuperseded     int64
	LostRejected       int64
	LostExpired        int64
	LostFailed         int64
	LostDropped        int64
}

// Lost is the planned blocks of the orders that landed nothing.
func (e *KVEnds) Lost() int64 {
	return e.LostNothingToFetch + e.LostSuperseded + e.LostRejected + e.LostExpired + e.LostFailed + e.LostDropped
}

// KVRemoval accounts for a drain's G2BlocksLeft from its
// G2BlocksAtEvent: G2BlocksLeft = G2BlocksAtEvent + StoredAfter +
// PulledInAfter - EvictedAfter - MovedAwayAfter - DroppedAfter, each
// counted on the named workers from the event to their removal. -1 where
// G2BlocksLeft is.
type KVRemoval struct {
	StoredAfter    int64 // blocks their requests stored
	PulledInAfter  int64 // blocks pulls into them reserved
	EvictedAfter   int64 // blocks eviction took to make room
	MovedAwayAfter int64 // blocks moves took away (the evacuation's, and request pulls' in move mode)
	DroppedAfter   int64 // blocks reserved for pulls into them that landed nothing
	LostAfter      int64 // blocks gone with their process (a down fault with its G2 lost)
}

// Net is the blocks the named workers' G2 gained from the event to their
// removal: in less out.
func (m *KVRemoval) Net() int64 {
	return m.StoredAfter + m.PulledInAfter - m.EvictedAfter - m.MovedAwayAfter - m.DroppedAfter - m.LostAfter
}

// EventWindow is what one window beside an event measured: latencies (ms,
// nearest rank) and hit ratios of the completed requests arriving in it,
// inter-token latency of the tokens emitted in it, and completions and
// tokens emitted in it a second.
type EventWindow struct {
	TTFTP50Ms        float64
	TTFTP99Ms        float64
	ITLP99Ms         float64
	E2EP99Ms         float64
	RequestsPerS     float64
	OutputTokensPerS float64
	HitG1            float64
	HitG2            float64
	HitPulled        float64
	Requests         int64 // completed requests arriving in it
	TPOTP99Ms        float64
	QueueP99Ms       float64 // arrival to first scheduled, on the worker it ended on
	HitComputed      float64 // prompt tokens computed (recompute after preemption counted) over prompt tokens
}

// EventDelta is an event's effect: for each metric of its window after,
// the run's value minus its twin's (EventWindow's fields, the count too as
// a float64 so that "no twin" is NaN, not a count). NaN where either is
// NaN or there is no twin.
type EventDelta struct {
	TTFTP50Ms        float64
	TTFTP99Ms        float64
	ITLP99Ms         float64
	E2EP99Ms         float64
	RequestsPerS     float64
	OutputTokensPerS float64
	HitG1            float64
	HitG2            float64
	HitPulled        float64
	Requests         float64
	TPOTP99Ms        float64
	QueueP99Ms       float64
	HitComputed      float64
}

// Minus is the effect of w against its twin: w's value minus t's, metric by
// metric.
func (w EventWindow) Minus(t EventWindow) EventDelta {
	return EventDelta{
		TTFTP50Ms: w.TTFTP50Ms - t.TTFTP50Ms, TTFTP99Ms: w.TTFTP99Ms - t.TTFTP99Ms, ITLP99Ms: w.ITLP99Ms - t.ITLP99Ms,
		E2EP99Ms: w.E2EP99Ms - t.E2EP99Ms, RequestsPerS: w.RequestsPerS - t.RequestsPerS,
		OutputTokensPerS: w.OutputTokensPerS - t.OutputTokensPerS, HitG1: w.HitG1 - t.HitG1, HitG2: w.HitG2 - t.HitG2,
		HitPulled: w.HitPulled - t.HitPulled, Requests: float64(w.Requests - t.Requests), TPOTP99Ms: w.TPOTP99Ms - t.TPOTP99Ms,
		QueueP99Ms: w.QueueP99Ms - t.QueueP99Ms, HitComputed: w.HitComputed - t.HitComputed,
	}
}

// NoTwin is the Twin and Delta of an event without a twin: every number
// -1 or NaN, none a value.
func NoTwin() (EventWindow, EventDelta) {
	n := math.NaN()
	return EventWindow{TTFTP50Ms: n, TTFTP99Ms: n, ITLP99Ms: n, E2EP99Ms: n, RequestsPerS: n, OutputTokensPerS: n,
			HitG1: n, HitG2: n, HitPulled: n, Requests: -1, TPOTP99Ms: n, QueueP99Ms: n, HitComputed: n},
		EventDelta{TTFTP50Ms: n, TTFTP99Ms: n, ITLP99Ms: n, E2EP99Ms: n, RequestsPerS: n, OutputTokensPerS: n,
			HitG1: n, HitG2: n, HitPulled: n, Requests: n, TPOTP99Ms: n, QueueP99Ms: n, HitComputed: n}
}

// EventColumns is the schema of events.parquet, whose kind column's
// dictionary is kinds, in order (results.EventColumns passes the scenario's
// event kinds); a reader passes nil. A column whose -1 or NaN is a value
// that does not exist (an event that never fired, a worker never removed,
// a window without requests) is Null. The column names are a public
// contract: never rename one.
func EventColumns(kinds []string) []Column[EventRow] {
	cols := []Column[EventRow]{
		{Name: "event", Int32: func(r *EventRow) int32 { return r.Event }},
		{Name: "kind", Dict: func(r *EventRow) string { return r.Kind }, Values: kinds},
		{Name: "at_ns", Int64: func(r *EventRow) int64 { return r.AtNs }},
		{Name: "workers", String: func(r *EventRow) string { return r.Workers }},
		{Name: "fired", Bool: func(r *EventRow) bool { return r.Fired }},
		{Name: "requests_at_event", Int64: func(r *EventRow) int64 { return r.RequestsAtEvent }, Null: true},
		{Name: "running_at_event", Int64: func(r *EventRow) int64 { return r.RunningAtEvent }, Null: true},
		{Name: "waiting_at_event", Int64: func(r *EventRow) int64 { return r.WaitingAtEvent }, Null: true},
		{Name: "pulls_serving_at_event", Int64: func(r *EventRow) int64 { return r.PullsServingAtEvent }, Null: true},
		{Name: "pulls_receiving_at_event", Int64: func(r *EventRow) int64 { return r.PullsReceivingAtEvent }, Null: true},
		{Name: "g2_blocks_at_event", Int64: func(r *EventRow) int64 { return r.G2BlocksAtEvent }, Null: true},
		{Name: "cluster_requests_at_event", Int64: func(r *EventRow) int64 { return r.ClusterRequestsAtEvent }, Null: true},
		{Name: "schedulable_at_event", Int64: func(r *EventRow) int64 { return r.SchedulableAtEvent }, Null: true},
		{Name: "load_share", Float64: func(r *EventRow) float64 { return r.LoadShare }, Null: true},
		{Name: "removed_after_ns", Int64: func(r *EventRow) int64 { return r.RemovedAfterNs }, Null: true},
		{Name: "removed_by_timeout", Int64: func(r *EventRow) int64 { return r.RemovedByTimeout }},
		{Name: "pulls_rejected_draining", Int64: func(r *EventRow) int64 { return r.PullsRejectedDraining }},
		{Name: "pulls_rejected_removed", Int64: func(r *EventRow) int64 { return r.PullsRejectedRemoved }},
		{Name: "pulls_rejected_not_ready", Int64: func(r *EventRow) int64 { return r.PullsRejectedNotReady }},
		{Name: "pulls_rejected_missing", Int64: func(r *EventRow) int64 { return r.PullsRejectedMissing }},
		{Name: "requests_rerouted", Int64: func(r *EventRow) int64 { return r.RequestsRerouted }},
		{Name: "requests_failed", Int64: func(r *EventRow) int64 { return r.RequestsFailed }},
		{Name: "kv_orders", Int64: func(r *EventRow) int64 { return r.Orders }},
		{Name: "kv_blocks_planned", Int64: func(r *EventRow) int64 { return r.BlocksPlanned }},
		{Name: "kv_blocks_landed", Int64: func(r *EventRow) int64 { return r.BlocksLanded }},
		{Name: "kv_done_after_ns", Int64: func(r *EventRow) int64 { return r.OrdersDoneAfterNs }, Null: true},
		{Name: "g2_blocks_left", Int64: func(r *EventRow) int64 { return r.G2BlocksLeft }, Null: true},
		{Name: "removal_delay_ns", Int64: func(r *EventRow) int64 { return r.RemovalDelayNs }, Null: true},
		{Name: "kv_blocks_held", Int64: func(r *EventRow) int64 { return r.Plan.BlocksHeld }},
		{Name: "kv_blocks_planned_again", Int64: func(r *EventRow) int64 { return r.Plan.PlannedAgain }},
		{Name: "kv_left_filling", Int64: func(r *EventRow) int64 { return r.Plan.LeftFilling }},
		{Name: "kv_left_pending", Int64: func(r *EventRow) int64 { return r.Plan.LeftPending }},
		{Name: "kv_left_at_destination", Int64: func(r *EventRow) int64 { return r.Plan.LeftAtDestination }},
		{Name: "kv_left_behind_gap", Int64: func(r *EventRow) int64 { return r.Plan.LeftBehindGap }},
		{Name: "kv_left_destination_busy", Int64: func(r *EventRow) int64 { return r.Plan.LeftDestinationBusy }},
		{Name: "kv_left_destination_full", Int64: func(r *EventRow) int64 { return r.Plan.LeftDestinationFull }},
		{Name: "kv_left_budget", Int64: func(r *EventRow) int64 { return r.Plan.LeftBudget }},
		{Name: "kv_left_no_destination", Int64: func(r *EventRow) int64 { return r.Plan.LeftNoDestination }},
		{Name: "kv_left_other_source", Int64: func(r *EventRow) int64 { return r.Plan.LeftOtherSource }},
		{Name: "kv_landed_short", Int64: func(r *EventRow) int64 { return r.Ends.LandedShort }},
		{Name: "kv_landed_extra", Int64: func(r *EventRow) int64 { return r.Ends.LandedExtra }},
		{Name: "kv_lost_nothing_to_fetch", Int64: func(r *EventRow) int64 { return r.Ends.LostNothingToFetch }},
		{Name: "kv_lost_superseded", Int64: func(r *EventRow) int64 { return r.Ends.LostSuperseded }},
		{Name: "kv_lost_rejected", Int64: func(r *EventRow) int64 { return r.Ends.LostRejected }},
		{Name: "kv_lost_expired", Int64: func(r *EventRow) int64 { return r.Ends.LostExpired }},
		{Name: "kv_lost_failed", Int64: func(r *EventRow) int64 { return r.Ends.LostFailed }},
		{Name: "kv_lost_dropped", Int64: func(r *EventRow) int64 { return r.Ends.LostDropped }},
		{Name: "kv_stored_after", Int64: func(r *EventRow) int64 { return r.Removal.StoredAfter }, Null: true},
		{Name: "kv_pulled_in_after", Int64: func(r *EventRow) int64 { return r.Removal.PulledInAfter }, Null: true},
		{Name: "kv_evicted_after", Int64: func(r *EventRow) int64 { return r.Removal.EvictedAfter }, Null: true},
		{Name: "kv_moved_away_after", Int64: func(r *EventRow) int64 { return r.Removal.MovedAwayAfter }, Null: true},
		{Name: "kv_dropped_after", Int64: func(r *EventRow) int64 { return r.Removal.DroppedAfter }, Null: true},
		{Name: "kv_lost_after", Int64: func(r *EventRow) int64 { return r.Removal.LostAfter }, Null: true},
		{Name: "window_before_ns", Int64: func(r *EventRow) int64 { return r.WindowBeforeNs }},
		{Name: "window_after_ns", Int64: func(r *EventRow) int64 { return r.WindowAfterNs }},
	}
	cols = append(cols, windowColumns("before", func(r *EventRow) *EventWindow { return &r.Before })...)
	cols = append(cols, windowColumns("after", func(r *EventRow) *EventWindow { return &r.After })...)
	cols = append(cols, Column[EventRow]{Name: "twinned", Bool: func(r *EventRow) bool { return r.Twinned }},
		Column[EventRow]{Name: "twin_digest", String: func(r *EventRow) string { return r.TwinDigest }})
	cols = append(cols, windowColumns("twin", func(r *EventRow) *EventWindow { return &r.Twin })...)
	cols = append(cols, deltaColumns("delta", func(r *EventRow) *EventDelta { return &r.Delta })...)
	cols = append(cols, cohortColumns("after", func(r *EventRow) *EventCohort { return &r.CohortAfter })...)
	cols = append(cols, cohortColumns("twin", func(r *EventRow) *EventCohort { return &r.CohortTwin })...)
	cols = append(cols,
		Column[EventRow]{Name: "origin", Dict: func(r *EventRow) string { return r.Origin }, Values: EventOrigins},
		Column[EventRow]{Name: "for_ns", Int64: func(r *EventRow) int64 { return r.ForNs }, Null: true},
		Column[EventRow]{Name: "fault_pulls", Int64: func(r *EventRow) int64 { return r.Fault.Pulls }},
		Column[EventRow]{Name: "fault_passes", Int64: func(r *EventRow) int64 { return r.Fault.Passes }},
		Column[EventRow]{Name: "fault_blocks_lost", Int64: func(r *EventRow) int64 { return r.Fault.BlocksLost }},
		Column[EventRow]{Name: "requests_migrated", Int64: func(r *EventRow) int64 { return r.Fault.Migrated }})
	return append(cols, deltaColumns("before_delta", func(r *EventRow) *EventDelta { return &r.BeforeDelta })...)
}

// EventOrigins are the values of events.parquet's origin column.
var EventOrigins = []string{"scenario", "chaos", "planner"}

// cohortColumns are the columns of an event's displaced cohort, in the run
// (side "after") or its twin ("twin").
func cohortColumns(side string, get func(*EventRow) *EventCohort) []Column[EventRow] {
	f := func(name string, v func(*EventCohort) float64) Column[EventRow] {
		return Column[EventRow]{Name: name, Float64: func(r *EventRow) float64 { return v(get(r)) }, Null: true}
	}
	return []Column[EventRow]{
		{Name: "cohort_requests_" + side, Int64: func(r *EventRow) int64 { return get(r).Requests }, Null: true},
		f("cohort_ttft_p50_"+side+"_ms", func(c *EventCohort) float64 { return c.TTFTP50Ms }),
		f("cohort_ttft_p99_"+side+"_ms", func(c *EventCohort) float64 { return c.TTFTP99Ms }),
		f("cohort_hit_ratio_g1_"+side, func(c *EventCohort) float64 { return c.HitG1 }),
		f("cohort_hit_ratio_g2_"+side, func(c *EventCohort) float64 { return c.HitG2 }),
		f("cohort_hit_ratio_pulled_"+side, func(c *EventCohort) float64 { return c.HitPulled }),
		f("cohort_hit_ratio_computed_"+side, func(c *EventCohort) float64 { return c.HitComputed }),
	}
}

// windowMetrics are a window's metrics in the files' order: each named
// metric_SIDE_unit (ttft_p50_after_ms), read from a window and from a
// difference of two.
var windowMetrics = []struct {
	metric, unit string
	window       func(*EventWindow) float64
	delta        func(*EventDelta) float64
}{
	{"ttft_p50", "_ms", func(w *EventWindow) float64 { return w.TTFTP50Ms }, func(d *EventDelta) float64 { return d.TTFTP50Ms }},
	{"ttft_p99", "_ms", func(w *EventWindow) float64 { return w.TTFTP99Ms }, func(d *EventDelta) float64 { return d.TTFTP99Ms }},
	{"itl_p99", "_ms", func(w *EventWindow) float64 { return w.ITLP99Ms }, func(d *EventDelta) float64 { return d.ITLP99Ms }},
	{"e2e_p99", "_ms", func(w *EventWindow) float64 { return w.E2EP99Ms }, func(d *EventDelta) float64 { return d.E2EP99Ms }},
	{"requests_per_s", "", func(w *EventWindow) float64 { return w.RequestsPerS }, func(d *EventDelta) float64 { return d.RequestsPerS }},
	{"output_tokens_per_s", "", func(w *EventWindow) float64 { return w.OutputTokensPerS }, func(d *EventDelta) float64 { return d.OutputTokensPerS }},
	{"hit_ratio_g1", "", func(w *EventWindow) float64 { return w.HitG1 }, func(d *EventDelta) float64 { return d.HitG1 }},
	{"hit_ratio_g2", "", func(w *EventWindow) float64 { return w.HitG2 }, func(d *EventDelta) float64 { return d.HitG2 }},
	{"hit_ratio_pulled", "", func(w *EventWindow) float64 { return w.HitPulled }, func(d *EventDelta) float64 { return d.HitPulled }},
	{"requests", "", nil, func(d *EventDelta) float64 { return d.Requests }}, // a window's is a count (windowColumns)
	{"tpot_p99", "_ms", func(w *EventWindow) float64 { return w.TPOTP99Ms }, func(d *EventDelta) float64 { return d.TPOTP99Ms }},
	{"queue_p99", "_ms", func(w *EventWindow) float64 { return w.QueueP99Ms }, func(d *EventDelta) float64 { return d.QueueP99Ms }},
	{"hit_ratio_computed", "", func(w *EventWindow) float64 { return w.HitComputed }, func(d *EventDelta) float64 { return d.HitComputed }},
}

// Any reports whether d holds a difference: a value other than 0 (NaN,
// no value, is none).
func (d *EventDelta) Any() bool {
	for _, m := range windowMetrics {
		if v := m.delta(d); v != 0 && !math.IsNaN(v) {
			return true
		}
	}
	return false
}

// windowColumns are the columns of one window, side "before", "after" or
// "twin": its requests a count, nullable only in the twin's.
func windowColumns(side string, get func(*EventRow) *EventWindow) []Column[EventRow] {
	var cols []Column[EventRow]
	for _, m := range windowMetrics {
		name := m.metric + "_" + side + m.unit
		if m.window == nil {
			cols = append(cols, Column[EventRow]{Name: name, Int64: func(r *EventRow) int64 { return get(r).Requests }, Null: side == "twin"})
			continue
		}
		cols = append(cols, Column[EventRow]{Name: name, Float64: func(r *EventRow) float64 { return m.window(get(r)) }, Null: true})
	}
	return cols
}

// deltaColumns are the columns of a difference against the twin, side
// "delta" (EventRow.Delta, named as the window after's with delta in place
// of after) or "before_delta" (EventRow.BeforeDelta, the window before's
// with before_delta in place of before), in the windows' order.
func deltaColumns(side string, get func(*EventRow) *EventDelta) []Column[EventRow] {
	var cols []Column[EventRow]
	for _, m := range windowMetrics {
		cols = append(cols, Column[EventRow]{Name: m.metric + "_" + side + m.unit, Float64: func(r *EventRow) float64 { return m.delta(get(r)) }, Null: true})
	}
	return cols
}

// eventColumns is events.parquet's schema without its dictionary, for
// what reads rows rather than writes them.
var eventColumns = EventColumns(nil)

// NoEvent is the row of an event a run does not have, as sweep.parquet
// holds it for a run with fewer events than another: kind and workers "",
// not fired, every number -1 and every ratio or statistic NaN.
func NoEvent() EventRow {
	var r EventRow
	v := reflect.ValueOf(&r).Elem()
	for _, path := range Leaves(v.Type()) {
		switch f := v.FieldByIndex(path); f.Kind() {
		case reflect.Int32, reflect.Int64:
			f.SetInt(-1)
		case reflect.Float64:
			f.SetFloat(math.NaN())
		}
	}
	return r
}

// MarshalJSON writes the row as RowJSON does: its columns by name, NaN as
// null.
func (r EventRow) MarshalJSON() ([]byte, error) { return RowJSON(eventColumns, &r), nil }

// UnmarshalJSON reads what MarshalJSON writes; null is NaN.
func (r *EventRow) UnmarshalJSON(b []byte) error { return rowFromJSON(eventColumns, b, r) }

// rowFromJSON fills r from a JSON object whose members are cols by name,
// as RowJSON writes it: column i fills r's leaf field i (Leaves), and a
// null float is NaN. Every column must be there.
func rowFromJSON[R any](cols []Column[R], b []byte, r *R) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return err
	}
	v := reflect.ValueOf(r).Elem()
	for i, path := range Leaves(v.Type()) {
		raw, ok := members[cols[i].Name]
		if !ok {
			return fmt.Errorf("report: no %q in %s", cols[i].Name, b)
		}
		f := v.FieldByIndex(path)
		if f.Kind() == reflect.Float64 {
			f.SetFloat(math.NaN()) // null leaves it so
		}
		if err := json.Unmarshal(raw, f.Addr().Interface()); err != nil {
			return fmt.Errorf("report: %s: %w", cols[i].Name, err)
		}
	}
	return nil
}

// Leaves is the path (for reflect.Value.FieldByIndex) of each field of the
// struct type t that is not itself a struct, in declaration order, nested
// structs flattened. Every row type is declared so that column i of its
// table fills leaf i.
func Leaves(t reflect.Type) [][]int {
	var out [][]int
	for i := range t.NumField() {
		if f := t.Field(i); f.Type.Kind() == reflect.Struct {
			for _, p := range Leaves(f.Type) {
				out = append(out, append([]int{i}, p...))
			}
		} else {
			out = append(out, []int{i})
		}
	}
	return out
}
