package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
)

// fidelityLabels name report.FidelityMetrics in the summary table.
var fidelityLabels = []string{"TTFT", "ITL", "E2E", "queue", "prefill", "decode"}

// printSummary writes the run's summary as a table.
func printSummary(w io.Writer, s *results.Summary, dir string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	r := s.Requests
	fmt.Fprintf(tw, "scenario\t%s (seed %d, %d workers)\n", s.Scenario, s.Seed, s.Workers)
	fmt.Fprintf(tw, "requests\t%d: %d completed, %d rejected, %d failed, %d unfinished\n",
		r.Total, r.Completed, r.Rejected, r.Failed, r.Unfinished)
	fmt.Fprintf(tw, "tokens\t%d in, %d out; %d preemptions\n", s.Tokens.Input, s.Tokens.Output, s.Preempted)
	fmt.Fprintf(tw, "prompt hits\tG1 %.3f, G2 %.3f, pulled %.3f\n", s.HitRatio.G1, s.HitRatio.G2, s.HitRatio.Pulled)
	c := results.CountersOf(s.Counters)
	if rej := c.PullsRejected(); c.HintsAttached > 0 || c.PullsStaged+rej > 0 || s.CostHints() || s.PullsByKind != nil {
		withheld := ""
		if s.CostHints() {
			withheld = fmt.Sprintf(" (%d withheld by policy cost)", c.Cost.HintsWithheld)
		}
		fmt.Fprintf(tw, "pulls\t%d hints%s, %d staged: %d success, %d partial, %d failed, %d expired; %d rejected; %d parked, %d superseded; %.1f GB pulled\n",
			c.HintsAttached, withheld, c.PullsStaged, c.PullsSuccess, c.PullsPartial, c.PullsFailed,
			c.PullsExpired, rej, c.PullsParked, c.PullsSuperseded, float64(c.BytesPulled)/1e9)
	}
	if k := s.PullsByKind; k != nil {
		printKind(tw, "  requests", "", &k.Request)
		// a kind of order no event issued has no line: "0 orders of no event" says nothing
		if c.Move.Issued > 0 || k.Move.Staged > 0 {
			printKind(tw, "  kv.move", ordersText(c.Move.Issued, c.Move.NothingToFetch, c.Move.Dropped, k.Move.Events), &k.Move)
		}
		if c.Prefetch.Issued > 0 || k.Prefetch.Staged > 0 {
			printKind(tw, "  kv.prefetch", ordersText(c.Prefetch.Issued, c.Prefetch.NothingToFetch, c.Prefetch.Dropped, k.Prefetch.Events), &k.Prefetch)
		}
	}
	fmt.Fprintf(tw, "makespan\t%v virtual, %.2f requests/s, %.0f output tokens/s\n",
		results.RoundMs(s.MakespanNs), s.Throughput.RequestsPerS, s.Throughput.OutputTokensPerS)
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
		printEvent(tw, s.PullsByKind, &c, &e)
	}
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "digest\t%s\n", s.Digest)
	fmt.Fprintf(tw, "events\t%d in %.2fs wall\n", s.Events, s.WallTimeS)
	fmt.Fprintf(tw, "output\t%s\n", dir)
	tw.Flush()
}

// printKind writes one kind of pull's line under the pulls line: its
// label, what issued them (orders before the pulls), and the pulls.
func printKind(tw io.Writer, label, orders string, k *results.KindPulls) {
	fmt.Fprintf(tw, "%s\t%s%d staged: %d success, %d partial, %d failed, %d expired; %d rejected; %d superseded; %d blocks landed, %.2f GB\n",
		label, orders, k.Staged, k.Success, k.Partial, k.Failed, k.Expired, k.Rejected, k.Superseded, k.BlocksLanded, float64(k.Bytes)/1e9)
}

// ordersText is what a kind of order's line says before its pulls: the
// orders issued, the events that issued them and those that ended with
// no pull: "7 orders of events 1, 2 (1 dropped), ".
func ordersText(issued, nothing, dropped int64, events []int32) string {
	var none []string
	if nothing > 0 {
		none = append(none, fmt.Sprintf("%d with nothing to fetch", nothing))
	}
	if dropped > 0 {
		none = append(none, fmt.Sprintf("%d dropped", dropped))
	}
	text := fmt.Sprintf("%d orders of %s", issued, results.EventsText(events))
	if len(none) > 0 {
		text += " (" + strings.Join(none, ", ") + ")"
	}
	return text + ", "
}

// printEvent writes an events.parquet row as a block of the summary table,
// in the words of results.DescribeEvent.
func printEvent(tw io.Writer, k *results.PullsByKind, c *results.Counters, e *report.EventRow) {
	w := results.DescribeEvent(k, c, e)
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "event %d\t%s\n", e.Event, w.Head)
	for i, line := range w.Effect {
		indent := "  "
		if i == 0 {
			indent = ""
		}
		fmt.Fprintf(tw, "\t%s%s\n", indent, line)
	}
	if w.Cohort != "" {
		fmt.Fprintf(tw, "\t  %s\n", w.Cohort)
	}
	if w.Removal != "" {
		fmt.Fprintf(tw, "\t%s\n", w.Removal)
	}
	for _, line := range append(w.Orders, w.Trace...) {
		fmt.Fprintf(tw, "\t%s\n", line)
	}
}
