package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/sim"
)

// fidelityLabels name report.FidelityMetrics in the summary table.
var fidelityLabels = []string{"TTFT", "ITL", "E2E", "queue", "prefill", "decode"}

// printSummary writes the run's summary as a table.
func printSummary(w io.Writer, s *sim.Summary, dir string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	r := s.Requests
	fmt.Fprintf(tw, "scenario\t%s (seed %d, %d workers)\n", s.Scenario, s.Seed, s.Workers)
	fmt.Fprintf(tw, "requests\t%d: %d completed, %d rejected, %d failed, %d unfinished\n",
		r.Total, r.Completed, r.Rejected, r.Failed, r.Unfinished)
	fmt.Fprintf(tw, "tokens\t%d in, %d out; %d preemptions\n", s.Tokens.Input, s.Tokens.Output, s.Preempted)
	fmt.Fprintf(tw, "prompt hits\tG1 %.3f, G2 %.3f, pulled %.3f\n", s.HitRatio.G1, s.HitRatio.G2, s.HitRatio.Pulled)
	c := sim.CountersOf(s.Counters)
	if rej := c.PullsRejected(); c.HintsAttached > 0 || c.PullsStaged+rej > 0 {
		fmt.Fprintf(tw, "pulls\t%d hints, %d staged: %d success, %d partial, %d failed, %d expired; %d rejected; %d parked, %d superseded; %.1f GB pulled\n",
			c.HintsAttached, c.PullsStaged, c.PullsSuccess, c.PullsPartial, c.PullsFailed,
			c.PullsExpired, rej, c.PullsParked, c.PullsSuperseded, float64(c.BytesPulled)/1e9)
	}
	fmt.Fprintf(tw, "makespan\t%v virtual, %.2f requests/s, %.0f output tokens/s\n",
		time.Duration(s.MakespanNs).Round(time.Millisecond), s.Throughput.RequestsPerS, s.Throughput.OutputTokensPerS)
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "latency (ms)\tp50\tp90\tp95\tp99\tmax\n")
	for _, row := range []struct {
		name string
		p    report.Percentiles
	}{{"TTFT", s.TTFT}, {"TPOT", s.TPOT}, {"ITL", s.ITL}, {"E2E", s.E2E}} {
		p := row.p
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", row.name, p.P50, p.P90, p.P95, p.P99, p.Max)
	}
	if f := s.Fidelity; f != nil {
		fmt.Fprintf(tw, "\t\n")
		fmt.Fprintf(tw, "vs measured (ms)\trequests\tmean sim/real\tp50 sim/real\tp90 sim/real\tMAPE\n")
		for i, name := range report.FidelityMetrics {
			m := f.Metric(name)
			fmt.Fprintf(tw, "%s\t%d\t%.1f / %.1f\t%.1f / %.1f\t%.1f / %.1f\t%.1f%%\n", fidelityLabels[i], m.Requests,
				m.Simulated.Mean, m.Measured.Mean, m.Simulated.P50, m.Measured.P50, m.Simulated.P90, m.Measured.P90, 100*m.MAPE)
		}
	}
	for _, e := range s.EventRows {
		printEvent(tw, &e)
	}
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "digest\t%s\n", s.Digest)
	fmt.Fprintf(tw, "events\t%d in %.2fs wall\n", s.Events, s.WallTimeS)
	fmt.Fprintf(tw, "output\t%s\n", dir)
	tw.Flush()
}

// printEvent writes an events.parquet row as a block of the summary table:
// what the event acted on, what followed, and TTFT before and after it.
func printEvent(tw io.Writer, e *report.EventRow) {
	fmt.Fprintf(tw, "\t\n")
	at := time.Duration(e.AtNs)
	if !e.Fired {
		fmt.Fprintf(tw, "event %d\t%s at %v: never happened, the run ended first\n", e.Event, e.Kind, at)
		return
	}
	fmt.Fprintf(tw, "event %d\t%s %s at %v: %d requests on them, %d in flight on %d ready workers\n",
		e.Event, e.Kind, e.Workers, at, e.RequestsAtEvent, e.ClusterRequestsAtEvent, e.SchedulableAtEvent)
	if e.Kind != "add" {
		gone := "not all removed by the end"
		if e.RemovedAfterNs >= 0 {
			gone = fmt.Sprintf("removed after %v", time.Duration(e.RemovedAfterNs).Round(time.Millisecond))
		}
		fmt.Fprintf(tw, "\t%s (%d by timeout); %d pulls refused as draining; %d requests rerouted, %d failed\n",
			gone, e.RemovedByTimeout, e.PullsRejectedDraining, e.RequestsRerouted, e.RequestsFailed)
	}
	fmt.Fprintf(tw, "\tTTFT p50 %.1f → %.1f ms, p99 %.1f → %.1f ms (%d requests in the %v before, %d in the %v after)\n",
		e.Before.TTFTP50Ms, e.After.TTFTP50Ms, e.Before.TTFTP99Ms, e.After.TTFTP99Ms,
		e.Before.Requests, time.Duration(e.WindowBeforeNs).Round(time.Millisecond), e.After.Requests, time.Duration(e.WindowAfterNs).Round(time.Millisecond))
}
