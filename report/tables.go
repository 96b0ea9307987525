package report

// PullRow is one row of pulls.parquet: one KVCR pull, from its staging to
// its end. Times are virtual nanoseconds; -1 means none.
type PullRow struct {
	PullID          int64  // in staging order, from 0
	RequestID       int64  // the hinted request
	Source          int32  // worker the blocks come from
	Target          int32  // worker that pulls them
	Mode            string // copy or move
	BlocksRequested int64  // missing blocks at staging
	BlocksLanded    int64  // blocks that landed in the target's G2
	Bytes           int64  // bytes of the transfer (0 when none started)
	StagedNs        int64  // first staging (a parked pull keeps it)
	FirstByteNs     int64  // first byte at the source's egress; -1 none
	EndNs           int64  // transfer end, or the outcome time without a transfer
	Outcome         string // one of PullOutcomes
}

var pullColumns = []Column[PullRow]{
	{Name: "pull_id", Int64: func(r *PullRow) int64 { return r.PullID }},
	{Name: "request_id", Int64: func(r *PullRow) int64 { return r.RequestID }},
	{Name: "source", Int32: func(r *PullRow) int32 { return r.Source }},
	{Name: "target", Int32: func(r *PullRow) int32 { return r.Target }},
	{Name: "mode", Dict: func(r *PullRow) string { return r.Mode }, Values: []string{"copy", "move"}},
	{Name: "blocks_requested", Int64: func(r *PullRow) int64 { return r.BlocksRequested }},
	{Name: "blocks_landed", Int64: func(r *PullRow) int64 { return r.BlocksLanded }},
	{Name: "bytes", Int64: func(r *PullRow) int64 { return r.Bytes }},
	{Name: "staged_ns", Int64: func(r *PullRow) int64 { return r.StagedNs }},
	{Name: "first_byte_ns", Int64: func(r *PullRow) int64 { return r.FirstByteNs }},
	{Name: "end_ns", Int64: func(r *PullRow) int64 { return r.EndNs }},
	{Name: "outcome", Dict: func(r *PullRow) string { return r.Outcome }, Values: PullOutcomes},
}

// PullOutcomes are the values of pulls.parquet's outcome column.
var PullOutcomes = []string{"success", "partial", "failed", "expired", "rejected", "superseded"}

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
}

var workerColumns = []Column[WorkerRow]{
	{Name: "worker", Int32: func(r *WorkerRow) int32 { return r.Worker }},
	{Name: "added_ns", Int64: func(r *WorkerRow) int64 { return r.AddedNs }},
	{Name: "ready_ns", Int64: func(r *WorkerRow) int64 { return r.ReadyNs }},
	{Name: "drain_ns", Int64: func(r *WorkerRow) int64 { return r.DrainNs }},
	{Name: "removed_ns", Int64: func(r *WorkerRow) int64 { return r.RemovedNs }},
	{Name: "passes", Int64: func(r *WorkerRow) int64 { return r.Passes }},
	{Name: "busy_ns", Int64: func(r *WorkerRow) int64 { return r.BusyNs }},
	{Name: "requests_completed", Int64: func(r *WorkerRow) int64 { return r.RequestsCompleted }},
	{Name: "g2_peak_blocks", Int64: func(r *WorkerRow) int64 { return r.G2PeakBlocks }},
}

// counterColumns is counters.parquet's schema; names are the counters, in
// row order, for the name column's dictionary.
func counterColumns(names []string) []Column[CounterRow] {
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
	ActivePulls int32 // pulls it is the source or target of
}

var sampleColumns = []Column[SampleRow]{
	{Name: "time_ns", Int64: func(r *SampleRow) int64 { return r.TimeNs }},
	{Name: "worker", Int32: func(r *SampleRow) int32 { return r.Worker }},
	{Name: "running", Int32: func(r *SampleRow) int32 { return r.Running }},
	{Name: "waiting", Int32: func(r *SampleRow) int32 { return r.Waiting }},
	{Name: "g1_blocks", Int64: func(r *SampleRow) int64 { return r.G1Blocks }},
	{Name: "g2_blocks", Int64: func(r *SampleRow) int64 { return r.G2Blocks }},
	{Name: "active_pulls", Int32: func(r *SampleRow) int32 { return r.ActivePulls }},
}

// Tables writes a run's five Parquet tables into a directory: requests,
// pulls and time-series rows stream in as the run produces them; workers
// and counters are written at the end.
type Tables struct {
	requests *TableWriter[RequestRow]
	pulls    *TableWriter[PullRow]
	samples  *TableWriter[SampleRow]
	dir      func(string) string
}

// NewTables creates requests.parquet, pulls.parquet and timeseries.parquet;
// path maps a file name to its path.
func NewTables(path func(name string) string) (*Tables, error) {
	t := &Tables{dir: path}
	var err error
	if t.requests, err = NewRequestWriter(path("requests.parquet"), 0); err != nil {
		return nil, err
	}
	if t.pulls, err = NewTableWriter(path("pulls.parquet"), pullColumns, 0); err != nil {
		t.requests.Close()
		return nil, err
	}
	if t.samples, err = NewTableWriter(path("timeseries.parquet"), sampleColumns, 0); err != nil {
		t.requests.Close()
		t.pulls.Close()
		return nil, err
	}
	return t, nil
}

// Request appends a requests.parquet row.
func (t *Tables) Request(r *RequestRow) error { return t.requests.Append(r) }

// Pull appends a pulls.parquet row.
func (t *Tables) Pull(r *PullRow) error { return t.pulls.Append(r) }

// Sample appends a timeseries.parquet row.
func (t *Tables) Sample(r *SampleRow) error { return t.samples.Append(r) }

// Close writes workers.parquet and counters.parquet and closes every
// table. It returns the first error.
func (t *Tables) Close(workers []WorkerRow, counters []CounterRow) error {
	errs := []error{t.requests.Close(), t.pulls.Close(), t.samples.Close()}
	errs = append(errs, writeAll(t.dir("workers.parquet"), workerColumns, workers))
	names := make([]string, len(counters))
	for i, c := range counters {
		names[i] = c.Name
	}
	errs = append(errs, writeAll(t.dir("counters.parquet"), counterColumns(names), counters))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeAll writes a whole table at once.
func writeAll[R any](path string, cols []Column[R], rows []R) error {
	w, err := NewTableWriter(path, cols, 0)
	if err != nil {
		return err
	}
	for i := range rows {
		if err := w.Append(&rows[i]); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
