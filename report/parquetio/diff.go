package parquetio

import (
	"errors"
	"fmt"
	"iter"
	"reflect"

	"github.com/kvsim/kvsim/report"
)

// ColumnChange is one column that differs between two rows.
type ColumnChange struct {
	Column string `json:"column"`
	A      string `json:"a"`
	B      string `json:"b"`
}

// RowDiff is the first row where two tables differ: its position, and the
// columns that differ (a row missing on one side has every column and A or
// B "missing").
type RowDiff struct {
	Row     int64          `json:"row"`
	Changes []ColumnChange `json:"changes"`
}

var errStop = errors.New("stop")

// rows adapts readTable into an iterator of row copies.
func rows[R any](path string, cols []report.Column[R]) iter.Seq2[R, error] {
	return func(yield func(R, error) bool) {
		err := readTable(path, cols, func(r *R) error {
			if !yield(*r, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			var zero R
			yield(zero, err)
		}
	}
}

// firstDiff walks two tables in step and returns the first row that
// differs, or nil when they are equal. Equal rows are skipped without
// formatting their cells.
func firstDiff[R comparable](pathA, pathB string, cols []report.Column[R]) (*RowDiff, error) {
	nextA, stopA := iter.Pull2(rows(pathA, cols))
	defer stopA()
	nextB, stopB := iter.Pull2(rows(pathB, cols))
	defer stopB()
	for i := int64(0); ; i++ {
		a, errA, okA := nextA()
		b, errB, okB := nextB()
		if err := errors.Join(errA, errB); err != nil {
			return nil, err
		}
		if !okA && !okB {
			return nil, nil
		}
		if okA && okB && a == b {
			continue
		}
		d := &RowDiff{Row: i}
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		for c, col := range cols {
			sa, sb := fmt.Sprint(va.Field(c)), fmt.Sprint(vb.Field(c))
			switch {
			case !okA:
				sa = "missing"
			case !okB:
				sb = "missing"
			}
			if sa != sb {
				d.Changes = append(d.Changes, ColumnChange{Column: col.Name, A: sa, B: sb})
			}
		}
		if len(d.Changes) > 0 {
			return d, nil
		}
	}
}

// FirstRequestDiff returns the first differing row of two requests.parquet
// files, nil when equal.
func FirstRequestDiff(pathA, pathB string) (*RowDiff, error) {
	return firstDiff(pathA, pathB, report.RequestColumns)
}

// FirstPullDiff returns the first differing row of two pulls.parquet files,
// nil when equal.
func FirstPullDiff(pathA, pathB string) (*RowDiff, error) {
	return firstDiff(pathA, pathB, report.PullColumns(nil, nil))
}
