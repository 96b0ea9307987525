package sim

import (
	"testing"

	"github.com/kvsim/kvsim/results"
)

// TestWorkerSeconds works out a run's worker-seconds by hand. fixed10x5
// on 2 workers, no KVCR; the router (its default policy) sends R0 and R1
// to worker 0, as the test checks. R0 (1 token) arrives at 0 and runs
// 0-10 ms. At 2 s an add starts worker 2 (startup 1 s: ready at 3 s). R1
// (2 tokens) arrives at 2.99 s: prefill 2.99-3.0 s, its second token 5 ms
// later, at 3.005 s. At 3 s worker 0 drains, busy with R1: it is removed
// when R1 ends, at 3.005 s. R2 (1 token) arrives at 5 s and ends at 5.01
// s: the last request's end, the run's end the workers never removed
// count to.
//
// Worker 0: 0 to its removal at 3.005 s, 3.005 s; worker 1: 0 to 5.01 s,
// 5.01 s; worker 2: from its add at 2 s (starting until 3 s, which
// counts) to 5.01 s, 3.01 s. In all 11.025 worker-seconds; over the 5.01
// s from 0 to the run's end, 2.2006 workers on average. Without a
// planner, no planner object; without planner.slo, no goodput.
func TestWorkerSeconds(t *testing.T) {
	lines := []traceLine{{0, 16, 1, ids(1, 1)}, {2990, 16, 2, ids(2, 1)}, {5000, 16, 1, ids(3, 1)}}
	rows, res := runTraceSink(t, fixed10x5, lines, "cluster.workers=2",
		"events=[{at: 2s, add: 1, startup: 1s}, {at: 3s, drain: [0]}]")
	if r := rows.rows[1]; rows.rows[0].Worker != 0 || r.Worker != 0 || r.FinishNs != 3005*ms {
		t.Fatalf("R0 %+v, R1 %+v: want both on worker 0, R1 ending at 3.005 s", rows.rows[0], r)
	}
	if r := rows.rows[2]; r.FinishNs != 5010*ms {
		t.Fatalf("R2 %+v, want finish 5.01 s", r)
	}
	if w := res.Workers; len(w) != 3 || w[0].RemovedNs != 3005*ms || w[1].RemovedNs != -1 || w[2].AddedNs != 2000*ms || w[2].ReadyNs != 3000*ms {
		t.Fatalf("workers %+v", w)
	}
	s := res.Summary
	want := results.Cost{WorkerSeconds: 11.025, MeanWorkers: 11.025 / 5.01, UntilNs: 5010 * ms}
	if s.Cost != want {
		t.Errorf("cost %+v, want %+v", s.Cost, want)
	}
	if s.Planner != nil || s.Goodput != nil {
		t.Errorf("planner %+v, goodput %+v: want none", s.Planner, s.Goodput)
	}
	row := results.SweepRow(0, nil, s)
	if row.WorkerSeconds != 11.025 || row.MeanWorkers != 11.025/5.01 || row.GoodputRequests != -1 || row.PlannerDrains != 0 {
		t.Errorf("sweep row %+v", row)
	}
}
