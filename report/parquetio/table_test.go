package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/kvsim/kvsim/internal/leaktest"
	"github.com/kvsim/kvsim/report"
)

// testRequests has a distinct value in every cell, so a swapped column shows.
var testRequests = []report.RequestRow{
	{RequestID: 0, Worker: 3, ArrivalNs: 1_000, FirstTokenNs: 5_000, FinishNs: 9_000, InputTokens: 2048, OutputTokens: 128, G1HitTokens: 1024, G2HitTokens: 512, PulledTokens: 256, ComputedPromptTokens: 256,
		Preemptions: 0, HintSource: -1, Outcome: report.OutcomeCompleted, Reroutes: 0, ScheduledNs: 1_500, MeasuredTTFTNs: 11, MeasuredE2ENs: 12, MeasuredQueueNs: 13, MeasuredPrefillNs: 14, MeasuredDecodeNs: 15, PrevRequestID: -1},
	{RequestID: 1, Worker: 0, ArrivalNs: 2_000, FirstTokenNs: -1, FinishNs: 2_500, InputTokens: 200_000, OutputTokens: 16, G1HitTokens: 0, G2HitTokens: 0, PulledTokens: 0, ComputedPromptTokens: 0,
		Preemptions: 0, HintSource: -1, Outcome: report.OutcomeRejected, Reroutes: 1, ScheduledNs: -1, MeasuredTTFTNs: -1, MeasuredE2ENs: -1, MeasuredQueueNs: -1, MeasuredPrefillNs: -1, MeasuredDecodeNs: -1, PrevRequestID: 0},
	{RequestID: 2, Worker: 7, ArrivalNs: 3_000, FirstTokenNs: 6_100, FinishNs: 7_700, InputTokens: 4096, OutputTokens: 64, G1HitTokens: 2048, G2HitTokens: 16, PulledTokens: 1024, ComputedPromptTokens: 1008,
		Preemptions: 2, HintSource: 5, Outcome: report.OutcomeFailed, Reroutes: 2, Migrations: 1, ScheduledNs: 3_100, MeasuredTTFTNs: 21, MeasuredE2ENs: 22, MeasuredQueueNs: 23, MeasuredPrefillNs: 24, MeasuredDecodeNs: 25, PrevRequestID: -1},
	{RequestID: 3, Worker: 1, ArrivalNs: 4_000, FirstTokenNs: 8_800, FinishNs: -1, InputTokens: 33, OutputTokens: 1, G1HitTokens: 17, G2HitTokens: 0, PulledTokens: 0, ComputedPromptTokens: 16,
		Preemptions: 1, HintSource: 6, Outcome: report.OutcomeUnfinished, Reroutes: 3, ScheduledNs: 4_200, MeasuredTTFTNs: 31, MeasuredE2ENs: 32, MeasuredQueueNs: 33, MeasuredPrefillNs: 34, MeasuredDecodeNs: 35, PrevRequestID: 1},
	{RequestID: 4, Worker: 2, ArrivalNs: 5_000, FirstTokenNs: 5_900, FinishNs: 12_345, InputTokens: 1, OutputTokens: 2, G1HitTokens: 3, G2HitTokens: 4, PulledTokens: 5, ComputedPromptTokens: 6,
		Preemptions: 7, HintSource: 8, Outcome: report.OutcomeCompleted, Reroutes: 9, ScheduledNs: 5_100, MeasuredTTFTNs: 41, MeasuredE2ENs: 42, MeasuredQueueNs: 43, MeasuredPrefillNs: 44, MeasuredDecodeNs: 45, PrevRequestID: 2},
}

// arrowTable reads the whole Parquet file at path with arrow-go's own
// reader, as a reader other than kvsim's sees it, and the rows of each of
// its row groups. The caller releases the table.
func arrowTable(t testing.TB, path string) (tbl arrow.Table, groups []int64) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for i := range pf.NumRowGroups() {
		groups = append(groups, pf.MetaData().RowGroup(i).NumRows())
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = fr.ReadTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tbl, groups
}

// readRequests reads a requests.parquet back with arrow-go's reader,
// mapping columns to fields by name, and returns its rows, its Arrow column
// types in file order and its row counts by row group.
func readRequests(t *testing.T, path string) (rows []report.RequestRow, types []string, groups []int64) {
	t.Helper()
	tbl, groups := arrowTable(t, path)
	defer tbl.Release()
	rows = make([]report.RequestRow, tbl.NumRows())
	for c := range int(tbl.NumCols()) {
		f := tbl.Schema().Field(c)
		types = append(types, f.Name+" "+f.Type.String())
		j := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for k := range chunk.Len() {
				r := &rows[j]
				j++
				switch f.Name {
				case "request_id":
					r.RequestID = int64(chunk.(*array.Int32).Value(k))
				case "worker":
					r.Worker = chunk.(*array.Int32).Value(k)
				case "arrival_ns":
					r.ArrivalNs = chunk.(*array.Int64).Value(k)
				case "first_token_ns":
					r.FirstTokenNs = chunk.(*array.Int64).Value(k)
				case "finish_ns":
					r.FinishNs = chunk.(*array.Int64).Value(k)
				case "input_tokens":
					r.InputTokens = chunk.(*array.Int64).Value(k)
				case "output_tokens":
					r.OutputTokens = chunk.(*array.Int64).Value(k)
				case "g1_hit_tokens":
					r.G1HitTokens = chunk.(*array.Int64).Value(k)
				case "g2_hit_tokens":
					r.G2HitTokens = chunk.(*array.Int64).Value(k)
				case "pulled_tokens":
					r.PulledTokens = chunk.(*array.Int64).Value(k)
				case "computed_prompt_tokens":
					r.ComputedPromptTokens = chunk.(*array.Int64).Value(k)
				case "preemptions":
					r.Preemptions = chunk.(*array.Int32).Value(k)
				case "hint_source":
					r.HintSource = chunk.(*array.Int32).Value(k)
				case "reroutes":
					r.Reroutes = chunk.(*array.Int32).Value(k)
				case "scheduled_ns":
					r.ScheduledNs = chunk.(*array.Int64).Value(k)
				case "migrations":
					r.Migrations = chunk.(*array.Int32).Value(k)
				case "measured_ttft_ns":
					r.MeasuredTTFTNs = chunk.(*array.Int64).Value(k)
				case "measured_e2e_ns":
					r.MeasuredE2ENs = chunk.(*array.Int64).Value(k)
				case "measured_queue_ns":
					r.MeasuredQueueNs = chunk.(*array.Int64).Value(k)
				case "measured_prefill_ns":
					r.MeasuredPrefillNs = chunk.(*array.Int64).Value(k)
				case "measured_decode_ns":
					r.MeasuredDecodeNs = chunk.(*array.Int64).Value(k)
				case "prev_request_id":
					r.PrevRequestID = int64(chunk.(*array.Int32).Value(k))
				case "outcome":
					d := chunk.(*array.Dictionary)
					r.Outcome = d.Dictionary().(*array.String).Value(d.GetValueIndex(k))
				default:
					t.Fatalf("unexpected column %q", f.Name)
				}
			}
		}
	}
	return rows, types, groups
}

// writeRequests writes testRequests to a requests.parquet at path, in row
// groups of rowGroupRows.
func writeRequests(t *testing.T, path string, rowGroupRows int) {
	t.Helper()
	writeTable(t, path, report.RequestColumns, testRequests, rowGroupRows)
}

// writeTable writes rows to a table of cols at path, in row groups of
// rowGroupRows.
func writeTable[R any](t *testing.T, path string, cols []report.Column[R], rows []R, rowGroupRows int) {
	t.Helper()
	writeTableBatches(t, path, cols, rows, rowGroupRows, batchRows, batchRows)
}

// writeTableBatches is writeTable with Append handing rows over in
// batches of batch rows, encoded encode rows at a time.
func writeTableBatches[R any](t *testing.T, path string, cols []report.Column[R], rows []R, rowGroupRows, batch, encode int) {
	t.Helper()
	w, err := newTableWriter(path, cols, rowGroupRows, batch, encode)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Append(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRequestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.parquet")
	writeRequests(t, path, 2) // 5 rows: row groups of 2, 2, 1

	rows, types, groups := readRequests(t, path)
	if !slices.Equal(rows, testRequests) {
		t.Errorf("rows:\n got %v\nwant %v", rows, testRequests)
	}
	wantTypes := []string{
		"request_id int32", "worker int32", "arrival_ns int64", "first_token_ns int64",
		"finish_ns int64", "input_tokens int64", "output_tokens int64", "g1_hit_tokens int64",
		"g2_hit_tokens int64", "pulled_tokens int64", "computed_prompt_tokens int64",
		"preemptions int32", "hint_source int32",
		"outcome dictionary<values=utf8, indices=int8, ordered=false>", "reroutes int32",
		"scheduled_ns int64", "migrations int32", "measured_ttft_ns int64", "measured_e2e_ns int64", "measured_queue_ns int64",
		"measured_prefill_ns int64", "measured_decode_ns int64", "prev_request_id int32",
	}
	if !slices.Equal(types, wantTypes) {
		t.Errorf("types:\n got %q\nwant %q", types, wantTypes)
	}
	if want := []int64{2, 2, 1}; !slices.Equal(groups, want) {
		t.Errorf("row groups: got %v rows, want %v", groups, want)
	}
}

// TestRequestWriterParquetSchema checks what non-Arrow readers (DuckDB,
// Spark) see: required columns, outcome a dictionary-encoded UTF-8
// BYTE_ARRAY with the dictionary in declaration order in every row group.
func TestRequestWriterParquetSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.parquet")
	writeRequests(t, path, 3)
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	sc := pf.MetaData().Schema
	for i := range sc.NumColumns() {
		if rep := sc.Column(i).SchemaNode().RepetitionType(); rep != parquet.Repetitions.Required {
			t.Errorf("column %s: repetition %s, want required", sc.Column(i).Name(), rep)
		}
	}
	oc := sc.ColumnIndexByName("outcome")
	if col := sc.Column(oc); col.PhysicalType() != parquet.Types.ByteArray || !col.LogicalType().Equals(schema.StringLogicalType{}) {
		t.Errorf("outcome: physical %s logical %s, want BYTE_ARRAY String", col.PhysicalType(), col.LogicalType())
	}
	for g := range pf.NumRowGroups() {
		cc, err := pf.MetaData().RowGroup(g).ColumnChunk(oc)
		if err != nil {
			t.Fatal(err)
		}
		if !cc.HasDictionaryPage() {
			t.Errorf("row group %d: outcome has no dictionary page", g)
		}
		if cc.Compression().String() != "ZSTD" {
			t.Errorf("row group %d: compression %s, want ZSTD", g, cc.Compression())
		}
	}
	// The Arrow dictionary of each row group lists every outcome in
	// declaration order, whatever the rows hold.
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	want := `["completed" "rejected" "failed" "unfinished"]`
	for i, chunk := range tbl.Column(oc).Data().Chunks() {
		if got := chunk.(*array.Dictionary).Dictionary().String(); got != want {
			t.Errorf("chunk %d dictionary %s, want %s", i, got, want)
		}
	}
}

// TestRequestWriterDeterministic: the same rows give the same bytes, so
// outputs of two runs can be compared as files.
func TestRequestWriterDeterministic(t *testing.T) {
	var files [2][]byte
	for i := range files {
		path := filepath.Join(t.TempDir(), "requests.parquet")
		writeRequests(t, path, 2)
		var err error
		if files[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two writes of the same rows differ")
	}
}

func TestTableWriterEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.parquet")
	w, err := NewRequestWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, types, groups := readRequests(t, path)
	if len(rows) != 0 || len(types) != len(report.RequestColumns) || len(groups) != 0 {
		t.Errorf("got %d rows, %d columns, %d row groups; want 0, %d, 0", len(rows), len(types), len(groups), len(report.RequestColumns))
	}
}

// TestTableWriterRejectsUnknownValue: a value outside its column's
// dictionary fails the writer with an error naming the file, the column
// and the value, met on the writing goroutine. With batches of one row,
// Append returns it by the time the caller would reuse the bad row's
// batch: at most maxBatches Appends counting the bad one (the batches
// handed over before it come back, the bad one and those after never
// do). Every Append after it and Close return that error, and the file is
// closed, holding no row: the writer encodes batchRows rows at a time, and
// the good row had not been encoded. With the default batches Close is the
// first to see the error.
func TestTableWriterRejectsUnknownValue(t *testing.T) {
	good, bad := testRequests[0], testRequests[1]
	bad.Outcome = "timeout"
	for _, batch := range []int{1, batchRows} {
		path := filepath.Join(t.TempDir(), "requests.parquet")
		want := "report: " + path + `: column "outcome": value "timeout" not one of ["completed" "rejected" "failed" "unfinished"]`
		w, err := newTableWriter(path, report.RequestColumns, 2, batch, batchRows)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(&good); err != nil {
			t.Fatal(err)
		}
		err = w.Append(&bad)
		for i := 1; err == nil && i < maxBatches; i++ {
			err = w.Append(&good)
		}
		switch {
		case batch == 1 && (err == nil || err.Error() != want):
			t.Fatalf("batch %d: Append = %v, want %s", batch, err, want)
		case batch == 1:
			if err2 := w.Append(&good); err2 != err {
				t.Errorf("batch %d: Append after an error = %v, want the first error", batch, err2)
			}
		case err != nil:
			t.Fatalf("batch %d: Append = %v before a batch was handed over", batch, err)
		}
		if err2 := w.Close(); err2 == nil || err2.Error() != want || batch == 1 && err2 != err {
			t.Errorf("batch %d: Close = %v, want %s", batch, err2, want)
		}
		if rows, _, groups := readRequests(t, path); len(rows) != 0 || len(groups) != 0 {
			t.Errorf("batch %d: file holds %d rows in %d row groups, want none", batch, len(rows), len(groups))
		}
	}
}

// TestTableWriterBatches: the rows handed over in batches of any size,
// from one row to all of them at Close, give the same file, byte for
// byte: 23 rows in row groups of 5 are groups of 5, 5, 5, 5 and 3 rows
// whatever the batches, and 20 rows four groups of 5 (a batch ending a
// group starts no empty one), and they read back unchanged. 70,000 rows in
// the default groups (65,536 and 4,464) fill many data pages a column, and
// where a page is cut depends on where the encoding stops: every batchRows
// rows, whatever the batches, or every 1,024, 2,048 or 3,072 rows (Arrow
// cuts pages only between its batches of 1,024 values, so any multiple
// cuts them at the same rows).
func TestTableWriterBatches(t *testing.T) {
	for _, c := range []struct {
		rows, group int
		groups      []int64
	}{{23, 5, []int64{5, 5, 5, 5, 3}}, {20, 5, []int64{5, 5, 5, 5}}, {70000, 0, []int64{65536, 4464}}} {
		rows := make([]report.RequestRow, c.rows)
		for i := range rows {
			rows[i] = testRequests[i%len(testRequests)]
			rows[i].RequestID, rows[i].ArrivalNs, rows[i].InputTokens = int64(i), int64(1000*i+i*i%977), int64(i*7919%100003)
		}
		var first []byte
		for _, way := range []struct{ batch, encode int }{
			{batchRows, batchRows}, {1, batchRows}, {2, batchRows}, {5, batchRows}, {7, batchRows}, {23, batchRows}, {1000, batchRows},
			{1024, 1024}, {1, 1024}, {1000, 2048}, {4096, 3072},
		} {
			batch := way.batch
			path := filepath.Join(t.TempDir(), "requests.parquet")
			writeTableBatches(t, path, report.RequestColumns, rows, c.group, batch, way.encode)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil { // the others have its bytes, so its rows and row groups
				first = got
				back, _, groups := readRequests(t, path)
				if !slices.Equal(back, rows) || !slices.Equal(groups, c.groups) {
					t.Errorf("%d rows in batches of %d: read back %d rows (equal: %v) in row groups %v, want %v", c.rows, batch, len(back), slices.Equal(back, rows), groups, c.groups)
				}
			} else if !bytes.Equal(got, first) {
				t.Errorf("%d rows in batches of %d, encoded %d at a time: the file differs from one batch's", c.rows, batch, way.encode)
			}
		}
	}
}

// TestTableWriterEncodeRuns: a writer encoding runs of rows that are not a
// multiple of Arrow's 1,024-value batches (1,500) would cut pages elsewhere
// (TestTableWriterBatches's bytes differ), so it is refused with a panic,
// as is a run of none.
func TestTableWriterEncodeRuns(t *testing.T) {
	for _, encode := range []int{1500, 0} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("encoding %d rows at a time: no panic", encode)
				}
			}()
			newTableWriter(filepath.Join(t.TempDir(), "r.parquet"), report.RequestColumns, 0, 1, encode)
		}()
	}
}

// TestWritersLeaveNoGoroutine: once Close has returned, no writing
// goroutine is left, whether the table was written, its writer failed
// (Close after Append returned the error, or Close the first to see it),
// its columns were refused, or Tables was closed after a run or, with no
// rows, after a failed one (whose empty counters.parquet fails: a
// dictionary without values).
func TestWritersLeaveNoGoroutine(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	path := func(name string) string { return filepath.Join(dir, name) }
	bad := testRequests[1]
	bad.Outcome = "timeout"
	for _, batch := range []int{1, batchRows} {
		w, err := newTableWriter(path(report.RequestsFile), report.RequestColumns, 2, batch, batchRows)
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			err = w.Append(&bad) // with batchRows, until the writer sees the error
		}
		if w.Close() == nil {
			t.Error("Close after an error = nil")
		}
	}
	writeTable(t, path(report.RequestsFile), report.RequestColumns, testRequests, 2)
	if w, err := NewTableWriter(path("t.parquet"), []report.Column[report.RequestRow]{{Name: "none"}}, 0); err == nil {
		w.Close()
		t.Error("a column without a getter accepted")
	}
	kinds := report.EventColumns([]string{"drain"})
	for _, run := range []func(*Tables) error{
		func(tb *Tables) error {
			for i := range testRequests {
				if err := tb.Request(&testRequests[i]); err != nil {
					return err
				}
			}
			return tb.Close([]report.WorkerRow{{Worker: 1}}, []report.CounterRow{{Name: "x", Value: 2}}, []report.EventRow{{Kind: "drain", Origin: "scenario"}}, nil)
		},
		func(tb *Tables) error {
			if tb.Close(nil, nil, nil, nil) == nil {
				t.Error("Tables.Close with no counters = nil, want the dictionary's error")
			}
			return nil
		},
	} {
		tb, err := NewTables(path, report.PullColumns([]string{"copy"}, []string{"success"}, []string{"hint"}), kinds)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(tb); err != nil {
			t.Fatal(err)
		}
	}
	if n := leaktest.Settled(before); n > before {
		t.Errorf("%d goroutines after the writers closed, %d before", n, before)
	}
}

func TestColumnDeclarationErrors(t *testing.T) {
	type row struct{ a int64 }
	get := func(r *row) int64 { return r.a }
	for _, c := range []struct {
		col  report.Column[row]
		want string
	}{
		{report.Column[row]{Name: "none"}, "0 getters"},
		{report.Column[row]{Name: "two", Int64: get, Int32: func(*row) int32 { return 0 }}, "2 getters"},
		{report.Column[row]{Name: "dict", Dict: func(*row) string { return "" }}, "without values"},
		{report.Column[row]{Name: "dup", Dict: func(*row) string { return "" }, Values: []string{"x", "x"}}, "duplicate"},
		{report.Column[row]{Name: "text", String: func(*row) string { return "" }, Null: true}, "only a number column"},
	} {
		path := filepath.Join(t.TempDir(), "t.parquet")
		w, err := NewTableWriter(path, []report.Column[row]{c.col}, 0)
		if err == nil {
			w.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("column %s: error %v, want one containing %q", c.col.Name, err, c.want)
		}
	}
}

// TestDictIndexWidth: up to 128 values fit int8 indices (0..127), more
// take int16.
func TestDictIndexWidth(t *testing.T) {
	type row struct{}
	for _, c := range []struct {
		n    int
		want arrow.DataType
	}{
		{128, arrow.PrimitiveTypes.Int8},
		{129, arrow.PrimitiveTypes.Int16},
	} {
		col := report.Column[row]{Name: "d", Dict: func(*row) string { return "" }, Values: make([]string, c.n)}
		dt, err := dataType(col)
		if err != nil {
			t.Fatal(err)
		}
		if got := dt.(*arrow.DictionaryType).IndexType; !arrow.TypeEqual(got, c.want) {
			t.Errorf("%d values: index %s, want %s", c.n, got, c.want)
		}
	}
}

// BenchmarkRequestWriter appends rows to requests.parquet with the default
// row group size; rows/s leaves out the final Close.
func BenchmarkRequestWriter(b *testing.B) {
	w, err := NewRequestWriter(filepath.Join(b.TempDir(), "requests.parquet"), 0)
	if err != nil {
		b.Fatal(err)
	}
	r := testRequests[2]
	outcomes := []string{report.OutcomeCompleted, report.OutcomeRejected, report.OutcomeFailed, report.OutcomeUnfinished}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.RequestID, r.ArrivalNs, r.Outcome = int64(i), int64(i)*1000, outcomes[i%len(outcomes)]
		if err := w.Append(&r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// fill sets every leaf field of the struct v points to a value of its own,
// counting on from *next: a field added later is covered too.
func fill(t *testing.T, v reflect.Value, next *int) {
	t.Helper()
	for _, path := range report.Leaves(v.Type()) {
		*next++
		switch f := v.FieldByIndex(path); f.Kind() {
		case reflect.Int32, reflect.Int64:
			f.SetInt(int64(*next))
		case reflect.Float64:
			f.SetFloat(float64(*next) + 0.5)
		case reflect.String:
			f.SetString(fmt.Sprintf("s%d", *next))
		case reflect.Bool:
			f.SetBool(*next%2 == 0)
		case reflect.Slice:
			if f.Type().Elem().Kind() != reflect.String {
				continue // filled by the caller
			}
			f.Set(reflect.ValueOf([]string{fmt.Sprintf("p%d", *next), fmt.Sprintf("q%d", *next)}))
		default:
			t.Fatalf("field %v: kind %s not covered", path, f.Kind())
		}
	}
}

// TestSweepRoundTrip writes three sweep rows whose every field holds a
// different value (set through reflection, so a field added later is
// covered too), with 2, 1 and 0 events, and reads them back unchanged,
// keys included. The file has the columns of 2 events; the rows with
// fewer hold NoEvent's kind "", -1 and NaN in those of the events they
// lack.
func TestSweepRoundTrip(t *testing.T) {
	keys := []string{"cluster.workers", "router.policy"}
	rows := make([]report.SweepRow, 3)
	next := 0
	for i := range rows {
		fill(t, reflect.ValueOf(&rows[i]).Elem(), &next)
		rows[i].Events = make([]report.EventRow, 2-i)
		for k := range rows[i].Events {
			fill(t, reflect.ValueOf(&rows[i].Events[k]).Elem(), &next)
		}
	}
	if rows[2].Events = nil; report.SweepEvents(rows) != 2 {
		t.Fatalf("SweepEvents = %d, want 2", report.SweepEvents(rows))
	}
	path := filepath.Join(t.TempDir(), "sweep.parquet")
	if err := WriteSweep(path, keys, rows); err != nil {
		t.Fatal(err)
	}
	gotKeys, got, err := ReadSweep(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotKeys, keys) || !reflect.DeepEqual(got, rows) {
		t.Errorf("read back %v %+v\nwant %v %+v", gotKeys, got, keys, rows)
	}
	cols := report.SweepColumns(keys, 2)
	at := func(name string) report.Column[report.SweepRow] {
		i := slices.IndexFunc(cols, func(c report.Column[report.SweepRow]) bool { return c.Name == name })
		if i < 0 {
			t.Fatalf("no column %s", name)
		}
		return cols[i]
	}
	if c := at("event1_kind"); c.String == nil || c.String(&rows[1]) != "" || c.String(&rows[0]) != rows[0].Events[1].Kind {
		t.Errorf("event1_kind is not a string column holding \"\" for a run without event 1")
	}
	if v := at("event1_removed_after_ns").Int64(&rows[1]); v != -1 {
		t.Errorf("event1_removed_after_ns of a run without event 1: %d, want -1", v)
	}
	if v := at("event0_ttft_p99_after_ms").Float64(&rows[2]); !math.IsNaN(v) {
		t.Errorf("event0_ttft_p99_after_ms of a run without events: %v, want NaN", v)
	}
}

// TestEventsRoundTrip: events.parquet rows whose every field holds a value
// of its own come back unchanged, fired both true and false, kind a
// dictionary in the order given and fired a boolean column.
func TestEventsRoundTrip(t *testing.T) {
	rows := make([]report.EventRow, 3)
	next := 0
	for i := range rows {
		fill(t, reflect.ValueOf(&rows[i]).Elem(), &next)
		rows[i].Kind = []string{"remove", "add", "drain"}[i]
		rows[i].Origin = report.EventOrigins[i%2]
		rows[i].Fired = i != 1
	}
	path := filepath.Join(t.TempDir(), report.EventsFile)
	if err := writeAll(path, report.EventColumns([]string{"drain", "remove", "add"}), rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEvents(path)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Errorf("read back %+v, %v\nwant %+v", got, err, rows)
	}
	if d, err := Dictionary(path, "kind"); err != nil || !slices.Equal(d, []string{"drain", "remove", "add"}) {
		t.Errorf("kind's dictionary %q, %v", d, err)
	}
	tbl, _ := arrowTable(t, path)
	defer tbl.Release()
	if i := tbl.Schema().FieldIndices("fired"); len(i) != 1 || tbl.Schema().Field(i[0]).Type.ID() != arrow.BOOL {
		t.Errorf("fired: %v", tbl.Schema())
	}
}

// TestNullColumns: in a Null column -1 (an integer) and NaN (a float) are
// written as null in a nullable field and read back as -1 and NaN; the same
// values in a column not marked Null are values, in a required field.
func TestNullColumns(t *testing.T) {
	type row struct {
		A, B int64
		C    int32
		X, Y float64
	}
	cols := []report.Column[row]{
		{Name: "a", Int64: func(r *row) int64 { return r.A }, Null: true},
		{Name: "b", Int64: func(r *row) int64 { return r.B }},
		{Name: "c", Int32: func(r *row) int32 { return r.C }, Null: true},
		{Name: "x", Float64: func(r *row) float64 { return r.X }, Null: true},
		{Name: "y", Float64: func(r *row) float64 { return r.Y }},
	}
	nan := math.NaN()
	rows := []row{{-1, -1, -1, nan, nan}, {0, 7, -2, 0.5, 1.5}}
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := writeAll(path, cols, rows); err != nil {
		t.Fatal(err)
	}
	tbl, _ := arrowTable(t, path)
	defer tbl.Release()
	for i, want := range []string{"[(null) 0]", "[-1 7]", "[(null) -2]", "[(null) 0.5]", "[NaN 1.5]"} {
		f := tbl.Schema().Field(i)
		if got := fmt.Sprint(tbl.Column(i).Data().Chunk(0)); got != want || f.Nullable != cols[i].Null {
			t.Errorf("column %s: %s, nullable %v; want %s, nullable %v", f.Name, got, f.Nullable, want, cols[i].Null)
		}
	}
	got, err := readAll(path, cols)
	if err != nil || len(got) != 2 || got[0].A != -1 || got[0].B != -1 || got[0].C != -1 || !math.IsNaN(got[0].X) || !math.IsNaN(got[0].Y) || got[1] != rows[1] {
		t.Errorf("read back %+v, %v; want %+v", got, err, rows)
	}
}

// TestPointsRoundTrip writes two points.parquet rows whose every value
// differs, one a NaN interval (a single replicate), and reads them back
// unchanged, keys included.
func TestPointsRoundTrip(t *testing.T) {
	for _, events := range []int{0, 2} {
		testPointsRoundTrip(t, events)
	}
}

// testPointsRoundTrip is TestPointsRoundTrip for rows summarising runs of
// events lifecycle events.
func testPointsRoundTrip(t *testing.T, events int) {
	keys := []string{"router.hints.mode"}
	nm := len(report.PointMetrics(events))
	rows := []report.PointRow{{Point: 0, Params: []string{"copy"}, Replicates: 3}, {Point: 1, Params: []string{"move"}, Replicates: 1}}
	for i := range rows {
		for j := range nm {
			x := float64(100*i + 4*j)
			rows[i].Stats = append(rows[i].Stats, report.Stat{Mean: x, SD: x + 1, Lo: x + 2, Hi: x + 3})
		}
	}
	rows[1].Stats[0] = report.Stat{Mean: 7, SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	path := filepath.Join(t.TempDir(), "points.parquet")
	if err := WritePoints(path, keys, rows); err != nil {
		t.Fatal(err)
	}
	gotKeys, got, err := ReadPoints(path)
	if err != nil {
		t.Fatal(err)
	}
	nan := got[1].Stats[0]
	got[1].Stats[0], rows[1].Stats[0] = report.Stat{}, report.Stat{} // NaN != NaN
	if !slices.Equal(gotKeys, keys) || !reflect.DeepEqual(got, rows) || nan.Mean != 7 || !math.IsNaN(nan.SD) || !math.IsNaN(nan.Hi) {
		t.Errorf("read back %v %+v\nwant %v %+v", gotKeys, got, keys, rows)
	}
}

// TestPlannerRoundTrip: Tables.Close writes planner.parquet, empty without
// a planner, and ReadPlanner gives its rows back, a hold's NaN readings
// and -1 event (stored as null) included.
func TestPlannerRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := func(n string) string { return filepath.Join(dir, n) }
	rows := []report.PlannerRow{
		{AtNs: 5e9, Queue: 4.35, KV: 0.01, ArrivalRate: 60, Wanted: 2, Ready: 1, Action: report.PlannerAdd, Workers: 1, Event: 0},
		{AtNs: 10e9, Queue: math.NaN(), KV: math.NaN(), Wanted: 3, Ready: 0, Starting: 2, Action: report.PlannerHold, Event: -1, Why: "worker 1 it added is starting"},
	}
	for _, want := range [][]report.PlannerRow{nil, rows} {
		tb, err := NewTables(path, report.PullColumns([]string{"copy"}, []string{"success"}, []string{"hint"}), report.EventColumns([]string{"drain"}))
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Close(nil, []report.CounterRow{{Name: "x"}}, nil, want); err != nil {
			t.Fatal(err)
		}
		got, err := ReadPlanner(path(report.PlannerFile))
		if err != nil {
			t.Fatal(err)
		}
		same := func(a, b report.PlannerRow) bool {
			nan := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
			ok := nan(a.Queue, b.Queue) && nan(a.KV, b.KV)
			a.Queue, a.KV, b.Queue, b.KV = 0, 0, 0, 0
			return ok && a == b
		}
		if !slices.EqualFunc(got, want, same) {
			t.Errorf("read %+v, wrote %+v", got, want)
		}
	}
}
