package report

// PullRow is one row of pulls.parquet: one KVCR pull, from its staging to
// its end. Times are virtual nanoseconds; -1 means none.
type PullRow struct {
	PullID          int64  // in staging order, from 0
	RequestID       int64  // the hinted request; -1 for a request-independent pull
	Source          int32  // worker the blocks come from
	Target          int32  // worker that pulls them
	Mode            string // KVCR's name of the pull's mode
	BlocksRequested int64  // missing blocks at staging
	BlocksLanded    int64  // blocks that landed in the target's G2
	Bytes           int64  // bytes of the transfer (0 when none started)
	StagedNs        int64  // first staging (a parked pull keeps it)
	FirstByteNs     int64  // first byte at the source's egress; -1 none
	EndNs           int64  // when the outcome was decided (the target's deadline for expired)
	Outcome         string // KVCR's name of how the pull ended
	WriteEndNs      int64  // when the source's write really ended (last byte, or stopped); -1 never started
	Kind            string // KVCR's name of what issued it: a request's hint, or a request-independent move or prefetch
}

// PullColumns is the schema of pulls.parquet, whose mode, outcome and kind
// columns hold the model's names: modes, outcomes and kinds are their
// dictionaries, in order (results.PullColumns passes KVCR's). A reader, which
// finds the values in the file, passes nil. The column names are a public
// contract: never rename one. kind is outside the digest: request_id -1 and
// mode tell the kinds apart there.
func PullColumns(modes, outcomes, kinds []string) []Column[PullRow] {
	return []Column[PullRow]{
		{Name: "pull_id", Int32: func(r *PullRow) int32 { return int32(r.PullID) }}, // ids are int32 (DESIGN.md section 8): the run refuses more
		{Name: "request_id", Int32: func(r *PullRow) int32 { return int32(r.RequestID) }},
		{Name: "source", Int32: func(r *PullRow) int32 { return r.Source }},
		{Name: "target", Int32: func(r *PullRow) int32 { return r.Target }},
		{Name: "mode", Dict: func(r *PullRow) string { return r.Mode }, Values: modes, NoDigest: true, Config: true},
		{Name: "blocks_requested", Int64: func(r *PullRow) int64 { return r.BlocksRequested }},
		{Name: "blocks_landed", Int64: func(r *PullRow) int64 { return r.BlocksLanded }},
		{Name: "bytes", Int64: func(r *PullRow) int64 { return r.Bytes }},
		{Name: "staged_ns", Int64: func(r *PullRow) int64 { return r.StagedNs }},
		{Name: "first_byte_ns", Int64: func(r *PullRow) int64 { return r.FirstByteNs }},
		{Name: "end_ns", Int64: func(r *PullRow) int64 { return r.EndNs }},
		{Name: "outcome", Dict: func(r *PullRow) string { return r.Outcome }, Values: outcomes},
		{Name: "write_end_ns", Int64: func(r *PullRow) int64 { return r.WriteEndNs }, NoDigest: true},
		{Name: "kind", Dict: func(r *PullRow) string { return r.Kind }, Values: kinds, NoDigest: true},
	}
}

// WorkerRow is one row of workers.parquet: one worker's life and totals.
type WorkerRow struct {
	Worker            int32
	AddedNs           int64 // 0 for the initial workers
	ReadyNs           int64
	DrainNs           int64 // -1: never drained
	RemovedNs         int64 // -1: never removed
	Passes            int64
	BusyNs            int64 // total pass time
	RequestsCompleted int64
	G2PeakBlocks      int64
	Downs             int64 // times a down fault took its engine down
	DownNs            int64 // total time its engine was down
}

// WorkerColumns is the schema of workers.parquet.
var WorkerColumns = []Column[WorkerRow]{
	{Name: "worker", Int32: func(r *WorkerRow) int32 { return r.Worker }},
	{Name: "added_ns", Int64: func(r *WorkerRow) int64 { return r.AddedNs }},
	{Name: "ready_ns", Int64: func(r *WorkerRow) int64 { return r.ReadyNs }},
	{Name: "drain_ns", Int64: func(r *WorkerRow) int64 { return r.DrainNs }},
	{Name: "removed_ns", Int64: func(r *WorkerRow) int64 { return r.RemovedNs }},
	{Name: "passes", Int64: func(r *WorkerRow) int64 { return r.Passes }},
	{Name: "busy_ns", Int64: func(r *WorkerRow) int64 { return r.BusyNs }},
	{Name: "requests_completed", Int64: func(r *WorkerRow) int64 { return r.RequestsCompleted }},
	{Name: "g2_peak_blocks", Int64: func(r *WorkerRow) int64 { return r.G2PeakBlocks }},
	{Name: "downs", Int64: func(r *WorkerRow) int64 { return r.Downs }},
	{Name: "down_ns", Int64: func(r *WorkerRow) int64 { return r.DownNs }},
}

// CounterColumns is counters.parquet's schema; names are the counters, in
// row order, for the name column's dictionary.
func CounterColumns(names []string) []Column[CounterRow] {
	return []Column[CounterRow]{
		{Name: "name", Dict: func(r *CounterRow) string { return r.Name }, Values: names},
		{Name: "value", Int64: func(r *CounterRow) int64 { return r.Value }},
	}
}

// CounterRow is one row of counters.parquet.
type CounterRow struct {
	Name  string
	Value int64
}

// SampleRow is one row of timeseries.parquet: one worker at one sample time.
type SampleRow struct {
	TimeNs      int64
	Worker      int32
	Running     int32
	Waiting     int32
	G1Blocks    int64 // G1 blocks referenced by requests
	G2Blocks    int64 // G2 slots taken
	ActivePulls int32 // pulls it is the source or target of, and orders it is the source of not yet started
}

// SampleColumns is the schema of timeseries.parquet.
var SampleColumns = []Column[SampleRow]{
	{Name: "time_ns", Int64: func(r *SampleRow) int64 { return r.TimeNs }},
	{Name: "worker", Int32: func(r *SampleRow) int32 { return r.Worker }},
	{Name: "running", Int32: func(r *SampleRow) int32 { return r.Running }},
	{Name: "waiting", Int32: func(r *SampleRow) int32 { return r.Waiting }},
	{Name: "g1_blocks", Int64: func(r *SampleRow) int64 { return r.G1Blocks }},
	{Name: "g2_blocks", Int64: func(r *SampleRow) int64 { return r.G2Blocks }},
	{Name: "active_pulls", Int32: func(r *SampleRow) int32 { return r.ActivePulls }},
}
