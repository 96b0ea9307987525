package parquetio

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/kvsim/kvsim/report"
)

// WriteSweep writes sweep.parquet with the rows in the order given, with
// the columns of as many events as the row with the most has.
func WriteSweep(path string, keys []string, rows []report.SweepRow) error {
	return writeAll(path, report.SweepColumns(keys, report.SweepEvents(rows)), rows)
}

// ReadSweep reads a sweep.parquet: its varied keys and rows. Each row's
// Events end at its last event: the columns of events it lacks (kind "")
// are not read into it.
func ReadSweep(path string) ([]string, []report.SweepRow, error) {
	var keys []string
	events := 0
	nm := len(report.SweepColumns(nil, 0)) - 1 // the metrics
	eventCols := report.EventColumns(nil)
	check := func(names []string) error {
		for slices.Contains(names, fmt.Sprintf("event%d_%s", events, eventCols[0].Name)) {
			events++
		}
		nk := len(names) - 1 - nm - events*len(eventCols) // past run, the metrics and the events
		if nk < 0 || names[0] != "run" {
			return fmt.Errorf("report: %s is not a sweep table", path)
		}
		keys = slices.Clone(names[1 : 1+nk])
		return checkColumns(path, names, report.SweepColumns(keys, events))
	}
	// Columns: run, one a key (into Params), the metrics, which are
	// report.SweepRow's fields after Params in order, then the events'
	// columns, each event's the leaves of an EventRow in Events.
	leaves := report.Leaves(reflect.TypeFor[report.EventRow]())
	eventsField := reflect.TypeFor[report.SweepRow]().NumField() - 1
	field := func(row reflect.Value, i int) reflect.Value {
		switch {
		case i == 0:
			return row.Field(0)
		case i <= len(keys):
			return elem(row.Field(1), len(keys), i-1)
		case i <= len(keys)+nm:
			return row.Field(i - len(keys) + 1)
		}
		j := i - 1 - len(keys) - nm
		return elem(row.Field(eventsField), events, j/len(leaves)).FieldByIndex(leaves[j%len(leaves)])
	}
	var rows []report.SweepRow
	err := readRows(path, check, field, func(r *report.SweepRow) error {
		evs := r.Events
		for len(evs) > 0 && evs[len(evs)-1].Kind == "" {
			evs = evs[:len(evs)-1]
		}
		r.Events = nil
		if len(evs) > 0 {
			r.Events = slices.Clip(evs)
		}
		rows = append(rows, *r)
		r.Params, r.Events = nil, nil // the next row gets its own
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return keys, rows, nil
}

// WritePoints writes points.parquet with the rows in the order given.
func WritePoints(path string, keys []string, rows []report.PointRow) error {
	return writeAll(path, report.PointColumns(keys, report.PointEvents(rows)), rows)
}

// ReadPoints reads a points.parquet: its varied keys and rows.
func ReadPoints(path string) ([]string, []report.PointRow, error) {
	var keys []string
	events, nm := 0, 0 // the events and metrics, known once check has run
	check := func(names []string) error {
		for slices.Contains(names, fmt.Sprintf("event%d_at_ns_mean", events)) {
			events++
		}
		nm = len(report.PointMetrics(events))
		nk := len(names) - len(report.PointColumns(nil, events)) // past point, replicates and the metrics
		if nk < 0 || names[0] != "point" {
			return fmt.Errorf("report: %s is not a points table", path)
		}
		keys = slices.Clone(names[1 : 1+nk])
		return checkColumns(path, names, report.PointColumns(keys, events))
	}
	// Columns: point, one a key (into Params), replicates, then four a
	// metric (into Stats, the fields of a Stat in order).
	field := func(row reflect.Value, i int) reflect.Value {
		switch {
		case i == 0:
			return row.Field(0)
		case i <= len(keys):
			return elem(row.Field(1), len(keys), i-1)
		case i == len(keys)+1:
			return row.Field(2)
		}
		j := i - len(keys) - 2
		return elem(row.Field(3), nm, j/4).Field(j % 4)
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

// elem is element i of the slice v, a field of the row being read, which
// it first makes n long when it is not: each row gets its own slice.
func elem(v reflect.Value, n, i int) reflect.Value {
	if v.Len() != n {
		v.Set(reflect.MakeSlice(v.Type(), n, n))
	}
	return v.Index(i)
}
