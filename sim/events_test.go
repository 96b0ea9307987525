package sim

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// eventLines: kvBody on 2 workers with max_num_seqs 1, round robin (A, C,
// E to worker 0; B, X, D, F, H to worker 1), 16-token blocks of 1 MB.
var eventLines = []traceLine{
	{0, 64, 1, ids(1, 4)},                          // A
	{11, 128, 1, ids(1, 8)},                        // B
	{12, 32, 8, ids(30, 2)},                        // C
	{13, 32, 2, ids(40, 2)},                        // X
	{14, 32, 2, ids(50, 2)},                        // E
	{15, 128, 1, append(ids(1, 4), ids(60, 4)...)}, // D
	{20, 16, 1, ids(70, 1)},                        // F
	{60, 16, 1, ids(80, 1)},                        // H
}

// TestEventRow derives every column of the events row of one drain, with
// a drain timeout, by hand. Worker 0 drains at 15.5 ms with a 40 ms
// timeout; the window is 40 ms.
//
// Before the drain. A runs on worker 0 0-10 ms; its 4 blocks go to
// worker 0's G2 at 10 ms. B (ids 1-8) reaches the idle worker 1 at 11 ms
// hinted to worker 0: its pull of 4 of its 7 missing blocks (4 MB) is
// staged at 11, first byte 12, lands at 16 ms (partial). C starts on
// worker 0 at 12 (prefill 12-22, first token 22, a token every 5 ms). X
// starts on worker 1 at 13 (B, pulling, holds no slot): tokens at 23 and
// 28. E waits behind C on worker 0; D (ids 1-4, 60-63, hinted to worker 0)
// waits behind X on worker 1, not yet staged.
//
// At the event (15.5 ms): worker 0 runs C and holds E waiting, so
// requests_at_event 2, running 1, waiting 1; it serves B's pull
// (pulls_serving 1, receiving 0) and holds A's 4 G2 blocks. Worker 1 holds
// X, B and D: cluster_requests 5, and both workers were ready:
// schedulable 2. The window before is [0, 15.5 ms) (40 ms clipped to the
// run's start, window_before_ns 15.5 ms): A to F, 6 requests routed, A, C
// and E to worker 0: load_share 0.5.
//
// After it. Worker 1 runs B 28-38 (its pulled blocks loaded, 64 tokens
// computed), then stages D at 38: the source is draining, rejected
// (pulls_rejected_draining 1); D hits blocks 1-4 in G1 (B's) and computes
// 64 tokens, 38-48. F runs 48-58. At 55.5 ms the timeout removes worker 0
// (removed_after_ns 40 ms, removed_by_timeout 1) with C mid-decode (7
// tokens out, 22-52 ms) and E waiting: both are routed again to worker 1
// (requests_rerouted 2, failed 0). C starts over 58-103 (first token 68),
// E 103-118 (first token 113), H 118-128. Worker 0 then held A's 4 G2
// blocks and C's 2 (stored at 22 ms): g2_blocks_left 6 = the 4 at the
// event + 2 stored after it (kv_stored_after); it still held C and E, so
// its removal waited for nothing else: removal_delay_ns 0. No evacuation:
// kv_blocks_planned and landed 0, kv_done_after_ns -1, and no ledger of
// orders (kv_blocks_held 0).
//
// Windows: the last arrival is H at 60 ms, so the window after is [15.5,
// 55.5 ms), not clipped: 40 ms. Arriving before (completed): A (TTFT 10,
// E2E 10), B (27, 27), C (56, 91), X (10, 15), E (99, 104), D (33, 33):
// TTFT sorted 10 10 27 33 56 99, p50 the 3rd (27), p99 the 6th (99); E2E
// p99 104. Their 416 prompt tokens: 64 from G1 (D), 64 pulled (B), none
// from G2. Emitted before: A's token at 10 (no gap: ITL NaN), and A ends
// at 10: 1 / 15.5 ms = 64.516 a second each. Arriving after: F alone,
// TTFT and E2E 38 ms, 16 tokens, no hit. Emitted after: C's 7 tokens
// (6 gaps of 5 ms), X's 2 (1 gap of 5 ms), B's and D's first: 11 tokens,
// ITL p99 5 ms, 275 a second; X, B and D end in it: 75 a second.
//
// TPOT, queue and computed tokens. Before: the requests with more than
// one token are C (first token 68 after its restart, 7 more to 103: 5 ms
// each), X and E (5 ms): TPOT p99 5 ms. From arrival to first scheduled on
// the worker each ended on: A 0, B 17 (11 to 28), C 46 (12 to its restart
// at 58), X 0, E 89 (14 to 103), D 23 (15 to 38): queue p99 89 ms. Prompt
// tokens computed: A 64, B 64, C 32 twice (its restart recomputes), X 32,
// E 32, D 64: 320 of 416. After: F alone, one token (no TPOT: NaN), queued
// 28 ms (20 to 48), all 16 prompt tokens computed: 1.
//
// Without H the last arrival is F at 20 ms, and the window after ends
// just past it: [15.5 ms, 20 ms + 1 ns), 4.500001 ms, in which F arrives
// (the same figures) but no token is emitted and no request ends: 0 a
// second, ITL NaN. The rest is the same.
func TestEventRow(t *testing.T) {
	sets := []string{"cluster.workers=2", "cluster.engine.max_num_seqs=1",
		"events=[{at: 15500us, drain: [0], drain_timeout: 40ms}]", "report.event_window=40ms"}
	_, _, res := runKV(t, eventLines, sets...)
	const us = ms / 1000
	nan := math.NaN()
	want := report.EventRow{Event: 0, Kind: "drain", AtNs: 15500 * us, Workers: "0", Fired: true,
		RequestsAtEvent: 2, RunningAtEvent: 1, WaitingAtEvent: 1, PullsServingAtEvent: 1, PullsReceivingAtEvent: 0,
		G2BlocksAtEvent: 4, ClusterRequestsAtEvent: 5, SchedulableAtEvent: 2, LoadShare: 0.5,
		RemovedAfterNs: 40 * ms, RemovedByTimeout: 1, PullsRejectedDraining: 1, RequestsRerouted: 2, RequestsFailed: 0,
		OrdersDoneAfterNs: -1, G2BlocksLeft: 6, RemovalDelayNs: 0, Removal: report.KVRemoval{StoredAfter: 2},
		WindowBeforeNs: 15500 * us, WindowAfterNs: 40 * ms,
		Before: report.EventWindow{TTFTP50Ms: 27, TTFTP99Ms: 99, ITLP99Ms: nan, E2EP99Ms: 104,
			RequestsPerS: 1 / 0.0155, OutputTokensPerS: 1 / 0.0155, HitG1: 64.0 / 416, HitG2: 0, HitPulled: 64.0 / 416, Requests: 6,
			TPOTP99Ms: 5, QueueP99Ms: 89, HitComputed: 320.0 / 416},
		After: report.EventWindow{TTFTP50Ms: 38, TTFTP99Ms: 38, ITLP99Ms: 5, E2EP99Ms: 38,
			RequestsPerS: 75, OutputTokensPerS: 275, HitG1: 0, HitG2: 0, HitPulled: 0, Requests: 1,
			TPOTP99Ms: nan, QueueP99Ms: 28, HitComputed: 1},
	}
	want.Twin, want.Delta = report.NoTwin() // runKV runs no twin
	want.Origin, want.ForNs = "scenario", -1
	// F, alone in the window after, shares no block with an earlier
	// request: it has no previous turn, and the cohort is empty.
	want.CohortAfter, want.CohortTwin = report.NoCohort(), report.NoCohort()
	want.CohortAfter.Requests = 0
	if rows := res.Summary.EventRows; len(rows) != 1 || !sameEvent(rows[0], want) {
		t.Errorf("events rows %+v\nwant %+v", rows, want)
	}
	if len(res.Summary.Warnings) != 0 {
		t.Errorf("warnings %q", res.Summary.Warnings)
	}
	_, _, res = runKV(t, eventLines[:len(eventLines)-1], sets...)
	want.WindowAfterNs = 4_500_001
	want.After.ITLP99Ms, want.After.RequestsPerS, want.After.OutputTokensPerS = nan, 0, 0
	if rows := res.Summary.EventRows; len(rows) != 1 || !sameEvent(rows[0], want) {
		t.Errorf("without H: events rows %+v\nwant %+v", rows, want)
	}
}

// sameEvent compares two rows, a NaN equal to a NaN and floats to 1e-12
// of each other.
func sameEvent(a, b report.EventRow) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for _, p := range report.Leaves(va.Type()) {
		x, y := va.FieldByIndex(p), vb.FieldByIndex(p)
		if x.Kind() == reflect.Float64 {
			if fx, fy := x.Float(), y.Float(); !(math.IsNaN(fx) && math.IsNaN(fy)) && math.Abs(fx-fy) > 1e-12*math.Max(1, math.Abs(fy)) {
				return false
			}
		} else if !x.Equal(y) {
			return false
		}
	}
	return true
}

// spaced is n requests of 16 tokens and 1 output token, 100 ms apart, each
// its own block: each ends (10 ms) long before the next arrives.
func spaced(n int) []traceLine {
	lines := make([]traceLine, n)
	for i := range lines {
		lines[i] = traceLine{100 * i, 16, 1, ids(100+i, 1)}
	}
	return lines
}

// eventWarnings runs kvBody (3 workers, round robin unless sets say
// otherwise) on lines with event ev and returns the warnings that start
// with prefix.
func eventWarnings(t *testing.T, lines []traceLine, ev string, prefix string, sets ...string) []string {
	t.Helper()
	_, _, res := runKV(t, lines, append([]string{"events=[" + ev + "]"}, sets...)...)
	var out []string
	for _, w := range res.Summary.Warnings {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}

// TestIdleDrainWarning: two requests on 3 workers, round robin: worker 0
// runs the first (0-10 ms), worker 1 the second (100-110 ms). At 150 ms
// worker 2 has run nothing and caches nothing: draining it warns, and
// removing workers 1 and 2 warns of worker 2 alone. Draining worker 0,
// idle but caching its request's block in G1 and G2, does not warn. On 4
// workers after one request, draining workers 2 and 3 warns of both.
func TestIdleDrainWarning(t *testing.T) {
	for _, c := range []struct {
		ev   string
		want []string
	}{
		{"{at: 150ms, drain: [2]}", []string{"event 0 drains worker 2, which holds no work and no cache at 150ms: the drain moves nothing off it and tests only the capacity it takes away"}},
		{"{at: 150ms, remove: [1, 2]}", []string{"event 0 removes worker 2, which holds no work and no cache at 150ms: the removal moves nothing off it and tests only the capacity it takes away"}},
		{"{at: 150ms, drain: [0]}", nil},
	} {
		if got := eventWarnings(t, spaced(2), c.ev, "event 0 "); !slices.Equal(got, c.want) {
			t.Errorf("%s: warnings %q, want %q", c.ev, got, c.want)
		}
	}
	_, _, res := runKV(t, spaced(1), "cluster.workers=4", "events=[{at: 50ms, drain: [2, 3]}]")
	if want := "event 0 drains workers 2, 3, which hold no work and no cache at 50ms: the drain moves nothing off them and tests only the capacity it takes away"; !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

// TestDrainedAgainWarning: a pick's workers are known only when it fires,
// so a later event may list one of them. With spaced(2) on 3 workers
// worker 0 runs the first request 0-10 ms, and a busiest pick at 5 ms
// drains it; it is removed at 10 ms, once empty. Draining it again at
// 7 ms, or removing it at 20 ms, changes nothing for it, and says so (not
// that it holds nothing); removing it at 7 ms, still draining, takes its
// request off it: no warning.
func TestDrainedAgainWarning(t *testing.T) {
	pick := "{at: 5ms, drain: {count: 1, pick: busiest}}, "
	for _, c := range []struct {
		ev   string
		want []string
	}{
		{pick + "{at: 7ms, drain: [0]}", []string{"event 1 drains worker 0, which an earlier event drained or removed already: the drain changes nothing for it"}},
		{pick + "{at: 20ms, remove: [0]}", []string{"event 1 removes worker 0, which an earlier event drained or removed already: the removal changes nothing for it"}},
		{pick + "{at: 7ms, remove: [0]}", nil},
	} {
		if got := eventWarnings(t, spaced(2), c.ev, "event 1 "); !slices.Equal(got, c.want) {
			t.Errorf("%s: warnings %q, want %q", c.ev, got, c.want)
		}
	}
}

// TestLoadShareWarning: under kv_aware routing every one of the spaced
// requests finds all 4 workers idle and empty of its blocks, so every one
// goes to worker 0, the lowest id. At 2.55 s, 26 requests (0 to 2.5 s)
// were routed in the 2.55 s before (the 3-minute window clipped to the
// run's start): worker 3 had none of them, under a quarter of its even
// share of 1/4, and draining it warns. Draining worker 0 (all of them)
// does not; nor does draining worker 3 after only 10 requests, too few
// for a share to mean much.
func TestLoadShareWarning(t *testing.T) {
	kv := "router.policy=kv_aware"
	want := "event 0 drains worker 3, to which 0.0% of the 26 requests arriving in the 2.55s before 2.55s were first routed, " +
		"under a quarter of an even share (1 of 4 schedulable workers: 25.0%): the event tests little; " +
		"`pick: busiest` drains the busiest workers instead"
	if got := eventWarnings(t, spaced(30), "{at: 2550ms, drain: [3]}", "event 0 drains worker 3, to which", kv, "cluster.workers=4"); !slices.Equal(got, []string{want}) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if got := eventWarnings(t, spaced(30), "{at: 2550ms, drain: [0]}", "event 0 drains worker 0, to which", kv, "cluster.workers=4"); got != nil {
		t.Errorf("draining the busiest: %q", got)
	}
	if got := eventWarnings(t, spaced(30), "{at: 950ms, drain: [3]}", "event 0 drains worker 3, to which", kv, "cluster.workers=4"); got != nil {
		t.Errorf("after 10 requests: %q", got)
	}
}

// TestLightLoadWarning: at 150 ms, between the spaced requests, no request
// is in flight on the 3 workers: a drain warns that the cluster is lightly
// loaded. In TestEventRow 5 requests are in flight on 2 workers, and it
// asserts no warning at all.
func TestLightLoadWarning(t *testing.T) {
	want := []string{"no request is in flight on 3 workers at 150ms: the cluster is lightly loaded; a time_scale below 1 loads it"}
	if got := eventWarnings(t, spaced(2), "{at: 150ms, drain: [0]}", "no request is"); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if got := eventWarnings(t, spaced(2), "{at: 150ms, add: 1}", "no request is"); got != nil {
		t.Errorf("an add warns %q", got)
	}
	// A synthetic workload has no time_scale: its rate loads the cluster.
	// One request of 4 tokens (10 ms) has ended by the drain at 1 s.
	y := "name: l\nworkload: {synthetic: {requests: 1, rate: 1, input: {mean: 4}, output: {mean: 1}}}\n" + kvBody +
		"events: [{at: 1s, drain: [2]}]\n"
	sc, err := scenarios.Parse(filepath.Join(t.TempDir(), "s.yaml"), []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, res := runSink(t, sc)
	if want := "no request is in flight on 3 workers at 1s: the cluster is lightly loaded; a higher rate loads it"; !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

// TestEventsSQL: what docs/scale-in.md's SQL computes from requests.parquet
// (quantile_disc, the nearest rank: the ⌈q·n⌉-th smallest) over the
// completed requests arriving in each window is what events.parquet
// holds, for a drain of 2 of 6 workers at a busy moment of a synthetic
// run, a removal and an add: TTFT p50 and p99, E2E p99, the requests and
// the G1 hit ratio, before and after each event.
func TestEventsSQL(t *testing.T) {
	y := "name: q\nseed: 5\nworkload: {synthetic: {requests: 3000, rate: 150, input: {mean: 600}, output: {mean: 20}, prefix_groups: 8, shared_prefix: 256}}\n" +
		"cluster: {workers: 6, engine: {kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 30ms, decode: 10ms}}}\n" +
		"events:\n  - {at: 6s, drain: [0, 1], drain_timeout: 2s}\n  - {at: 9s, remove: [2]}\n  - {at: 12s, add: 1}\nreport: {event_window: 4s}\n"
	sc, err := scenarios.Parse(filepath.Join(t.TempDir(), "s.yaml"), []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	sink, res := runSink(t, sc)
	quantile := func(v []float64, q float64) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		slices.Sort(v)
		return v[int(math.Max(1, math.Ceil(q*float64(len(v)))))-1]
	}
	for _, e := range res.Summary.EventRows {
		for _, w := range []struct {
			lo, hi int64
			got    report.EventWindow
		}{{e.AtNs - e.WindowBeforeNs, e.AtNs, e.Before}, {e.AtNs, e.AtNs + e.WindowAfterNs, e.After}} {
			var ttft, e2e []float64
			var g1, in int64
			for _, r := range sink.rows {
				if r.Outcome == report.OutcomeCompleted && r.ArrivalNs >= w.lo && r.ArrivalNs < w.hi {
					ttft = append(ttft, float64(r.FirstTokenNs-r.ArrivalNs)/1e6)
					e2e = append(e2e, float64(r.FinishNs-r.ArrivalNs)/1e6)
					g1, in = g1+r.G1HitTokens, in+r.InputTokens
				}
			}
			sql := report.EventWindow{TTFTP50Ms: quantile(ttft, 0.5), TTFTP99Ms: quantile(ttft, 0.99), E2EP99Ms: quantile(e2e, 0.99),
				Requests: int64(len(ttft)), HitG1: float64(g1) / float64(in)}
			g := w.got
			if len(ttft) < 100 || g.TTFTP50Ms != sql.TTFTP50Ms || g.TTFTP99Ms != sql.TTFTP99Ms || g.E2EP99Ms != sql.E2EP99Ms ||
				g.Requests != sql.Requests || g.HitG1 != sql.HitG1 {
				t.Errorf("event %d [%d, %d): events.parquet %+v, SQL %+v", e.Event, w.lo, w.hi, g, sql)
			}
		}
	}
}

// TestEventColumnsDocumented: docs/outputs.md names every column of
// events.parquet, and its type says "nullable" exactly for the columns
// that hold null where a value does not exist.
func TestEventColumnsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/outputs.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## events.parquet")
	section, _, _ = strings.Cut(section, "\n## ")
	types := map[string]string{} // a column's type cell, by name
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 3 || !strings.HasPrefix(cells[0], "| `") {
			continue
		}
		for _, name := range strings.Split(strings.TrimPrefix(cells[0], "| "), ", ") {
			types[strings.Trim(name, "`")] = cells[1]
		}
	}
	for _, c := range results.EventColumns {
		typ, ok := types[c.Name]
		if !ok {
			t.Errorf("docs/outputs.md's events.parquet does not name %s in its tables", c.Name)
		} else if strings.Contains(typ, "nullable") != c.Null {
			t.Errorf("docs/outputs.md's events.parquet gives %s the type %q; the column is Null: %v", c.Name, typ, c.Null)
		}
	}
}

// TestDrainAgainEvacuatesNothing: a drain listing a worker an earlier
// event drained or removed already changes nothing for it, evacuation
// included. spaced(2) on 3 workers, round robin: worker 0 runs the first
// request (0-10 ms) and holds its block 100 in G2, worker 1 the second
// (100-110 ms) and its block 101. At 150 ms a busiest pick (every worker
// idle: the lowest id) drains worker 0 and evacuates it: 1 block planned,
// its pull (1 MB at 1 GB/s, 1 ms latency) lands at 152 ms, and worker 0,
// still serving it until then, is draining at 151 ms, when event 1 lists
// it again: it plans nothing (kv_blocks_held 0, no order), does not give
// it its 0.5 ms drain_timeout (worker 0 is removed at 152 ms, once the
// pull has landed, not at 151.5 ms, failing it), and warns only that the
// drain changes nothing for it. Without the evacuation, worker 0
// holds no pull, is removed at 150 ms, and event 1 at 151 ms finds it
// removed: again nothing is planned (before this was fixed, a removed
// worker's released G2 was evacuated: an order from a worker that no
// longer exists, and, once an arrival collected its chains, a loop that
// never ended).
func TestDrainAgainEvacuatesNothing(t *testing.T) {
	again := "event 1 drains worker 0, which an earlier event drained or removed already: the drain changes nothing for it"
	for _, c := range []struct {
		name                   string
		first                  string
		planned0, removedAfter int64
	}{
		{"draining", "{at: 150ms, drain: {count: 1, pick: busiest}, evacuate: {blocks: 10}}", 1, 2 * ms},
		{"removed", "{at: 150ms, drain: {count: 1, pick: busiest}}", 0, 0},
	} {
		_, _, res := runKV(t, spaced(2), "events=["+c.first+", {at: 151ms, drain: [0], drain_timeout: 500us, evacuate: {blocks: 10}}]")
		r0, r1 := res.Summary.EventRows[0], res.Summary.EventRows[1]
		if r0.Workers != "0" || r0.BlocksPlanned != c.planned0 || r0.BlocksLanded != c.planned0 || r0.RemovedAfterNs != c.removedAfter {
			t.Errorf("%s: event 0 drains %q, %d blocks planned, %d landed, removed after %d ns; want worker 0, %d, %d ns",
				c.name, r0.Workers, r0.BlocksPlanned, r0.BlocksLanded, r0.RemovedAfterNs, c.planned0, c.removedAfter)
		}
		if r1.Orders != 0 || r1.BlocksPlanned != 0 || r1.Plan.BlocksHeld != 0 {
			t.Errorf("%s: event 1: %d orders, %d blocks planned, %d held; want none", c.name, r1.Orders, r1.BlocksPlanned, r1.Plan.BlocksHeld)
		}
		var got []string
		for _, w := range res.Summary.Warnings {
			if strings.HasPrefix(w, "event 1 ") {
				got = append(got, w)
			}
		}
		if !slices.Equal(got, []string{again}) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, again)
		}
	}
}
