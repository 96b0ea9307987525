package parquetio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

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

// openParquet opens the Parquet file at path; its error names the file
// once (a file system error names it already).
func openParquet(path string) (*file.Reader, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err == nil {
		return pf, nil
	}
	if _, ok := errors.AsType[*fs.PathError](err); ok {
		return nil, fmt.Errorf("report: %w", err)
	}
	return nil, fmt.Errorf("report: %s: %w", path, err)
}

// readBatch is how many rows readRows reads of each column at a time.
const readBatch = 8192

// readRows streams a table's rows to fn, one reused row: check vets the
// file's column names first, and field(row, i) is the field of the row
// (a struct value) that column i fills. It reads the file with Parquet's
// column readers, not Arrow's, so that kvsim does not link pqarrow
// (TableWriter says why); a dictionary column reads as its strings.
func readRows[R any](path string, check func(names []string) error, field func(row reflect.Value, i int) reflect.Value, fn func(*R) error) error {
	pf, err := openParquet(path)
	if err != nil {
		return err
	}
	defer pf.Close()
	sch := pf.MetaData().Schema
	names := make([]string, sch.NumColumns())
	for i := range names {
		names[i] = sch.Column(i).Name()
	}
	if err := check(names); err != nil {
		return err
	}
	var row R
	v := reflect.ValueOf(&row).Elem()
	cols := make([]cells, len(names))
	readers := make([]file.ColumnChunkReader, len(names))
	for g := range pf.NumRowGroups() {
		rg := pf.RowGroup(g)
		for i := range readers {
			if readers[i], err = rg.Column(i); err != nil {
				return fmt.Errorf("report: %s: %w", path, err)
			}
		}
		for left := rg.NumRows(); left > 0; {
			n := int(min(left, readBatch))
			for i, r := range readers {
				if err := cols[i].read(r, n); err != nil {
					return fmt.Errorf("report: %s: column %q: %w", path, names[i], err)
				}
			}
			for j := range n {
				for i, name := range names {
					if err := cols[i].set(field(v, i), j); err != nil {
						return fmt.Errorf("report: %s: column %q: %w", path, name, err)
					}
				}
				if err := fn(&row); err != nil {
					return err
				}
			}
			left -= int64(n)
		}
	}
	return nil
}

// cells is a run of one column's cells as read: the values of its Parquet
// type, densely (a null cell has none), and, for an optional column, where
// each cell's value is.
type cells struct {
	kind reflect.Kind // of the values: Int64, Int32, Float64, Bool or String
	i64  []int64
	i32  []int32
	f64  []float64
	b    []bool
	str  []string
	at   []int32             // by cell: its value's place, -1 for a null; nil when the column is required
	def  []int16             // scratch: definition levels
	ba   []parquet.ByteArray // scratch: byte arrays read
}

// read reads the column's next n cells from r.
func (c *cells) read(r file.ColumnChunkReader, n int) error {
	var def []int16
	if r.Descriptor().MaxDefinitionLevel() > 0 {
		c.def = slices.Grow(c.def[:0], n)[:n]
		def = c.def
	}
	var err error
	switch r.(type) {
	case *file.Int64ColumnChunkReader:
		c.kind, err = reflect.Int64, readValues(r, &c.i64, def, n)
	case *file.Int32ColumnChunkReader:
		c.kind, err = reflect.Int32, readValues(r, &c.i32, def, n)
	case *file.Float64ColumnChunkReader:
		c.kind, err = reflect.Float64, readValues(r, &c.f64, def, n)
	case *file.BooleanColumnChunkReader:
		c.kind, err = reflect.Bool, readValues(r, &c.b, def, n)
	case *file.ByteArrayColumnChunkReader:
		c.kind, err = reflect.String, readValues(r, &c.ba, def, n)
		c.str = c.str[:0]
		for _, b := range c.ba {
			c.str = append(c.str, string(b))
		}
	default:
		return fmt.Errorf("unexpected type %s", r.Type())
	}
	if err != nil || def == nil {
		c.at = nil // a required column's cell j is value j
		return err
	}
	c.at = c.at[:0]
	k := int32(0)
	for _, d := range def {
		if d == 0 {
			c.at = append(c.at, -1)
		} else {
			c.at = append(c.at, k)
			k++
		}
	}
	return nil
}

// batchReader is a typed column reader of values of type V.
type batchReader[V any] interface {
	ReadBatch(batchSize int64, values []V, defLvls, repLvls []int16) (total int64, valuesRead int, err error)
}

// readValues reads n cells with r, which must be a reader of V: their
// values, densely, into *vals (as many as are read), and an optional
// column's definition levels into def (nil for a required column).
func readValues[V any](cr file.ColumnChunkReader, vals *[]V, def []int16, n int) error {
	r, ok := cr.(batchReader[V])
	if !ok {
		return fmt.Errorf("a %T for values of %T", cr, *vals)
	}
	v := slices.Grow((*vals)[:0], n)[:n]
	dense := 0
	for got := 0; got < n; {
		var d []int16
		if def != nil {
			d = def[got:]
		}
		levels, values, err := r.ReadBatch(int64(n-got), v[dense:], d, nil)
		if err != nil {
			return err
		}
		if levels == 0 {
			return fmt.Errorf("%d cells short", n-got)
		}
		got += int(levels)
		dense += values
	}
	*vals = v[:dense]
	return nil
}

// set sets f, a field of a row, to cell j; a null cell, which only a Null
// column holds, is the -1 or NaN it stands for. The field's kind must be
// the values', or int64 for int32 values (an id column: int64 in the
// files of runs before they were int32).
func (c *cells) set(f reflect.Value, j int) error {
	if f.Kind() != c.kind && (f.Kind() != reflect.Int64 || c.kind != reflect.Int32) {
		return fmt.Errorf("%s values for a %s field", c.kind, f.Kind())
	}
	k := j
	if c.at != nil {
		k = int(c.at[j])
	}
	if k < 0 {
		switch c.kind {
		case reflect.Int32, reflect.Int64:
			f.SetInt(-1)
		case reflect.Float64:
			f.SetFloat(math.NaN())
		default:
			return fmt.Errorf("null in a %s column", c.kind)
		}
		return nil
	}
	switch c.kind {
	case reflect.Int64:
		f.SetInt(c.i64[k])
	case reflect.Int32:
		f.SetInt(int64(c.i32[k]))
	case reflect.Float64:
		f.SetFloat(c.f64[k])
	case reflect.String:
		f.SetString(c.str[k])
	case reflect.Bool:
		f.SetBool(c.b[k])
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
// It reads them from the first row group's dictionary page; a table
// without rows has none.
func Dictionary(path, column string) ([]string, error) {
	pf, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	sch := pf.MetaData().Schema
	i := sch.ColumnIndexByName(column)
	if i < 0 {
		return nil, fmt.Errorf("report: %s: no column %q", path, column)
	}
	if pf.NumRowGroups() == 0 {
		return nil, nil
	}
	pages, err := pf.RowGroup(0).GetColumnPageReader(i)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	if !pages.Next() {
		if err := pages.Err(); err != nil {
			return nil, fmt.Errorf("report: %s: column %q: %w", path, column, err)
		}
		return nil, fmt.Errorf("report: %s: column %q has no page", path, column)
	}
	page, ok := pages.Page().(*file.DictionaryPage)
	if !ok || sch.Column(i).PhysicalType() != parquet.Types.ByteArray {
		return nil, fmt.Errorf("report: %s: column %q is not a dictionary of strings", path, column)
	}
	// A dictionary page of byte arrays is PLAIN: each value its length
	// (4 bytes, little-endian), then its bytes.
	data, out := page.Data(), make([]string, 0, page.NumValues())
	for range page.NumValues() {
		if len(data) < 4 || int64(binary.LittleEndian.Uint32(data)) > int64(len(data)-4) {
			return nil, fmt.Errorf("report: %s: column %q: dictionary page cut short", path, column)
		}
		n := int(binary.LittleEndian.Uint32(data))
		out = append(out, string(data[4:4+n]))
		data = data[4+n:]
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
