package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/scenarios"
)

// plan prepares the scenario y, its file in dir.
func plan(t *testing.T, dir, y string) *Plan {
	t.Helper()
	sc, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), []byte(y), nil)
	return prepared(t, sc, err)
}

// prepared is the plan of sc, loaded with err: the test fails on either
// error.
func prepared(tb testing.TB, sc *scenarios.Scenario, err error) *Plan {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := Prepare(sc)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestSampleRows: the time series' estimate, by hand.
//   - The default scenario (3,000 requests at 40 a second in sessions of 3
//     turns, 10 s think time, 8 workers): sessions start over 3,000 / 40 =
//     75 s, and the last of 1,000 sessions' trails, two exponential think
//     times, is about Gamma(2, 10 s)'s 0.999 quantile: 10 s x y with
//     e^-y (1 + y) = 1/1000, y = 9.2334, 92.334 s. 167.334 s: samples at
//     0, 1, ..., 167 s, 168 a worker, 1,344 rows (the run writes 169 a
//     worker: its last requests end past 168 s).
//   - One turn a session: 1,000 requests at 10 a second span 100 s, 101
//     samples; 4 workers, 404 rows. At a 30 s interval, samples at 0, 30,
//     60 and 90 s: 16 rows.
//   - An event at 1 h on that workload: the run samples until it, 3,601
//     samples a worker.
//   - That workload under the envelope [{for: 50s, rate: 0.5}]: its 100 s
//     of the generator's time play at half its pace, over 200 s (the last
//     rate holds past 50 s): 201 samples, 804 rows. Under [{for: 1s,
//     rate: 1e-12}] they would play past virtual time: refused, naming
//     workload.envelope.
//   - Just at the bound: 495,049 workers x 101 samples = 49,999,949 rows
//     pass; 495,050 (495,000 and an event adding 50) x 101 = 50,000,050
//     are refused, naming cluster.workers (which adds the most), with the
//     interval that fits: at most 100 samples a worker (50,000,000 /
//     495,050 = 100.99), so 100 s / 99 = 1.0101 s or more, 2 s rounded up
//     to a whole second.
func TestSampleRows(t *testing.T) {
	dir := t.TempDir()
	p := defaultPlan(t)
	if span, _ := p.syntheticSpan(); span/des.Millisecond != 167_334 || p.SampleRows(span) != 1344 {
		t.Errorf("default: span %v, %d rows; want 167.334s, 1344", span, p.SampleRows(span))
	}
	one := "workload: {synthetic: {requests: 1000, rate: 10, turns: 1}}\n"
	for _, c := range []struct {
		yaml string
		rows int64
	}{
		{one + "cluster: {workers: 4}\n", 404},
		{one + "cluster: {workers: 4}\nreport: {sample_interval: 30s}\n", 16},
		{one + "cluster: {workers: 4}\nevents: [{at: 1h, drain: [0]}]\n", 4 * 3601},
		{"workload: {synthetic: {requests: 1000, rate: 10, turns: 1}, envelope: [{for: 50s, rate: 0.5}]}\ncluster: {workers: 4}\n", 804},
		{one + "cluster: {workers: 495049}\n", 49_999_949},
	} {
		p := plan(t, dir, c.yaml)
		s, _ := p.syntheticSpan()
		span := max(s, p.eventSpan())
		if rows := p.SampleRows(span); rows != c.rows || p.CheckOutput() != nil {
			t.Errorf("%s: %d rows, %v; want %d, no error", c.yaml, rows, p.CheckOutput(), c.rows)
		}
	}
	p = plan(t, dir, "workload: {synthetic: {requests: 1000, rate: 10, turns: 1}, envelope: [{for: 1s, rate: 1e-12}]}\n")
	if err := p.CheckOutput(); err == nil || !strings.HasSuffix(err.Error(), "s.yaml:1: workload.envelope: the workload's last arrival, as estimated, would arrive past the end of virtual time (about 292 years)") {
		t.Errorf("an envelope past virtual time: CheckOutput() = %v", err)
	}
	p = plan(t, dir, one+"cluster: {workers: 495000}\nevents: [{at: 1s, add: 50}]\n")
	want := dir + "/s.yaml:2: cluster.workers: the run would write about 50.0 million time-series rows (495050 workers, a row each every 1s up to 1m40s, " +
		"the workload's last arrival, as estimated), more than the 50.0 million a run may write; set report.sample_interval to 2s or more, or run fewer workers"
	if err := p.CheckOutput(); err == nil || err.Error() != want {
		t.Errorf("CheckOutput() = %v\nwant %s", err, want)
	}
	// 50,000 workers at 10 ms: 50,000 x 10,001 rows. At most 1,000
	// samples a worker fit, so 100 s / 999 = 100.1 ms or more: 101 ms (100
	// ms would take 1,001). 50,000,001 workers fit at no interval.
	for _, c := range []struct{ yaml, way string }{
		{one + "cluster: {workers: 50000}\nreport: {sample_interval: 10ms}\n", "500.1 million time-series rows (50000 workers, a row each every 10ms up to 1m40s, " +
			"the workload's last arrival, as estimated), more than the 50.0 million a run may write; set report.sample_interval to 101ms or more, or run fewer workers"},
		{one + "cluster: {workers: 50000001}\n", "more than the 50.0 million a run may write; run fewer workers"},
	} {
		if err := plan(t, dir, c.yaml).CheckOutput(); err == nil || !strings.HasSuffix(err.Error(), c.way) {
			t.Errorf("%s: CheckOutput() = %v\nwant one ending %s", c.yaml, err, c.way)
		}
	}
}

// TestCheckOutputReadsTrace: a trace is read for its last arrival only
// when a week of it at the sample interval would pass the bound: 82
// workers at 1 s write 82 x 604,801 = 49.6 million rows in a week, 83
// write 50.2 million. The trace's requests arrive until 10 s: 83 x 11
// rows pass. A trace that cannot be read is its error once read, and no
// error unread (the run meets it).
func TestCheckOutputReadsTrace(t *testing.T) {
	dir := t.TempDir()
	trace := `{"timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [1]}` + "\n" +
		`{"timestamp": 10000, "input_length": 16, "output_length": 1, "hash_ids": [2]}` + "\n"
	os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(trace), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{\n"), 0o644)
	for _, c := range []struct {
		trace   string
		workers int
		read    bool
		err     string
	}{
		{"t.jsonl", 82, false, ""},
		{"t.jsonl", 83, true, ""},
		{"bad.jsonl", 82, false, ""},
		{"bad.jsonl", 83, false, "bad.jsonl:1"},
	} {
		p := plan(t, dir, "workload: {trace: {path: "+c.trace+", block_size: 16}}\ncluster: {workers: "+strconv.Itoa(c.workers)+"}\n")
		err := p.CheckOutput()
		var ie *scenarios.InputError
		if c.err == "" && err != nil || c.err != "" && (!errors.As(err, &ie) || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s on %d workers: %v, want %q", c.trace, c.workers, err, c.err)
		}
		if read := p.trace != nil; read != c.read {
			t.Errorf("%s on %d workers: read %v, want %v", c.trace, c.workers, read, c.read)
		}
		if c.read && (p.trace.last != 10*des.Second || p.SampleRows(p.trace.last) != 83*11) {
			t.Errorf("%s: last arrival %v, %d rows; want 10s, 913", c.trace, p.trace.last, p.SampleRows(p.trace.last))
		}
	}
}

// TestRunawayIsStopped: linkLines (kvBody: 3 workers, 1 s samples, pulls
// staged at 20 ms, the targets' deadline 100 ms later) with a transfer
// latency of an hour or of 2,562,047 hours (292 years). The targets give
// up at 120 ms and compute their prompts; every request has ended by
// 150 ms. The sources hear of their pulls one latency after staging:
//   - an hour: at 1 h 20 ms, their last events, so the run samples to
//     3,601 s (that sample, scheduled while they were pending, is the
//     run's last event and its end): 3,602 samples of 3 workers, 10,806
//     rows, far below the bound;
//   - 292 years: the sample at 1 s has sampled 3 rows (those at 0), adds 3
//     and sees its next event at 2562047h0m0.02s, before which the samples
//     at 2 s to 9,223,369,200 s are certain, 3 x 9,223,369,199 rows: past
//     MaxRunSampleRows, so the run stops there, an input error at
//     report.sample_interval. The interval that fits its rows up to then
//     in MaxSampleRows: 50,000,000 / 3 = 16,666,666 samples a worker,
//     9,223,369,200.02 s / 16,666,665 = 553.40 s, 554 s rounded up to a
//     whole second: 9m14s;
//   - 292 years with every worker removed at 500 ms: the sample at 1 s has
//     no worker present, and counts one row a sample, so it stops as
//     before (3 rows sampled, 1 + 9,223,369,199 ahead), saying it would
//     sample no worker; the interval that fits 50,000,000 samples of one
//     row: 9,223,369,200.02 s / 49,999,999 = 184.47 s, 185 s: 3m5s.
//
// And fixed10x5 (1 worker, one pass of 10 ms) on a trace of two requests
// 1,200 days apart (103,680,000 s): the estimate before the run reads no
// trace (a week of 1 s samples of 1 worker is far below the bound), and
// the sample at 1 s, the first request done, sees the second's arrival
// ahead: 1 + 1 + 103,679,999 rows pass the bound, and the run stops,
// naming the arrivals: 103,680,000 s / 49,999,999 = 2.07 s, 3 s.
func TestRunawayIsStopped(t *testing.T) {
	sink, res := runTraceSink(t, kvBody, linkLines, "kvcr.latency=1h")
	if n := len(sink.samples); n != 10806 || res.Summary.EndNs != int64(3601*des.Second) {
		t.Errorf("%d sample rows, end %v; want 10,806 and 1h0m1s", n, des.Time(res.Summary.EndNs))
	}
	late := "a duration of the scenario keeps it going long after its last arrival (a long kvcr.latency, timeout or drain_timeout, a worker's startup (an add's or planner.startup), a fault's for or notices.delay, chaos.settle, a slow model)"
	for _, c := range []struct {
		body  string
		lines []traceLine
		sets  []string
		want  string
	}{
		{kvBody, linkLines, []string{"kvcr.latency=2562047h"}, "the run would write more than 100.0 million time-series rows, twice what a run may be estimated at before it starts: " +
			"at 1s (requests in flight 0, workers present 3, rows sampled 3) its next event is at 2562047h0m0.02s; " + late +
			"; to fit its rows up to then in 50.0 million, set report.sample_interval to 9m14s or more, or run fewer workers"},
		{kvBody, linkLines, []string{"kvcr.latency=2562047h", "events=[{at: 500ms, remove: [0, 1, 2], on_remove: fail}]"},
			"the run would sample no worker for more than 100.0 million intervals, twice what a run may be estimated at before it starts: " +
				"at 1s (requests in flight 0, workers present 0, rows sampled 3) its next event is at 2562047h0m0.02s; " + late +
				"; to fit its rows up to then in 50.0 million, set report.sample_interval to 3m5s or more, or run fewer workers"},
		{fixed10x5, []traceLine{{0, 32, 1, ids(1, 2)}, {103_680_000_000, 32, 1, ids(1, 2)}}, nil,
			"the run would write more than 100.0 million time-series rows, twice what a run may be estimated at before it starts: " +
				"at 1s (requests in flight 0, workers present 1, rows sampled 1) its next event is at 28800h0m0s; " +
				"its requests go on arriving past what the check before the run estimated (it reads a trace ahead only when a week of it would pass the bound)" +
				"; to fit its rows up to then in 50.0 million, set report.sample_interval to 3s or more, or run fewer workers"},
	} {
		sc := traceScenario(t, c.body, c.lines, c.sets...)
		_, err := Run(context.Background(), sc, Options{Sink: &rowSink{}, Check: true})
		var ie *scenarios.InputError
		var re *RunawayError
		if !errors.As(err, &re) || !errors.As(err, &ie) || ie.Key != "report.sample_interval" || !strings.HasSuffix(err.Error(), "report.sample_interval: "+c.want) {
			t.Errorf("%v: got %v\nwant a runaway, an input error at report.sample_interval: %q", c.sets, err, c.want)
		}
	}
}

// TestPlannerRows: a planner deciding every 1 ms over a workload of 2
// requests at 0.0002 a second (sessions start over 2 / 0.0002 = 10,000 s,
// the estimate's span) would decide 10,000,000 times, a planner.parquet
// row each held in memory: refused at planner.interval, with the interval
// that fits, 10,000 s / 1,000,000 = 10 ms, which passes (1,000,000
// decisions, not more than the bound).
func TestPlannerRows(t *testing.T) {
	y := "workload: {synthetic: {requests: 2, rate: 0.0002}}\ncluster: {workers: 1}\nplanner: {policy: load, interval: 1ms}\n"
	sc, err := scenarios.Parse(filepath.Join(t.TempDir(), "s.yaml"), []byte(y), nil)
	p := prepared(t, sc, err)
	want := "s.yaml:3: planner.interval: the planner would decide about 10.0 million times (every 1ms up to 2h46m40s, the workload's last arrival, as estimated), " +
		"more than the 1.0 million decisions a run may keep (planner.parquet, a row each, held in memory until the run ends); set planner.interval to 10ms or more"
	var ie *scenarios.InputError
	if err := p.CheckOutput(); !errors.As(err, &ie) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v\nwant ...%s", err, want)
	}
	sc, err = scenarios.Parse(filepath.Join(t.TempDir(), "s.yaml"), []byte(y), []string{"planner.interval=10ms"})
	if err := prepared(t, sc, err).CheckOutput(); err != nil {
		t.Errorf("10 ms: %v", err)
	}
	// A trace's last arrival, 1 h, is read for the estimate (a week of
	// decisions every 1 ms would pass the bound): 3,600,000 decisions,
	// refused; 1 h / 1,000,000 = 3.6 ms, 4 ms rounded up to a millisecond.
	sc = traceScenario(t, fixed10x5, []traceLine{{0, 32, 1, ids(1, 2)}, {3_600_000, 32, 1, ids(3, 4)}}, "planner={policy: load, interval: 1ms}")
	want = "planner.interval: the planner would decide about 3.6 million times (every 1ms up to 1h0m0s, the trace's last arrival), " +
		"more than the 1.0 million decisions a run may keep (planner.parquet, a row each, held in memory until the run ends); set planner.interval to 4ms or more"
	if err := prepared(t, sc, nil).CheckOutput(); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("a trace: got %v\nwant ...%s", err, want)
	}
}

// TestNoRequestsPastSkip: a trace of 2 requests with skip 5 has none left:
// the error names skip and the trace, not only "the workload".
func TestNoRequestsPastSkip(t *testing.T) {
	sc := traceScenario(t, fixed10x5, []traceLine{{0, 32, 1, ids(1, 2)}, {1, 32, 1, ids(3, 4)}}, "workload.trace.skip=5")
	_, err := Run(context.Background(), sc, Options{})
	var ie *scenarios.InputError
	if !errors.As(err, &ie) || ie.Key != "workload.trace.skip" || !strings.HasSuffix(err.Error(), "t.jsonl holds none past the 5 skipped") {
		t.Errorf("got %v", err)
	}
}
