package parquetio

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/kvsim/kvsim/report"
)

// column is one column of a TableWriter: the values of the rows added
// since its last reset, written a range of rows at a time into a row
// group's column chunk as Arrow's pqarrow writes an Arrow array of the
// column's dataType holding them (the same bytes).
type column[R any] interface {
	// add appends row r's value.
	add(r *R) error
	// write writes the values of rows lo to hi (of those added) to cw.
	write(cw file.ColumnChunkWriter, lo, hi int) error
	// reset drops the values added.
	reset()
}

// newColumn returns the column for c, sized for rows values at a time.
func newColumn[R any](c report.Column[R], rows int) (column[R], error) {
	switch {
	case c.Int64 != nil:
		return newNumbers(c.Int64, c.Null, func(v int64) bool { return v == -1 }, rows), nil
	case c.Int32 != nil:
		return newNumbers(c.Int32, c.Null, func(v int32) bool { return v == -1 }, rows), nil
	case c.Float64 != nil:
		return newNumbers(c.Float64, c.Null, math.IsNaN, rows), nil
	case c.String != nil:
		return &strs[R]{get: c.String, offsets: []int32{0}}, nil
	case c.Bool != nil:
		return &bools[R]{get: c.Bool}, nil
	}
	return newDict(c, rows)
}

// numbers is a number column; in a Null column, a value none says is no
// value is null.
type numbers[R any, T int32 | int64 | float64] struct {
	get   func(*R) T
	none  func(T) bool // nil: not a Null column
	vals  []T          // by row; a null's is not written
	def   []int16      // a Null column's definition levels: 1 a value, 0 a null
	dense []T          // scratch: a Null column's values without its nulls
}

// newNumbers returns the number column of get, a Null one when null is
// set, sized for rows values.
func newNumbers[R any, T int32 | int64 | float64](get func(*R) T, null bool, none func(T) bool, rows int) *numbers[R, T] {
	c := &numbers[R, T]{get: get, vals: make([]T, 0, rows)}
	if null {
		c.none, c.def = none, make([]int16, 0, rows)
	}
	return c
}

func (c *numbers[R, T]) add(r *R) error {
	v := c.get(r)
	c.vals = append(c.vals, v)
	if c.none != nil {
		def := int16(1)
		if c.none(v) {
			def = 0
		}
		c.def = append(c.def, def)
	}
	return nil
}

// write writes rows lo to hi: a required column's values; a Null column's
// definition levels and the values of the rows that have one.
func (c *numbers[R, T]) write(cw file.ColumnChunkWriter, lo, hi int) error {
	vals := c.vals[lo:hi]
	var def []int16
	if c.none != nil {
		def = c.def[lo:hi]
		c.dense = c.dense[:0]
		for i, d := range def {
			if d == 1 {
				c.dense = append(c.dense, vals[i])
			}
		}
		vals = c.dense
	}
	return writeValues(cw, vals, def)
}

// batchWriter is a typed column writer of values of type V.
type batchWriter[V any] interface {
	WriteBatch(values []V, defLevels, repLevels []int16) (int64, error)
}

// writeValues writes vals, with their definition levels def (nil for a
// required column), to cw, which must be a writer of V.
func writeValues[V any](cw file.ColumnChunkWriter, vals []V, def []int16) error {
	w, ok := cw.(batchWriter[V])
	if !ok {
		return fmt.Errorf("a %T for a column of %T", cw, vals)
	}
	_, err := w.WriteBatch(vals, def, nil)
	return err
}

func (c *numbers[R, T]) reset() {
	c.vals, c.def = c.vals[:0], c.def[:0]
}

// strs is a plain string column, kept as an Arrow string array keeps it:
// the bytes of every value, and the offset where each starts and ends.
type strs[R any] struct {
	get     func(*R) string
	data    []byte
	offsets []int32 // len(values)+1
}

func (c *strs[R]) add(r *R) error {
	c.data = append(c.data, c.get(r)...)
	c.offsets = append(c.offsets, int32(len(c.data)))
	return nil
}

// write writes the strings as Arrow's offsets into their bytes, which a
// plain byte-array encoder takes.
func (c *strs[R]) write(cw file.ColumnChunkWriter, lo, hi int) error {
	w, ok := cw.(*file.ByteArrayColumnChunkWriter)
	if !ok || !w.SupportsArrowOffsets() {
		return fmt.Errorf("a %T, %s-encoded, for a plain string column", cw, cw.CurrentEncoder().Encoding())
	}
	_, err := w.WriteBatchArrow(c.data, c.offsets[lo:hi+1], nil, nil)
	return err
}

func (c *strs[R]) reset() { c.data, c.offsets = c.data[:0], c.offsets[:1] }

// bools is a boolean column, kept as a bitmap, one bit a row.
type bools[R any] struct {
	get  func(*R) bool
	bits []byte
	n    int
}

func (c *bools[R]) add(r *R) error {
	if c.n%8 == 0 {
		c.bits = append(c.bits, 0)
	}
	if c.get(r) {
		bitutil.SetBit(c.bits, c.n)
	}
	c.n++
	return nil
}

func (c *bools[R]) write(cw file.ColumnChunkWriter, lo, hi int) error {
	w, ok := cw.(*file.BooleanColumnChunkWriter)
	if !ok {
		return fmt.Errorf("a %T for a boolean column", cw)
	}
	_, err := w.WriteBitmapBatch(c.bits, int64(lo), hi-lo, nil, nil)
	return err
}

func (c *bools[R]) reset() { c.bits, c.n = c.bits[:0], 0 }

// dict is a dictionary column: each row's index in Values, written as
// pqarrow writes an Arrow dictionary array whose dictionary is Values, in
// order: the dictionary is put into each column chunk's encoder before its
// first indices, so every row group's dictionary page holds Values in
// their order, and each range adds its rows to the page statistics, whose
// minimum and maximum it updates with the values its rows name. The
// indices are written as int16 whatever the column's Arrow index type (the
// encoder widens them all alike).
type dict[R any] struct {
	get    func(*R) string
	name   string
	values []string
	index  map[string]int
	dict   arrow.Array // Values; Go-allocated, so left to the collector
	idx    []int16     // by row
	used   []bool      // scratch: the values a range names
}

// dictionaryEncoder is what pqarrow asks of a column writer's encoder for
// an Arrow dictionary (Parquet's dictionary encoders have these methods;
// the interface naming them is internal to Arrow).
type dictionaryEncoder interface {
	PutDictionary(values arrow.Array) error
	PreservedDictionary() arrow.Array
}

// newDict returns c's dictionary column, sized for rows values; c's Values
// must be distinct.
func newDict[R any](c report.Column[R], rows int) (*dict[R], error) {
	index := make(map[string]int, len(c.Values))
	for i, v := range c.Values {
		if _, dup := index[v]; dup {
			return nil, fmt.Errorf("column %q: duplicate dictionary values in %q", c.Name, c.Values)
		}
		index[v] = i
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(c.Values, nil)
	return &dict[R]{get: c.Dict, name: c.Name, values: c.Values, index: index, dict: b.NewArray(),
		idx: make([]int16, 0, rows), used: make([]bool, len(c.Values))}, nil
}

func (c *dict[R]) add(r *R) error {
	s := c.get(r)
	i, ok := c.index[s]
	if !ok {
		return fmt.Errorf("column %q: value %q not one of %q", c.name, s, c.values)
	}
	c.idx = append(c.idx, int16(i))
	return nil
}

func (c *dict[R]) write(cw file.ColumnChunkWriter, lo, hi int) error {
	w, ok := cw.(*file.ByteArrayColumnChunkWriter)
	enc, isDict := cw.CurrentEncoder().(dictionaryEncoder)
	if !ok || !isDict || cw.CurrentEncoder().Encoding() != parquet.Encodings.PlainDict {
		return fmt.Errorf("column %q is not dictionary-encoded", c.name)
	}
	if enc.PreservedDictionary() == nil {
		if err := enc.PutDictionary(c.dict); err != nil {
			return err
		}
	}
	idx := c.idx[lo:hi]
	if stats := cw.PageStatistics(); stats != nil {
		named := c.named(idx)
		defer named.Release()
		stats.IncNulls(0)
		stats.IncNumValues(int64(len(idx)))
		if err := stats.UpdateFromArrow(named, false); err != nil {
			return err
		}
	}
	b := array.NewInt16Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(idx, nil)
	indices := b.NewArray()
	defer indices.Release()
	return w.WriteDictIndices(indices, nil, nil)
}

// named is the dictionary's values idx names, each once: what a range's
// statistics take their minimum and maximum from (pqarrow takes them in
// the order the range first names them, which neither depends on).
func (c *dict[R]) named(idx []int16) arrow.Array {
	for _, i := range idx {
		c.used[i] = true
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for i, u := range c.used {
		if u {
			b.Append(c.values[i])
			c.used[i] = false
		}
	}
	return b.NewArray()
}

func (c *dict[R]) reset() { c.idx = c.idx[:0] }
