package parquetio

import (
	"context"
	"fmt"
	"math"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/kvsim/kvsim/report"
)

// readTable streams the rows of a table kvsim wrote, in file order, to fn.
// The row type's leaf fields (report.Leaves) are the table's columns in
// order (every row type here is declared so); the file's column names
// must match cols.
func readTable[R any](path string, cols []report.Column[R], fn func(*R) error) error {
	check := func(names []string) error { return checkColumns(path, names, cols) }
	leaves := report.Leaves(reflect.TypeFor[R]())
	field := func(row reflect.Value, i int) reflect.Value { return row.FieldByIndex(leaves[i]) }
	return readRows(path, check, field, fn)
}

// checkColumns reports whether a file's column names are cols'.
func checkColumns[R any](path string, names []string, cols []report.Column[R]) error {
	if len(names) != len(cols) {
		return fmt.Errorf("report: %s: %d columns, want %d", path, len(names), len(cols))
	}
	for i, c := range cols {
		if names[i] != c.Name {
			return fmt.Errorf("report: %s: column %d is %q, want %q", path, i, names[i], c.Name)
		}
	}
	return nil
}

// readRows streams a table's rows to fn, one reused row: check vets the
// file's column names first, and field(row, i) is the field of the row
// (a struct value) that column i fills.
func readRows[R any](path string, check func(names []string) error, field func(row reflect.Value, i int) reflect.Value, fn func(*R) error) error {
	fr, schema, closeFile, err := openTable(path, 8192)
	if err != nil {
		return err
	}
	defer closeFile()
	names := make([]string, schema.NumFields())
	for i := range names {
		names[i] = schema.Field(i).Name
	}
	if err := check(names); err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	defer rr.Release()
	var row R
	v := reflect.ValueOf(&row).Elem()
	for rr.Next() {
		rec := rr.RecordBatch()
		for j := range int(rec.NumRows()) {
			for i, name := range names {
				if err := setField(field(v, i), rec.Column(i), j); err != nil {
					return fmt.Errorf("report: %s: column %q: %w", path, name, err)
				}
			}
			if err := fn(&row); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return nil
}

// openTable opens the Parquet file at path for reading in batches of
// batch rows, with its schema; closeFile releases it.
func openTable(path string, batch int64) (fr *pqarrow.FileReader, schema *arrow.Schema, closeFile func() error, err error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("report: %w", err)
	}
	fr, err = pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err == nil {
		schema, err = fr.Schema()
	}
	if err != nil {
		pf.Close()
		return nil, nil, nil, fmt.Errorf("report: %s: %w", path, err)
	}
	return fr, schema, pf.Close, nil
}

// setField sets f, a field of a row, to cell j of col; a null cell, which
// only a Null column holds, is the -1 or NaN it stands for.
func setField(f reflect.Value, col arrow.Array, j int) error {
	if col.IsNull(j) {
		switch f.Kind() {
		case reflect.Int32, reflect.Int64:
			f.SetInt(-1)
		case reflect.Float64:
			f.SetFloat(math.NaN())
		default:
			return fmt.Errorf("null in a %s column", col.DataType())
		}
		return nil
	}
	switch c := col.(type) {
	case *array.Int64:
		f.SetInt(c.Value(j))
	case *array.Int32:
		f.SetInt(int64(c.Value(j)))
	case *array.Float64:
		f.SetFloat(c.Value(j))
	case *array.String:
		f.SetString(c.Value(j))
	case *array.Boolean:
		f.SetBool(c.Value(j))
	case *array.Dictionary:
		d, ok := c.Dictionary().(*array.String)
		if !ok {
			return fmt.Errorf("dictionary of %s", c.Dictionary().DataType())
		}
		f.SetString(d.Value(c.GetValueIndex(j)))
	default:
		return fmt.Errorf("unexpected type %s", col.DataType())
	}
	return nil
}

// ReadRequests streams requests.parquet rows to fn.
func ReadRequests(path string, fn func(*report.RequestRow) error) error {
	return readTable(path, report.RequestColumns, fn)
}

// ReadPulls streams pulls.parquet rows to fn.
func ReadPulls(path string, fn func(*report.PullRow) error) error {
	return readTable(path, report.PullColumns(nil, nil, nil), fn)
}

// Dictionary returns the values of the dictionary column named column in
// the table at path, in the dictionary's order: the order of the Values
// the table was written with (for pulls.parquet's outcome, the model's).
// A table without rows has none.
func Dictionary(path, column string) ([]string, error) {
	fr, schema, closeFile, err := openTable(path, 1)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	i := schema.FieldIndices(column)
	if len(i) != 1 {
		return nil, fmt.Errorf("report: %s: no column %q", path, column)
	}
	rr, err := fr.GetRecordReader(context.Background(), i, nil)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	defer rr.Release()
	if !rr.Next() {
		return nil, rr.Err()
	}
	d, ok := rr.RecordBatch().Column(0).(*array.Dictionary)
	if !ok {
		return nil, fmt.Errorf("report: %s: column %q is not a dictionary", path, column)
	}
	values, ok := d.Dictionary().(*array.String)
	if !ok {
		return nil, fmt.Errorf("report: %s: column %q: dictionary of %s", path, column, d.Dictionary().DataType())
	}
	out := make([]string, values.Len())
	for j := range out {
		out[j] = values.Value(j)
	}
	return out, nil
}

// readAll returns every row of the table at path, with columns cols.
func readAll[R any](path string, cols []report.Column[R]) ([]R, error) {
	var out []R
	err := readTable(path, cols, func(r *R) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// ReadCounters returns counters.parquet's rows.
func ReadCounters(path string) ([]report.CounterRow, error) {
	return readAll(path, report.CounterColumns(nil))
}

// DigestDir recomputes the digest of a run directory from its Parquet files,
// independently of the run: the check that the digest is reproducible from
// the report alone.
func DigestDir(dir func(name string) string) (string, error) {
	d := report.NewDigest()
	if err := ReadRequests(dir(report.RequestsFile), func(r *report.RequestRow) error { d.Request(r); return nil }); err != nil {
		return "", err
	}
	if err := ReadPulls(dir(report.PullsFile), func(r *report.PullRow) error { d.Pull(r); return nil }); err != nil {
		return "", err
	}
	cs, err := ReadCounters(dir(report.CountersFile))
	if err != nil {
		return "", err
	}
	return d.Sum(cs), nil
}

// ReadWorkers returns workers.parquet's rows.
func ReadWorkers(path string) ([]report.WorkerRow, error) { return readAll(path, report.WorkerColumns) }

// ReadEvents returns events.parquet's rows.
func ReadEvents(path string) ([]report.EventRow, error) {
	return readAll(path, report.EventColumns(nil))
}

// ReadPlanner returns planner.parquet's rows.
func ReadPlanner(path string) ([]report.PlannerRow, error) {
	return readAll(path, report.PlannerColumns)
}

// ReadSamples streams timeseries.parquet rows to fn.
func ReadSamples(path string, fn func(*report.SampleRow) error) error {
	return readTable(path, report.SampleColumns, fn)
}
