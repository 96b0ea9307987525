package results

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// Value is one metric of a run (Metric): an integer (a counter, a count, a
// time in ns), a float (a latency in ms, a ratio, a time asked in ms or
// s), or never.
type Value struct {
	Int   int64   // the value, when IsInt
	Float float64 // the value, when not IsInt
	IsInt bool
	// Never marks a time that did not come: the -1 of an _ns column (a
	// drained worker never removed), asked as _ns (Int -1) or as _ms or _s
	// (no number). It meets no comparison but "== -1" of the _ns name.
	Never bool
}

// Meets reports whether v meets e: an integer exactly when e's value is an
// integer too, anything else compared as float64.
func (v Value) Meets(e scenarios.Expectation) bool {
	switch {
	case v.Never:
		return v.IsInt && e.Op == "==" && e.Value == -1
	case v.IsInt:
		return e.Holds(v.Int)
	}
	return e.HoldsFloat(v.Float)
}

// Float64 is v as a float64; never is +Inf, later than any time.
func (v Value) Float64() float64 {
	switch {
	case v.Never:
		return math.Inf(1)
	case v.IsInt:
		return float64(v.Int)
	}
	return v.Float
}

func (v Value) String() string {
	switch {
	case v.Never:
		return "never"
	case v.IsInt:
		return strconv.FormatInt(v.Int, 10)
	}
	return strconv.FormatFloat(v.Float, 'g', -1, 64)
}

// CheckMetric returns nil if name is a metric of the runs of a scenario
// with events lifecycle events, and otherwise an error that suggests the
// closest name. The metrics are the counters (counters.parquet's names),
// the other numeric columns of sweep.parquet (ttft_p99_ms, hit_ratio_g1,
// ...) and events[i].COLUMN, a numeric column of events.parquet's row i
// for i < events; a name ending _ns may be asked as _ms or _s too
// (removed_after_s is removed_after_ns / 1e9). The check reads no run, so
// validate and replay refuse the same names.
func CheckMetric(name string, events int) error {
	_, err := lookup(name, events)
	return err
}

// CheckMetricOf is CheckMetric for runs of sc, which must also set
// planner.slo for a goodput metric (report.GoodputColumns) to be measured
// against it: an SLO of a search or an expect entry.
func CheckMetricOf(sc *scenarios.Scenario, name string) error {
	if err := CheckMetric(name, len(sc.Events)); err != nil {
		return err
	}
	if (sc.Planner == nil || sc.Planner.SLO == nil) && IsGoodput(name) {
		return fmt.Errorf("%s is measured against planner.slo, which the scenario does not set", name)
	}
	return nil
}

// IsGoodput reports whether the metric name is one measured against
// planner.slo (report.GoodputColumns): NaN in a run without one.
func IsGoodput(name string) bool {
	return slices.ContainsFunc(report.GoodputColumns, func(c report.Column[report.SweepRow]) bool { return c.Name == name })
}

// CheckExpect reports the expect entries of sc naming no metric of its
// runs (CheckMetricOf), each with the key of its entry.
func CheckExpect(sc *scenarios.Scenario) error {
	var errs []error
	for i, e := range sc.Expectations() {
		if err := CheckMetricOf(sc, e.Metric); err != nil {
			errs = append(errs, sc.ErrAt(fmt.Sprintf("expect[%d]", i), "%v", err))
		}
	}
	return errors.Join(errs...)
}

// Column is the sweep.parquet column the metric name reads in runs of
// events lifecycle events: events[i].COLUMN is eventI_COLUMN, a time asked
// in _ms or _s the _ns column it scales, any other metric its own name (a
// counter that is no column of sweep.parquet too).
func Column(name string, events int) (string, error) {
	if _, err := lookup(name, events); err != nil {
		return "", err
	}
	i, col, ok, _ := eventMetric(name)
	if !ok {
		return cmp.Or(runMetrics.ns[name], name), nil
	}
	if ns := eventMetrics(i).ns[eventsName(name)]; ns != "" {
		_, col, _, _ = eventMetric(ns)
	}
	return fmt.Sprintf("event%d_%s", i, col), nil
}

// Metric is the named metric of the run s summarises.
func Metric(s *Summary, name string) (Value, error) {
	m, err := lookup(name, len(s.EventRows))
	if err != nil {
		return Value{}, err
	}
	return m(s), nil
}

// Unmet lists the scenario's expectations that the run s summarises does
// not meet, as "move_lost_blocks is 0, expected move_lost_blocks > 0".
func Unmet(sc *scenarios.Scenario, s *Summary) []string {
	var out []string
	for _, e := range sc.Expectations() {
		v, err := Metric(s, e.Metric)
		if err != nil { // not for sc's run, whose names Prepare checked
			out = append(out, err.Error())
		} else if !v.Meets(e) {
			why := ""
			switch {
			case v.IsInt || !math.IsNaN(v.Float):
			case untwinned(s, e.Metric):
				why = " (no twin: the event never fired, or the run had --twins=false)"
			case s.Requests.Completed == 0:
				why = " (no value: no request completed)"
			default:
				why = " (no value: a statistic of nothing)"
			}
			out = append(out, fmt.Sprintf("%s is %v%s, expected %v", e.Metric, v, why, e))
		}
	}
	return out
}

// untwinned reports whether name is a metric of an event's twin or effect
// (a _twin or _delta column) in the run s summarises whose event has no
// twin.
func untwinned(s *Summary, name string) bool {
	i, col, ok, err := eventMetric(name)
	return ok && err == nil && i < len(s.EventRows) && !s.EventRows[i].Twinned &&
		(strings.Contains(col, "_twin") || strings.Contains(col, "_delta"))
}

// lookup resolves a metric's name for a run of events lifecycle events.
func lookup(name string, events int) (metric, error) {
	i, _, ok, err := eventMetric(name)
	switch {
	case !ok:
		return runMetrics.lookup(name)
	case err != nil:
		return nil, err
	case i >= events:
		return nil, fmt.Errorf("%q: the scenario has %s", eventsName(name), eventCount(events))
	}
	return eventMetrics(i).lookup(eventsName(name))
}

// eventMetric splits the name of an event's metric, events[i].COLUMN (or
// sweep.parquet's eventI_COLUMN), into i and COLUMN; ok is false for a
// run's metric, and err says what is wrong with a malformed events[ name.
func eventMetric(name string) (i int, col string, ok bool, err error) {
	name = eventsName(name)
	rest, ok := strings.CutPrefix(name, "events[")
	if !ok {
		return 0, "", false, nil
	}
	idx, col, cut := strings.Cut(rest, "].")
	i, aerr := strconv.Atoi(idx)
	if !cut || aerr != nil || i < 0 || strconv.Itoa(i) != idx {
		return 0, "", true, fmt.Errorf("%q: want events[i].COLUMN, i an event's index from 0", name)
	}
	return i, col, true, nil
}

// eventsName is name with sweep.parquet's name of an event's column,
// eventK_COLUMN, written events[K].COLUMN; any other name as it is.
func eventsName(name string) string {
	rest, ok := strings.CutPrefix(name, "event")
	k := 0
	for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
		k++
	}
	if !ok || k == 0 || k == len(rest) || rest[k] != '_' {
		return name
	}
	return "events[" + rest[:k] + "]." + rest[k+1:]
}

// eventCount says how many events a scenario has and their indices.
func eventCount(n int) string {
	switch n {
	case 0:
		return "no events"
	case 1:
		return "1 event, events[0]"
	}
	return fmt.Sprintf("%d events, events[0] to events[%d]", n, n-1)
}

// metric reads one metric of a run from its summary.
type metric func(*Summary) Value

// metricTable is a set of named metrics, in the order of their tables.
type metricTable struct {
	names []string
	get   map[string]metric
	ns    map[string]string // a time asked in _ms or _s: the _ns metric it scales
	what  string            // what its metrics are, for an unknown name's error
}

func newTable(what string) *metricTable {
	return &metricTable{get: map[string]metric{}, ns: map[string]string{}, what: what}
}

// add adds the metric name and, for a time in ns, the same time named _ms
// and _s; a time of -1 ns is never. Two metrics of one name are a bug.
func (t *metricTable) add(name string, m metric) {
	if _, ok := t.get[name]; ok {
		panic(fmt.Sprintf("results: two metrics are named %s", name))
	}
	t.names = append(t.names, name)
	base, isNs := strings.CutSuffix(name, "_ns")
	if !isNs {
		t.get[name] = m
		return
	}
	t.ns[base+"_ms"], t.ns[base+"_s"] = name, name
	ns := func(s *Summary) Value {
		v := m(s)
		v.Never = v.IsInt && v.Int == -1
		return v
	}
	t.get[name] = ns
	for _, u := range []struct {
		suffix string
		per    float64 // ns
	}{{"_ms", 1e6}, {"_s", 1e9}} {
		t.add(base+u.suffix, func(s *Summary) Value {
			if v := ns(s); !v.Never {
				return Value{Float: v.Float64() / u.per}
			}
			return Value{Never: true}
		})
	}
}

// lookup returns the named metric, or an error suggesting the closest name.
func (t *metricTable) lookup(name string) (metric, error) {
	if m, ok := t.get[name]; ok {
		return m, nil
	}
	if best := scenarios.Closest(name, t.names); best != "" {
		return nil, fmt.Errorf("no metric is named %q (did you mean %q?)", name, best)
	}
	return nil, fmt.Errorf("no metric is named %q: %s", name, t.what)
}

// addColumns adds the numeric columns of a table as metrics, each named
// prefix + its name and read from the row that row picks.
func addColumns[R any](t *metricTable, prefix string, cols []report.Column[R], row func(*Summary) *R) {
	for _, c := range cols {
		var m metric
		switch {
		case c.Int64 != nil:
			m = func(s *Summary) Value { return Value{Int: c.Int64(row(s)), IsInt: true} }
		case c.Int32 != nil:
			m = func(s *Summary) Value { return Value{Int: int64(c.Int32(row(s))), IsInt: true} }
		case c.Float64 != nil:
			m = func(s *Summary) Value { return Value{Float: c.Float64(row(s))} }
		default:
			continue // text
		}
		t.add(prefix+c.Name, m)
	}
}

// runMetrics are the counters, then sweep.parquet's other numeric columns.
var runMetrics = func() *metricTable {
	t := newTable("a metric is a counter (counters.parquet's names), a numeric column of sweep.parquet " +
		"or events[i].COLUMN, and a name ending _ns may be asked as _ms or _s (docs/scenarios.md, \"Metrics\")")
	for _, name := range CounterNames() {
		t.add(name, func(s *Summary) Value { return Value{Int: s.Counters[name], IsInt: true} })
	}
	cols := report.SweepColumns(nil, 0)[1:] // after run, the grid's index; the events' columns are events[i].COLUMN
	cols = slices.DeleteFunc(cols, func(c report.Column[report.SweepRow]) bool {
		_, counter := t.get[c.Name] // the same value as the counter's
		return counter
	})
	addColumns(t, "", cols, func(s *Summary) *report.SweepRow {
		r := SweepRow(0, nil, s)
		return &r
	})
	return t
}()

// eventMetrics are the metrics of events[i], the numeric columns of row i
// of the run's events.parquet (the summary's EventRows), named
// events[i].COLUMN.
func eventMetrics(i int) *metricTable {
	var names []string
	for _, c := range EventColumns {
		if c.Int64 != nil || c.Int32 != nil || c.Float64 != nil {
			names = append(names, c.Name)
		}
	}
	t := newTable(fmt.Sprintf("an event's metrics are the numeric columns of events.parquet (%s)", strings.Join(names, ", ")))
	addColumns(t, fmt.Sprintf("events[%d].", i), EventColumns, func(s *Summary) *report.EventRow { return &s.EventRows[i] })
	return t
}
