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

// WritePoints writes points.parquet with the rows in the order given.
func WritePoints(path string, keys []string, rows []report.PointRow) error {
	return writeAll(path, report.PointColumns(keys), rows)
}

// ReadPoints reads a points.parquet: its varied keys and rows.
func ReadPoints(path string) ([]string, []report.PointRow, error) {
	var keys []string
	check := func(names []string) error {
		nk := len(names) - len(report.PointColumns(nil)) // past point, replicates and the metrics
		if nk < 0 || names[0] != "point" {
			return fmt.Errorf("report: %s is not a points table", path)
		}
		keys = slices.Clone(names[1 : 1+nk])
		return checkColumns(path, names, report.PointColumns(keys))
	}
	// Columns: point, one a key (into Params), replicates, then four a
	// metric (into Stats, the fields of a Stat in order).
	nm := len(report.PointMetrics())
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
		case i == len(keys)+1:
			return row.Field(2)
		}
		stats := row.Field(3)
		if stats.Len() != nm {
			stats.Set(reflect.ValueOf(make([]report.Stat, nm)))
		}
		j := i - len(keys) - 2
		return stats.Index(j / 4).Field(j % 4)
	}
	var rows []report.PointRow
	err := readRows(path, check, field, func(r *report.PointRow) error {
		rows = append(rows, *r)
		r.Params, r.Stats = nil, nil // the next row gets its own
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return keys, rows, nil
}
