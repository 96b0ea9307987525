package results

import (
	"strings"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// Cost is summary.json's cost: the worker-seconds the run provisioned
// (DESIGN.md section 13), each worker counted from its add (0 for the
// initial ones) to its removal or, never removed, to UntilNs: starting,
// ready, draining and down alike, whether or not it served. A worker
// added after UntilNs and never removed counts nothing.
type Cost struct {
	WorkerSeconds float64 `json:"worker_seconds"`
	// MeanWorkers is WorkerSeconds over UntilNs: the workers provisioned
	// on average from time 0 to the run's end (0 when UntilNs is 0).
	MeanWorkers float64 `json:"mean_workers"`
	// UntilNs is the run's end the workers never removed count to: the
	// last request's end (the first arrival plus makespan_ns), the end at
	// which the planner stops deciding (unless planner.tail stopped it
	// before).
	UntilNs int64 `json:"until_ns"`
}

// Goodput is summary.json's goodput: the completed requests whose TTFT
// (first token - arrival) and mean ITL ((finish - first token) / (output
// tokens - 1), as the serving benchmarks compute it) are both within the
// scenario's planner.slo; a one-token output has no ITL and is held to
// the TTFT bound alone. A bound met exactly counts as met.
type Goodput struct {
	SLOTTFTMs float64 `json:"slo_ttft_ms"` // planner.slo.ttft
	SLOITLMs  float64 `json:"slo_itl_ms"`  // planner.slo.itl
	Requests  int64   `json:"requests"`    // completed requests meeting both bounds
	// RequestsPerS is Requests over the makespan (first arrival to last
	// request end), as throughput's requests_per_s; 0 for a makespan of 0.
	RequestsPerS float64 `json:"requests_per_s"`
	// Share is Requests over the completed requests; TTFTAttainment and
	// ITLAttainment the shares of the completed meeting each bound alone
	// (a one-token output meets the ITL bound). All 0 when none completed.
	Share          float64 `json:"share"`
	TTFTAttainment float64 `json:"ttft_attainment"`
	ITLAttainment  float64 `json:"itl_attainment"`
}

// PlannerActions is summary.json's planner: what the planner did, from
// its events' rows (origin planner) that fired. Adds and Drains are its
// add and drain actions, WorkersAdded and WorkersDrained the workers they
// named; BlocksEvacuated the G2 blocks its drains' evacuations landed
// (kv_blocks_landed) and G2BlocksLeft those its drained workers still held
// when removed (g2_blocks_left, lost with them; a drain whose workers
// were not all removed adds none).
type PlannerActions struct {
	Policy          string `json:"policy"` // planner.policy
	Adds            int64  `json:"adds"`
	Drains          int64  `json:"drains"`
	WorkersAdded    int64  `json:"workers_added"`
	WorkersDrained  int64  `json:"workers_drained"`
	BlocksEvacuated int64  `json:"blocks_evacuated"`
	G2BlocksLeft    int64  `json:"g2_blocks_left"`
	BlocksPrewarmed int64  `json:"blocks_prewarmed"`
	// What it was set to do, so that a 0 above says whether it tried:
	// its drains evacuate, its adds prewarm, and KVCR tracks the G2 its
	// drained workers leave behind.
	Evacuate bool `json:"evacuate"`
	Prewarm  bool `json:"prewarm"`
	KVCR     bool `json:"kvcr"`
}

// goodputCounts are the completed requests meeting a latency objective:
// both bounds, and each alone.
type goodputCounts struct {
	slo       scenarios.SLO
	good      int64
	ttftMet   int64
	itlMet    int64
	completed int64
}

// add counts a completed request's row.
func (g *goodputCounts) add(r *report.RequestRow) {
	g.completed++
	ttft := r.FirstTokenNs-r.ArrivalNs <= int64(g.slo.TTFT)
	// (finish - first) / (out - 1) <= itl, exactly: no division
	itl := r.OutputTokens <= 1 || r.FinishNs-r.FirstTokenNs <= int64(g.slo.ITL)*(r.OutputTokens-1)
	if ttft {
		g.ttftMet++
	}
	if itl {
		g.itlMet++
	}
	if ttft && itl {
		g.good++
	}
}

// summary is the counts as summary.json's goodput, over a makespan of
// makespanNs.
func (g *goodputCounts) summary(makespanNs int64) *Goodput {
	out := &Goodput{SLOTTFTMs: float64(g.slo.TTFT) / 1e6, SLOITLMs: float64(g.slo.ITL) / 1e6, Requests: g.good}
	if makespanNs > 0 {
		out.RequestsPerS = float64(g.good) / (float64(makespanNs) / 1e9)
	}
	if n := float64(g.completed); n > 0 {
		out.Share, out.TTFTAttainment, out.ITLAttainment = float64(g.good)/n, float64(g.ttftMet)/n, float64(g.itlMet)/n
	}
	return out
}

// costOf is the run's cost: its workers' provisioned time, added and
// removed their add and removal times by id (removal -1: never), to until
// for those never removed.
func costOf(added, removed []des.Time, until des.Time) Cost {
	var ns int64
	for i, a := range added {
		end := until
		if i < len(removed) && removed[i] >= 0 {
			end = removed[i]
		}
		ns += max(0, int64(end-a))
	}
	c := Cost{WorkerSeconds: float64(ns) / 1e9, UntilNs: int64(until)}
	if until > 0 {
		c.MeanWorkers = float64(ns) / float64(until)
	}
	return c
}

// plannerActions sums the planner's fired add and drain rows of rows.
func plannerActions(rows []report.EventRow) *PlannerActions {
	p := &PlannerActions{}
	for i := range rows {
		r := &rows[i]
		if r.Origin != string(scenarios.OriginPlanner) || !r.Fired {
			continue
		}
		named := int64(0)
		if r.Workers != "" {
			named = int64(strings.Count(r.Workers, ",") + 1)
		}
		switch r.Kind {
		case kindAdd:
			p.Adds++
			p.WorkersAdded += named
			p.BlocksPrewarmed += r.BlocksLanded
		case kindDrain:
			p.Drains++
			p.WorkersDrained += named
			p.BlocksEvacuated += r.BlocksLanded
			p.G2BlocksLeft += max(0, r.G2BlocksLeft) // -1: not all removed
		}
	}
	return p
}
