package results

import (
	"reflect"
	"slices"

	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
)

// Counters are a run's counters in counters.parquet's row order. Each
// field's counter tag is its name there and in summary.json's counters,
// the one place the name is written; KVCR's are embedded (zero when it is
// off). Code reads them by field, never by name: CountersOf turns
// summary.json's counters back into fields.
type Counters struct {
	HintsAttached int64 `counter:"hints_attached"`
	kvcr.Counters
	Cost               CostCounters      `counter:"" group:"cost"`
	Migration          MigrationCounters `counter:"" group:"migration"`
	RequestsTotal      int64             `counter:"requests_total"`
	RequestsCompleted  int64             `counter:"requests_completed"`
	RequestsRejected   int64             `counter:"requests_rejected"`
	RequestsFailed     int64             `counter:"requests_failed"`
	RequestsUnfinished int64             `counter:"requests_unfinished"`
	RequestsRerouted   int64             `counter:"requests_rerouted"`
	Preemptions        int64             `counter:"preemptions"`
	WorkersAdded       int64             `counter:"workers_added"`
	WorkersDrained     int64             `counter:"workers_drained"`
	WorkersRemoved     int64             `counter:"workers_removed"`
}

// CostCounters are the cost hint policy's (router.hints.policy cost): the
// "cost" group, reported only by runs with that policy.
type CostCounters struct {
	HintsWithheld int64 `counter:"hints_withheld"` // requests a source held blocks for, routed without a hint: no pull paid
}

// MigrationCounters are request migration's (on_remove: migrate): the
// "migration" group, reported only by runs with cluster.migration_limit.
type MigrationCounters struct {
	RequestsMigrated    int64 `counter:"requests_migrated"`    // migrations: one per move of a request
	MigrationsExhausted int64 `counter:"migrations_exhausted"` // requests failed past the limit
}

// eachCounter calls fn with every counter field of v (a Counters), in
// report order, its name and its group ("" for the counters every run
// reports). A struct field that is not embedded is a group of counters
// named with its tag as a prefix, in the group its group tag names.
func eachCounter(v reflect.Value, fn func(name, group string, f reflect.Value)) {
	eachCounterIn(v, "", "", fn)
}

func eachCounterIn(v reflect.Value, prefix, group string, fn func(name, group string, f reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		switch {
		case sf.Anonymous:
			eachCounterIn(v.Field(i), prefix, group, fn)
		case sf.Type.Kind() == reflect.Struct:
			eachCounterIn(v.Field(i), prefix+sf.Tag.Get("counter"), sf.Tag.Get("group"), fn)
		default:
			fn(prefix+sf.Tag.Get("counter"), group, v.Field(i))
		}
	}
}

// Rows are c as counters.parquet's rows, in report order: the counters
// every run reports, and those of the groups named. A group is reported
// only by runs that can count in it, so that adding one changes no other
// run's rows, nor its digest.
func (c *Counters) Rows(groups ...string) []report.CounterRow {
	var rows []report.CounterRow
	eachCounter(reflect.ValueOf(c).Elem(), func(name, group string, f reflect.Value) {
		if group == "" || slices.Contains(groups, group) {
			rows = append(rows, report.CounterRow{Name: name, Value: f.Int()})
		}
	})
	return rows
}

// CountersOf reads counters by name (summary.json's counters) into their
// fields. A counter the map lacks is zero, and a name no field has is
// ignored (a summary written by another kvsim version).
func CountersOf(byName map[string]int64) Counters {
	var c Counters
	eachCounter(reflect.ValueOf(&c).Elem(), func(name, _ string, f reflect.Value) {
		f.SetInt(byName[name])
	})
	return c
}

// CounterNames lists every counter, those of every group included, in
// report order.
func CounterNames() []string {
	var names []string
	eachCounter(reflect.ValueOf(new(Counters)).Elem(), func(name, _ string, _ reflect.Value) {
		names = append(names, name)
	})
	return names
}

// counterGroups is the groups of counters a run of sc reports (Rows):
// those it can count in.
func counterGroups(sc *scenarios.Scenario) []string {
	var gs []string
	if sc.Orders() {
		gs = append(gs, groupBackground)
	}
	if sc.Router.Hints.Policy == scheduler.HintsCost {
		gs = append(gs, groupCost)
	}
	for i := range sc.Events {
		if sc.Events[i].Fault() {
			gs = append(gs, groupFaults)
			break
		}
	}
	if sc.Cluster.MigrationLimit > 0 {
		gs = append(gs, groupMigration)
	}
	return gs
}

// The counter groups.
const (
	groupBackground = "background" // the orders' counters (kvcr.KindCounters): runs whose events evacuate or prewarm
	groupCost       = "cost"       // CostCounters: runs with router.hints.policy cost
	groupFaults     = "faults"     // kvcr.FaultCounters: runs with fault events (chaos's included)
	groupMigration  = "migration"  // MigrationCounters: runs with cluster.migration_limit
)
