package results

import (
	"math"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// SweepRow is the sweep.parquet row of the run s summarises: run is its
// index in the grid, params its varied keys' values. The metrics of a run
// (Metric) read sweep.parquet's columns from it too.
func SweepRow(run int64, params []string, s *Summary) report.SweepRow {
	c := CountersOf(s.Counters)
	nan := math.NaN()
	g := Goodput{Requests: -1, RequestsPerS: nan, Share: nan, TTFTAttainment: nan, ITLAttainment: nan} // no planner.slo: null
	if s.Goodput != nil {
		g = *s.Goodput
	}
	p := PlannerActions{}
	if s.Planner != nil {
		p = *s.Planner
	}
	return report.SweepRow{
		Run: run, Params: params,
		Completed: s.Requests.Completed, Rejected: s.Requests.Rejected, Failed: s.Requests.Failed,
		Unfinished: s.Requests.Unfinished,
		TTFTP50:    s.TTFT.P50, TTFTP90: s.TTFT.P90, TTFTP99: s.TTFT.P99, TPOTP50: s.TPOT.P50, TPOTP99: s.TPOT.P99,
		ITLP99: s.ITL.P99, E2EP50: s.E2E.P50, E2EP99: s.E2E.P99,
		HitG1: s.HitRatio.G1, HitG2: s.HitRatio.G2, HitPulled: s.HitRatio.Pulled,
		RequestsPerS: s.Throughput.RequestsPerS, OutputTokensPerS: s.Throughput.OutputTokensPerS,
		PullsStaged: c.PullsStaged, PullsSuccess: c.PullsSuccess, PullsPartial: c.PullsPartial,
		PullsFailed: c.PullsFailed, PullsExpired: c.PullsExpired, PullsSuperseded: c.PullsSuperseded,
		PullsRejected: c.PullsRejected(),
		PullsParked:   c.PullsParked, BytesPulled: c.BytesPulled, Rerouted: c.RequestsRerouted,
		WorkersRemoved: c.WorkersRemoved, MakespanNs: s.MakespanNs,
		WorkerSeconds: s.Cost.WorkerSeconds, MeanWorkers: s.Cost.MeanWorkers,
		GoodputRequests: g.Requests, GoodputRequestsPerS: g.RequestsPerS, GoodputShare: g.Share,
		TTFTAttainment: g.TTFTAttainment, ITLAttainment: g.ITLAttainment,
		PlannerAdds: p.Adds, PlannerDrains: p.Drains, PlannerWorkersAdded: p.WorkersAdded, PlannerWorkersDrained: p.WorkersDrained,
		PlannerBlocksEvacuated: p.BlocksEvacuated, PlannerG2BlocksLeft: p.G2BlocksLeft,
		Digest: s.Digest, Events: scripted(s.EventRows),
	}
}

// scripted is a run's events rows without its planner's: a sweep's event
// columns are the scenario's events, the same in every run, where a
// planner's actions differ from run to run (the planner_* columns sum
// them). The planner's rows come after the scenario's.
func scripted(rows []report.EventRow) []report.EventRow {
	for i, r := range rows {
		if r.Origin == string(scenarios.OriginPlanner) {
			return rows[:i]
		}
	}
	return rows
}
