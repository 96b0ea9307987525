package report

import "math"

// Request outcomes, the values of requests.parquet's outcome column.
const (
	OutcomeCompleted  = "completed"
	OutcomeRejected   = "rejected"
	OutcomeFailed     = "failed"
	OutcomeUnfinished = "unfinished"
)

// RequestRow is one row of requests.parquet: one request of the trace.
// Times are virtual nanoseconds; -1 means none (for example FirstTokenNs
// of a rejected request, or HintSource without a hint).
type RequestRow struct {
	RequestID            int64  // trace ordinal from 0
	Worker               int32  // worker it was last routed to
	ArrivalNs            int64  // arrival time
	FirstTokenNs         int64  // first output token emitted
	FinishNs             int64  // time it ended (last token, failure or rejection)
	InputTokens          int64  // prompt tokens
	OutputTokens         int64  // output tokens requested
	G1HitTokens          int64  // prompt tokens hit in the worker's G1 prefix cache
	G2HitTokens          int64  // prompt tokens hit in the worker's own G2
	PulledTokens         int64  // prompt tokens landed by a KVCR pull
	ComputedPromptTokens int64  // prompt tokens computed, counting recompute after preemption
	Preemptions          int32  // times it was preempted
	HintSource           int32  // source worker of its kv.fetch hint; -1 none
	Outcome              string // one of the Outcome constants
	Reroutes             int32  // times it restarted on another worker after its worker was removed
	ScheduledNs          int64  // first scheduled into a pass on the worker it ended on
	Migrations           int32  // times it moved, with the tokens it had produced, to another worker (on_remove: migrate)
	// Measured latencies of a real server, from a trace that carries them
	// (otel); -1 otherwise. Inputs, not behaviour: outside the digest.
	MeasuredTTFTNs, MeasuredE2ENs, MeasuredQueueNs, MeasuredPrefillNs, MeasuredDecodeNs int64
	// PrevRequestID is its previous turn, from the workload: the latest
	// request before it whose cache it would reuse; -1 none. An input, not
	// behaviour: outside the digest.
	PrevRequestID int64
}

// MaxID is the largest request or pull id the files hold: their id columns
// are int32, as DESIGN.md section 8 types ids.
const MaxID = math.MaxInt32

// RequestColumns is the schema of requests.parquet. The names are a public
// contract (DESIGN.md section 8): never rename one.
var RequestColumns = []Column[RequestRow]{
	{Name: "request_id", Int32: func(r *RequestRow) int32 { return int32(r.RequestID) }}, // ids are int32 (DESIGN.md section 8): the run refuses more (MaxID)
	{Name: "worker", Int32: func(r *RequestRow) int32 { return r.Worker }},
	{Name: "arrival_ns", Int64: func(r *RequestRow) int64 { return r.ArrivalNs }},
	{Name: "first_token_ns", Int64: func(r *RequestRow) int64 { return r.FirstTokenNs }},
	{Name: "finish_ns", Int64: func(r *RequestRow) int64 { return r.FinishNs }},
	{Name: "input_tokens", Int64: func(r *RequestRow) int64 { return r.InputTokens }},
	{Name: "output_tokens", Int64: func(r *RequestRow) int64 { return r.OutputTokens }},
	{Name: "g1_hit_tokens", Int64: func(r *RequestRow) int64 { return r.G1HitTokens }},
	{Name: "g2_hit_tokens", Int64: func(r *RequestRow) int64 { return r.G2HitTokens }},
	{Name: "pulled_tokens", Int64: func(r *RequestRow) int64 { return r.PulledTokens }},
	{Name: "computed_prompt_tokens", Int64: func(r *RequestRow) int64 { return r.ComputedPromptTokens }},
	{Name: "preemptions", Int32: func(r *RequestRow) int32 { return r.Preemptions }},
	{Name: "hint_source", Int32: func(r *RequestRow) int32 { return r.HintSource }},
	{Name: "outcome", Dict: func(r *RequestRow) string { return r.Outcome },
		Values: []string{OutcomeCompleted, OutcomeRejected, OutcomeFailed, OutcomeUnfinished}},
	{Name: "reroutes", Int32: func(r *RequestRow) int32 { return r.Reroutes }},
	{Name: "scheduled_ns", Int64: func(r *RequestRow) int64 { return r.ScheduledNs }, NoDigest: true},
	{Name: "migrations", Int32: func(r *RequestRow) int32 { return r.Migrations }, NoDigest: true},
	{Name: "measured_ttft_ns", Int64: func(r *RequestRow) int64 { return r.MeasuredTTFTNs }, NoDigest: true, Config: true},
	{Name: "measured_e2e_ns", Int64: func(r *RequestRow) int64 { return r.MeasuredE2ENs }, NoDigest: true, Config: true},
	{Name: "measured_queue_ns", Int64: func(r *RequestRow) int64 { return r.MeasuredQueueNs }, NoDigest: true, Config: true},
	{Name: "measured_prefill_ns", Int64: func(r *RequestRow) int64 { return r.MeasuredPrefillNs }, NoDigest: true, Config: true},
	{Name: "measured_decode_ns", Int64: func(r *RequestRow) int64 { return r.MeasuredDecodeNs }, NoDigest: true, Config: true},
	{Name: "prev_request_id", Int32: func(r *RequestRow) int32 { return int32(r.PrevRequestID) }, NoDigest: true, Config: true},
}
