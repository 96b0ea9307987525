package sim

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// TestTwinsAreSeparateReplays runs the contract scenarios with events
// (every kind: drain, remove, add) with their twins, and for each event that
// fired replays the scenario without it on its own: the twin's digest is
// that replay's, and the twin's window after is what that replay's rows
// give over the same interval.
func TestTwinsAreSeparateReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("long: replays the contract scenarios with and without each event")
	}
	files, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	kinds := map[string]bool{}
	for _, f := range files {
		sc, err := scenarios.Load(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Events) == 0 {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, res := runOpts(t, sc, Options{Twins: true})
			for i, e := range res.Summary.EventRows {
				if !e.Fired {
					if e.Twinned {
						t.Errorf("event %d never fired, yet has a twin", i)
					}
					continue
				}
				kinds[e.Kind] = true
				without := *sc // the obvious way, not scenarios.Without, which the twin uses
				without.Events = slices.Delete(slices.Clone(sc.Events), i, i+1)
				sink, alone := runSink(t, &without)
				if !e.Twinned || e.TwinDigest != alone.Summary.Digest {
					t.Errorf("event %d: twin digest %q, the replay without it %s", i, e.TwinDigest, alone.Summary.Digest)
				}
				want := windowOf(sink.rows, e.AtNs, e.AtNs+e.WindowAfterNs)
				got := e.Twin
				for _, m := range []struct {
					name      string
					got, want float64
				}{
					{"requests", float64(got.Requests), float64(want.Requests)},
					{"ttft_p50", got.TTFTP50Ms, want.TTFTP50Ms}, {"ttft_p99", got.TTFTP99Ms, want.TTFTP99Ms},
					{"e2e_p99", got.E2EP99Ms, want.E2EP99Ms}, {"tpot_p99", got.TPOTP99Ms, want.TPOTP99Ms},
					{"queue_p99", got.QueueP99Ms, want.QueueP99Ms}, {"hit_g1", got.HitG1, want.HitG1},
					{"hit_g2", got.HitG2, want.HitG2}, {"hit_pulled", got.HitPulled, want.HitPulled},
					{"hit_computed", got.HitComputed, want.HitComputed}, {"requests_per_s", got.RequestsPerS, want.RequestsPerS},
				} {
					if m.got != m.want && !(math.IsNaN(m.got) && math.IsNaN(m.want)) {
						t.Errorf("event %d: twin %s %v, the replay without it %v", i, m.name, m.got, m.want)
					}
				}
				if d := e.After.TTFTP99Ms - e.Twin.TTFTP99Ms; d != e.Delta.TTFTP99Ms && !math.IsNaN(d) {
					t.Errorf("event %d: TTFT p99 delta %v, want %v", i, e.Delta.TTFTP99Ms, d)
				}
				// The window before against the replay's same interval.
				was := windowOf(sink.rows, e.AtNs-e.WindowBeforeNs, e.AtNs)
				for _, m := range []struct {
					name      string
					got, want float64
				}{
					{"requests", e.BeforeDelta.Requests, float64(e.Before.Requests - was.Requests)},
					{"ttft_p99", e.BeforeDelta.TTFTP99Ms, e.Before.TTFTP99Ms - was.TTFTP99Ms},
					{"e2e_p99", e.BeforeDelta.E2EP99Ms, e.Before.E2EP99Ms - was.E2EP99Ms},
					{"hit_g1", e.BeforeDelta.HitG1, e.Before.HitG1 - was.HitG1},
				} {
					if m.got != m.want && !(math.IsNaN(m.got) && math.IsNaN(m.want)) {
						t.Errorf("event %d: before_delta %s %v, from the replay without it %v", i, m.name, m.got, m.want)
					}
				}
			}
		})
	}
	for _, k := range []string{"drain", "remove", "add"} {
		if !kinds[k] {
			t.Errorf("no contract scenario has a %s event that fires", k)
		}
	}
}

// TestTwinInFlight: an event's effect on the requests in flight when it
// comes is in the window before, against the twin's. Two workers, one
// request at a time (max_num_seqs 1), round robin; each request a 1024-
// token prompt and 10 output tokens: a 100 ms prefill and 9 decode passes
// of 10 ms, 190 ms. Requests at 0, 1, 2 and 3 ms alternate workers 0, 1,
// 0, 1; worker 1 is removed at 50 ms; one more request at 5 s ends the
// trace.
//
//   - Twin: r0 0-190 ms (TTFT 100), r1 1-191 (100), r2 190-380 (TTFT 288,
//     E2E 378), r3 191-381 (TTFT 288, E2E 378). p99 of the four (the
//     4th): TTFT 288, E2E 378.
//   - Run: r1 and r3 go back to worker 0, behind r2: r2 190-380 (288),
//     r1 380-570 (TTFT 479), r3 570-760 (TTFT 667, E2E 757). p99: TTFT
//     667, E2E 757.
//
// So the window before's TTFT p99 is 379 ms more than the twin's, E2E p99
// too, and its p50 (nearest rank, the 2nd of 4) 288 against 100 ms, with
// the same 4 requests completed; the window after (the 5 s
// request, alone on worker 0 either way) shows no effect, over one request,
// which the words say. They say the effect on the window before, and no
// longer call before -> after the trace's own change alone.
func TestTwinInFlight(t *testing.T) {
	var lines []traceLine
	for i := range 4 {
		lines = append(lines, traceLine{ms: i, in: 1024, out: 10, ids: []int{2 * i, 2*i + 1}})
	}
	lines = append(lines, traceLine{5000, 1024, 10, []int{8, 9}})
	sc := traceScenario(t, "cluster: {workers: 2, engine: {max_num_seqs: 1, kv_bytes_per_token: 1024, timing: {model: fixed, prefill: 100ms, decode: 10ms}}}\n"+
		"router: {policy: round_robin}\nevents: [{at: 50ms, remove: [1]}]\nreport: {event_window: 10s}\n", lines)
	sc.Workload.Trace.BlockSize = 512
	_, res := runOpts(t, sc, Options{Twins: true})
	e := res.Summary.EventRows[0]
	if e.Before.TTFTP99Ms != 667 || e.Before.E2EP99Ms != 757 || e.Delta.TTFTP99Ms != 0 || e.After.Requests != 1 {
		t.Fatalf("before TTFT p99 %v, E2E p99 %v; after delta %v, requests %d", e.Before.TTFTP99Ms, e.Before.E2EP99Ms, e.Delta.TTFTP99Ms, e.After.Requests)
	}
	if d := e.BeforeDelta; d.TTFTP99Ms != 379 || d.E2EP99Ms != 379 || d.Requests != 0 || d.TTFTP50Ms != 188 {
		t.Errorf("before delta TTFT p99 %v, E2E p99 %v, requests %v, TTFT p50 %v; want 379, 379, 0, 188", d.TTFTP99Ms, d.E2EP99Ms, d.Requests, d.TTFTP50Ms)
	}
	w := results.DescribeEvent(res.Summary.PullsByKind, &results.Counters{}, &e)
	want := "and on the window before (the 4 requests completed of those arriving in the 50ms before it; it changed those in flight when it came): TTFT p99 +379.0 ms (667.0 with the removal, 288.0 without); E2E p99 +379.0 ms (757.0, 378.0); completed requests 0; prompt tokens from G1 0.0 pts, G2 0.0 pts, pulled 0.0 pts, computed 0.0 pts"
	if !slices.Contains(w.Effect, want) {
		t.Errorf("effect %q\nwant a line %q", w.Effect, want)
	}
	// One request in the window after: the lines say how few.
	if few := "few requests: 1 request completed of those arriving in the window after (1 in the twin): each moves these figures, and a p99 of fewer than 100 is their largest"; !slices.Contains(w.Effect, few) {
		t.Errorf("effect %q\nwant a line %q", w.Effect, few)
	}
	if !strings.HasPrefix(w.Trace[0], "before → after (the trace's own change, and the event's effect on the requests in flight at it)") {
		t.Errorf("trace line %q", w.Trace[0])
	}
}

// windowOf is what the rows give over the window [lo, hi), computed the
// obvious way: the completed requests arriving in it (their latencies,
// nearest rank, and prompt tokens by source) and the completions in it a
// second.
func windowOf(rows []report.RequestRow, lo, hi int64) report.EventWindow {
	var ttft, e2e, tpot, queue report.Dist
	var n, in, g1, g2, pl, comp, done int64
	for _, r := range rows {
		if r.Outcome != report.OutcomeCompleted {
			continue
		}
		if r.FinishNs >= lo && r.FinishNs < hi {
			done++
		}
		if r.ArrivalNs < lo || r.ArrivalNs >= hi {
			continue
		}
		n++
		ttft.Add(r.FirstTokenNs - r.ArrivalNs)
		e2e.Add(r.FinishNs - r.ArrivalNs)
		queue.Add(r.ScheduledNs - r.ArrivalNs)
		if r.OutputTokens > 1 {
			tpot.Add((r.FinishNs - r.FirstTokenNs) / (r.OutputTokens - 1))
		}
		in, g1, g2, pl, comp = in+r.InputTokens, g1+r.G1HitTokens, g2+r.G2HitTokens, pl+r.PulledTokens, comp+r.ComputedPromptTokens
	}
	div := func(a, b int64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	w := report.EventWindow{Requests: n, TTFTP50Ms: ttft.Percentiles().P50, TTFTP99Ms: ttft.Percentiles().P99,
		E2EP99Ms: e2e.Percentiles().P99, TPOTP99Ms: tpot.Percentiles().P99, QueueP99Ms: queue.Percentiles().P99,
		HitG1: div(g1, in), HitG2: div(g2, in), HitPulled: div(pl, in), HitComputed: div(comp, in),
		RequestsPerS: float64(done) / (float64(hi-lo) / 1e9)}
	if n == 0 {
		w.TTFTP50Ms, w.TTFTP99Ms, w.E2EP99Ms, w.QueueP99Ms = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	if tpot.Count() == 0 {
		w.TPOTP99Ms = math.NaN()
	}
	return w
}

// TestTwinOppositeSign is a drain whose effect has the opposite sign of
// its before -> after change. Two workers, one request at a time each
// (max_num_seqs 1), every request one 16-token block and one output token,
// so each takes one 100 ms prefill pass; least_loaded routing sends ties
// to the lower id; the windows are 1 s.
//
//   - Before, [0, 1 s): six requests at 0 alternate between the workers,
//     three each, served back to back: TTFT 100, 100, 200, 200, 300, 300
//     ms. p99 (nearest rank: the 6th) 300 ms.
//   - At 1 s worker 1 is drained, and two requests arrive (after the
//     drain: lifecycle events come before arrivals in an instant), and one
//     more at 1.9 s, which ends the trace and so the window after:
//     [1 s, 1.9 s + 1 ns).
//   - In the run both 1 s requests queue on worker 0: TTFT 100 and 200 ms;
//     the 1.9 s one 100 ms. p99 (the 3rd of 3) 200 ms.
//   - In the twin (no drain) they go one to each worker: 100, 100, 100 ms.
//     p99 100 ms.
//
// So TTFT p99 fell from 300 to 200 ms across the event, but the drain
// raised it by 100 ms.
func TestTwinOppositeSign(t *testing.T) {
	var lines []traceLine
	for i := range 6 {
		lines = append(lines, traceLine{ms: 0, in: 16, out: 1, ids: []int{i}})
	}
	lines = append(lines, traceLine{1000, 16, 1, []int{6}}, traceLine{1000, 16, 1, []int{7}}, traceLine{1900, 16, 1, []int{8}})
	sc := traceScenario(t, "cluster: {workers: 2, engine: {max_num_seqs: 1, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 100ms, decode: 10ms}}}\n"+
		"router: {policy: least_loaded}\nevents: [{at: 1s, drain: [1]}]\nreport: {event_window: 1s}\n", lines)
	_, res := runOpts(t, sc, Options{Twins: true})
	e := res.Summary.EventRows[0]
	if e.WindowAfterNs != 900_000_001 || e.Before.Requests != 6 || e.After.Requests != 3 || e.Twin.Requests != 3 {
		t.Fatalf("window after %d ns, requests before %d, after %d, twin %d", e.WindowAfterNs, e.Before.Requests, e.After.Requests, e.Twin.Requests)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"before p99", e.Before.TTFTP99Ms, 300}, {"after p99", e.After.TTFTP99Ms, 200}, {"twin p99", e.Twin.TTFTP99Ms, 100},
		{"delta p99", e.Delta.TTFTP99Ms, 100}, {"after p50", e.After.TTFTP50Ms, 100}, {"delta p50", e.Delta.TTFTP50Ms, 0},
		{"delta requests", e.Delta.Requests, 0},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v ms, want %v", c.name, c.got, c.want)
		}
	}
	// expect: and --slo take the effect.
	sc.Expect = []string{"events[0].ttft_p99_delta_ms <= 100", "event0_itl_p99_delta_ms > 0"}
	unmet := results.Unmet(sc, res.Summary)
	if len(unmet) != 1 || !strings.Contains(unmet[0], "event0_itl_p99_delta_ms is NaN") {
		t.Fatalf("unmet %q, want only the ITL delta (no token gap: one-token requests)", unmet)
	}
	if unmet[0] != "event0_itl_p99_delta_ms is NaN (no value: a statistic of nothing), expected event0_itl_p99_delta_ms > 0" {
		t.Errorf("unmet %q: says nothing of a twin, which ran", unmet[0])
	}
	// Without the twin, a delta is no value, and says why.
	_, alone := runSink(t, sc)
	if unmet := results.Unmet(sc, alone.Summary); len(unmet) != 2 || !strings.Contains(unmet[0], "NaN (no twin: the event never fired, or the run had --twins=false)") {
		t.Errorf("without twins, unmet %q", unmet)
	}
}

// TestTwinInert: an event that changes nothing a request sees (a worker
// added mid-run, still starting at the end) has a twin whose request rows
// are the run's (its digest differs: the counters count the worker added),
// and the run warns that the what-if tested nothing.
func TestTwinInert(t *testing.T) {
	lines := []traceLine{{0, 16, 1, []int{0}}, {100, 16, 1, []int{1}}}
	sc := traceScenario(t, "cluster: {workers: 1, engine: {kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}}\n"+
		"events: [{at: 50ms, add: 1, startup: 1h}]\n", lines)
	_, res := runOpts(t, sc, Options{Twins: true})
	e := res.Summary.EventRows[0]
	if !e.Twinned || e.TwinDigest == res.Summary.Digest {
		t.Errorf("twin digest %s, the run's %s", e.TwinDigest, res.Summary.Digest)
	}
	want := "event 0 (add at 50ms) changed no request: every request's row is the same in the run without it; the what-if tests nothing for the requests"
	if !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

// TestTwinMasked: two identical stragglers on worker 1 from 5 ms, to the
// end. Each one's twin keeps the other, in force on the same worker at
// the same factor, so each twin's rows are the run's: both changed no
// request alone, and the warning names the other event, which masks it.
// An add at 20 ms, on a worker of its own and starting for an hour (never
// ready before the end), is named by neither. Requests alternate the two workers (round robin),
// so worker 1 serves some: the two together slow them.
func TestTwinMasked(t *testing.T) {
	var lines []traceLine
	for i := range 6 {
		lines = append(lines, traceLine{10 * i, 32, 2, []int{2 * i, 2*i + 1}})
	}
	sc := traceScenario(t, "cluster: {workers: 2, engine: {max_num_seqs: 1, kv_bytes_per_token: 1024, timing: {model: fixed, prefill: 100ms, decode: 10ms}}}\n"+
		"router: {policy: round_robin}\nevents: [{at: 5ms, slow: {workers: [1], factor: 2}}, {at: 5ms, slow: {workers: [1], factor: 2}}, {at: 20ms, add: 1, startup: 1h}]\n", lines)
	_, res := runOpts(t, sc, Options{Twins: true})
	for i, other := range []string{"1 (slow at 5ms)", "0 (slow at 5ms)"} {
		want := fmt.Sprintf("event %d (slow at 5ms) changed no request: every request's row is the same in the run without it; the what-if tests nothing for the requests, alone: event %s acts on the same workers while it is in force, and each twin keeps the others, so an effect they share shows against none of them (leave them out together to measure it)", i, other)
		if !slices.Contains(res.Summary.Warnings, want) {
			t.Errorf("warnings %q\nwant %q", res.Summary.Warnings, want)
		}
	}
	if e := res.Summary.EventRows[0]; e.Fault.Passes == 0 {
		t.Errorf("event 0 slowed no pass: the test tests nothing")
	}
}

// TestCohort works out an event's displaced cohort by hand. Two workers,
// one request at a time each, round-robin routing, 16-token trace blocks
// (one engine block each), one output token, each request one 100 ms
// prefill pass; worker 1 drains at 1 s; the windows are 1 s.
//
//	id  at (ms)  blocks   previous turn (deepest shared block past the first)
//	0   0        0 1      -1
//	1   0        0 2      -1
//	2   1000     0 1 3    0 (shares block 1)
//	3   1000     0 2 4    1 (shares block 2)
//	4   1000     0 5      -1 (shares block 0 only)
//	5   1900     0 9      -1
//
// Requests 0 and 1 end on workers 0 and 1, so the drain's cohort is
// request 3 alone: its previous turn ran on the drained worker. In the run
// every request from 1 s goes to worker 0, one after another: 2, 3 and 4
// take TTFT 100, 200 and 300 ms; 3 finds only block 0 of its 48 prompt
// tokens in worker 0's G1 (request 0's), 16 tokens. In the twin round robin
// goes on: 2 to worker 0, 3 to worker 1, 4 to worker 0, 5 to worker 1; 3
// finds blocks 0 and 2 (request 1's) in worker 1's G1, 32 tokens, at once:
// TTFT 100 ms. So the cohort's TTFT p99 is 200 ms with the drain, 100
// without; its G1 share 1/3 against 2/3, and it computes 2/3 against 1/3.
func TestCohort(t *testing.T) {
	lines := []traceLine{{0, 32, 1, []int{0, 1}}, {0, 32, 1, []int{0, 2}}, {1000, 48, 1, []int{0, 1, 3}},
		{1000, 48, 1, []int{0, 2, 4}}, {1000, 32, 1, []int{0, 5}}, {1900, 32, 1, []int{0, 9}}}
	sc := traceScenario(t, "cluster: {workers: 2, engine: {max_num_seqs: 1, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 100ms, decode: 10ms}}}\n"+
		"router: {policy: round_robin}\nevents: [{at: 1s, drain: [1]}]\nreport: {event_window: 1s}\n", lines)
	sink, res := runOpts(t, sc, Options{Twins: true})
	var prev []int64
	for _, r := range sink.rows {
		prev = append(prev, r.PrevRequestID)
	}
	if !slices.Equal(prev, []int64{-1, -1, 0, 1, -1, -1}) {
		t.Errorf("prev_request_id %v", prev)
	}
	e := res.Summary.EventRows[0]
	want := report.EventCohort{Requests: 1, TTFTP50Ms: 200, TTFTP99Ms: 200, HitG1: 16.0 / 48, HitG2: 0, HitPulled: 0, HitComputed: 32.0 / 48}
	if e.CohortAfter != want {
		t.Errorf("cohort in the run %+v, want %+v", e.CohortAfter, want)
	}
	want = report.EventCohort{Requests: 1, TTFTP50Ms: 100, TTFTP99Ms: 100, HitG1: 32.0 / 48, HitG2: 0, HitPulled: 0, HitComputed: 16.0 / 48}
	if e.CohortTwin != want {
		t.Errorf("cohort in the twin %+v, want %+v", e.CohortTwin, want)
	}
}

// TestCohortAdd: an add's cohort is the requests of its window after that
// ended on a new worker. One worker, one request at a time, round robin;
// worker 1 is added at 500 ms, ready at once; the window after runs from
// 500 ms to just past the last arrival, 1.9 s. Request 0 went to worker 0,
// so round robin sends 1, 3 and 5 to worker 1 and 2 and 4 to worker 0:
// the cohort is 1, 3 and 5. In the run 1 and 3 queue on worker 1 (TTFT 100
// and 200 ms) and 5 finds it idle (100): p50 100, p99 200 ms. In the twin
// 1 to 4 queue on worker 0 (100, 200, 300, 400 ms) and 5 finds it idle:
// the cohort's 100, 300 and 100 give p50 100, p99 300 ms.
func TestCohortAdd(t *testing.T) {
	lines := []traceLine{{0, 32, 1, []int{0, 1}}, {1000, 32, 1, []int{0, 2}}, {1000, 32, 1, []int{0, 3}},
		{1000, 32, 1, []int{0, 4}}, {1000, 32, 1, []int{0, 5}}, {1900, 32, 1, []int{0, 6}}}
	sc := traceScenario(t, "cluster: {workers: 1, engine: {max_num_seqs: 1, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 100ms, decode: 10ms}}}\n"+
		"router: {policy: round_robin}\nevents: [{at: 500ms, add: 1}]\nreport: {event_window: 2s}\n", lines)
	_, res := runOpts(t, sc, Options{Twins: true})
	e := res.Summary.EventRows[0]
	if c := e.CohortAfter; c.Requests != 3 || c.TTFTP50Ms != 100 || c.TTFTP99Ms != 200 {
		t.Errorf("cohort in the run %+v", c)
	}
	if c := e.CohortTwin; c.Requests != 3 || c.TTFTP50Ms != 100 || c.TTFTP99Ms != 300 {
		t.Errorf("cohort in the twin %+v", c)
	}
}

// TestTwinsGenerated holds the twins to separate replays on random
// scenarios: for each of the first 300 generated cases with events, every
// event that fired has a twin whose digest is that of the case replayed
// without it, unless the case without it is not valid (a later event
// drains a worker only it adds) or fails, when it has none.
func TestTwinsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("long: replays generated cases with and without each event")
	}
	dir := t.TempDir()
	events, none := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		c := scengen.Generate(seed)
		path, err := c.Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenarios.Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Events) == 0 {
			continue
		}
		res, err := Run(context.Background(), sc, Options{Check: true, Twins: true})
		if err != nil {
			continue // a case that fails on its own (a stall TestGenerated expects): no row to compare
		}
		for i, e := range res.Summary.EventRows {
			if !e.Fired {
				continue
			}
			without, err := sc.Without(i)
			if err != nil { // a later event names a worker only this one adds
				none++
				if e.Twinned {
					t.Errorf("seed %d, event %d: a twin, though the scenario without it is not valid: %v", seed, i, err)
				}
				continue
			}
			events++
			alone, err := Run(context.Background(), without, Options{Check: true})
			if err != nil { // the run without it fails (stalls): no twin, and a warning
				none++
				if e.Twinned {
					t.Errorf("seed %d, event %d: a twin, though the replay without it fails: %v", seed, i, err)
				}
				continue
			}
			if e.TwinDigest != alone.Summary.Digest {
				t.Errorf("seed %d, event %d: twin digest %s, the replay without it %s\n%s", seed, i, e.TwinDigest, alone.Summary.Digest, save(t, c, "TestGenerated", "scengen"))
			}
		}
	}
	if events < 300 {
		t.Errorf("only %d events fired in the generated cases", events)
	}
	t.Logf("%d events' twins match their replays; %d events have none (the scenario without them is not valid, or fails)", events, none)
}

// TestTwinNone: an add whose worker a later drain names has no twin (the
// scenario without the add would drain a worker that does not exist); the
// run stands, the add's row says it has no twin, a warning says why, and
// the drain still has its twin.
func TestTwinNone(t *testing.T) {
	lines := []traceLine{{0, 16, 1, []int{0}}, {3000, 16, 1, []int{1}}}
	sc := traceScenario(t, "cluster: {workers: 1, engine: {kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}}\n"+
		"events: [{at: 1s, add: 1}, {at: 2s, drain: [1]}]\n", lines)
	_, res := runOpts(t, sc, Options{Twins: true})
	rows := res.Summary.EventRows
	if rows[0].Twinned || !rows[1].Twinned {
		t.Errorf("twinned: add %v, drain %v; want false, true", rows[0].Twinned, rows[1].Twinned)
	}
	want := "event 0 has no twin: the scenario without it is not valid (events[1].drain[0]: worker 1 does not exist or is already drained or removed at 2s); its effect is not measured"
	if !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

// TestTwinWorkloadIsTheRuns: every contract scenario's twins, of each
// event and of the events chaos drew, have the run's workload, so that the
// run and the twins that start with it read it once (runWithTwins shares
// the read when the two are deeply equal).
func TestTwinWorkloadIsTheRuns(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	twins := 0
	for _, f := range files {
		sc, err := scenarios.Load(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range twinGroups(sc) {
			tp, err := p.twin(g)
			if err != nil {
				continue // no twin: the run reads alone
			}
			twins++
			if !reflect.DeepEqual(tp.Scenario.Workload, p.Scenario.Workload) {
				t.Errorf("%s: the twin of events %v reads another workload", filepath.Base(f), g)
			}
		}
	}
	if twins == 0 {
		t.Fatal("no contract scenario has a twin")
	}
}
