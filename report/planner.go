package report

// PlannerRow is one row of planner.parquet: one decision instant of the
// planner (DESIGN.md section 13), held ones too.
type PlannerRow struct {
	AtNs int64 // the decision's instant
	// What it read over the interval just ended: the waiting requests per
	// ready worker and the ready workers' G1 usage (used over capacity),
	// both time-weighted, and the arrivals a second. Queue and KV are NaN
	// when no worker was ready in the interval.
	Queue       float64
	KV          float64
	ArrivalRate float64
	// Wanted is the count of workers its policy wanted, before the
	// scale-down window, the bounds and the step.
	Wanted int32
	// The workers ready, starting (added or restarting, or down) and
	// draining before its action.
	Ready, Starting, Draining int32
	Action                    string // PlannerAdd, PlannerDrain, PlannerHold or PlannerNone
	Workers                   int32  // the workers it added or drained; 0 for hold and none
	Event                     int32  // its events.parquet row; -1 for hold and none
	Why                       string // why it held or did nothing, or what bounded its action; "" when it did what it wanted
}

// The planner's actions: planner.parquet's action column.
const (
	PlannerAdd   = "add"
	PlannerDrain = "drain"
	PlannerHold  = "hold" // its last action is still in progress
	PlannerNone  = "none" // it wants the workers it has, or its bounds, window or last ready worker leave nothing to do
)

// PlannerActions lists the actions, in the order of the column's dictionary.
var PlannerActions = []string{PlannerAdd, PlannerDrain, PlannerHold, PlannerNone}

// PlannerColumns is the schema of planner.parquet.
var PlannerColumns = []Column[PlannerRow]{
	{Name: "at_ns", Int64: func(r *PlannerRow) int64 { return r.AtNs }},
	{Name: "queue", Float64: func(r *PlannerRow) float64 { return r.Queue }, Null: true},
	{Name: "kv_usage", Float64: func(r *PlannerRow) float64 { return r.KV }, Null: true},
	{Name: "arrival_rate", Float64: func(r *PlannerRow) float64 { return r.ArrivalRate }},
	{Name: "wanted", Int32: func(r *PlannerRow) int32 { return r.Wanted }},
	{Name: "ready", Int32: func(r *PlannerRow) int32 { return r.Ready }},
	{Name: "starting", Int32: func(r *PlannerRow) int32 { return r.Starting }},
	{Name: "draining", Int32: func(r *PlannerRow) int32 { return r.Draining }},
	{Name: "action", Dict: func(r *PlannerRow) string { return r.Action }, Values: PlannerActions},
	{Name: "workers", Int32: func(r *PlannerRow) int32 { return r.Workers }},
	{Name: "event", Int32: func(r *PlannerRow) int32 { return r.Event }, Null: true},
	{Name: "why", String: func(r *PlannerRow) string { return r.Why }},
}
