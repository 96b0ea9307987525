package sim

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// plannerBody: one worker to begin with, fixed timing (10 ms prefill,
// 5 ms decode), one request running at a time (max_num_seqs 1), 100 G1
// blocks, round robin, a decision every 100 ms; an added worker starts
// in 150 ms.
const plannerBody = `cluster:
  workers: 1
  engine: {block_size: 16, gpu_blocks: 100, max_num_seqs: 1, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
router: {policy: round_robin}
planner:
  interval: 100ms
  startup: 150ms
  scale_in: {pick: busiest}
`

// plannerLines: six requests at 0 ms and one at 400 ms, each 8 prompt
// tokens and 8 output tokens, so each holds one G1 block from its
// prefill to its end (8 + 7 fed tokens fit in 16) and takes 10 + 7 x 5 =
// 45 ms. The six all go to worker 0, the only one at 0 ms, and run one
// after another: R0 0-45, R1 45-90, R2 90-135, R3 135-180, R4 180-225,
// R5 225-270 ms. Worker 0's waiting requests are 5 in [0, 45), 4 in [45,
// 90), 3 in [90, 135), 2 in [135, 180), 1 in [180, 225) and 0 after; one
// block is in use from 0 to 270 ms. R6 arrives at 400 ms, after that
// instant's decision, and ends at 445 ms: the last request, so the
// decision due at 500 ms is never taken. The decisions' readings, while
// worker 0 is the only one ready to 250 ms:
//
//   - [0, 100): waiting 5x45 + 4x45 + 3x10 = 435 ms over 100 ready
//     worker-ms: queue 4.35; G1 1 block x 100 ms / (100 blocks x 100):
//     kv 0.01; 6 arrivals in 0.1 s: 60/s.
//   - [100, 200): waiting 3x35 + 2x45 + 1x20 = 215 over 100: queue 2.15;
//     kv 0.01; no arrival.
//   - [200, 300), when the added workers are ready from 250 ms: waiting
//     1x25 = 25; block-ms 70 (to 270 ms).
//   - [300, 400): nothing waits, nothing is in use, nothing arrives.
var plannerLines = []traceLine{
	{0, 8, 8, ids(100, 1)}, {0, 8, 8, ids(200, 1)}, {0, 8, 8, ids(300, 1)},
	{0, 8, 8, ids(400, 1)}, {0, 8, 8, ids(500, 1)}, {0, 8, 8, ids(600, 1)},
	{400, 8, 8, ids(700, 1)},
}

// decision is what a test expects of a planner.parquet row.
type decision struct {
	at              int64 // ms
	queue, kv, rate float64
	wanted          int32
	ready, starting int32
	action          string
	workers, event  int32
	why             string // a part of the row's why
}

func checkDecisions(t *testing.T, rows []report.PlannerRow, want []decision) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%d decisions, want %d: %+v", len(rows), len(want), rows)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, w := range want {
		r := rows[i]
		if r.AtNs != w.at*ms || !near(r.Queue, w.queue) || !near(r.KV, w.kv) || !near(r.ArrivalRate, w.rate) ||
			r.Wanted != w.wanted || r.Ready != w.ready || r.Starting != w.starting || r.Action != w.action ||
			r.Workers != w.workers || r.Event != w.event || !strings.Contains(r.Why, w.why) || (w.why == "" && r.Why != "") {
			t.Errorf("decision %d: %+v, want %+v", i, r, w)
		}
	}
}

// TestPlannerLoad: the load policy (queue_up 2, queue_down 0.5, kv_up
// 0.9, kv_down 0.5, at most 2 workers). At 100 ms queue 4.35 > 2: it wants
// 1 + 1 and adds worker 1 (event 0), ready at 250 ms. At 200 ms queue 2.15
// > 2 again, it wants 2 + 1 = 3, but holds: worker 1 is starting. At 300
// ms, with workers 0 and 1 ready over 100 + 50 worker-ms, queue 25/150 =
// 0.1667 < 0.5 and kv 70/(100 x 150) = 0.004667 < 0.5: it wants 1 and
// drains one, by busiest: both are idle (R5 ended at 270 ms), the lowest
// id wins, worker 0, removed at once (event 1). At 400 ms, worker 1 alone
// over the interval, queue 0 and kv 0: it wants 0, held at min_workers 1,
// which it has: none. R6 runs on worker 1, 400-445 ms.
func TestPlannerLoad(t *testing.T) {
	body := plannerBody + "  policy: load\n  max_workers: 2\n  load: {queue_up: 2, queue_down: 0.5, kv_up: 0.9, kv_down: 0.5}\n"
	sink, res := runTraceSink(t, body, plannerLines)
	checkDecisions(t, res.Planner, []decision{
		{100, 4.35, 0.01, 60, 2, 1, 0, report.PlannerAdd, 1, 0, ""},
		{200, 2.15, 0.01, 0, 3, 1, 1, report.PlannerHold, 0, -1, "worker 1 it added is starting"},
		{300, 25.0 / 150, 70.0 / 15000, 0, 1, 2, 0, report.PlannerDrain, 1, 1, ""},
		{400, 0, 0, 0, 0, 1, 0, report.PlannerNone, 0, -1, "min_workers 1"},
	})
	w := res.Workers
	if len(w) != 2 || w[1].AddedNs != 100*ms || w[1].ReadyNs != 250*ms || w[0].DrainNs != 300*ms || w[0].RemovedNs != 300*ms || w[1].RemovedNs != -1 {
		t.Errorf("workers %+v", w)
	}
	if r := sink.rows[6]; r.Worker != 1 || r.FinishNs != 445*ms {
		t.Errorf("R6 %+v", r)
	}
	// The drain at 300 ms chose between two idle workers by id: one
	// warning for the planner's drains, none of the event's own.
	if w := strings.Join(res.Summary.Warnings, "\n"); !strings.Contains(w, "1 of the planner's drains picked by busiest among ready workers tied on the pick's score (as many requests on each)") ||
		strings.Contains(w, "events[1]") {
		t.Errorf("warnings %q", res.Summary.Warnings)
	}
	ev := res.Summary.EventRows
	if len(ev) != 2 || ev[0].Kind != "add" || ev[0].AtNs != 100*ms || ev[0].Workers != "1" || ev[0].Origin != "planner" ||
		ev[1].Kind != "drain" || ev[1].AtNs != 300*ms || ev[1].Workers != "0" || ev[1].Origin != "planner" || ev[1].WindowBeforeNs != 0 {
		t.Errorf("events %+v", ev)
	}
}

// TestPlannerThroughput: the throughput policy at 25 requests a second a
// worker, at most 3 workers, 2 a step. At 100 ms 60/s wants ceil(60/25) =
// 3: it adds 2 (workers 1 and 2, event 0). At 200 ms no arrival wants 0,
// but it holds while they start. At 300 ms, 3 ready, it wants 0 again:
// min_workers bounds it to 1, and it drains 2 (event 1), the busiest, all
// idle, so the lowest ids: workers 0 and 1. At 400 ms it wants 0 and has
// min_workers 1: none. R6 arrives after and runs on worker 2.
func TestPlannerThroughput(t *testing.T) {
	body := plannerBody + "  policy: throughput\n  max_workers: 3\n  step: 2\n  throughput: {requests_per_worker_s: 25}\n"
	sink, res := runTraceSink(t, body, plannerLines)
	q3 := 25.0 / 200 // [200, 300): waiting 25 over 100 + 2 x 50 ready worker-ms
	checkDecisions(t, res.Planner, []decision{
		{100, 4.35, 0.01, 60, 3, 1, 0, report.PlannerAdd, 2, 0, ""},
		{200, 2.15, 0.01, 0, 0, 1, 2, report.PlannerHold, 0, -1, "worker 1 it added is starting"},
		{300, q3, 70.0 / 20000, 0, 0, 3, 0, report.PlannerDrain, 2, 1, "min_workers 1"},
		{400, 0, 0, 0, 0, 1, 0, report.PlannerNone, 0, -1, "min_workers 1"},
	})
	if r := sink.rows[6]; r.Worker != 2 || r.FinishNs != 445*ms {
		t.Errorf("R6 %+v", r)
	}
	if ev := res.Summary.EventRows; len(ev) != 2 || ev[0].Workers != "1,2" || ev[1].Workers != "0,1" {
		t.Errorf("events %+v", ev)
	}
}

// TestPlannerTarget: the target policy holding 1 waiting request a ready
// worker within 10 %, at most 4 workers, 4 a step, a 250 ms scale-down
// window, with and without the hold (target.hold). At 100 ms queue 4.35
// wants ceil(1 x 4.35 / 1) = 5, bounded by max_workers to 4: it adds 3
// (workers 1-3, event 0), ready at 250 ms. At 200 ms queue 2.15 wants
// ceil(2.15) = 3: with the hold, it holds; without, it has 1 ready + 3
// starting = 4 and would scale in to 3, but it wanted 5 within the window
// (100 ms): none. At 300 ms, over 100 + 3 x 50 ready worker-ms, queue
// 25/250 = 0.1, 90 % off its target: it wants ceil(4 x 0.1) = 1, but the
// window (50, 300] holds 5: none. At 400 ms queue 0 wants 0; the window
// (150, 400] holds 3, 1 and 0: it drains to 3, one worker, the busiest of
// four idle ones by lowest id, worker 0 (event 1).
func TestPlannerTarget(t *testing.T) {
	for _, hold := range []bool{true, false} {
		body := plannerBody + "  policy: target\n  max_workers: 4\n  step: 4\n" +
			"  target: {metric: queue, value: 1, tolerance: 0.1, scale_down_window: 250ms, hold: " + strconv.FormatBool(hold) + "}\n"
		sink, res := runTraceSink(t, body, plannerLines)
		second := decision{200, 2.15, 0.01, 0, 3, 1, 3, report.PlannerNone, 0, -1, "the scale-down window: it wanted 5 within 250ms"}
		if hold {
			second.action, second.why = report.PlannerHold, "worker 1 it added is starting"
		}
		checkDecisions(t, res.Planner, []decision{
			{100, 4.35, 0.01, 60, 5, 1, 0, report.PlannerAdd, 3, 0, "max_workers 4"},
			second,
			{300, 0.1, 70.0 / 25000, 0, 1, 4, 0, report.PlannerNone, 0, -1, "the scale-down window: it wanted 5 within 250ms"},
			{400, 0, 0, 0, 0, 4, 0, report.PlannerDrain, 1, 1, "the scale-down window: it wanted 3 within 250ms"},
		})
		if ev := res.Summary.EventRows; len(ev) != 2 || ev[0].Workers != "1,2,3" || ev[1].Workers != "0" {
			t.Errorf("hold %v: events %+v", hold, ev)
		}
		if r := sink.rows[6]; r.FinishNs != 445*ms {
			t.Errorf("hold %v: R6 %+v", hold, r)
		}
	}
}

// TestPlannerTargetReadyAtDecision: target spreads the interval's load
// over the workers as they were ready in it, not over those ready at the
// decision. Startup 100 ms, no scale-down window. At 100 ms queue 4.35
// wants ceil(4.35 / 1) = 5, bounded to 4: it adds 3 (workers 1-3), ready
// at 200 ms, the next decision's instant. At 200 ms the interval [100,
// 200) had worker 0 alone ready: queue 2.15 (plannerLines), the ready
// workers averaged over it 1, so it wants ceil(1 x 2.15 / 1) = 3, and
// drains one of the 4 ready: the busiest, worker 0 (R4 running, R5
// waiting), removed once R5 ends at 270 ms. (Counting the 4 ready at 200
// ms it wanted ceil(4 x 2.15) = 9 and, at max_workers, did nothing.) At
// 300 ms workers 1-3 were ready over [200, 300) with nothing waiting or
// in use: queue 0 wants 0, min_workers makes it 1, and it drains 2 of 3,
// all idle, by lowest id: 1 and 2. At 400 ms, worker 3 alone: 0 again,
// and it has min_workers 1: none. R6 runs on worker 3, 400-445 ms.
func TestPlannerTargetReadyAtDecision(t *testing.T) {
	body := strings.Replace(plannerBody, "startup: 150ms", "startup: 100ms", 1) + "  policy: target\n  max_workers: 4\n  step: 4\n" +
		"  target: {metric: queue, value: 1, tolerance: 0.1, scale_down_window: 0s}\n"
	sink, res := runTraceSink(t, body, plannerLines)
	checkDecisions(t, res.Planner, []decision{
		{100, 4.35, 0.01, 60, 5, 1, 0, report.PlannerAdd, 3, 0, "max_workers 4"},
		{200, 2.15, 0.01, 0, 3, 4, 0, report.PlannerDrain, 1, 1, ""},
		{300, 0, 0, 0, 0, 3, 0, report.PlannerDrain, 2, 2, "min_workers 1"},
		{400, 0, 0, 0, 0, 1, 0, report.PlannerNone, 0, -1, "min_workers 1"},
	})
	if ev := res.Summary.EventRows; len(ev) != 3 || ev[1].Workers != "0" || ev[2].Workers != "1,2" {
		t.Errorf("events %+v", ev)
	}
	if w := res.Workers; len(w) != 4 || w[0].RemovedNs != 270*ms {
		t.Errorf("workers %+v", w)
	}
	if r := sink.rows[6]; r.Worker != 3 || r.FinishNs != 445*ms {
		t.Errorf("R6 %+v", r)
	}
}

// TestPlannerWantedSaturates: a rule asking for more workers than an
// int32 holds wants 2,147,483,647, not a count wrapped around: at 100 ms
// 60/s against 1e-9 requests a second a worker is 6e10, and a queue of
// 4.35 against a target of 1e-300 is 4.35e300; both add up to
// max_workers 2 (one worker).
func TestPlannerWantedSaturates(t *testing.T) {
	for _, policy := range []string{"throughput: {requests_per_worker_s: 1e-9}", "target: {value: 1e-300}"} {
		name, _, _ := strings.Cut(policy, ":")
		body := plannerBody + "  policy: " + name + "\n  max_workers: 2\n  " + policy + "\n"
		_, res := runTraceSink(t, body, plannerLines)
		if r := res.Planner[0]; r.Wanted != math.MaxInt32 || r.Action != report.PlannerAdd || r.Workers != 1 || r.Why != "max_workers 2" {
			t.Errorf("%s: the first decision %+v, want 2147483647 wanted and 1 added", name, r)
		}
	}
}

// TestNoReadyWorkerWarns: a scripted drain takes the last ready worker,
// the planner having drained the other. Two workers, R0 at 0 ms (worker
// 0, 0-45 ms), R1 at 400 ms. At 100 ms the load policy reads nothing
// waiting and kv 45 block-ms over 100 x 200: both below their _down, it
// drains one of the two idle workers, worker 0 by lowest id. The scripted
// drain of worker 1 at 150 ms (valid as written: worker 0 stays) leaves no
// worker ready. At 200 ms, none ready, it wants its min_workers 1 and adds
// worker 2, ready at 1.2 s. R1 at 400 ms finds no ready worker and fails;
// the run says so.
func TestNoReadyWorkerWarns(t *testing.T) {
	body := strings.Replace(strings.Replace(plannerBody, "workers: 1\n", "workers: 2\n", 1), "startup: 150ms", "startup: 1s", 1) +
		"  policy: load\n  load: {queue_up: 2, queue_down: 0.5, kv_up: 0.9, kv_down: 0.5}\n"
	_, res := runTraceSink(t, body, []traceLine{{0, 8, 8, ids(100, 1)}, {400, 8, 8, ids(200, 1)}}, "events=[{at: 150ms, drain: [1]}]")
	if w := res.Workers; len(w) != 3 || w[0].DrainNs != 100*ms || w[1].DrainNs != 150*ms || w[2].AddedNs != 200*ms || w[2].ReadyNs != 1200*ms {
		t.Errorf("workers %+v", w)
	}
	if res.Summary.Requests.Failed != 1 {
		t.Errorf("requests %+v, want 1 failed", res.Summary.Requests)
	}
	want := "1 request failed for want of a ready worker to route to, from 400ms to 400ms"
	if w := strings.Join(res.Summary.Warnings, "\n"); !strings.Contains(w, want) {
		t.Errorf("warnings %q lack %q", res.Summary.Warnings, want)
	}
}

// TestPlannerMeterCheck plants a change the planner did not count: worker
// 0's count says 3 waiting where it has none, and --check's meter check
// names it.
func TestPlannerMeterCheck(t *testing.T) {
	p, err := Prepare(traceScenario(t, plannerBody+"  policy: load\n  max_workers: 2\n", plannerLines))
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(p, Options{Check: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.checkMeters()
	if c.err != nil {
		t.Fatalf("a fresh cluster: %v", c.err)
	}
	c.workers[0].meter.waiting = 3
	c.checkMeters()
	var ie *InvariantError
	if !errors.As(c.err, &ie) || ie.Invariant != invPlannerMeter || !strings.Contains(ie.Error(), "worker 0") {
		t.Errorf("check: %v, want %q naming worker 0", c.err, invPlannerMeter)
	}
}

// TestPlannerSeesOnlyThePast: a planner reads what a real one could see,
// the past, never a request's output length or a later arrival. Run A is
// plannerLines' first six requests and two at 250 ms with 20 output
// tokens, running at 300 ms; run B gives those two 200 output tokens and
// adds three arrivals at 350, 360 and 370 ms. Up to 300 ms the two runs
// are the same to anyone watching the cluster: every policy's decisions
// to 300 ms must be too, while the runs differ after.
func TestPlannerSeesOnlyThePast(t *testing.T) {
	a := append(slices.Clone(plannerLines[:6]), traceLine{250, 8, 20, ids(800, 1)}, traceLine{250, 8, 20, ids(900, 1)})
	b := slices.Clone(a)
	b[6].out, b[7].out = 200, 200
	b = append(b, traceLine{350, 8, 8, ids(1000, 1)}, traceLine{360, 8, 8, ids(1100, 1)}, traceLine{370, 8, 8, ids(1200, 1)})
	for _, policy := range []string{
		"  policy: load\n  max_workers: 4\n  load: {queue_up: 2, queue_down: 0.5, kv_up: 0.9, kv_down: 0.5}\n",
		"  policy: throughput\n  max_workers: 4\n  throughput: {requests_per_worker_s: 25}\n",
		"  policy: target\n  max_workers: 4\n  target: {value: 1, scale_down_window: 250ms}\n",
	} {
		_, ra := runTraceSink(t, plannerBody+policy, a)
		_, rb := runTraceSink(t, plannerBody+policy, b)
		if ra.Summary.Digest == rb.Summary.Digest {
			t.Errorf("%s: the runs are the same", policy)
		}
		n := 0
		for n < len(ra.Planner) && ra.Planner[n].AtNs <= 300*ms {
			n++
		}
		if n != 3 || len(rb.Planner) < n || !slices.EqualFunc(ra.Planner[:n], rb.Planner[:n], sameDecision) {
			t.Errorf("%s: decisions to 300 ms\n%+v\n%+v", policy, ra.Planner[:n], rb.Planner[:min(n, len(rb.Planner))])
		}
	}
}

// sameDecision compares two planner rows, NaN readings equal.
func sameDecision(x, y report.PlannerRow) bool {
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	qx, kx, qy, ky := x.Queue, x.KV, y.Queue, y.KV
	x.Queue, x.KV, y.Queue, y.KV = 0, 0, 0, 0
	return x == y && same(qx, qy) && same(kx, ky)
}

// TestPlannerNoAction: a load planner whose thresholds the workload never
// crosses (queue_up 100; queue_down and kv_down 0, below which no reading
// falls) takes no action in its four decisions, and the warnings say the
// run is its fixed fleet.
func TestPlannerNoAction(t *testing.T) {
	body := plannerBody + "  policy: load\n  max_workers: 2\n  load: {queue_up: 100, queue_down: 0, kv_up: 1, kv_down: 0}\n"
	_, res := runTraceSink(t, body, plannerLines)
	if len(res.Planner) != 4 || len(res.Summary.EventRows) != 0 {
		t.Errorf("%d decisions, %d events", len(res.Planner), len(res.Summary.EventRows))
	}
	if w := strings.Join(res.Summary.Warnings, "\n"); !strings.Contains(w, "the load planner took no action in its 4 decisions: the run is its fixed fleet of 1 worker (") {
		t.Errorf("warnings %q", res.Summary.Warnings)
	}
}

// TestPlannerWarningsSayWhy: the warnings of a planner that did nothing
// say what held it. With max_workers 1 and queue_up 2: at 100 and 200 ms
// queue 4.35 and 2.15 want 2, held at max_workers 1; at 300 ms queue 25 /
// 100 = 0.25 and kv 70 / 10000 are below their _down (0.5) and at 400 ms
// both are 0: they want 0, held at min_workers 1. Two rows say each; the
// first in order is "max_workers 1". With the first six requests alone
// (the last arrival at 0) and planner.tail 150 ms, the decision at 100 ms
// is the last (200 > 0 + 150): R2 runs, R3 to R5 wait, 4 in flight, and
// no drain timeout took a request off: the workers had not finished them,
// not a flapping planner.
func TestPlannerWarningsSayWhy(t *testing.T) {
	body := plannerBody + "  policy: load\n  max_workers: 1\n  load: {queue_up: 2, queue_down: 0.5, kv_up: 0.9, kv_down: 0.5}\n"
	_, res := runTraceSink(t, body, plannerLines)
	want := `the load planner took no action in its 4 decisions: the run is its fixed fleet of 1 worker (2 of them say "max_workers 1": look at planner.parquet's why)`
	if !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q lack %q", res.Summary.Warnings, want)
	}
	_, res = runTraceSink(t, body+"  tail: 150ms\n", plannerLines[:6])
	want = "the planner stopped deciding at 100ms, planner.tail (150ms) after the last arrival, with 4 requests still in flight: its workers had not finished them"
	if w := strings.Join(res.Summary.Warnings, "\n"); !strings.Contains(w, want) || strings.Contains(w, "flapping") {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

// TestPlannerKeepsOneReady: the target policy without a hold and without a
// scale-down window adds 3 at 100 ms (queue 4.35 wants 5, bounded to 4);
// at 200 ms queue 2.15 wants 3 of its 4 (1 ready, 3 starting) and would
// drain one, but the one ready worker is the last: it drains none, as a
// scripted drain may not leave none ready.
func TestPlannerKeepsOneReady(t *testing.T) {
	body := plannerBody + "  policy: target\n  max_workers: 4\n  step: 4\n  target: {value: 1, scale_down_window: 0s, hold: false}\n"
	_, res := runTraceSink(t, body, plannerLines)
	if len(res.Planner) < 2 {
		t.Fatalf("decisions %+v", res.Planner)
	}
	if r := res.Planner[1]; r.AtNs != 200*ms || r.Wanted != 3 || r.Ready != 1 || r.Starting != 3 || r.Action != report.PlannerNone || r.Why != "1 worker ready, one kept" {
		t.Errorf("decision at 200 ms %+v", r)
	}
}

// TestPlannerNoDecision: a run that ends (445 ms) before the first decision
// (1 s) says so.
func TestPlannerNoDecision(t *testing.T) {
	_, res := runTraceSink(t, plannerBody+"  policy: load\n  max_workers: 2\n", plannerLines, "planner.interval=1s")
	if w := strings.Join(res.Summary.Warnings, "\n"); len(res.Planner) != 0 ||
		!strings.Contains(w, "the run ended before the load planner's first decision at 1s: it is the fixed fleet of 1 worker") {
		t.Errorf("%d decisions; warnings %q", len(res.Planner), res.Summary.Warnings)
	}
}

// TestPlannerLoadNeedsBoth: the load policy drains only when both readings
// are below their _down thresholds. With kv_down 0.004, at 300 ms queue
// 0.1667 is below 0.5 but kv 70 / 15000 = 0.004667 is not: none. At 400
// ms both are 0: it drains one (event 1), the busiest of two idle workers
// by id, worker 0.
func TestPlannerLoadNeedsBoth(t *testing.T) {
	body := plannerBody + "  policy: load\n  max_workers: 2\n  load: {queue_up: 2, queue_down: 0.5, kv_up: 0.9, kv_down: 0.004}\n"
	_, res := runTraceSink(t, body, plannerLines)
	checkDecisions(t, res.Planner, []decision{
		{100, 4.35, 0.01, 60, 2, 1, 0, report.PlannerAdd, 1, 0, ""},
		{200, 2.15, 0.01, 0, 3, 1, 1, report.PlannerHold, 0, -1, "worker 1 it added is starting"},
		{300, 25.0 / 150, 70.0 / 15000, 0, 2, 2, 0, report.PlannerNone, 0, -1, ""},
		{400, 0, 0, 0, 1, 2, 0, report.PlannerDrain, 1, 1, ""},
	})
}

// TestPlannerStep: the throughput policy at 25 requests a second a worker
// and 1 a step wants ceil(60 / 25) = 3 at 100 ms and adds 1, cut by the
// step.
func TestPlannerStep(t *testing.T) {
	body := plannerBody + "  policy: throughput\n  max_workers: 3\n  step: 1\n  throughput: {requests_per_worker_s: 25}\n"
	_, res := runTraceSink(t, body, plannerLines)
	if r := res.Planner[0]; r.Wanted != 3 || r.Action != report.PlannerAdd || r.Workers != 1 || r.Why != "step 1" {
		t.Errorf("decision at 100 ms %+v", r)
	}
}

// TestPlannerHoldsWhileDraining: two workers take R0-R5 round robin (R0,
// R2, R4 on worker 0: 0-45, 45-90, then R4 with 40 output tokens 90-295
// ms; R1, R3, R5 on worker 1, to 135 ms). At 100 ms the throughput policy
// at 100 requests a second a worker wants ceil(60 / 100) = 1 and drains
// one, the busiest: both run one request and wait none, so worker 0 by
// id, which finishes R4 at 295 ms and is removed then. At 200 ms it wants
// 1 again but holds: worker 0 is still draining. At 300 ms, worker 0
// gone, it has 1: none.
func TestPlannerHoldsWhileDraining(t *testing.T) {
	lines := slices.Clone(plannerLines)
	lines[4].out = 40
	body := plannerBody + "  policy: throughput\n  max_workers: 2\n  throughput: {requests_per_worker_s: 100}\n"
	_, res := runTraceSink(t, body, lines, "cluster.workers=2")
	if len(res.Planner) < 3 {
		t.Fatalf("decisions %+v", res.Planner)
	}
	if r := res.Planner[0]; r.Action != report.PlannerDrain || r.Workers != 1 || r.Wanted != 1 {
		t.Errorf("100 ms %+v", r)
	}
	if r := res.Planner[1]; r.Action != report.PlannerHold || r.Why != "worker 0 it drained is draining" || r.Draining != 1 {
		t.Errorf("200 ms %+v", r)
	}
	if r := res.Planner[2]; r.Action != report.PlannerNone || r.Ready != 1 || r.Draining != 0 {
		t.Errorf("300 ms %+v", r)
	}
	if w := res.Workers[0]; w.DrainNs != 100*ms || w.RemovedNs != 295*ms {
		t.Errorf("worker 0 %+v", w)
	}
}

// TestPlannerSeesDown: worker 0, the only one, goes down at 50 ms for 20
// ms (restarting at once, its G1 empty): its requests are taken off and,
// no worker being ready, fail. Over [0, 100) it was ready 80 ms; it had 5
// waiting to 45 ms and 4 to 50 ms: queue (225 + 20) / 80 = 3.0625, and one
// block in use to 50 ms: kv 50 / (100 x 80) = 0.00625. Every change was
// counted (--check's meter check passes through the fault).
func TestPlannerSeesDown(t *testing.T) {
	body := plannerBody + "  policy: load\n  max_workers: 2\n  load: {queue_up: 2, queue_down: 0.5, kv_up: 0.9, kv_down: 0.5}\n" +
		"events:\n  - {at: 50ms, for: 20ms, down: {workers: [0]}}\n"
	_, res := runTraceSink(t, body, plannerLines)
	checkDecisions(t, res.Planner[:1], []decision{{100, 245.0 / 80, 50.0 / 8000, 60, 2, 1, 0, report.PlannerAdd, 1, 1, ""}})
}

// TestPlannerNoHoldOverReadyWorkerDown: a worker the planner added that was
// ready and then went down holds no decision: the add was done. Worker 1,
// added at 100 ms and ready at 250 ms, goes down at 260 ms for the rest of
// the run; at 300 ms the planner decides (none: it wants the 2 it has).
func TestPlannerNoHoldOverReadyWorkerDown(t *testing.T) {
	body := plannerBody + "  policy: load\n  max_workers: 2\n  load: {queue_up: 2, queue_down: 0, kv_up: 0.9, kv_down: 0}\n" +
		"events:\n  - {at: 260ms, down: {workers: {count: 1, pick: highest_id}}}\n"
	_, res := runTraceSink(t, body, plannerLines)
	if len(res.Planner) < 3 || res.Planner[2].AtNs != 300*ms || res.Planner[2].Action == report.PlannerHold {
		t.Errorf("decisions %+v", res.Planner)
	}
}

// TestPlannerFastForwardDay: on the shipped day (scenarios/planner-day-32w
// .yaml, 12,031 requests), the throughput and the tuned target policies
// decide the same, reading to the bit the same figures, pass by pass and
// with the decode fast-forward, which split the intervals into different
// pieces: the integrals are exact (a float sum of count x ns rounds past
// 2^53, as the throughput policy's 180 s intervals reach).
func TestPlannerFastForwardDay(t *testing.T) {
	if testing.Short() {
		t.Skip("two days each way")
	}
	t.Setenv("KVSIM_TRACES", tracestest.Dir(t))
	for _, sets := range [][]string{
		{"planner.policy=throughput"},
		{"planner.policy=target", "planner.step=8", "planner.target={metric: queue, value: 1, hold: false}"},
	} {
		sc, err := scenarios.Load("../scenarios/planner-day-32w.yaml", sets)
		if err != nil {
			t.Fatal(err)
		}
		runWays(t, sc)
	}
}

// TestArea: an area sums count x ns in 128 bits: 3 x 2^62 ns three times
// is 9 x 2^62 = 2^65 + 2^62, hi 2 and lo 2^62, whatever the order; as a
// float, 9 x 2^62.
func TestArea(t *testing.T) {
	var a area
	for range 3 {
		a.add(3, 1<<62)
	}
	if a != (area{hi: 2, lo: 1 << 62}) || a.float() != 9*(1<<62) {
		t.Errorf("area %+v, %g", a, a.float())
	}
}

// TestWindowMost: the scale-down window's most wanted, kept as a list of
// the recommendations no later one matches, is what the scan it replaced
// finds: the largest of every decision kept, a decision kept until one
// comes a window or more after it (the current decision always counts),
// after each of 20,000 random decisions (1 to 3 ms apart, 0 to 9 workers
// wanted, windows of 0 to 50 ms, so that decisions fall exactly on the
// window's edge too).
func TestWindowMost(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, window := range []des.Time{0, des.Millisecond, 7 * des.Millisecond, 50 * des.Millisecond} {
		p := &planner{cfg: &scenarios.Planner{Target: scenarios.TargetPolicy{ScaleDownWindow: scenarios.Duration(window)}}}
		var scan []recommendation // the scan's list: every decision in the window
		now := des.Time(0)
		for range 5000 {
			now += des.Time(1+r.IntN(3)) * des.Millisecond
			n := r.IntN(10)
			p.remember(now, n)
			scan = append(slices.DeleteFunc(scan, func(d recommendation) bool { return d.at <= now-window }), recommendation{now, n})
			want := 0
			for _, d := range scan {
				want = max(want, d.n)
			}
			if got := p.windowMost(); got != want {
				t.Fatalf("window %v, at %v: most %d, want %d", window, now, got, want)
			}
		}
	}
}
