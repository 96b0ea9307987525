package sim

import (
	"reflect"

	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
)

// Counters are a run's counters in counters.parquet's row order. Each
// field's counter tag is its name there and in summary.json's counters,
// the one place the name is written; KVCR's are embedded (zero when it is
// off). Code reads them by field, never by name: CountersOf turns
// summary.json's counters back into fields.
type Counters struct {
	HintsAttached int64 `counter:"hints_attached"`
	kvcr.Counters
	RequestsTotal      int64 `counter:"requests_total"`
	RequestsCompleted  int64 `counter:"requests_completed"`
	RequestsRejected   int64 `counter:"requests_rejected"`
	RequestsFailed     int64 `counter:"requests_failed"`
	RequestsUnfinished int64 `counter:"requests_unfinished"`
	RequestsRerouted   int64 `counter:"requests_rerouted"`
	Preemptions        int64 `counter:"preemptions"`
	WorkersAdded       int64 `counter:"workers_added"`
	WorkersDrained     int64 `counter:"workers_drained"`
	WorkersRemoved     int64 `counter:"workers_removed"`
}

// eachCounter calls fn with every counter field of v (a Counters), in
// report order, and its name.
func eachCounter(v reflect.Value, fn func(name string, f reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Anonymous {
			eachCounter(v.Field(i), fn)
			continue
		}
		fn(t.Field(i).Tag.Get("counter"), v.Field(i))
	}
}

// Rows are c as counters.parquet's rows, in report order.
func (c *Counters) Rows() []report.CounterRow {
	var rows []report.CounterRow
	eachCounter(reflect.ValueOf(c).Elem(), func(name string, f reflect.Value) {
		rows = append(rows, report.CounterRow{Name: name, Value: f.Int()})
	})
	return rows
}

// CountersOf reads counters by name (summary.json's counters) into their
// fields. A counter the map lacks is zero, and a name no field has is
// ignored (a summary written by another kvsim version).
func CountersOf(byName map[string]int64) Counters {
	var c Counters
	eachCounter(reflect.ValueOf(&c).Elem(), func(name string, f reflect.Value) {
		f.SetInt(byName[name])
	})
	return c
}

// CounterNames lists the counters every run reports, in report order.
func CounterNames() []string {
	var names []string
	for _, r := range new(Counters).Rows() {
		names = append(names, r.Name)
	}
	return names
}
