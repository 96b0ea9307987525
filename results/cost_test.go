package results

import (
	"math"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// goodputScenario is a scenario with planner.slo {ttft: 100ms, itl: 10ms}
// and no planner (a fixed fleet measured against the SLO), plus sets.
func goodputScenario(t *testing.T, sets ...string) *scenarios.Scenario {
	t.Helper()
	y := "name: g\nworkload: {synthetic: {requests: 5, rate: 10}}\ncluster: {workers: 2}\nplanner: {slo: {ttft: 100ms, itl: 10ms}}\n"
	sc, err := scenarios.Parse("g.yaml", []byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestGoodput counts goodput over hand-made rows against TTFT 100 ms and
// ITL 10 ms, each arriving at 0 unless said (times in ms):
//
//	A completed, first token 100, 10 tokens to 190: TTFT 100 and ITL
//	  (190 - 100) / 9 = 10, both exactly at their bound: good
//	B completed, first token 100 ms + 1 ns, 1 token: TTFT misses by 1 ns;
//	  one token has no ITL, which counts as met
//	C completed, first token 50, 1 token: held to TTFT alone: good
//	D completed, first token 20, 3 tokens to 40 ms + 1 ns: ITL 10 ms +
//	  0.5 ns misses
//	H completed at 3 s, first token 3.3 s, 5 tokens to 3.38 s: TTFT 300,
//	  ITL 20: both miss
//	E rejected at 4 s, F failed at 1 s, G unfinished: not completed, in
//	  nothing
//
// Completed A, B, C, D, H: 5. Good A and C: 2, a share of 0.4; TTFT met
// by A, C, D (0.6), ITL by A, B, C (0.6). The makespan runs from the
// first arrival (0) to the last end (E's, 4 s): 2 / 4 s = 0.5 a second.
func TestGoodput(t *testing.T) {
	const ms = int64(des.Millisecond)
	rows := []report.RequestRow{
		{ArrivalNs: 0, FirstTokenNs: 100 * ms, FinishNs: 190 * ms, OutputTokens: 10, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 0, FirstTokenNs: 100*ms + 1, FinishNs: 100*ms + 1, OutputTokens: 1, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 0, FirstTokenNs: 50 * ms, FinishNs: 50 * ms, OutputTokens: 1, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 0, FirstTokenNs: 20 * ms, FinishNs: 40*ms + 1, OutputTokens: 3, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 3000 * ms, FirstTokenNs: 3300 * ms, FinishNs: 3380 * ms, OutputTokens: 5, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 4000 * ms, FirstTokenNs: -1, FinishNs: 4000 * ms, OutputTokens: 5, Outcome: report.OutcomeRejected},
		{ArrivalNs: 0, FirstTokenNs: 10 * ms, FinishNs: 1000 * ms, OutputTokens: 5, Outcome: report.OutcomeFailed},
		{ArrivalNs: 0, FirstTokenNs: -1, FinishNs: -1, OutputTokens: 5, Outcome: report.OutcomeUnfinished},
	}
	sc := goodputScenario(t)
	st := NewStats(sc)
	for i := range rows {
		st.RequestEnded(&rows[i])
	}
	s, _ := Summarize(&st, nil, RunEnd{Scenario: sc, Added: []des.Time{0, 0}, Removed: []des.Time{-1, -1}})
	want := Goodput{SLOTTFTMs: 100, SLOITLMs: 10, Requests: 2, RequestsPerS: 0.5, Share: 0.4, TTFTAttainment: 0.6, ITLAttainment: 0.6}
	if s.Goodput == nil || *s.Goodput != want {
		t.Fatalf("goodput %+v, want %+v", s.Goodput, want)
	}
	if s.Requests.Completed != 5 || s.MakespanNs != 4000*ms || s.Planner != nil {
		t.Errorf("completed %d, makespan %d ns, planner %+v", s.Requests.Completed, s.MakespanNs, s.Planner)
	}
	// 2 workers from 0 to the last end at 4 s: 8 worker-seconds, 2 on average.
	if s.Cost != (Cost{WorkerSeconds: 8, MeanWorkers: 2, UntilNs: 4000 * ms}) {
		t.Errorf("cost %+v", s.Cost)
	}
	r := SweepRow(0, nil, s)
	if r.GoodputRequests != 2 || r.GoodputRequestsPerS != 0.5 || r.GoodputShare != 0.4 || r.TTFTAttainment != 0.6 || r.ITLAttainment != 0.6 {
		t.Errorf("sweep row %+v", r)
	}
	for name, v := range map[string]Value{"goodput_requests": {Int: 2, IsInt: true}, "goodput_share": {Float: 0.4},
		"goodput_requests_per_s": {Float: 0.5}, "worker_seconds": {Float: 8}, "planner_drains": {Int: 0, IsInt: true}} {
		if got, err := Metric(s, name); err != nil || got != v {
			t.Errorf("metric %s = %v (%v), want %v", name, got, err, v)
		}
	}

	// Without planner.slo nothing is measured: no goodput in summary.json,
	// null (-1, NaN) in sweep.parquet.
	noSLO := goodputScenario(t, "planner=null")
	plain := NewStats(noSLO)
	for i := range rows {
		plain.RequestEnded(&rows[i])
	}
	s, _ = Summarize(&plain, nil, RunEnd{Scenario: noSLO, Added: []des.Time{0, 0}, Removed: []des.Time{-1, -1}})
	r = SweepRow(0, nil, s)
	if s.Goodput != nil || r.GoodputRequests != -1 || !math.IsNaN(r.GoodputShare) || !math.IsNaN(r.ITLAttainment) {
		t.Errorf("without slo: goodput %+v, row %+v", s.Goodput, r)
	}
}

// TestCostOf: each worker from its add to its removal, or to the run's
// end (5.01 s) when never removed; one added after the end counts
// nothing, one removed after it counts to its removal. Workers 0 and 1
// from 0, to 3.005 s and the end: 3.005 + 5.01; worker 2 from 2 s: 3.01;
// worker 3 added at 6 s: 0; worker 4 from 0 to 5.5 s: 5.5. In all 16.525
// worker-seconds, 16.525 / 5.01 workers on average.
func TestCostOf(t *testing.T) {
	const ms = des.Millisecond
	got := costOf([]des.Time{0, 0, 2000 * ms, 6000 * ms, 0}, []des.Time{3005 * ms, -1, -1, -1, 5500 * ms}, 5010*ms)
	want := Cost{WorkerSeconds: 16.525, MeanWorkers: 16.525 / 5.01, UntilNs: int64(5010 * ms)}
	if math.Abs(got.WorkerSeconds-want.WorkerSeconds) > 1e-12 || math.Abs(got.MeanWorkers-want.MeanWorkers) > 1e-12 || got.UntilNs != want.UntilNs {
		t.Errorf("cost %+v, want %+v", got, want)
	}
	if got := costOf(nil, nil, 0); got != (Cost{}) {
		t.Errorf("no workers, no time: %+v", got)
	}
}

// TestPlannerActions sums the planner's fired rows alone: a scripted drain
// and a chaos down are not its; an add of workers 3, 4 (1 add, 2
// workers); a drain of worker 1 that landed 7 blocks and left 3 in G2 at
// its removal; a drain of workers 2, 5 that landed none and whose workers
// were not all removed (g2_blocks_left -1: adds none); an add that never
// fired. Adds 1, workers added 2; drains 2, workers drained 3; 7 blocks
// evacuated, 3 left.
func TestPlannerActions(t *testing.T) {
	planner := string(scenarios.OriginPlanner)
	rows := []report.EventRow{
		{Kind: "drain", Origin: "scenario", Workers: "0", Fired: true, BlocksLanded: 5, G2BlocksLeft: 9},
		{Kind: "add", Origin: planner, Workers: "3,4", Fired: true, G2BlocksLeft: -1},
		{Kind: "drain", Origin: planner, Workers: "1", Fired: true, BlocksLanded: 7, G2BlocksLeft: 3},
		{Kind: "down", Origin: string(scenarios.OriginChaos), Workers: "2", Fired: true, G2BlocksLeft: -1},
		{Kind: "drain", Origin: planner, Workers: "2,5", Fired: true, BlocksLanded: 0, G2BlocksLeft: -1},
		{Kind: "add", Origin: planner, Workers: "", Fired: false, G2BlocksLeft: -1},
	}
	want := PlannerActions{Adds: 1, Drains: 2, WorkersAdded: 2, WorkersDrained: 3, BlocksEvacuated: 7, G2BlocksLeft: 3}
	got := plannerActions(rows)
	if *got != want {
		t.Errorf("planner %+v, want %+v", *got, want)
	}
	r := SweepRow(0, nil, &Summary{Planner: got})
	if r.PlannerAdds != 1 || r.PlannerDrains != 2 || r.PlannerWorkersAdded != 2 || r.PlannerWorkersDrained != 3 ||
		r.PlannerBlocksEvacuated != 7 || r.PlannerG2BlocksLeft != 3 {
		t.Errorf("sweep row %+v", r)
	}
}

// TestGoodputNeedsSLO: an expect entry naming a goodput metric is refused
// when the scenario sets no planner.slo, and taken when it does; the
// cost, which every run has, is taken either way.
func TestGoodputNeedsSLO(t *testing.T) {
	for _, c := range []struct {
		sets []string
		err  string
	}{
		{[]string{`expect=["goodput_share >= 0.9", "worker_seconds < 100"]`}, ""},
		{[]string{"planner=null", `expect=["worker_seconds < 100", "planner_adds == 0"]`}, ""},
		{[]string{"planner=null", `expect=["goodput_share >= 0.9"]`}, "expect[0]: goodput_share is measured against planner.slo, which the scenario does not set"},
	} {
		err := CheckExpect(goodputScenario(t, c.sets...))
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.sets, err, c.err)
		}
	}
}

// TestSweepRowScriptedEvents: a sweep row's event columns are the
// scenario's events, without the planner's actions, which differ from run
// to run.
func TestSweepRowScriptedEvents(t *testing.T) {
	s := &Summary{EventRows: []report.EventRow{{Event: 0, Kind: "drain", Origin: "scenario"}, {Event: 1, Kind: "link", Origin: "chaos"},
		{Event: 2, Kind: "add", Origin: "planner"}, {Event: 3, Kind: "drain", Origin: "planner"}}}
	if ev := SweepRow(0, nil, s).Events; len(ev) != 2 || ev[1].Origin != "chaos" {
		t.Errorf("events %+v", ev)
	}
}
