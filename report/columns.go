package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Column declares one column of a table whose rows have type R: its name and
// exactly one getter, which picks the column's type. A column is
// non-nullable (Parquet REQUIRED) unless it is marked Null; in the rows,
// "none" is always a value: -1, or NaN for a float.
type Column[R any] struct {
	Name    string
	Int64   func(*R) int64   // an int64 column
	Int32   func(*R) int32   // an int32 column
	Float64 func(*R) float64 // a float64 column
	String  func(*R) string  // a plain string column
	Bool    func(*R) bool    // a boolean column
	// Dict makes a dictionary-encoded string column whose values must be
	// one of Values. The dictionary holds Values in that order in every row
	// group, with int8 indices (int16 past 128 values); readers see a
	// string or categorical column.
	Dict   func(*R) string
	Values []string
	// NoDigest leaves the column out of the run's digest (docs/digest.md):
	// configuration and measured inputs rather than behaviour, and columns
	// added after kvsim-digest-v1 was fixed.
	NoDigest bool
	// Config marks a column that echoes what the run was given (the
	// scenario's configuration, a measured trace's figures) rather than what
	// it did: kvsim compare lists its differences apart from behaviour's.
	Config bool
	// Null marks a number column whose -1 (an integer) or NaN (a float) is
	// no value: a time that never came, a statistic of nothing, an event a
	// run lacks. The Parquet file stores it as null, so that a reader's
	// mean or count skips it rather than mixing in -1, and the readers give
	// the -1 or NaN back; points.parquet's summaries take it as NaN. Only
	// such columns are nullable.
	Null bool
}

// Value is column c of row r, through its getter: an int64, int32,
// float64, string or bool.
func (c Column[R]) Value(r *R) any {
	switch {
	case c.Int64 != nil:
		return c.Int64(r)
	case c.Int32 != nil:
		return c.Int32(r)
	case c.Float64 != nil:
		return c.Float64(r)
	case c.String != nil:
		return c.String(r)
	case c.Bool != nil:
		return c.Bool(r)
	}
	return c.Dict(r)
}

// Text is row r as "name=value" pairs in column order, for records a
// person reads (the golden files). A float is written in the fewest digits
// that read back as it (strconv's 'g', -1).
func Text[R any](cols []Column[R], r *R) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Name)
		b.WriteByte('=')
		fmt.Fprint(&b, c.Value(r))
	}
	return b.String()
}

// RequestText is a requests.parquet row as Text.
func RequestText(r *RequestRow) string { return Text(RequestColumns, r) }

// PullText is a pulls.parquet row as Text.
func PullText(r *PullRow) string { return Text(pullColumns, r) }

// pullColumns is pulls.parquet's schema without its dictionaries, for what
// reads rows rather than writes them (a row's text, the digest).
var pullColumns = PullColumns(nil, nil, nil)

// RowJSON renders r as a JSON object whose members are the columns, named
// and ordered as in the table, so that --json output and the Parquet file
// share one schema.
func RowJSON[R any](cols []Column[R], r *R) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(c.Name)
		b.Write(name)
		b.WriteByte(':')
		val, err := json.Marshal(c.Value(r))
		if err != nil { // NaN or an infinity
			val = []byte("null")
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
