package parquetio

import (
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/kvsim/kvsim/report"
)

// ColumnChange is one column that differs between two rows.
type ColumnChange struct {
	Column string `json:"column"`
	A      string `json:"a"`
	B      string `json:"b"`
}

// ConfigChange is a configuration column that differs, at the first row
// where it does.
type ConfigChange struct {
	Row int64 `json:"row"`
	ColumnChange
}

// RowDiff is where two tables differ: the first row whose behaviour
// differs, with the columns that differ in it (a row missing on one side
// has every column and A or B "missing"), and apart from it the
// configuration columns that differ up to that row (in the whole tables
// when no behaviour differs), which echo what the runs were given rather
// than what they did (pulls' mode is the scenario's hint mode) and would
// otherwise hide the first behavioural difference.
type RowDiff struct {
	Row     int64          `json:"row"` // -1: no behaviour column differs
	Changes []ColumnChange `json:"changes"`
	Config  []ConfigChange `json:"config,omitempty"`
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
// differs in a column not marked Config, with the Config columns that
// differ up to it; nil when the tables are equal. Equal rows are skipped
// without formatting their cells.
func firstDiff[R comparable](pathA, pathB string, cols []report.Column[R]) (*RowDiff, error) {
	nextA, stopA := iter.Pull2(rows(pathA, cols))
	defer stopA()
	nextB, stopB := iter.Pull2(rows(pathB, cols))
	defer stopB()
	d := &RowDiff{Row: -1}
	for i := int64(0); ; i++ {
		a, errA, okA := nextA()
		b, errB, okB := nextB()
		if err := errors.Join(errA, errB); err != nil {
			return nil, err
		}
		if !okA && !okB {
			break
		}
		if okA && okB && a == b {
			continue
		}
		for _, col := range cols {
			sa, sb := cell(col, &a, okA), cell(col, &b, okB)
			switch {
			case sa == sb:
			case !col.Config:
				d.Row = i
				d.Changes = append(d.Changes, ColumnChange{Column: col.Name, A: sa, B: sb})
			case !slices.ContainsFunc(d.Config, func(c ConfigChange) bool { return c.Column == col.Name }):
				d.Config = append(d.Config, ConfigChange{Row: i, ColumnChange: ColumnChange{Column: col.Name, A: sa, B: sb}})
			}
		}
		if d.Row >= 0 {
			return d, nil
		}
	}
	if len(d.Config) == 0 {
		return nil, nil
	}
	return d, nil
}

// cell is column col of row r as text, "missing" when the table has no
// such row.
func cell[R any](col report.Column[R], r *R, ok bool) string {
	if !ok {
		return "missing"
	}
	return fmt.Sprint(col.Value(r))
}

// FirstRequestDiff returns where two requests.parquet files differ, nil
// when equal.
func FirstRequestDiff(pathA, pathB string) (*RowDiff, error) {
	return firstDiff(pathA, pathB, report.RequestColumns)
}

// FirstPullDiff returns where two pulls.parquet files differ, nil when
// equal.
func FirstPullDiff(pathA, pathB string) (*RowDiff, error) {
	return firstDiff(pathA, pathB, report.PullColumns(nil, nil, nil))
}
