package sim

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/workload"
)

// Summary is a run's summary.json, less the wall time, which the caller
// adds.
type Summary struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Digest is the run's kvsim-digest-v1 (docs/digest.md): equal digests,
	// equal behaviour.
	Digest   string `json:"digest"`
	Workers  int    `json:"workers"`
	Requests struct {
		Total      int64 `json:"total"`
		Completed  int64 `json:"completed"`
		Rejected   int64 `json:"rejected"`
		Failed     int64 `json:"failed"`
		Unfinished int64 `json:"unfinished"`
	} `json:"requests"`
	Tokens struct {
		Input        int64 `json:"input"`           // prompt tokens of completed requests
		Output       int64 `json:"output"`          // output tokens of completed requests
		G1Hit        int64 `json:"g1_hit"`          // prompt tokens hit in G1 at first admission
		G2Hit        int64 `json:"g2_hit"`          // prompt tokens loaded from the worker's own G2
		Pulled       int64 `json:"pulled"`          // prompt tokens a KVCR pull landed
		ComputedPrpt int64 `json:"computed_prompt"` // prompt tokens computed, recompute included
	} `json:"tokens"`
	// HitRatio is the share of completed requests' prompt tokens served by
	// each tier.
	HitRatio struct {
		G1     float64 `json:"g1"`
		G2     float64 `json:"g2"`
		Pulled float64 `json:"pulled"`
	} `json:"hit_ratio"`
	TTFT report.Percentiles `json:"ttft"`
	TPOT report.Percentiles `json:"tpot"`
	ITL  report.Percentiles `json:"itl"`
	E2E  report.Percentiles `json:"e2e"`
	// Throughput is over the makespan, first arrival to last request end.
	Throughput struct {
		RequestsPerS     float64 `json:"requests_per_s"`
		OutputTokensPerS float64 `json:"output_tokens_per_s"`
	} `json:"throughput"`
	MakespanNs int64 `json:"makespan_ns"`
	// LastArrivalNs is the virtual time the last request arrived.
	LastArrivalNs int64  `json:"last_arrival_ns"`
	EndNs         int64  `json:"end_ns"` // virtual time of the last event
	Events        uint64 `json:"events"`
	Preempted     int64  `json:"preemptions"`
	// Fidelity compares the simulated latencies with those a real server
	// measured, when the trace carries them (otel); absent otherwise.
	Fidelity *report.Fidelity `json:"fidelity,omitempty"`
	// Counters are every run counter by name (counters.parquet).
	Counters map[string]int64 `json:"counters"`
	// EventRows are the lifecycle events' events.parquet rows, in event
	// order ("events" is the count of virtual-time events above).
	EventRows []report.EventRow `json:"lifecycle_events"`
	// Warnings are what the run found that may make its results mislead
	// (kvsim replay prints them on stderr); outside the digest.
	Warnings  []string `json:"warnings,omitempty"`
	WallTimeS float64  `json:"wall_time_s"` // set by the caller; outside any digest
}

// stats accumulates the summary as requests end.
type stats struct {
	arrivals     int64
	firstArrival int64
	lastEnd      int64
	s            Summary
	ttft, tpot   report.Dist
	e2e          report.Dist
	itl          report.Histogram
	fidelity     report.FidelityCollector
}

func (st *stats) arrived(r *workload.Request) {
	if st.arrivals == 0 {
		st.firstArrival = int64(r.Arrival)
	}
	st.arrivals++
	st.s.LastArrivalNs = int64(r.Arrival)
}

func (st *stats) add(row *report.RequestRow) {
	s := &st.s
	s.Requests.Total++
	st.fidelity.Add(row)
	st.lastEnd = max(st.lastEnd, row.FinishNs)
	s.Preempted += int64(row.Preemptions)
	switch row.Outcome {
	case report.OutcomeCompleted:
		s.Requests.Completed++
		s.Tokens.Input += row.InputTokens
		s.Tokens.Output += row.OutputTokens
		s.Tokens.G1Hit += row.G1HitTokens
		s.Tokens.G2Hit += row.G2HitTokens
		s.Tokens.Pulled += row.PulledTokens
		s.Tokens.ComputedPrpt += row.ComputedPromptTokens
		st.ttft.Add(row.FirstTokenNs - row.ArrivalNs)
		st.e2e.Add(row.FinishNs - row.ArrivalNs)
		if row.OutputTokens > 1 {
			st.tpot.Add((row.FinishNs - row.FirstTokenNs) / (row.OutputTokens - 1))
		}
	case report.OutcomeRejected:
		s.Requests.Rejected++
	case report.OutcomeFailed:
		s.Requests.Failed++
	case report.OutcomeUnfinished:
		s.Requests.Unfinished++
	}
}

// summary is the run's summary, its counters cs.
func (c *Cluster) summary(cs []report.CounterRow) *Summary {
	st := &c.stats
	s := st.s
	s.Scenario, s.Seed, s.Workers = c.sc.Name, c.sc.Seed, c.sc.Cluster.Workers
	s.TTFT, s.TPOT, s.E2E, s.ITL = st.ttft.Percentiles(), st.tpot.Percentiles(), st.e2e.Percentiles(), st.itl.Percentiles()
	if in := float64(s.Tokens.Input); in > 0 {
		s.HitRatio.G1 = float64(s.Tokens.G1Hit) / in
		s.HitRatio.G2 = float64(s.Tokens.G2Hit) / in
		s.HitRatio.Pulled = float64(s.Tokens.Pulled) / in
	}
	s.MakespanNs = st.lastEnd - st.firstArrival
	if s.MakespanNs > 0 {
		secs := float64(s.MakespanNs) / 1e9
		s.Throughput.RequestsPerS = float64(s.Requests.Completed) / secs
		s.Throughput.OutputTokensPerS = float64(s.Tokens.Output) / secs
	}
	s.Fidelity = st.fidelity.Result()
	s.EndNs = int64(c.q.Now())
	s.Events = c.q.Fired()
	s.Counters = map[string]int64{}
	for _, r := range cs {
		s.Counters[r.Name] = r.Value
	}
	s.EventRows = c.events.rows(c, des.Time(s.LastArrivalNs))
	s.Warnings = append(s.Warnings, c.events.warnings(s.EventRows, c.sc.Workload.Trace != nil)...)
	s.Warnings = append(s.Warnings, c.warnings...)
	if n := c.chains.Collisions(); n > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d block chains met a hash another chain has under a different prefix "+
			"(a 64-bit hash collision): each was kept apart, sharing no block from that point (docs/model.md, \"Hash collisions\")", n))
	}
	return &s
}
