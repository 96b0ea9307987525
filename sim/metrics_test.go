package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
)

// TestMetricsOfARun: one worker taking one request at a time (fixed
// timing, 10 ms a prefill), two 16-token prompts of one output token at
// 0 ms: the first ends at 10 ms, the second waits for it and ends at
// 20 ms. So ttft_p99_ms is 20 (the nearest rank of 2 is 2), makespan_ns
// 20,000,000 (20 ms, 0.02 s) and requests_per_s 2 / 0.02 s = 100. Every
// counter reads its counters.parquet value and every other name its
// sweep.parquet column, and the names both have read the same value.
func TestMetricsOfARun(t *testing.T) {
	_, s := runTrace(t, fixed10x5, []traceLine{{0, 16, 1, []int{1}}, {0, 16, 1, []int{2}}}, "cluster.engine.max_num_seqs=1")
	for _, c := range []struct {
		name string
		want results.Value
	}{
		{"ttft_p99_ms", results.Value{Float: 20}},
		{"requests_completed", results.Value{Int: 2, IsInt: true}},
		{"makespan_ns", results.Value{Int: 20_000_000, IsInt: true}},
		{"makespan_ms", results.Value{Float: 20}},
		{"makespan_s", results.Value{Float: 0.02}},
		{"requests_per_s", results.Value{Float: 100}},
	} {
		if got, err := results.Metric(s, c.name); err != nil || got != c.want {
			t.Errorf("%s = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	counters := results.CounterNames()
	for _, name := range counters {
		if got, _ := results.Metric(s, name); got != (results.Value{Int: s.Counters[name], IsInt: true}) {
			t.Errorf("counter %s = %v, want %d", name, got, s.Counters[name])
		}
	}
	row := results.SweepRow(0, nil, s)
	for _, c := range report.SweepColumns(nil, 0)[1:] {
		var want results.Value
		switch {
		case c.Int64 != nil:
			want = results.Value{Int: c.Int64(&row), IsInt: true}
		case c.Float64 != nil:
			want = results.Value{Float: c.Float64(&row)}
		default:
			if err := results.CheckMetric(c.Name, 0); err == nil {
				t.Errorf("the text column %s is a metric", c.Name)
			}
			continue
		}
		if got, err := results.Metric(s, c.Name); err != nil || got != want && !(math.IsNaN(got.Float) && math.IsNaN(want.Float)) {
			t.Errorf("sweep column %s = %v, %v; want %v", c.Name, got, err, want)
		}
	}
}

// TestEventMetricsOfARun: worker 0 of lifeBody drains at 20 ms and goes
// when R0 ends at 55 ms (TestDrainTimeout): events[0].removed_after_ns is
// 35 ms, asked in s as 0.035, and as sweep.parquet names the column,
// event0_removed_after_ns; a name past the scenario's events is refused.
func TestEventMetricsOfARun(t *testing.T) {
	_, sum := runTrace(t, lifeBody, lifeLines, "events=[{at: 20ms, drain: [0]}]")
	for name, want := range map[string]results.Value{
		"events[0].removed_after_ns":  {Int: 35 * ms, IsInt: true},
		"events[0].removed_after_s":   {Float: 0.035},
		"event0_removed_after_ns":     {Int: 35 * ms, IsInt: true},
		"events[0].requests_at_event": {Int: 1, IsInt: true},
	} {
		v, err := results.Metric(sum, name)
		if err != nil || v != want {
			t.Errorf("%s = %+v, %v; want %+v", name, v, err, want)
		}
	}
	if _, err := results.Metric(sum, "events[1].removed_after_ns"); err == nil || !strings.Contains(err.Error(), "the scenario has 1 event, events[0]") {
		t.Errorf("events[1]: %v", err)
	}
}
