package parquetio

import "github.com/kvsim/kvsim/report"

// Tables writes a run's five Parquet tables into a directory: requests,
// pulls and time-series rows stream in as the run produces them; workers
// and counters are written at the end.
type Tables struct {
	requests *TableWriter[report.RequestRow]
	pulls    *TableWriter[report.PullRow]
	samples  *TableWriter[report.SampleRow]
	dir      func(string) string
}

// NewTables creates requests.parquet, pulls.parquet and timeseries.parquet;
// path maps a file name to its path, and pulls is pulls.parquet's schema
// with its dictionaries (sim.PullColumns).
func NewTables(path func(name string) string, pulls []report.Column[report.PullRow]) (*Tables, error) {
	t := &Tables{dir: path}
	var err error
	if t.requests, err = NewRequestWriter(path(report.RequestsFile), 0); err != nil {
		return nil, err
	}
	if t.pulls, err = NewTableWriter(path(report.PullsFile), pulls, 0); err != nil {
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

// Close writes workers.parquet and counters.parquet and closes every
// table. It returns the first error.
func (t *Tables) Close(workers []report.WorkerRow, counters []report.CounterRow) error {
	errs := []error{t.requests.Close(), t.pulls.Close(), t.samples.Close()}
	errs = append(errs, writeAll(t.dir(report.WorkersFile), report.WorkerColumns, workers))
	names := make([]string, len(counters))
	for i, c := range counters {
		names[i] = c.Name
	}
	errs = append(errs, writeAll(t.dir(report.CountersFile), report.CounterColumns(names), counters))
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

// WriteEvents writes events.parquet at path: the rows, in event order,
// under cols (sim.EventColumns, with its kind dictionary).
func WriteEvents(path string, cols []report.Column[report.EventRow], rows []report.EventRow) error {
	return writeAll(path, cols, rows)
}

// NewRequestWriter creates requests.parquet at path; rowGroupRows is as in
// NewTableWriter (0 means DefaultRowGroupRows).
func NewRequestWriter(path string, rowGroupRows int) (*TableWriter[report.RequestRow], error) {
	return NewTableWriter(path, report.RequestColumns, rowGroupRows)
}
