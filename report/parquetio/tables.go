package parquetio

import (
	"sync"

	"github.com/kvsim/kvsim/report"
)

// Tables writes a run's seven Parquet tables into a directory: requests,
// pulls and time-series rows stream in as the run produces them, each
// table encoded on its writer's goroutine; workers, counters and events
// and planner are written at the end.
type Tables struct {
	requests *TableWriter[report.RequestRow]
	pulls    *TableWriter[report.PullRow]
	samples  *TableWriter[report.SampleRow]
	events   []report.Column[report.EventRow]
	path     func(string) string
}

// perRequestRows is how many rows requests.parquet and pulls.parquet, a row a
// request or a pull, hand over and encode at a time, against batchRows for
// timeseries.parquet. What a writer holds when the run ends is encoded and
// compressed then, on the run's critical path: a quarter as many rows left
// made the conversation trace's close at 8 workers 16 -> 10 ms (medians of
// five), the bytes the same. The time series, a row a worker a sample,
// keeps the larger runs: encoding it 1,024 rows at a time cost more than
// it gave at 128 workers, the event loop waiting for its writer.
const perRequestRows = writeBatch

// NewTables creates requests.parquet, pulls.parquet and timeseries.parquet;
// path maps a file name to its path, pulls is pulls.parquet's schema with
// its dictionaries (results.PullColumns) and events events.parquet's
// (results.EventColumns), which Close writes.
func NewTables(path func(name string) string, pulls []report.Column[report.PullRow], events []report.Column[report.EventRow]) (*Tables, error) {
	t := &Tables{events: events, path: path}
	var err error
	if t.requests, err = NewRequestWriter(path(report.RequestsFile), 0); err != nil {
		return nil, err
	}
	if t.pulls, err = newTableWriter(path(report.PullsFile), pulls, 0, perRequestRows, perRequestRows); err != nil {
		t.requests.Close()
		return nil, err
	}
	if t.samples, err = NewTableWriter(path(report.TimeseriesFile), report.SampleColumns, 0); err != nil {
		t.requests.Close()
		t.pulls.Close()
		return nil, err
	}
	return t, nil
}

// Request appends a requests.parquet row.
func (t *Tables) Request(r *report.RequestRow) error { return t.requests.Append(r) }

// Pull appends a pulls.parquet row.
func (t *Tables) Pull(r *report.PullRow) error { return t.pulls.Append(r) }

// Sample appends a timeseries.parquet row.
func (t *Tables) Sample(r *report.SampleRow) error { return t.samples.Append(r) }

// Close closes the streamed tables and writes workers.parquet,
// counters.parquet, events.parquet (the rows in event order) and
// planner.parquet (no rows without a planner), the seven at once, each
// from a goroutine of its own. It returns the first error in that order
// of the files.
func (t *Tables) Close(workers []report.WorkerRow, counters []report.CounterRow, events []report.EventRow, planner []report.PlannerRow) error {
	names := make([]string, len(counters))
	for i, c := range counters {
		names[i] = c.Name
	}
	closes := []func() error{
		t.requests.Close, t.pulls.Close, t.samples.Close,
		func() error { return writeAll(t.path(report.WorkersFile), report.WorkerColumns, workers) },
		func() error { return writeAll(t.path(report.CountersFile), report.CounterColumns(names), counters) },
		func() error { return writeAll(t.path(report.EventsFile), t.events, events) },
		func() error { return writeAll(t.path(report.PlannerFile), report.PlannerColumns, planner) },
	}
	errs := make([]error, len(closes))
	var wg sync.WaitGroup
	for i, c := range closes {
		wg.Go(func() { errs[i] = c() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeAll writes a whole table at once.
func writeAll[R any](path string, cols []report.Column[R], rows []R) error {
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

// NewRequestWriter creates requests.parquet at path, handing rows over and
// encoding them perRequestRows at a time, as a run's does; rowGroupRows is
// as in NewTableWriter (0 means DefaultRowGroupRows).
func NewRequestWriter(path string, rowGroupRows int) (*TableWriter[report.RequestRow], error) {
	return newTableWriter(path, report.RequestColumns, rowGroupRows, perRequestRows, perRequestRows)
}
