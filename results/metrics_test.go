package results

import (
	"github.com/kvsim/kvsim/des"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// TestMetricNames: every metric of a run is a counter or a numeric column
// of sweep.parquet, or one of those ending _ns asked as _ms or _s.
func TestMetricNames(t *testing.T) {
	counters := CounterNames()
	for _, name := range runMetrics.names {
		if base, ok := strings.CutSuffix(name, "_s"); ok && slices.Contains(runMetrics.names, base+"_ns") {
			continue // an alias
		}
		if base, ok := strings.CutSuffix(name, "_ms"); ok && slices.Contains(runMetrics.names, base+"_ns") {
			continue
		}
		if !slices.Contains(counters, name) && !slices.ContainsFunc(report.SweepColumns(nil, 0), func(c report.Column[report.SweepRow]) bool { return c.Name == name }) {
			t.Errorf("metric %s is neither a counter nor a sweep.parquet column", name)
		}
	}
}

// TestEventMetrics: events[i].COLUMN reads column COLUMN of row i; a time
// in ns is asked in ms or s too (9.5e9 ns is 9,500 ms, 9.5 s), and -1 ns
// is never, which meets only "== -1" of the _ns name.
func TestEventMetrics(t *testing.T) {
	sum := &Summary{EventRows: []report.EventRow{
		{Kind: "drain", RemovedAfterNs: -1, After: report.EventWindow{TTFTP99Ms: 12.5}},
		{Kind: "drain", RemovedAfterNs: 9_500_000_000, After: report.EventWindow{TTFTP99Ms: 30}},
	}}
	get := func(i int, name string) Value {
		t.Helper()
		m, err := eventMetrics(i).lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return m(sum)
	}
	for _, c := range []struct {
		i      int
		name   string
		want   Value
		meets  []string
		misses []string
	}{
		{1, "events[1].removed_after_ns", Value{Int: 9_500_000_000, IsInt: true}, []string{"events[1].removed_after_ns == 9500000000"}, []string{"events[1].removed_after_ns == -1"}},
		{1, "events[1].removed_after_ms", Value{Float: 9500}, []string{"x == 9500", "x < 9500.5"}, nil},
		{1, "events[1].removed_after_s", Value{Float: 9.5}, []string{"x < 30", "x == 9.5"}, []string{"x < 9"}},
		{1, "events[1].ttft_p99_after_ms", Value{Float: 30}, []string{"x <= 30"}, []string{"x < 30"}},
		{0, "events[0].ttft_p99_after_ms", Value{Float: 12.5}, []string{"x < 13"}, nil},
		{0, "events[0].removed_after_ns", Value{Int: -1, IsInt: true, Never: true}, []string{"x == -1", "x == -1.0"},
			[]string{"x != -1", "x < 30000000000", "x >= -1", "x != 5"}},
		{0, "events[0].removed_after_s", Value{Never: true}, nil, []string{"x == -1", "x < 30", "x > 30", "x != -1"}},
	} {
		v := get(c.i, c.name)
		if v != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, v, c.want)
		}
		for _, list := range []struct {
			exprs []string
			want  bool
		}{{c.meets, true}, {c.misses, false}} {
			for _, s := range list.exprs {
				e, err := scenarios.ParseExpectation(s)
				if err != nil {
					t.Fatal(err)
				}
				if v.Meets(e) != list.want {
					t.Errorf("%s = %v: meets %q is %v", c.name, v, s, !list.want)
				}
			}
		}
	}
	table := eventMetrics(0)
	for name, want := range map[string]string{
		"events[0].kind":               `no metric is named "events[0].kind": an event's metrics are the numeric columns of events.parquet (event, at_ns, requests_at_event, `,
		"events[0].removed_after_sec":  `no metric is named "events[0].removed_after_sec" (did you mean "events[0].removed_after_s"?)`,
		"events[0].ttft_p99_after_ms ": `no metric is named "events[0].ttft_p99_after_ms " (did you mean "events[0].ttft_p99_after_ms"?)`,
	} {
		if _, err := table.lookup(name); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}

// TestCheckMetric: the names a scenario's expect entries and search's SLOs
// may use, and the errors of the others, with the closest name.
func TestCheckMetric(t *testing.T) {
	for _, c := range []struct {
		name   string
		events int
		err    string // "" for none
	}{
		{"pulls_rejected_draining", 0, ""},
		{"ttft_p99_ms", 0, ""},
		{"makespan_s", 0, ""},
		{"hit_ratio_g1", 0, ""},
		{"ttft_p99_m", 0, `no metric is named "ttft_p99_m" (did you mean "ttft_p99_ms"?)`},
		{"TTFT_P99_MS", 0, `no metric is named "TTFT_P99_MS" (did you mean "ttft_p99_ms"?)`},
		{"run", 0, `no metric is named "run": a metric is a counter`},
		{"digest", 0, `no metric is named "digest": a metric is a counter`},
		{"events[2].removed_after_s", 2, `"events[2].removed_after_s": the scenario has 2 events, events[0] to events[1]`},
		{"events[0].removed_after_s", 0, `"events[0].removed_after_s": the scenario has no events`},
		{"events[1].x", 1, `"events[1].x": the scenario has 1 event, events[0]`},
		{"events[01].x", 2, `"events[01].x": want events[i].COLUMN, i an event's index from 0`},
		{"events[-1].x", 2, `"events[-1].x": want events[i].COLUMN`},
		{"events[0]", 2, `"events[0]": want events[i].COLUMN`},
	} {
		err := CheckMetric(c.name, c.events)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}

// TestMeets: an integer metric compares exactly with an integer value
// (2^53 + 1 is not 2^53, which it is as a float64), and as a float64 with
// a decimal one.
func TestMeets(t *testing.T) {
	big := Value{Int: 1<<53 + 1, IsInt: true}
	for _, c := range []struct {
		v    Value
		expr string
		want bool
	}{
		{big, "x == 9007199254740992", false},
		{big, "x > 9007199254740992", true},
		{big, "x == 9007199254740993", true},
		{Value{Int: 3, IsInt: true}, "x < 3.5", true},
		{Value{Int: 3, IsInt: true}, "x >= 3.5", false},
		{Value{Float: 2000}, "x < 2000", false},
		{Value{Float: 2000}, "x <= 2000", true},
		{Value{Float: math.NaN()}, "x < 1", false},
		{Value{Float: math.NaN()}, "x != 1", false}, // no value meets nothing: an effect asked of a run without one is not there
	} {
		e, err := scenarios.ParseExpectation(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.v.Meets(e); got != c.want {
			t.Errorf("%v %s: %v, want %v", c.v, c.expr, got, c.want)
		}
	}
}

// TestUnmet names each unmet entry and the value the run had: the
// summary's TTFT p99 is 20 ms and it completed 2 requests. A run that
// completed none has no TTFT: not 0 ms, which "ttft_p99_ms < 15" would
// pass, but no value, which meets nothing, and the entry says why.
func TestUnmet(t *testing.T) {
	sc, err := scenarios.LoadDefault([]string{`expect=["ttft_p99_ms < 15", "requests_completed == 2", "requests_completed > 2.5"]`})
	if err != nil {
		t.Fatal(err)
	}
	s := &Summary{Counters: map[string]int64{"requests_completed": 2}}
	s.Requests.Completed = 2
	s.TTFT.P99 = 20
	want := []string{"ttft_p99_ms is 20, expected ttft_p99_ms < 15", "requests_completed is 2, expected requests_completed > 2.5"}
	if got := Unmet(sc, s); !slices.Equal(got, want) {
		t.Errorf("Unmet = %q, want %q", got, want)
	}
	none := &Summary{Counters: map[string]int64{"requests_completed": 0, "requests_rejected": 2}, TTFT: report.NoPercentiles()} // as Summarize makes it
	want = []string{"ttft_p99_ms is NaN (no value: no request completed), expected ttft_p99_ms < 15",
		"requests_completed is 0, expected requests_completed == 2", "requests_completed is 0, expected requests_completed > 2.5"}
	if got := Unmet(sc, none); !slices.Equal(got, want) {
		t.Errorf("nothing completed: Unmet = %q, want %q", got, want)
	}
}

// FuzzCheckMetric: a name CheckMetric accepts for a run of 2 events is one
// Metric reads from such a run, without error or panic; any other name is
// refused, with no panic either.
func FuzzCheckMetric(f *testing.F) {
	for _, s := range []string{"ttft_p99_ms", "pulls_failed", "makespan_s", "events[1].removed_after_s",
		"event0_ttft_p50_after_ms", "events[2].at_ns", "events[-1].at_ns", "events[01].at_ns", "events[0]", "event_x", ""} {
		f.Add(s)
	}
	run := &Summary{Counters: map[string]int64{}, EventRows: []report.EventRow{report.NoEvent(), report.NoEvent()}}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckMetric(name, 2) != nil {
			return
		}
		if _, err := Metric(run, name); err != nil {
			t.Fatalf("%q: accepted, then %v", name, err)
		}
	})
}

// TestColumn: a metric reads the sweep.parquet column of its name; an
// event's is eventI_COLUMN, a time in _ms or _s the _ns column it scales.
func TestColumn(t *testing.T) {
	for name, want := range map[string]string{
		"ttft_p99_ms":                     "ttft_p99_ms",
		"pulls_failed":                    "pulls_failed",
		"makespan_s":                      "makespan_ns",
		"events[0].ttft_p99_after_ms":     "event0_ttft_p99_after_ms",
		"events[2].removed_after_s":       "event2_removed_after_ns",
		"events[1].removed_after_ms":      "event1_removed_after_ns",
		"event1_removed_after_ms":         "event1_removed_after_ns",
		"events[0].ttft_p99_delta_ms":     "event0_ttft_p99_delta_ms",
		"events[0].cohort_requests_after": "event0_cohort_requests_after",
	} {
		if got, err := Column(name, 3); got != want || err != nil {
			t.Errorf("Column(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := Column("events[3].ttft_p99_after_ms", 3); err == nil {
		t.Error("Column of a fourth event of three: no error")
	}
}

// TestNothingCompleted: statistics of no sample are no value. A run whose
// 2 requests were rejected has no latency and no hit ratio: Summarize
// gives NaN percentiles (null in summary.json), its sweep row NaN (null
// in the file) where a hit ratio of 0 would be, replay's table n/a, and
// a warning. A run whose one completed request had one output token (TTFT
// 12 ms, E2E 12 ms) has a TTFT and an E2E but no TPOT and no ITL (no
// second token): those are NaN, not the 0 ms an SLO would pass.
func TestNothingCompleted(t *testing.T) {
	sc, err := scenarios.LoadDefault(nil)
	if err != nil {
		t.Fatal(err)
	}
	summarize := func(rows ...report.RequestRow) *Summary {
		st := NewStats(sc)
		for i := range rows {
			st.Arrived(des.Time(rows[i].ArrivalNs))
			st.RequestEnded(&rows[i])
		}
		s, _ := Summarize(&st, nil, RunEnd{Scenario: sc})
		return s
	}
	s := summarize(report.RequestRow{FirstTokenNs: -1, OutputTokens: 5, Outcome: report.OutcomeRejected, Worker: -1},
		report.RequestRow{ArrivalNs: 1, FinishNs: 1, FirstTokenNs: -1, OutputTokens: 5, Outcome: report.OutcomeRejected, Worker: -1})
	r := SweepRow(0, nil, s)
	for name, v := range map[string]float64{"ttft_p50_ms": r.TTFTP50, "ttft_p99_ms": r.TTFTP99, "tpot_p99_ms": r.TPOTP99,
		"itl_p99_ms": r.ITLP99, "e2e_p99_ms": r.E2EP99, "hit_ratio_g1": r.HitG1, "hit_ratio_pulled": r.HitPulled, "summary TTFT max": s.TTFT.Max} {
		if !math.IsNaN(v) {
			t.Errorf("nothing completed: %s = %v, want NaN", name, v)
		}
	}
	if got := LatencyTable(s).Rows[0]; !slices.Equal(got, []string{"TTFT", "n/a", "n/a", "n/a", "n/a", "n/a"}) {
		t.Errorf("TTFT row %q", got)
	}
	if want := "no request completed (2 rejected, 0 failed, 0 unfinished): the run's latencies have no value (null in summary.json), and an SLO on them does not hold"; !slices.Contains(s.Warnings, want) {
		t.Errorf("warnings %q, want %q", s.Warnings, want)
	}
	s = summarize(report.RequestRow{FirstTokenNs: 12e6, FinishNs: 12e6, InputTokens: 16, ComputedPromptTokens: 16, OutputTokens: 1, Outcome: report.OutcomeCompleted})
	if r := SweepRow(0, nil, s); r.TTFTP99 != 12 || r.E2EP99 != 12 || r.HitG1 != 0 || !math.IsNaN(r.TPOTP99) || !math.IsNaN(r.ITLP99) {
		t.Errorf("one one-token request: TTFT p99 %v, E2E p99 %v, hit G1 %v, TPOT p99 %v, ITL p99 %v; want 12, 12, 0, NaN, NaN",
			r.TTFTP99, r.E2EP99, r.HitG1, r.TPOTP99, r.ITLP99)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("one completed: warnings %q", s.Warnings)
	}
}
