// Package parquetio writes kvsim's tables as Parquet files, streamed in row
// groups, and reads them back. The tables' rows and columns are package
// report's; this is the only package that links Arrow and Parquet, and
// only the CLI (and tools that read outputs) import it, so the model does
// not. docs/outputs.md names the tables and their columns.
package parquetio

import (
	"fmt"
	"os"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/kvsim/kvsim/report"
)

// DefaultRowGroupRows is the number of rows a TableWriter buffers before it
// writes them as one Parquet row group.
const DefaultRowGroupRows = 65536

// TableWriter streams rows of type R into one Parquet file. It buffers at
// most one row group of rows in Arrow builders; each full batch is written
// as one row group (zstd-compressed) and released. The Arrow schema is
// stored in the file so Arrow readers restore the dictionary columns.
type TableWriter[R any] struct {
	path    string
	b       *array.RecordBuilder
	fw      *pqarrow.FileWriter
	appends []func(*R) error // one a column, in schema order
	batch   int              // rows a row group
	n       int              // rows in the current batch
	err     error            // first error; the writer is dead after it
}

// NewTableWriter creates the file at path (truncating it) for a table with
// the given columns. rowGroupRows is the number of rows a row group; 0
// means DefaultRowGroupRows.
func NewTableWriter[R any](path string, cols []report.Column[R], rowGroupRows int) (*TableWriter[R], error) {
	if rowGroupRows == 0 {
		rowGroupRows = DefaultRowGroupRows
	}
	if rowGroupRows < 0 {
		return nil, fmt.Errorf("report: %s: row group size %d < 0", path, rowGroupRows)
	}
	fields := make([]arrow.Field, len(cols))
	props := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false)}
	for i, c := range cols {
		t, err := dataType(c)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", path, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: t}
		if c.Dict != nil {
			props = append(props, parquet.WithDictionaryFor(c.Name, true))
		}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	w := &TableWriter[R]{path: path, b: b, batch: rowGroupRows, appends: make([]func(*R) error, len(cols))}
	for i, c := range cols {
		var err error
		if w.appends[i], err = appender(c, b.Field(i)); err != nil {
			b.Release()
			return nil, fmt.Errorf("report: %s: %w", path, err)
		}
	}

	f, err := os.Create(path)
	if err == nil {
		w.fw, err = pqarrow.NewFileWriter(b.Schema(), f, parquet.NewWriterProperties(props...),
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		b.Release()
		return nil, fmt.Errorf("report: %w", err)
	}
	return w, nil
}

// dataType returns the Arrow type column c's getter selects.
func dataType[R any](c report.Column[R]) (arrow.DataType, error) {
	set := 0
	for _, ok := range []bool{c.Int64 != nil, c.Int32 != nil, c.Float64 != nil, c.String != nil, c.Bool != nil, c.Dict != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("column %q: %d getters set, want exactly 1", c.Name, set)
	}
	switch {
	case c.Int64 != nil:
		return arrow.PrimitiveTypes.Int64, nil
	case c.Int32 != nil:
		return arrow.PrimitiveTypes.Int32, nil
	case c.Float64 != nil:
		return arrow.PrimitiveTypes.Float64, nil
	case c.String != nil:
		return arrow.BinaryTypes.String, nil
	case c.Bool != nil:
		return arrow.FixedWidthTypes.Boolean, nil
	case len(c.Values) == 0:
		return nil, fmt.Errorf("column %q: dictionary without values", c.Name)
	case len(c.Values) <= 128:
		return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, nil
	case len(c.Values) <= 32768:
		return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, nil
	}
	return nil, fmt.Errorf("column %q: %d dictionary values, at most 32768", c.Name, len(c.Values))
}

// appender returns the function appending c's value of a row to b, the
// builder of c's dataType. A dictionary builder is seeded with c.Values
// once: its dictionary persists across batches, so indices never change.
func appender[R any](c report.Column[R], b array.Builder) (func(*R) error, error) {
	switch {
	case c.Int64 != nil:
		b, get := b.(*array.Int64Builder), c.Int64
		return func(r *R) error { b.Append(get(r)); return nil }, nil
	case c.Int32 != nil:
		b, get := b.(*array.Int32Builder), c.Int32
		return func(r *R) error { b.Append(get(r)); return nil }, nil
	case c.Float64 != nil:
		b, get := b.(*array.Float64Builder), c.Float64
		return func(r *R) error { b.Append(get(r)); return nil }, nil
	case c.String != nil:
		b, get := b.(*array.StringBuilder), c.String
		return func(r *R) error { b.Append(get(r)); return nil }, nil
	case c.Bool != nil:
		b, get := b.(*array.BooleanBuilder), c.Bool
		return func(r *R) error { b.Append(get(r)); return nil }, nil
	}
	db, get, name, values := b.(*array.BinaryDictionaryBuilder), c.Dict, c.Name, c.Values
	vb := array.NewStringBuilder(memory.DefaultAllocator)
	defer vb.Release()
	vb.AppendValues(values, nil)
	va := vb.NewStringArray()
	defer va.Release()
	if err := db.InsertStringDictValues(va); err != nil {
		return nil, fmt.Errorf("column %q: %w", name, err)
	}
	if db.DictionarySize() != len(values) {
		return nil, fmt.Errorf("column %q: duplicate dictionary values in %q", name, values)
	}
	raw := make([][]byte, len(values)) // Append([]byte) of these does not allocate
	for i, v := range values {
		raw[i] = []byte(v)
	}
	return func(r *R) error {
		s := get(r)
		i := slices.Index(values, s)
		if i < 0 {
			return fmt.Errorf("column %q: value %q not one of %q", name, s, values)
		}
		return db.Append(raw[i])
	}, nil
}

// Append adds one row. Every rowGroupRows rows it writes a row group. The
// builders grow as rows come; once a table has filled a row group, room
// for the next is made at once. After an error the writer accepts no more
// rows; Close still closes the file.
func (w *TableWriter[R]) Append(r *R) error {
	if w.err != nil {
		return w.err
	}
	for _, a := range w.appends {
		if err := a(r); err != nil {
			w.err = fmt.Errorf("report: %s: %w", w.path, err)
			return w.err
		}
	}
	w.n++
	if w.n < w.batch {
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	w.b.Reserve(w.batch)
	return nil
}

// flush writes the buffered rows as one row group and releases them.
func (w *TableWriter[R]) flush() error {
	rec := w.b.NewRecordBatch()
	defer rec.Release()
	w.n = 0
	if err := w.fw.Write(rec); err != nil {
		w.err = fmt.Errorf("report: %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// Close writes the buffered rows as a last row group, writes the footer and
// closes the file; call it once. It returns the first error of the
// writer's life.
func (w *TableWriter[R]) Close() error {
	if w.err == nil && w.n > 0 {
		w.flush() // an error lands in w.err
	}
	w.b.Release()
	if err := w.fw.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("report: %s: %w", w.path, err)
	}
	return w.err
}
