package results

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// TestUnfiredEventRow: before the run no event has fired: each row holds
// its index, kind and time, fired false, no workers, -1 and NaN at the
// event, nothing after it, and windows of the run so far (the last
// arrival at 0: nothing after an event at 1 s).
func TestUnfiredEventRow(t *testing.T) {
	y := "name: u\nworkload: {synthetic: {requests: 5, rate: 10}}\ncluster: {workers: 3}\n" +
		"events:\n  - {at: 1s, drain: [1]}\n  - {at: 2s, add: 1}\n"
	sc, err := scenarios.Parse("u.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := NewEventLog(sc).rows([]des.Time{-1, -1, -1}, 0)
	if len(rows) != 2 || rows[1].Event != 1 || rows[1].Kind != "add" || rows[1].AtNs != 2e9 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.Fired || r.Kind != "drain" || r.AtNs != 1e9 || r.Workers != "" || r.RequestsAtEvent != -1 || r.SchedulableAtEvent != -1 ||
		!math.IsNaN(r.LoadShare) || r.RemovedAfterNs != -1 || r.PullsRejectedDraining != 0 || r.RequestsRerouted != 0 ||
		r.WindowBeforeNs != 1e9 || r.WindowAfterNs != 0 || !math.IsNaN(r.After.TTFTP50Ms) || !math.IsNaN(r.After.RequestsPerS) {
		t.Errorf("row %+v", r)
	}
}

// TestRejectionColumns: events.parquet has a pulls_rejected_<reason>
// column for every reason KVCR refuses a staging, in KVCR's order, each
// also a counter; and a refused pull from a named source after the event
// counts in its reason's column alone (before the event fired, or from
// another source, in none).
func TestRejectionColumns(t *testing.T) {
	var got []string
	for _, c := range EventColumns {
		if strings.HasPrefix(c.Name, "pulls_rejected_") {
			got = append(got, c.Name)
		}
	}
	var none Counters
	counters := none.Rows()
	var want []string
	for _, r := range kvcr.Rejections {
		name := "pulls_rejected_" + r.String()
		want = append(want, name)
		if !slices.ContainsFunc(counters, func(c report.CounterRow) bool { return c.Name == name }) {
			t.Errorf("no counter %s", name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("columns %q, want %q", got, want)
	}
	for _, why := range kvcr.Rejections {
		l := &EventLog{evs: []eventRec{{at: 10}}}
		l.PullDone(&kvcr.Pull{Outcome: kvcr.Rejected, Rejection: why, Source: 2, EndNs: 9})
		l.evs[0].named, l.evs[0].row.Fired = []int32{2}, true // fired at 10
		l.PullDone(&kvcr.Pull{Outcome: kvcr.Rejected, Rejection: why, Source: 2, EndNs: 10})
		l.PullDone(&kvcr.Pull{Outcome: kvcr.Rejected, Rejection: why, Source: 1, EndNs: 11})
		l.PullDone(&kvcr.Pull{Outcome: kvcr.Partial, Source: 2, EndNs: 11})
		for _, c := range EventColumns {
			if strings.HasPrefix(c.Name, "pulls_rejected_") {
				if n, one := c.Int64(&l.evs[0].row), c.Name == "pulls_rejected_"+why.String(); n != map[bool]int64{true: 1}[one] {
					t.Errorf("a pull refused (%s): %s = %d", why, c.Name, n)
				}
			}
		}
	}
}

// TestAppendKeepsLeftOutLast: a twin's log holds its scenario's records,
// then those of the events left out; a planner's record appended during
// the twin's run goes before them, at the index its event has in the
// twin's run, and Pair still finds the left-out record.
func TestAppendKeepsLeftOutLast(t *testing.T) {
	sc := &scenarios.Scenario{Events: []scenarios.Event{{At: scenarios.Duration(des.Second), Add: 1}},
		Report: scenarios.Report{EventWindow: scenarios.Duration(des.Minute)}}
	twin := NewTwinLog(sc, []des.Time{5 * des.Second})
	twin.Append(scenarios.Event{At: scenarios.Duration(7 * des.Second), Add: 2, Origin: scenarios.OriginPlanner})
	twin.Append(scenarios.Event{At: scenarios.Duration(9 * des.Second), Drain: &scenarios.Selection{Count: 1}, Origin: scenarios.OriginPlanner})
	var ats []des.Time
	for _, e := range twin.evs {
		ats = append(ats, e.at)
	}
	if !slices.Equal(ats, []des.Time{des.Second, 7 * des.Second, 9 * des.Second, 5 * des.Second}) || !twin.evs[1].late || twin.evs[3].late {
		t.Fatalf("records at %v", ats)
	}
	run := NewEventLog(&scenarios.Scenario{Events: []scenarios.Event{sc.Events[0], {At: scenarios.Duration(5 * des.Second), Add: 1}},
		Report: sc.Report})
	run.Pair(1, twin, 0, "d", false)
	if run.evs[1].twin == nil || run.evs[1].twin.at != 5*des.Second {
		t.Errorf("paired with %+v", run.evs[1].twin)
	}
}

// TestIdleFaultWarning: a fault that fired and acted on nothing in its
// window is warned of, in its kind's words; one that did something, one
// that never fired and a down (which acts by taking its engines down) are
// not.
func TestIdleFaultWarning(t *testing.T) {
	y := "name: f\nworkload: {synthetic: {requests: 5, rate: 10}}\ncluster: {workers: 2}\nevents:\n" +
		"  - {at: 1s, for: 1s, link: {workers: [0], factor: 0}}\n" + // fired, idle: warned
		"  - {at: 1s, for: 1s, slow: {workers: [1], factor: 2}}\n" + // fired, slowed 3 passes
		"  - {at: 2s, for: 1s, pull_errors: {rate: 0.5}}\n" + // never fired
		"  - {at: 2s, for: 1s, notices: {lost: true}}\n" + // fired, idle: warned
		"  - {at: 3s, for: 1s, down: {workers: [1]}}\n" // fired, idle, a down: not warned
	sc, err := scenarios.Parse("f.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := NewEventLog(sc)
	l.Faulted(1, report.EventFault{Passes: 3})
	rows := []report.EventRow{{Fired: true}, {Fired: true}, {}, {Fired: true}, {Fired: true}}
	want := []string{
		"event 0 (link at 1s) acted on nothing in its window (no transfer ran on its links): the fault tests nothing",
		"event 3 (notices at 2s) acted on nothing in its window (no notice it delayed or lost): the fault tests nothing",
	}
	if got := l.warnings(rows, false, true); !slices.Equal(got, want) {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
}
