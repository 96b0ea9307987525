package parquetio

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/kvsim/kvsim/report"
)

// DefaultRowGroupRows is the number of rows of a TableWriter's Parquet row
// groups.
const DefaultRowGroupRows = 65536

// dataPageSize is the size at which a column's page is cut, compressed and
// kept in the row group being written. Parquet's default, 1 MB, held
// every page of a table smaller than a row group until its close (the
// conversation trace's requests, pulls and time series), so most of the
// writers' work waited for the end of the run; 64 KB pages are compressed
// as the run goes, and compress in less time in all (the conversation
// trace 4.5 % faster at 8 and 128 workers, a million requests 7 %).
const dataPageSize = 64 << 10

// batchRows is the number of rows Append gathers before it hands them to
// the writing goroutine, and the writing goroutine encodes at a time, by
// default; maxBatches the batches a writer has: the caller fills one while
// the others wait to be written or are written. The file's bytes do not
// depend on how many rows are encoded at a time as long as it is a
// multiple of writeBatch: Arrow's column writers write values in batches
// of that many (parquet.DefaultWriteBatchSize) and decide whether to cut
// a page after each.
const (
	batchRows  = 4096
	maxBatches = 4
	writeBatch = 1024
)

// TableWriter streams rows of type R into one Parquet file. Append, on the
// caller's goroutine, only copies the row into a batch; full batches go in
// order to a goroutine of the writer's own, which copies their values into
// its columns and encodes them a run of rows at a time into the row group
// being written (a buffered row group), cutting one every rowGroupRows
// rows. A column's data page is zstd-compressed when it reaches
// dataPageSize, a row group written when it is cut, the last at Close: a
// table's encoding runs beside the run rather than at its close. Where a
// page is cut depends on where an encoding stops, which depends on the
// rows only, so the file's bytes do not depend on the batches, on the runs
// encoded (multiples of writeBatch) or on scheduling
// (TestTableWriterBatches).
//
// The file is the one Arrow's pqarrow writer makes of the same rows as
// Arrow arrays (TestWriterMatchesArrow): the same schema, row groups,
// dictionaries and statistics, and the Arrow schema stored in the file, so
// Arrow readers restore the dictionary columns. kvsim drives Arrow's
// column writers itself because linking pqarrow links Arrow Flight, gRPC
// and protobuf, whose package initialisation cost every kvsim command 6-9
// ms at start.
type TableWriter[R any] struct {
	path   string
	batch  int // rows a batch
	encode int // rows encoded at a time, a multiple of writeBatch

	// The caller's: the batch it fills, and the first error it has seen,
	// after which the writer takes no more rows.
	cur []R
	err error

	// Every one of the maxBatches batches is cur, in full, being written
	// or in free, so neither channel ever blocks a send.
	full chan []R      // filled batches, in order
	free chan []R      // written batches, to be filled again
	done chan struct{} // closed once the writing goroutine has closed the file

	// The writing goroutine's; werr is read by the caller once done is
	// closed.
	fw     *file.Writer
	rgw    file.BufferedRowGroupWriter // the row group being written; nil before the first
	rgRows int                         // rows in it
	rgMax  int                         // rows a row group
	cols   []column[R]                 // in schema order
	names  []string                    // the columns' names
	n      int                         // rows in the columns, not yet encoded
	werr   error                       // first error; the goroutine stops at it
}

// NewTableWriter creates the file at path (truncating it) for a table with
// the given columns, and starts the goroutine that writes it. rowGroupRows
// is the number of rows a row group; 0 means DefaultRowGroupRows.
func NewTableWriter[R any](path string, cols []report.Column[R], rowGroupRows int) (*TableWriter[R], error) {
	return newTableWriter(path, cols, rowGroupRows, batchRows, batchRows)
}

// newTableWriter is NewTableWriter handing rows over in batches of batch
// rows and encoding them encode rows at a time, a positive multiple of
// writeBatch.
func newTableWriter[R any](path string, cols []report.Column[R], rowGroupRows, batch, encode int) (*TableWriter[R], error) {
	if encode <= 0 || encode%writeBatch != 0 {
		panic(fmt.Sprintf("parquetio: encoding %d rows at a time, not a multiple of %d", encode, writeBatch))
	}
	if rowGroupRows == 0 {
		rowGroupRows = DefaultRowGroupRows
	}
	if rowGroupRows < 0 {
		return nil, fmt.Errorf("report: %s: row group size %d < 0", path, rowGroupRows)
	}
	props := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(rowGroupRows)), parquet.WithDataPageSize(dataPageSize)}
	fields := make([]arrow.Field, len(cols))
	nodes := make(schema.FieldList, len(cols))
	w := &TableWriter[R]{path: path, batch: batch, encode: encode, rgMax: rowGroupRows, cols: make([]column[R], len(cols)),
		names: make([]string, len(cols)), full: make(chan []R, maxBatches), free: make(chan []R, maxBatches), done: make(chan struct{})}
	for i, c := range cols {
		if slices.Contains(w.names[:i], c.Name) {
			return nil, fmt.Errorf("report: %s: two columns named %q", path, c.Name)
		}
		w.names[i] = c.Name
		t, err := dataType(c)
		if err == nil {
			fields[i] = arrow.Field{Name: c.Name, Type: t, Nullable: c.Null}
			nodes[i], err = node(c)
		}
		if err == nil {
			w.cols[i], err = newColumn(c, encode)
		}
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", path, err)
		}
		if c.Dict != nil {
			props = append(props, parquet.WithDictionaryFor(c.Name, true))
		}
	}
	wprops := parquet.NewWriterProperties(props...)
	root, err := schema.NewGroupNode(wprops.RootName(), wprops.RootRepetition(), nodes, -1)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	meta := metadata.KeyValueMetadata{}
	meta.Append("ARROW:schema", arrowSchema(arrow.NewSchema(fields, nil)))

	f, err := os.Create(path)
	if err == nil {
		w.fw, err = file.NewParquetWriterWithError(f, root, file.WithWriterProps(wprops), file.WithWriteMetadata(meta))
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for range maxBatches - 1 {
		w.free <- nil // made by Append when first filled: a small table makes one
	}
	go w.write()
	return w, nil
}

// arrowSchema is the Arrow schema as Arrow stores it in a Parquet file's
// metadata: an IPC stream of the schema and no batch, base64-encoded.
func arrowSchema(s *arrow.Schema) string {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	w.Close() // to a bytes.Buffer: cannot fail
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// node is column c's Parquet schema node, as Arrow makes it of c's
// dataType: numbers as signed integers or doubles, strings (dictionary
// ones too) as UTF-8 byte arrays; a Null column is optional, the others
// required.
func node[R any](c report.Column[R]) (schema.Node, error) {
	rep := parquet.Repetitions.Required
	if c.Null {
		rep = parquet.Repetitions.Optional
	}
	var logical schema.LogicalType = schema.NoLogicalType{}
	var physical parquet.Type
	switch {
	case c.Int64 != nil:
		logical, physical = schema.NewIntLogicalType(64, true), parquet.Types.Int64
	case c.Int32 != nil:
		logical, physical = schema.NewIntLogicalType(32, true), parquet.Types.Int32
	case c.Float64 != nil:
		physical = parquet.Types.Double
	case c.Bool != nil:
		physical = parquet.Types.Boolean
	default: // String, Dict
		logical, physical = schema.StringLogicalType{}, parquet.Types.ByteArray
	}
	return schema.NewPrimitiveNodeLogical(c.Name, rep, logical, physical, -1, -1)
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
	if c.Null && c.Int64 == nil && c.Int32 == nil && c.Float64 == nil {
		return nil, fmt.Errorf("column %q: only a number column has a value that is null", c.Name)
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

// Append copies the row into the current batch and, once the batch is
// full, hands it to the writing goroutine. R's slices, if it has any, are
// read there, so they must not change before Close returns. An error the
// goroutine met (a write failing, a value outside its column's dictionary)
// is returned once Append sees it, a few batches later at most; after it
// the writer accepts no more rows, and Close still closes the file.
func (w *TableWriter[R]) Append(r *R) error {
	if w.err != nil {
		return w.err
	}
	if cap(w.cur) == 0 { // a batch's first fill: at its full size, not grown by doubling
		w.cur = make([]R, 0, w.batch)
	}
	w.cur = append(w.cur, *r)
	if len(w.cur) < w.batch {
		return nil
	}
	w.full <- w.cur
	select {
	case b := <-w.free:
		w.cur = b[:0]
		return nil
	case <-w.done: // only an error ends the goroutine before Close
		w.err = w.werr
		return w.err
	}
}

// Close hands the last rows over and waits for the writing goroutine to
// write them (those past the last full row group as a last, shorter one),
// write the footer and close the file; call it once. It returns the first
// error of the writer's life.
func (w *TableWriter[R]) Close() error {
	if w.err == nil && len(w.cur) > 0 {
		w.full <- w.cur
	}
	close(w.full)
	<-w.done
	return w.werr
}

// write is the writing goroutine: it writes the batches, then closes the
// file, at the first error too (the footer lists the row groups written),
// and closes done.
func (w *TableWriter[R]) write() {
	defer close(w.done)
	w.werr = w.writeBatches()
	if err := w.fw.Close(); err != nil && w.werr == nil { // it closes the row group being written
		w.werr = fmt.Errorf("report: %s: %w", w.path, err)
	}
}

// writeBatches copies the rows of each batch into the columns, encodes
// them into the row groups every w.encode rows and the rest at the end,
// and hands the batch back to be filled again. It returns the first error:
// the rows not yet encoded are not written.
func (w *TableWriter[R]) writeBatches() error {
	for batch := range w.full {
		for i := range batch {
			for _, c := range w.cols {
				if err := c.add(&batch[i]); err != nil {
					return fmt.Errorf("report: %s: %w", w.path, err)
				}
			}
			if w.n++; w.n == w.encode {
				if err := w.flush(); err != nil {
					return err
				}
			}
		}
		w.free <- batch
	}
	if w.n > 0 {
		return w.flush()
	}
	return nil
}

// flush encodes the rows in the columns into the row group being written,
// starting a new one each time it holds rowGroupRows rows (as Arrow's
// buffered writer does), and empties the columns.
func (w *TableWriter[R]) flush() error {
	for lo := 0; lo < w.n; {
		if w.rgw == nil || w.rgRows == w.rgMax { // the next row group; the file writer closes the one before
			rgw, err := w.fw.AppendBufferedRowGroupChecked()
			if err != nil {
				return fmt.Errorf("report: %s: %w", w.path, err)
			}
			w.rgw, w.rgRows = rgw, 0
		}
		hi := min(w.n, lo+w.rgMax-w.rgRows)
		for i, c := range w.cols {
			cw, err := w.rgw.Column(i)
			if err == nil {
				err = c.write(cw, lo, hi)
			}
			if err != nil {
				return fmt.Errorf("report: %s: column %q: %w", w.path, w.names[i], err)
			}
		}
		w.rgRows += hi - lo
		lo = hi
	}
	w.n = 0
	for _, c := range w.cols {
		c.reset()
	}
	return nil
}
