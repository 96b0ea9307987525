package parquetio

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/kvsim/kvsim/report"
)

// writeWithArrow is the oracle of TableWriter: the rows as Arrow arrays of
// the columns' dataTypes (a dictionary builder seeded with Values), written
// by Arrow's own pqarrow writer with the same properties, encode rows at a
// time into buffered row groups, with the Arrow schema stored. This is how
// kvsim wrote its tables before it made pqarrow's calls itself.
func writeWithArrow[R any](t *testing.T, path string, cols []report.Column[R], rows []R, rowGroupRows, encode int) {
	t.Helper()
	if rowGroupRows == 0 {
		rowGroupRows = DefaultRowGroupRows
	}
	props := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(rowGroupRows)), parquet.WithDataPageSize(dataPageSize)}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt, err := dataType(c)
		if err != nil {
			t.Fatal(err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: c.Null}
		if c.Dict != nil {
			props = append(props, parquet.WithDictionaryFor(c.Name, true))
		}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	appends := make([]func(*R), len(cols))
	for i, c := range cols {
		appends[i] = arrowAppender(t, c, b.Field(i))
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(b.Schema(), f, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		rec := b.NewRecordBatch()
		defer rec.Release()
		if err := fw.WriteBuffered(rec); err != nil {
			t.Fatal(err)
		}
	}
	for i := range rows {
		for _, a := range appends {
			a(&rows[i])
		}
		if (i+1)%encode == 0 {
			flush()
		}
	}
	if len(rows)%encode != 0 {
		flush()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// arrowAppender returns the function appending c's value of a row to bld,
// the builder of c's dataType; in a Null column, -1 or NaN as null.
func arrowAppender[R any](t *testing.T, c report.Column[R], bld array.Builder) func(*R) {
	t.Helper()
	switch {
	case c.Int64 != nil:
		return arrowNumber(bld.(*array.Int64Builder), c.Int64, c.Null, func(v int64) bool { return v == -1 })
	case c.Int32 != nil:
		return arrowNumber(bld.(*array.Int32Builder), c.Int32, c.Null, func(v int32) bool { return v == -1 })
	case c.Float64 != nil:
		return arrowNumber(bld.(*array.Float64Builder), c.Float64, c.Null, math.IsNaN)
	case c.String != nil:
		b := bld.(*array.StringBuilder)
		return func(r *R) { b.Append(c.String(r)) }
	case c.Bool != nil:
		b := bld.(*array.BooleanBuilder)
		return func(r *R) { b.Append(c.Bool(r)) }
	}
	b := bld.(*array.BinaryDictionaryBuilder)
	vb := array.NewStringBuilder(memory.DefaultAllocator)
	defer vb.Release()
	vb.AppendValues(c.Values, nil)
	va := vb.NewStringArray()
	defer va.Release()
	if err := b.InsertStringDictValues(va); err != nil {
		t.Fatal(err)
	}
	return func(r *R) {
		if err := b.AppendString(c.Dict(r)); err != nil {
			t.Fatal(err)
		}
	}
}

// numberBuilder is an Arrow builder of numbers of type T.
type numberBuilder[T any] interface {
	Append(T)
	AppendNull()
}

// arrowNumber returns the function appending get's value of a row to b:
// as null when the column is Null and none says it is no value.
func arrowNumber[R, T any](b numberBuilder[T], get func(*R) T, null bool, none func(T) bool) func(*R) {
	return func(r *R) {
		if v := get(r); null && none(v) {
			b.AppendNull()
		} else {
			b.Append(v)
		}
	}
}

// oracleRow has a column of every kind TableWriter writes: numbers with
// and without nulls, plain strings, booleans, and dictionaries with int8
// and int16 indices.
type oracleRow struct {
	A      int64
	B      int64 // Null
	C      int32
	D      int32 // Null
	X      float64
	Y      float64 // Null
	S      string
	F      bool
	Small  string // a dictionary of 4 values
	Large  string // a dictionary of 300 values
	Sparse string // a dictionary of 5 values whose rows name 2
}

var (
	smallValues  = []string{"completed", "rejected", "failed", "unfinished"}
	largeValues  = dictValues(300)
	sparseValues = []string{"e", "d", "c", "b", "a"}
)

func dictValues(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("v%03d", (i*7)%n)
	}
	return out
}

var oracleColumns = []report.Column[oracleRow]{
	{Name: "a", Int64: func(r *oracleRow) int64 { return r.A }},
	{Name: "b", Int64: func(r *oracleRow) int64 { return r.B }, Null: true},
	{Name: "c", Int32: func(r *oracleRow) int32 { return r.C }},
	{Name: "d", Int32: func(r *oracleRow) int32 { return r.D }, Null: true},
	{Name: "x", Float64: func(r *oracleRow) float64 { return r.X }},
	{Name: "y", Float64: func(r *oracleRow) float64 { return r.Y }, Null: true},
	{Name: "s", String: func(r *oracleRow) string { return r.S }},
	{Name: "f", Bool: func(r *oracleRow) bool { return r.F }},
	{Name: "small", Dict: func(r *oracleRow) string { return r.Small }, Values: smallValues},
	{Name: "large", Dict: func(r *oracleRow) string { return r.Large }, Values: largeValues},
	{Name: "sparse", Dict: func(r *oracleRow) string { return r.Sparse }, Values: sparseValues},
}

// oracleRows are n rows whose null columns are null in runs (none for a
// while, then every third row, and rows 20,480 to 28,671 all), so some
// encoded ranges have no null, some a few and some nothing else.
func oracleRows(n int) []oracleRow {
	rows := make([]oracleRow, n)
	for i := range rows {
		r := &rows[i]
		r.A, r.C, r.X = int64(i*7919%100003), int32(i%977-400), float64(i)/3
		r.B, r.D, r.Y = int64(i*31), int32(i%50), float64(i%1000)*1.5
		if (i/3000)%2 == 1 && i%3 == 0 || i >= 20480 && i < 28672 {
			r.B, r.D, r.Y = -1, -1, math.NaN()
		}
		r.S = fmt.Sprintf("row-%d", i%1234)
		if i%11 == 0 {
			r.S = ""
		}
		r.F = i%5 < 2
		r.Small, r.Large = smallValues[i*i%len(smallValues)], largeValues[i%len(largeValues)]
		r.Sparse = sparseValues[1+2*(i%2)]
	}
	return rows
}

// TestWriterMatchesArrow: TableWriter's files are byte for byte Arrow's
// pqarrow writer's of the same rows (writeWithArrow), for small and
// large tables, row groups cut inside and at the end of an encoded run
// (65,536 is 16 runs of 4,096), every kind of column, and the encoded
// runs and batches varied.
func TestWriterMatchesArrow(t *testing.T) {
	for _, c := range []struct{ rows, group, batch, encode int }{
		{0, 0, batchRows, batchRows},
		{5, 2, batchRows, batchRows},
		{3000, 1000, 7, 1024},
		{10000, 0, batchRows, batchRows},
		{140000, 0, batchRows, batchRows},
		{70000, 5000, 1000, 2048},
		{70000, 65536, 4096, 3072},
	} {
		rows := oracleRows(c.rows)
		dir := t.TempDir()
		ours, theirs := filepath.Join(dir, "ours.parquet"), filepath.Join(dir, "arrow.parquet")
		writeTableBatches(t, ours, oracleColumns, rows, c.group, c.batch, c.encode)
		writeWithArrow(t, theirs, oracleColumns, rows, c.group, c.encode)
		a, err := os.ReadFile(ours)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(theirs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%d rows, row groups of %d, batches of %d, encoded %d at a time: %d bytes, Arrow's %d", c.rows, c.group, c.batch, c.encode, len(a), len(b))
			continue
		}
		back, err := readAll(ours, oracleColumns)
		if err != nil {
			t.Fatal(err)
		}
		eq := func(x, y oracleRow) bool { // NaN == NaN here
			nan := func(v float64) float64 { return map[bool]float64{true: -7, false: v}[math.IsNaN(v)] }
			x.Y, y.Y = nan(x.Y), nan(y.Y)
			return x == y
		}
		if !slices.EqualFunc(back, rows, eq) {
			t.Errorf("%d rows: read back %d rows, not the rows written", c.rows, len(back))
		}
	}
}

// TestReadKindMismatch: a column read into a field of another kind is an
// error naming the file and column, not a silent conversion.
func TestReadKindMismatch(t *testing.T) {
	type wide struct{ A int64 }
	type narrow struct{ A int32 }
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeTable(t, path, []report.Column[wide]{{Name: "a", Int64: func(r *wide) int64 { return r.A }}}, []wide{{1 << 40}}, 0)
	_, err := readAll(path, []report.Column[narrow]{{Name: "a", Int32: func(r *narrow) int32 { return r.A }}})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `column "a": int64 values for a int32 field`) {
		t.Errorf("reading int64 cells into an int32 field: %v", err)
	}
}

// TestReadDamaged: a file that is no Parquet file is an error naming it,
// for a table and for a dictionary alike.
func TestReadDamaged(t *testing.T) {
	type row struct{ A int64 }
	path := filepath.Join(t.TempDir(), "t.parquet")
	os.WriteFile(path, []byte("junk!"), 0o644)
	_, err := readAll(path, []report.Column[row]{{Name: "a", Int64: func(r *row) int64 { return r.A }}})
	if err == nil || !strings.Contains(err.Error(), path+": ") {
		t.Errorf("reading a damaged table: %v", err)
	}
	if _, err := Dictionary(path, "a"); err == nil || !strings.Contains(err.Error(), path+": ") {
		t.Errorf("a damaged table's dictionary: %v", err)
	}
	// A missing table: the file system's error names it, once.
	missing := filepath.Join(filepath.Dir(path), "none.parquet")
	_, err = readAll(missing, []report.Column[row]{{Name: "a", Int64: func(r *row) int64 { return r.A }}})
	if err == nil || strings.Count(err.Error(), missing) != 1 {
		t.Errorf("reading a missing table: %v", err)
	}
}

// TestDuplicateColumnNames: two columns of one name are refused.
func TestDuplicateColumnNames(t *testing.T) {
	type row struct{ A, B int64 }
	cols := []report.Column[row]{{Name: "a", Int64: func(r *row) int64 { return r.A }}, {Name: "a", Int64: func(r *row) int64 { return r.B }}}
	w, err := NewTableWriter(filepath.Join(t.TempDir(), "t.parquet"), cols, 0)
	if err == nil {
		w.Close()
	}
	if err == nil || !strings.Contains(err.Error(), `two columns named "a"`) {
		t.Errorf("two columns named a: %v", err)
	}
}
