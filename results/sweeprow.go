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
	ttft, tpot, itl, e2e := s.TTFT, s.TPOT, s.ITL, s.E2E // of no sample: NaN already (Summarize)
	g1, g2, pulled := s.Hits()
	return report.SweepRow{
		Run: run, Params: params,
		Completed: s.Requests.Completed, Rejected: s.Requests.Rejected, Failed: s.Requests.Failed,
		Unfinished: s.Requests.Unfinished,
		TTFTP50:    ttft.P50, TTFTP90: ttft.P90, TTFTP99: ttft.P99, TPOTP50: tpot.P50, TPOTP99: tpot.P99,
		ITLP99: itl.P99, E2EP50: e2e.P50, E2EP99: e2e.P99,
		HitG1: g1, HitG2: g2, HitPulled: pulled,
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

// Hits is the share of the completed requests' prompt tokens from G1, G2
// and pulls, NaN (none) when no prompt completed: sweep.parquet's and
// compare's. (summary.json's hit_ratio keeps 0 then.)
func (s *Summary) Hits() (g1, g2, pulled float64) {
	t := &s.Tokens
	return ratio(t.G1Hit, t.Input), ratio(t.G2Hit, t.Input), ratio(t.Pulled, t.Input)
}
