package parquetio

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/kvsim/kvsim/report"
)

// WriteSweep writes sweep.parquet with the rows in the order given.
func WriteSweep(path string, keys []string, rows []report.SweepRow) error {
	return writeAll(path, report.SweepColumns(keys), rows)
}

// ReadSweep reads a sweep.parquet: its varied keys and rows.
func ReadSweep(path string) ([]string, []report.SweepRow, error) {
	var keys []string
	check := func(names []string) error {
		nk := len(names) - len(report.SweepColumns(nil)) // past run and the metrics
		if nk < 0 || names[0] != "run" {
			return fmt.Errorf("report: %s is not a sweep table", path)
		}
		keys = slices.Clone(names[1 : 1+nk])
		return checkColumns(path, names, report.SweepColumns(keys))
	}
	// Columns: run, one a key (into Params), then the metrics, which are
	// report.SweepRow's fields after Params in order.
	field := func(row reflect.Value, i int) reflect.Value {
		switch {
		case i == 0:
			return row.Field(0)
		case i <= len(keys):
			params := row.Field(1)
			if params.Len() != len(keys) {
				params.Set(reflect.ValueOf(make([]string, len(keys))))
			}
			return params.Index(i - 1)
		}
		return row.Field(i - len(keys) + 1)
	}
	var rows []report.SweepRow
	err := readRows(path, check, field, func(r *report.SweepRow) error {
		rows = append(rows, *r)
		r.Params = nil // the next row gets its own
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return keys, rows, nil
}
