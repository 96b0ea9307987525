package report

import (
	"fmt"
	"slices"
)

// SweepRow is one row of sweep.parquet: one run of a sweep, its varied
// parameters and its summary metrics. Wall time is left out: a sweep's
// table does not depend on how it was run.
type SweepRow struct {
	Run              int64    // index in the grid, from 0
	Params           []string // the varied keys' values, in the sweep's key order
	Completed        int64
	Rejected         int64
	Failed           int64
	Unfinished       int64
	TTFTP50          float64 // ms
	TTFTP90          float64
	TTFTP99          float64
	TPOTP50          float64
	TPOTP99          float64
	ITLP99           float64
	E2EP50           float64
	E2EP99           float64
	HitG1            float64 // share of prompt tokens
	HitG2            float64
	HitPulled        float64
	RequestsPerS     float64
	OutputTokensPerS float64
	PullsStaged      int64
	PullsSuccess     int64
	PullsPartial     int64
	PullsFailed      int64
	PullsExpired     int64
	PullsSuperseded  int64
	PullsRejected    int64 // all rejection reasons
	PullsParked      int64
	BytesPulled      int64
	Rerouted         int64
	WorkersRemoved   int64
	MakespanNs       int64
	// The run's cost and goodput (DESIGN.md section 13): worker-seconds
	// provisioned and their mean over the run; the completed requests
	// meeting planner.slo, a second over the makespan and as a share of the
	// completed, and the shares meeting its TTFT and its ITL bound (-1 and
	// NaN without planner.slo, null in the file: GoodputColumns).
	WorkerSeconds          float64
	MeanWorkers            float64
	GoodputRequests        int64
	GoodputRequestsPerS    float64
	GoodputShare           float64
	TTFTAttainment         float64
	ITLAttainment          float64
	PlannerAdds            int64 // the planner's add actions
	PlannerDrains          int64 // its drain actions
	PlannerWorkersAdded    int64 // the workers its adds named
	PlannerWorkersDrained  int64 // the workers its drains named
	PlannerBlocksEvacuated int64 // the G2 blocks its drains' evacuations landed
	PlannerG2BlocksLeft    int64 // the G2 blocks its drained workers held when removed
	Digest                 string
	// Events are the run's events.parquet rows, in event order; the
	// columns of event k are named event<k>_<column>.
	Events []EventRow
}

// sweepMetrics are sweep.parquet's columns after the parameters.
var sweepMetrics = slices.Concat([]Column[SweepRow]{
	{Name: "requests_completed", Int64: func(r *SweepRow) int64 { return r.Completed }},
	{Name: "requests_rejected", Int64: func(r *SweepRow) int64 { return r.Rejected }},
	{Name: "requests_failed", Int64: func(r *SweepRow) int64 { return r.Failed }},
	{Name: "requests_unfinished", Int64: func(r *SweepRow) int64 { return r.Unfinished }},
	{Name: "ttft_p50_ms", Float64: func(r *SweepRow) float64 { return r.TTFTP50 }, Null: true},
	{Name: "ttft_p90_ms", Float64: func(r *SweepRow) float64 { return r.TTFTP90 }, Null: true},
	{Name: "ttft_p99_ms", Float64: func(r *SweepRow) float64 { return r.TTFTP99 }, Null: true},
	{Name: "tpot_p50_ms", Float64: func(r *SweepRow) float64 { return r.TPOTP50 }, Null: true},
	{Name: "tpot_p99_ms", Float64: func(r *SweepRow) float64 { return r.TPOTP99 }, Null: true},
	{Name: "itl_p99_ms", Float64: func(r *SweepRow) float64 { return r.ITLP99 }, Null: true},
	{Name: "e2e_p50_ms", Float64: func(r *SweepRow) float64 { return r.E2EP50 }, Null: true},
	{Name: "e2e_p99_ms", Float64: func(r *SweepRow) float64 { return r.E2EP99 }, Null: true},
	{Name: "hit_ratio_g1", Float64: func(r *SweepRow) float64 { return r.HitG1 }, Null: true},
	{Name: "hit_ratio_g2", Float64: func(r *SweepRow) float64 { return r.HitG2 }, Null: true},
	{Name: "hit_ratio_pulled", Float64: func(r *SweepRow) float64 { return r.HitPulled }, Null: true},
	{Name: "requests_per_s", Float64: func(r *SweepRow) float64 { return r.RequestsPerS }},
	{Name: "output_tokens_per_s", Float64: func(r *SweepRow) float64 { return r.OutputTokensPerS }},
	{Name: "pulls_staged", Int64: func(r *SweepRow) int64 { return r.PullsStaged }},
	{Name: "pulls_success", Int64: func(r *SweepRow) int64 { return r.PullsSuccess }},
	{Name: "pulls_partial", Int64: func(r *SweepRow) int64 { return r.PullsPartial }},
	{Name: "pulls_failed", Int64: func(r *SweepRow) int64 { return r.PullsFailed }},
	{Name: "pulls_expired", Int64: func(r *SweepRow) int64 { return r.PullsExpired }},
	{Name: "pulls_superseded", Int64: func(r *SweepRow) int64 { return r.PullsSuperseded }},
	{Name: "pulls_rejected", Int64: func(r *SweepRow) int64 { return r.PullsRejected }},
	{Name: "pulls_parked", Int64: func(r *SweepRow) int64 { return r.PullsParked }},
	{Name: "bytes_pulled", Int64: func(r *SweepRow) int64 { return r.BytesPulled }},
	{Name: "requests_rerouted", Int64: func(r *SweepRow) int64 { return r.Rerouted }},
	{Name: "workers_removed", Int64: func(r *SweepRow) int64 { return r.WorkersRemoved }},
	{Name: "makespan_ns", Int64: func(r *SweepRow) int64 { return r.MakespanNs }},
	{Name: "worker_seconds", Float64: func(r *SweepRow) float64 { return r.WorkerSeconds }},
	{Name: "mean_workers", Float64: func(r *SweepRow) float64 { return r.MeanWorkers }},
}, GoodputColumns, []Column[SweepRow]{
	{Name: "planner_adds", Int64: func(r *SweepRow) int64 { return r.PlannerAdds }},
	{Name: "planner_drains", Int64: func(r *SweepRow) int64 { return r.PlannerDrains }},
	{Name: "planner_workers_added", Int64: func(r *SweepRow) int64 { return r.PlannerWorkersAdded }},
	{Name: "planner_workers_drained", Int64: func(r *SweepRow) int64 { return r.PlannerWorkersDrained }},
	{Name: "planner_blocks_evacuated", Int64: func(r *SweepRow) int64 { return r.PlannerBlocksEvacuated }},
	{Name: "planner_g2_blocks_left", Int64: func(r *SweepRow) int64 { return r.PlannerG2BlocksLeft }},
	{Name: "digest", String: func(r *SweepRow) string { return r.Digest }},
})

// HasGoodput reports whether a run of rows measured goodput (its
// scenario sets planner.slo; GoodputRequests is -1 in one that does not).
func HasGoodput(rows []SweepRow) bool {
	return slices.ContainsFunc(rows, func(r SweepRow) bool { return r.GoodputRequests >= 0 })
}

// GoodputColumns are sweep.parquet's columns measured against the
// scenario's planner.slo, in the file's order: null in a run without one.
var GoodputColumns = []Column[SweepRow]{
	{Name: "goodput_requests", Int64: func(r *SweepRow) int64 { return r.GoodputRequests }, Null: true},
	{Name: "goodput_requests_per_s", Float64: func(r *SweepRow) float64 { return r.GoodputRequestsPerS }, Null: true},
	{Name: "goodput_share", Float64: func(r *SweepRow) float64 { return r.GoodputShare }, Null: true},
	{Name: "ttft_attainment", Float64: func(r *SweepRow) float64 { return r.TTFTAttainment }, Null: true},
	{Name: "itl_attainment", Float64: func(r *SweepRow) float64 { return r.ITLAttainment }, Null: true},
}

// SweepColumns is sweep.parquet's schema for the varied keys and events
// lifecycle events a run (the most any run of the sweep has, SweepEvents):
// run, one string column a key (named by it), the metrics, then for each
// event k every column of events.parquet named event<k>_<column>, kind a
// plain string. A run with fewer events shows NoEvent in the columns of
// those it lacks, whose numbers are all Null: the file holds null there.
func SweepColumns(keys []string, events int) []Column[SweepRow] {
	cols := []Column[SweepRow]{{Name: "run", Int64: func(r *SweepRow) int64 { return r.Run }}}
	for i, k := range keys {
		cols = append(cols, Column[SweepRow]{Name: k, String: func(r *SweepRow) string { return r.Params[i] }})
	}
	cols = append(cols, sweepMetrics...)
	for k := range events {
		get := func(r *SweepRow) *EventRow {
			if k < len(r.Events) {
				return &r.Events[k]
			}
			return &noEvent
		}
		for _, c := range eventColumns {
			ec := within(c, fmt.Sprintf("event%d_%s", k, c.Name), get)
			// A run lacking the event has NoEvent's -1 and NaN in every
			// number column: none is a value.
			ec.Null = ec.Int64 != nil || ec.Int32 != nil || ec.Float64 != nil
			cols = append(cols, ec)
		}
	}
	return cols
}

// noEvent is NoEvent, for the columns of an event a run lacks.
var noEvent = NoEvent()

// SweepEvents is the most events any of rows has: how many events'
// columns sweep.parquet has.
func SweepEvents(rows []SweepRow) int {
	n := 0
	for _, r := range rows {
		n = max(n, len(r.Events))
	}
	return n
}

// within is column c of the row get finds in an R, named name; a
// dictionary column becomes a plain string column.
func within[R, S any](c Column[S], name string, get func(*R) *S) Column[R] {
	out := Column[R]{Name: name, NoDigest: c.NoDigest, Config: c.Config, Null: c.Null}
	switch {
	case c.Int64 != nil:
		out.Int64 = func(r *R) int64 { return c.Int64(get(r)) }
	case c.Int32 != nil:
		out.Int32 = func(r *R) int32 { return c.Int32(get(r)) }
	case c.Float64 != nil:
		out.Float64 = func(r *R) float64 { return c.Float64(get(r)) }
	case c.Bool != nil:
		out.Bool = func(r *R) bool { return c.Bool(get(r)) }
	case c.String != nil:
		out.String = func(r *R) string { return c.String(get(r)) }
	default:
		out.String = func(r *R) string { return c.Dict(get(r)) }
	}
	return out
}
