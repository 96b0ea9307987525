package sim

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
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
	if w := strings.Join(res.Summary.Warnings, "\n"); !strings.Contains(w, "1 of the planner's drains picked by busiest among ready workers tied") ||
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
			"  target: {metric: queue, value: 1, tolerance: 0.1, scale_down_window: 250ms, hold: " + map[bool]string{true: "true", false: "false"}[hold] + "}\n"
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
