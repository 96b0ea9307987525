package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
		roundMs(s.MakespanNs), s.Throughput.RequestsPerS, s.Throughput.OutputTokensPerS)
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

// printEvent writes an events.parquet row as a block of the summary table:
// what the event acted on, what followed, what its orders did (from the
// run's pulls by kind and counters), and TTFT before and after it.
func printEvent(tw io.Writer, k *results.PullsByKind, c *results.Counters, e *report.EventRow) {
	fmt.Fprintf(tw, "\t\n")
	at := time.Duration(e.AtNs)
	if !e.Fired {
		fmt.Fprintf(tw, "event %d\t%s at %v: never happened, the run ended first\n", e.Event, e.Kind, at)
		return
	}
	fmt.Fprintf(tw, "event %d\t%s %s at %v: %d requests on them, %d in flight on %d ready workers\n",
		e.Event, e.Kind, e.Workers, at, e.RequestsAtEvent, e.ClusterRequestsAtEvent, e.SchedulableAtEvent)
	printEffect(tw, e)
	if e.Kind != "add" {
		printRemoval(tw, e)
	}
	printOrders(tw, k, c, e)
	trace := "the trace's own change, not the event's effect"
	if !e.Twinned {
		trace = "the event's effect mixed with the trace's own change: --twins separates them"
	}
	fmt.Fprintf(tw, "\tbefore → after (%s): TTFT p50 %.1f → %.1f ms, p99 %.1f → %.1f ms (%d requests in the %v before, %d in the %v after)\n",
		trace, e.Before.TTFTP50Ms, e.After.TTFTP50Ms, e.Before.TTFTP99Ms, e.After.TTFTP99Ms,
		e.Before.Requests, roundMs(e.WindowBeforeNs), e.After.Requests, roundMs(e.WindowAfterNs))
	// the change across the event and its effect, both nonzero and of opposite signs
	if change := e.After.TTFTP99Ms - e.Before.TTFTP99Ms; e.Twinned && change*e.Delta.TTFTP99Ms < 0 {
		fmt.Fprintf(tw, "\tnote: TTFT p99 %s across the event (%.1f → %.1f ms), but the %s %s it by %.1f ms: the %s is the trace's own\n",
			bySign(change, "rose", "fell"), e.Before.TTFTP99Ms, e.After.TTFTP99Ms, kindNoun(e.Kind),
			bySign(e.Delta.TTFTP99Ms, "raised", "lowered"), math.Abs(e.Delta.TTFTP99Ms), bySign(change, "rise", "fall"))
	}
}

// printEffect leads an event's block with its effect: the run minus its
// twin (the same run without the event) over the window after, with both
// values.
func printEffect(tw io.Writer, e *report.EventRow) {
	if !e.Twinned {
		return
	}
	a, t, d := &e.After, &e.Twin, &e.Delta
	noun := kindNoun(e.Kind)
	if e.WindowAfterNs == 0 {
		fmt.Fprintf(tw, "\teffect against its twin (the same run without the %s): nothing to measure, it came after the last arrival\n", noun)
		return
	}
	fmt.Fprintf(tw, "\teffect against its twin (the same run without the %s), over the %v after:\n", noun, roundMs(e.WindowAfterNs))
	fmt.Fprintf(tw, "\t  TTFT p99 %s: %.1f with the %s, %.1f without; p50 %s (%.1f, %.1f)\n",
		signed(d.TTFTP99Ms, "ms"), a.TTFTP99Ms, noun, t.TTFTP99Ms, signed(d.TTFTP50Ms, "ms"), a.TTFTP50Ms, t.TTFTP50Ms)
	fmt.Fprintf(tw, "\t  ITL p99 %s (%.1f, %.1f); TPOT p99 %s (%.1f, %.1f); E2E p99 %s; queue p99 %s\n",
		signed(d.ITLP99Ms, "ms"), a.ITLP99Ms, t.ITLP99Ms, signed(d.TPOTP99Ms, "ms"), a.TPOTP99Ms, t.TPOTP99Ms,
		signed(d.E2EP99Ms, "ms"), signed(d.QueueP99Ms, "ms"))
	fmt.Fprintf(tw, "\t  completed requests %s (%d, %d), output tokens/s %s; prompt tokens from G1 %s, G2 %s, pulled %s, computed %s\n",
		signed(d.Requests, ""), a.Requests, t.Requests, signed(d.OutputTokensPerS, ""),
		points(d.HitG1), points(d.HitG2), points(d.HitPulled), points(d.HitComputed))
	printCohort(tw, e)
}

// printCohort writes what the event's displaced cohort measured with the
// event and without it (its twin).
func printCohort(tw io.Writer, e *report.EventRow) {
	a, t := &e.CohortAfter, &e.CohortTwin
	who := "routed to the new workers"
	switch e.Kind {
	case "drain":
		who = "whose previous turn ran on the drained workers"
	case "remove":
		who = "whose previous turn ran on the removed workers"
	}
	if a.Requests <= 0 {
		fmt.Fprintf(tw, "\t  displaced: no request of the window after %s\n", who)
		return
	}
	fmt.Fprintf(tw, "\t  displaced: %d requests %s: TTFT p99 %s (%s, %s), p50 %s; prompt tokens from G1 %s (%s), pulled %s (%s), computed %s (%s)\n",
		a.Requests, who, signed(a.TTFTP99Ms-t.TTFTP99Ms, "ms"), num(a.TTFTP99Ms), num(t.TTFTP99Ms), signed(a.TTFTP50Ms-t.TTFTP50Ms, "ms"),
		pct(a.HitG1), pct(t.HitG1), pct(a.HitPulled), pct(t.HitPulled), pct(a.HitComputed), pct(t.HitComputed))
}

// kindNoun names an event of a kind in a sentence: "drain", "removal", "add".
func kindNoun(kind string) string {
	if kind == "remove" {
		return "removal"
	}
	return kind
}

// signed is a difference with its sign and unit: "+352.8 ms", "-3", "0"; "n/a" for NaN.
func signed(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if v == math.Trunc(v) && unit == "" {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if v > 0 {
		s = "+" + s
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// num is a value to one decimal, "n/a" for NaN (a statistic of nothing).
func num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// pct is a share as a percentage to one decimal: "29.5%", "n/a" for NaN.
func pct(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// points is a difference of two shares in percentage points: "-2.6 pts".
func points(v float64) string { return signed(100*v, "pts") }

// bySign is up for a positive v, down otherwise: "rose" or "fell".
func bySign(v float64, up, down string) string {
	if v > 0 {
		return up
	}
	return down
}

// printOrders writes what an event's orders did, when it has any: the
// blocks planned and landed, by how many orders (when no other event
// issued orders of their kind, whose counters they are), when the last
// ended, and for a drain the G2 blocks left and how long removal waited.
func printOrders(tw io.Writer, k *results.PullsByKind, c *results.Counters, e *report.EventRow) {
	if k == nil {
		return
	}
	one, many := "move", "moves"
	pulls, n := &k.Move, &c.Move
	if !slices.Contains(k.Move.Events, e.Event) {
		if !slices.Contains(k.Prefetch.Events, e.Event) {
			return
		}
		one, many = "copy", "copies"
		if e.Kind == "add" {
			one, many = "prefetch", "prefetches"
		}
		pulls, n = &k.Prefetch, &c.Prefetch
	}
	verb, noun := "evacuated", "evacuation"
	if e.Kind == "add" {
		verb, noun = "prewarmed", "prewarm"
	}
	if e.BlocksPlanned == 0 {
		fmt.Fprintf(tw, "\t%s planned no block\n", noun)
		printLedger(tw, e, many)
		return
	}
	by := fmt.Sprintf("by %d %s", e.Orders, many)
	if e.Orders == 1 {
		by = "by 1 " + one
	}
	if len(pulls.Events) == 1 { // the kind's counters are this event's alone
		if n.Success < n.Issued {
			var ends []string
			for _, o := range []struct {
				n    int64
				what string
			}{{n.Success, "success"}, {n.Partial, "partial"}, {n.Failed, "failed"}, {n.Expired, "expired"},
				{n.Rejected, "rejected"}, {n.Superseded, "superseded"}, {n.NothingToFetch, "with nothing to fetch"}, {n.Dropped, "dropped"}} {
				if o.n > 0 {
					ends = append(ends, fmt.Sprintf("%d %s", o.n, o.what))
				}
			}
			by += " (" + strings.Join(ends, ", ") + ")"
		}
	}
	line := fmt.Sprintf("%s %d of %d planned blocks %s", verb, e.BlocksLanded, e.BlocksPlanned, by)
	if d := e.OrdersDoneAfterNs; d >= 0 && e.Kind == "add" {
		line += fmt.Sprintf(", done %v after", roundMs(d))
	} else if d >= 0 {
		line += fmt.Sprintf(" in %v", roundMs(d))
	}
	if e.G2BlocksLeft >= 0 {
		line += fmt.Sprintf("; left %d G2 blocks", e.G2BlocksLeft)
	}
	if e.RemovalDelayNs >= 0 {
		line += fmt.Sprintf("; removal waited %v for it", roundMs(e.RemovalDelayNs))
	}
	fmt.Fprintf(tw, "\t%s\n", line)
	printLedger(tw, e, many)
}

// printRemoval writes what followed a drain or a remove: when its workers
// were gone, the pulls refused with one of them as the source, and the
// requests taken off them. A count that is 0 because nothing was
// attempted says so.
func printRemoval(tw io.Writer, e *report.EventRow) {
	gone := "not all removed by the end"
	if e.RemovedAfterNs >= 0 {
		gone = fmt.Sprintf("removed after %v", roundMs(e.RemovedAfterNs))
	}
	if e.Kind == "drain" {
		timeouts := "none by a drain timeout"
		if e.RemovedByTimeout > 0 {
			timeouts = fmt.Sprintf("%d by timeout", e.RemovedByTimeout)
		}
		gone += " (" + timeouts + ")"
	}
	fmt.Fprintf(tw, "\t%s; %s; %s\n", gone, refusedText(e), takenOffText(e))
}

// refusedText is the stagings refused because their source was a named
// worker draining (a drain's) or removed (a remove's). The router hints
// neither, so a pull from one is attempted only by a request hinted
// before the event and staged after it (a staging that finds nothing to
// pull attempts none), and every such pull is refused: 0 means none was
// attempted.
func refusedText(e *report.EventRow) string {
	n, why, event := e.PullsRejectedDraining, "draining", "drain"
	if e.Kind == "remove" {
		n, why, event = e.PullsRejectedRemoved, "removed", "removal"
	}
	if n > 0 {
		return fmt.Sprintf("%d pulls refused as %s", n, why)
	}
	return fmt.Sprintf("0 pulls refused as %s (none attempted: the router hints no %s source, "+
		"and no request hinted before the %s was staged from one)", why, why, event)
}

// takenOffText is the requests the event took off its workers: a remove
// takes those on them; a drain only those on a worker its timeout
// removes busy.
func takenOffText(e *report.EventRow) string {
	switch {
	case e.RequestsRerouted+e.RequestsFailed > 0:
	case e.Kind == "drain" && e.RemovedByTimeout == 0:
		return "no request taken off (a drain takes them off only when its timeout removes a busy worker)"
	case e.Kind == "remove" && e.RequestsAtEvent == 0:
		return "no request taken off (none was on them)"
	}
	return fmt.Sprintf("%d requests rerouted, %d failed", e.RequestsRerouted, e.RequestsFailed)
}

// printLedger writes an event's KV ledger in words (docs/outputs.md, "The
// KV ledger"): the G2 blocks its orders could draw from, planned or left
// out, by reason; the blocks planned, landed or lost, by how their orders
// ended (when it planned any); and, for a drain whose workers were all
// removed, the G2 blocks they left then, from those they held at the
// event. orders names its orders ("moves", "copies", "prefetches").
func printLedger(tw io.Writer, e *report.EventRow, orders string) {
	fmt.Fprintf(tw, "\t%s\n", heldText(&e.Plan, e.BlocksPlanned))
	if e.BlocksPlanned > 0 {
		fmt.Fprintf(tw, "\t%s\n", plannedText(e, orders))
	}
	if e.G2BlocksLeft >= 0 {
		fmt.Fprintf(tw, "\t%s\n", removalText(e, orders))
	}
}

// heldText is where the G2 blocks held went, planned blocks counted as
// the plan counts them: "held 14 G2 blocks = 12 planned + 2 left out: 2
// held at their destination".
func heldText(p *report.KVPlan, planned int64) string {
	if p.BlocksHeld == 0 {
		return "held no G2 block: none to plan"
	}
	text := fmt.Sprintf("held %d G2 blocks = %d planned", p.BlocksHeld, planned-p.PlannedAgain)
	if p.PlannedAgain > 0 {
		text += fmt.Sprintf(" (%d counting a block once per chain that sends it)", planned)
	}
	return text + termsText(" + %d left out", p.LeftOut(), []term{
		{p.LeftFilling, "still filling"}, {p.LeftPending, "pending removal after a move"},
		{p.LeftAtDestination, "held at their destination"}, {p.LeftBehindGap, "behind a block their source lacked"},
		{p.LeftDestinationBusy, "behind a block their destination was filling or removing"},
		{p.LeftDestinationFull, "past their destination's G2 capacity"}, {p.LeftBudget, "past the budget"},
		{p.LeftNoDestination, "with no worker ready to take them"}, {p.LeftOtherSource, "dealt from another worker"}})
}

// plannedText is how the blocks planned ended: "planned 12 = 8 landed + 4
// lost: 2 expired, 2 dropped".
func plannedText(e *report.EventRow, orders string) string {
	x := &e.Ends
	text := fmt.Sprintf("planned %d = %d landed", e.BlocksPlanned, e.BlocksLanded)
	if x.LandedExtra > 0 {
		text += fmt.Sprintf(" − %d landed past their %s' plans", x.LandedExtra, orders)
	}
	if x.LandedShort > 0 {
		text += fmt.Sprintf(" + %d short of their %s' plans", x.LandedShort, orders)
	}
	return text + termsText(" + %d lost", x.Lost(), []term{
		{x.LostNothingToFetch, "with nothing to fetch"}, {x.LostSuperseded, "superseded"}, {x.LostRejected, "rejected"},
		{x.LostExpired, "expired"}, {x.LostFailed, "failed"}, {x.LostDropped, "dropped"}})
}

// term is one named count of a sum.
type term struct {
	n    int64
	name string
}

// termsText is a sum's part, total named by format, and its nonzero
// terms: " + 5 left out: 3 past the budget, 2 held at their
// destination"; "" when total is 0.
func termsText(format string, total int64, terms []term) string {
	if total == 0 {
		return ""
	}
	var parts []string
	for _, t := range terms {
		if t.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", t.n, t.name))
		}
	}
	return fmt.Sprintf(format, total) + ": " + strings.Join(parts, ", ")
}

// removalText is a drain's G2 blocks left at its workers' removal, from
// those they held at the event: "left 5 G2 blocks at removal = 12 held at
// the event + 1 stored − 8 moved away".
func removalText(e *report.EventRow, orders string) string {
	m := &e.Removal
	text := fmt.Sprintf("left %d G2 blocks at removal = %d held at the event", e.G2BlocksLeft, e.G2BlocksAtEvent)
	moved := false
	for _, t := range []struct {
		n    int64
		sign string
		name string
	}{{m.StoredAfter, "+", "stored"}, {m.PulledInAfter, "+", "pulled in"}, {m.EvictedAfter, "−", "evicted"},
		{m.MovedAwayAfter, "−", "moved away"}, {m.DroppedAfter, "−", "reserved for pulls that landed nothing"}} {
		if t.n > 0 {
			text += fmt.Sprintf(" %s %d %s", t.sign, t.n, t.name)
			moved = true
		}
	}
	if !moved {
		text += " (nothing came in or went out since)"
	}
	if orders == "copies" {
		text += "; copies leave their source's blocks"
	}
	return text
}

// roundMs is a duration in ns rounded to the millisecond, as the summary prints
// times.
func roundMs(ns int64) time.Duration { return time.Duration(ns).Round(time.Millisecond) }
