package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// EventWords is an events.parquet row in words, as `kvsim replay` prints
// it under "event N" and the HTML report shows it: what the event acted
// on, its effect against its twin, what followed, what its orders did and
// the change across it in the run.
type EventWords struct {
	// Head is what the event acted on: "drain 0,2 at 5m24.15s: 43 requests
	// on them, 106 in flight on 32 ready workers", or that it never
	// happened (then every other field is empty).
	Head string
	// Effect is its effect against its twin: a line saying so and over
	// which window, then the figures' lines; none without a twin.
	Effect []string
	// Cohort is what its displaced requests measured with the event and
	// without it; "" without a twin or a window to measure.
	Cohort string
	// Removal is, for a drain or a remove, when its workers were gone, the
	// pulls refused and the requests taken off them.
	Removal string
	// Orders is what its orders did and its KV ledger, a line each.
	Orders []string
	// Trace is the change across the event in the run (before -> after),
	// and a note when it contradicts the effect.
	Trace []string
}

// DescribeEvent puts e in words; k and c are the run's pulls by kind and
// counters, whose figures of an event's orders its row does not hold.
func DescribeEvent(k *PullsByKind, c *Counters, e *report.EventRow) EventWords {
	at := time.Duration(e.AtNs)
	if !e.Fired {
		return EventWords{Head: fmt.Sprintf("%s at %v: never happened, the run ended first", e.Kind, at)}
	}
	ready := Count(e.SchedulableAtEvent, "ready worker", "ready workers")
	them := "them"
	if !strings.Contains(e.Workers, ",") {
		them = "it"
	}
	w := EventWords{Head: fmt.Sprintf("%s: %s on %s, %d in flight on %s",
		EventTitle(e), Count(e.RequestsAtEvent, "request", "requests"), them, e.ClusterRequestsAtEvent, ready)}
	if e.Workers == "" && scenarios.IsFault(e.Kind) { // a fault of every worker names none
		w.Head = fmt.Sprintf("%s: %s in flight on %s", EventTitle(e), Count(e.ClusterRequestsAtEvent, "request", "requests"), ready)
	}
	w.Effect, w.Cohort = effectText(e)
	switch {
	case scenarios.IsFault(e.Kind):
		w.Removal = faultLine(e)
	case e.Kind != kindAdd:
		w.Removal = removalLine(e)
	}
	w.Orders = ordersLines(k, c, e)
	w.Trace = TraceLines(e)
	return w
}

// EventTitle names an event: its kind, its workers and its time, and a
// fault's window and origin ("link 3 at 5m24.15s for 10s").
func EventTitle(e *report.EventRow) string {
	who, span := e.Workers, ""
	if scenarios.IsFault(e.Kind) {
		if who == "" {
			who = "every worker"
		}
		span = " to the end of the run"
		if e.ForNs >= 0 {
			span = fmt.Sprintf(" for %v", time.Duration(e.ForNs))
		}
		if e.Origin == string(scenarios.OriginChaos) {
			span += " (drawn by chaos)"
		}
	}
	return fmt.Sprintf("%s %s at %v%s", e.Kind, who, time.Duration(e.AtNs), span)
}

// Lines are the words after the head, a line each, in the order replay
// prints them.
func (w EventWords) Lines() []string {
	lines := slices.Clone(w.Effect)
	for _, l := range []string{w.Cohort, w.Removal} {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return append(append(lines, w.Orders...), w.Trace...)
}

// TraceLines are a fired event's change across it in the run (before ->
// after), labelled as the trace's own when the event has a twin, and a
// note when that change and the event's effect have opposite signs.
func TraceLines(e *report.EventRow) []string {
	trace := "the trace's own change, not the event's effect"
	switch {
	case !e.Twinned && e.Origin == string(scenarios.OriginPlanner):
		trace = "the event's effect mixed with the trace's own change: a planner's action has no twin"
	case !e.Twinned:
		trace = "the event's effect mixed with the trace's own change: no twin separates them (--twins=false, or the scenario without the event is invalid)"
	case ChangedBefore(e):
		trace = "the trace's own change, and the event's effect on the requests in flight at it"
	}
	lines := []string{fmt.Sprintf("before → after (%s): TTFT p50 %s, p99 %s (%s in the %v before, %d in the %v after)",
		trace, msArrow(e.Before.TTFTP50Ms, e.After.TTFTP50Ms), msArrow(e.Before.TTFTP99Ms, e.After.TTFTP99Ms),
		Count(e.Before.Requests, "request", "requests"), WindowText(e.WindowBeforeNs), e.After.Requests, WindowText(e.WindowAfterNs))}
	// the change across the event and its effect, both nonzero and of opposite signs
	if change := e.After.TTFTP99Ms - e.Before.TTFTP99Ms; e.Twinned && !ChangedBefore(e) && change*e.Delta.TTFTP99Ms < 0 {
		lines = append(lines, fmt.Sprintf("note: TTFT p99 %s across the event (%.1f → %.1f ms), but the %s %s it by %.1f ms: the %s is the trace's own",
			bySign(change, "rose", "fell"), e.Before.TTFTP99Ms, e.After.TTFTP99Ms, EventNoun(e),
			bySign(e.Delta.TTFTP99Ms, "raised", "lowered"), math.Abs(e.Delta.TTFTP99Ms), bySign(change, "rise", "fall")))
	}
	return lines
}

// msArrow is a latency before and after an event, "12.3 → 14.0 ms"; a
// window without a request has none, "none", not NaN.
func msArrow(before, after float64) string {
	if !math.IsNaN(before) && !math.IsNaN(after) {
		return fmt.Sprintf("%.1f → %.1f ms", before, after)
	}
	ms := func(v float64) string {
		if math.IsNaN(v) {
			return "none"
		}
		return fmt.Sprintf("%.1f ms", v)
	}
	return ms(before) + " → " + ms(after)
}

// effectText is an event's effect: the run minus its twin (the same run
// without the event) over the window after, with both values, and its
// displaced cohort's.
func effectText(e *report.EventRow) ([]string, string) {
	if !e.Twinned {
		return nil, ""
	}
	a, t, d := &e.After, &e.Twin, &e.Delta
	noun := EventNoun(e)
	if e.WindowAfterNs == 0 {
		return []string{fmt.Sprintf("effect against its twin (the same run without the %s): nothing to measure, it came after the last arrival", noun)}, ""
	}
	lines := []string{
		fmt.Sprintf("effect against its twin (the same run without the %s), over the %v after:", noun, WindowText(e.WindowAfterNs)),
		fmt.Sprintf("TTFT p99 %s: %s with the %s, %s without; p50 %s (%s, %s)",
			Signed(d.TTFTP99Ms, "ms"), Num(a.TTFTP99Ms), noun, Num(t.TTFTP99Ms), Signed(d.TTFTP50Ms, "ms"), Num(a.TTFTP50Ms), Num(t.TTFTP50Ms)),
		fmt.Sprintf("ITL p99 %s (%s, %s); TPOT p99 %s (%s, %s); E2E p99 %s; queue p99 %s",
			Signed(d.ITLP99Ms, "ms"), Num(a.ITLP99Ms), Num(t.ITLP99Ms), Signed(d.TPOTP99Ms, "ms"), Num(a.TPOTP99Ms), Num(t.TPOTP99Ms),
			Signed(d.E2EP99Ms, "ms"), Signed(d.QueueP99Ms, "ms")),
		fmt.Sprintf("completed requests %s (%d, %d), output tokens/s %s; prompt tokens from G1 %s, G2 %s, pulled %s, computed %s",
			Signed(d.Requests, ""), a.Requests, t.Requests, Signed(d.OutputTokensPerS, ""),
			points(d.HitG1), points(d.HitG2), points(d.HitPulled), points(d.HitComputed)),
	}
	switch {
	case a.Requests == 0:
		lines = append(lines, fmt.Sprintf("no request arriving in the window after completed with the %s (%d in the twin): no latency to set against the twin's", noun, t.Requests))
	case a.Requests < fewRequests:
		lines = append(lines, fmt.Sprintf("few requests: %s completed of those arriving in the window after (%d in the twin): each moves these figures, and a p99 of fewer than 100 is their largest",
			Count(a.Requests, "request", "requests"), t.Requests))
	}
	if ChangedBefore(e) {
		b, d := &e.Before, &e.BeforeDelta
		lines = append(lines, fmt.Sprintf("and on the window before (the %s completed of those arriving in the %v before it; it changed those in flight when it came): TTFT p99 %s (%s with the %s, %s without); E2E p99 %s (%s, %s); completed requests %s; prompt tokens from G1 %s, G2 %s, pulled %s, computed %s",
			Count(b.Requests, "request", "requests"), WindowText(e.WindowBeforeNs), Signed(d.TTFTP99Ms, "ms"), Num(b.TTFTP99Ms), noun, Num(b.TTFTP99Ms-d.TTFTP99Ms),
			Signed(d.E2EP99Ms, "ms"), Num(b.E2EP99Ms), Num(b.E2EP99Ms-d.E2EP99Ms), Signed(d.Requests, ""),
			points(d.HitG1), points(d.HitG2), points(d.HitPulled), points(d.HitComputed)))
	}
	return lines, cohortText(e)
}

// fewRequests is how few requests in a window make its effect lines say
// that each request moves them.
const fewRequests = 30

// ChangedBefore reports whether event e changed what its window before
// measured against its twin: requests that arrived before it and were in
// flight when it came, whose change the window after does not see.
func ChangedBefore(e *report.EventRow) bool { return e.Twinned && e.BeforeDelta.Any() }

// Cohort names an event's cohort of a kind: what it is ("displaced" for
// an event that takes its workers away, with their cache: a drain, a
// remove, a down; "routed" for an add; "returning" for a fault that
// leaves its workers in place with their cache: link, slow, pull_errors,
// notices) and who is in it ("whose previous turn ran on the drained
// workers").
func Cohort(kind string) (name, who string) {
	switch kind {
	case kindDrain:
		return "displaced", "whose previous turn ran on the drained workers"
	case kindRemove:
		return "displaced", "whose previous turn ran on the removed workers"
	case kindDown:
		return "displaced", "whose previous turn ran on the workers taken down"
	case kindAdd:
		return "routed", "routed to the new workers"
	}
	return "returning", "whose previous turn ran on the faulted workers"
}

// cohortText is what the event's cohort measured with the event and
// without it (its twin).
func cohortText(e *report.EventRow) string {
	a, t := &e.CohortAfter, &e.CohortTwin
	name, who := Cohort(e.Kind)
	if a.Requests <= 0 {
		return fmt.Sprintf("%s: no request of the window after %s", name, who)
	}
	return fmt.Sprintf("%s: %s %s: TTFT p99 %s (%s with the %s, %s without), p50 %s; prompt tokens from G1 %s (%s), G2 %s (%s), pulled %s (%s), computed %s (%s)",
		name, Count(a.Requests, "request", "requests"), who, Signed(a.TTFTP99Ms-t.TTFTP99Ms, "ms"), Num(a.TTFTP99Ms), EventNoun(e), Num(t.TTFTP99Ms), Signed(a.TTFTP50Ms-t.TTFTP50Ms, "ms"),
		Pct(a.HitG1), Pct(t.HitG1), Pct(a.HitG2), Pct(t.HitG2), Pct(a.HitPulled), Pct(t.HitPulled), Pct(a.HitComputed), Pct(t.HitComputed))
}

// EventNoun names event e in a sentence: its kind's noun (KindNoun), or
// "chaos" for a fault chaos drew, whose twin is the run without every
// fault chaos drew, not without it alone.
func EventNoun(e *report.EventRow) string {
	if e.Origin == string(scenarios.OriginChaos) {
		return "chaos"
	}
	return KindNoun(e.Kind)
}

// KindNoun names an event of a kind in a sentence: "drain", "removal",
// "add", "link fault", "straggler".
func KindNoun(kind string) string {
	switch kind {
	case kindRemove:
		return "removal"
	case scenarios.KindLink:
		return "link fault"
	case scenarios.KindSlow:
		return "straggler"
	case scenarios.KindPullErrors:
		return "pull errors"
	case scenarios.KindNotices:
		return "notice fault"
	case kindDown:
		return "engine down"
	}
	return kind
}

// faultLine is what a fault did over its window (events.parquet's fault
// columns), and the requests it took off its workers.
func faultLine(e *report.EventRow) string {
	f := e.Fault
	switch e.Kind {
	case scenarios.KindLink:
		return fmt.Sprintf("%s ran on its links at the lowered rate", Count(f.Pulls, "transfer", "transfers"))
	case scenarios.KindSlow:
		return fmt.Sprintf("%s started on its workers in the window, each slowed", Count(f.Passes, "pass", "passes"))
	case scenarios.KindPullErrors:
		return fmt.Sprintf("%s failed by it", Count(f.Pulls, "pull", "pulls"))
	case scenarios.KindNotices:
		return fmt.Sprintf("%s delayed or lost; %s a move removed at its source lost with them",
			Count(f.Pulls, "completion notice", "completion notices"), Count(f.BlocksLost, "block", "blocks"))
	}
	return fmt.Sprintf("%s to its workers ended; %s lost; %s rerouted, %d migrated, %d failed",
		Count(f.Pulls, "pull", "pulls"), Count(f.BlocksLost, "G2 block", "G2 blocks"), Count(e.RequestsRerouted, "request", "requests"),
		f.Migrated, e.RequestsFailed)
}

// Count is n and its noun: "1 pull", "3 pulls".
func Count[N ~int | ~int64](n N, one, many string) string {
	return fmt.Sprintf("%d %s", n, Plural(n, one, many))
}

// Bytes is a count of bytes in decimal units, to a tenth: "512 B", "4.0
// MB", "2.9 GB" (GB the largest: "2309.9 GB").
func Bytes(n int64) string {
	switch {
	case n < 1e3:
		return fmt.Sprintf("%d B", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// Plural is the noun for n of it: one for 1, many otherwise.
func Plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Signed is a difference with its sign and unit: "+352.8 ms", "-3", "0";
// "0.0 ms" for one that rounds to zero; "n/a" for NaN.
func Signed(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if v == math.Trunc(v) && unit == "" {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	switch {
	case strings.Trim(s, "-0.") == "": // rounds to zero: no sign ("-0.0")
		s = strings.TrimPrefix(s, "-")
	case v > 0:
		s = "+" + s
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// Num is a value to one decimal, "n/a" for NaN (a statistic of nothing).
func Num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Pct is a share as a percentage to one decimal: "29.5%", "n/a" for NaN.
func Pct(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// points is a difference of two shares in percentage points: "-2.6 pts".
func points(v float64) string { return Signed(100*v, "pts") }

// bySign is up for a positive v, down otherwise: "rose" or "fell".
func bySign(v float64, up, down string) string {
	if v > 0 {
		return up
	}
	return down
}

// ordersLines are what an event's orders did, when it has any: the blocks
// planned and landed, by how many orders (when no other event issued
// orders of their kind, whose counters they are), when the last ended,
// and for a drain the G2 blocks left and how long removal waited; then
// its ledger.
func ordersLines(k *PullsByKind, c *Counters, e *report.EventRow) []string {
	if k == nil {
		return nil
	}
	one, many := "move", "moves"
	pulls, n := &k.Move, &c.Move
	if !slices.Contains(k.Move.Events, e.Event) {
		if !slices.Contains(k.Prefetch.Events, e.Event) {
			return nil
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
		return append([]string{noun + " planned no block"}, ledgerLines(e, many)...)
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
		line += fmt.Sprintf(", done %v after", RoundMs(d))
	} else if d >= 0 {
		line += fmt.Sprintf(" in %v", RoundMs(d))
	}
	if e.G2BlocksLeft >= 0 {
		line += fmt.Sprintf("; left %d G2 blocks", e.G2BlocksLeft)
	}
	if e.RemovalDelayNs >= 0 {
		line += fmt.Sprintf("; removal waited %v for it", RoundMs(e.RemovalDelayNs))
	}
	return append([]string{line}, ledgerLines(e, many)...)
}

// removalLine is what followed a drain or a remove: when its workers were
// gone, the pulls refused with one of them as the source, and the
// requests taken off them. A count that is 0 because nothing was
// attempted says so.
func removalLine(e *report.EventRow) string {
	gone := "not all removed by the end"
	if e.RemovedAfterNs >= 0 {
		gone = fmt.Sprintf("removed after %v", RoundMs(e.RemovedAfterNs))
	}
	if e.Kind == "drain" {
		timeouts := "none by a drain timeout"
		if e.RemovedByTimeout > 0 {
			timeouts = fmt.Sprintf("%d by timeout", e.RemovedByTimeout)
		}
		gone += " (" + timeouts + ")"
	}
	return fmt.Sprintf("%s; %s; %s", gone, refusedText(e), takenOffText(e))
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
		return fmt.Sprintf("%d %s refused as %s", n, Plural(n, "pull", "pulls"), why)
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
	return fmt.Sprintf("%s rerouted, %d failed", Count(e.RequestsRerouted, "request", "requests"), e.RequestsFailed)
}

// ledgerLines are an event's KV ledger in words (docs/outputs.md, "The
// KV ledger"): the G2 blocks its orders could draw from, planned or left
// out, by reason; the blocks planned, landed or lost, by how their orders
// ended (when it planned any); and, for a drain whose workers were all
// removed, the G2 blocks they left then, from those they held at the
// event. orders names its orders ("moves", "copies", "prefetches").
func ledgerLines(e *report.EventRow, orders string) []string {
	whose := ""
	if e.Kind == kindDrain && e.Plan.BlocksHeld != e.G2BlocksAtEvent {
		// it lists a worker an earlier event drained or removed already,
		// whose G2 its orders do not draw from (docs/outputs.md)
		whose = " of the workers it drained"
	}
	lines := []string{heldText(&e.Plan, e.BlocksPlanned, whose)}
	if e.BlocksPlanned > 0 {
		lines = append(lines, plannedText(e, orders))
	}
	if e.G2BlocksLeft >= 0 {
		lines = append(lines, removalText(e, orders))
	}
	return lines
}

// heldText is where the G2 blocks held (by whose, when it says) went,
// planned blocks counted as the plan counts them: "held 14 G2 blocks = 12
// planned + 2 left out: 2 held at their destination".
func heldText(p *report.KVPlan, planned int64, whose string) string {
	if p.BlocksHeld == 0 {
		return "held no G2 block" + whose + ": none to plan"
	}
	text := fmt.Sprintf("held %d G2 blocks%s = %d planned", p.BlocksHeld, whose, planned-p.PlannedAgain)
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
		{m.MovedAwayAfter, "−", "moved away"}, {m.DroppedAfter, "−", "reserved for pulls that landed nothing"},
		{m.LostAfter, "−", "lost with a crashed process"}} {
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

// RoundMs is a duration in ns rounded to the millisecond, as kvsim prints
// times.
func RoundMs(ns int64) time.Duration { return time.Duration(ns).Round(time.Millisecond) }

// WindowText is an event's window's length: to the millisecond, but
// exactly when shorter than one (a window of 1 ns is not "0s").
func WindowText(ns int64) time.Duration {
	if ns > 0 && ns < int64(time.Millisecond) {
		return time.Duration(ns)
	}
	return RoundMs(ns)
}

// Line is one labelled line of a run's summary in words.
type Line struct{ Label, Text string }

// SummaryLines are a run's summary as kvsim replay prints it above its
// latency table: the scenario, the requests, the tokens, the prompt hits,
// the pulls (when any were hinted, staged or refused; broken out by kind,
// each kind's line labelled with a leading indent, when the scenario issues
// orders) and the makespan.
func SummaryLines(s *Summary) []Line {
	r := s.Requests
	lines := []Line{
		{"scenario", fmt.Sprintf("%s (seed %d, %s)", s.Scenario, s.Seed, Count(s.Workers, "worker", "workers"))},
		{"requests", fmt.Sprintf("%d: %d completed, %d rejected, %d failed, %d unfinished", r.Total, r.Completed, r.Rejected, r.Failed, r.Unfinished)},
		{"tokens", fmt.Sprintf("%d in, %d out; %d preemptions", s.Tokens.Input, s.Tokens.Output, s.Preempted)},
		{"prompt hits", fmt.Sprintf("G1 %.3f, G2 %.3f, pulled %.3f", s.HitRatio.G1, s.HitRatio.G2, s.HitRatio.Pulled)},
	}
	c := CountersOf(s.Counters)
	if rej := c.PullsRejected(); c.HintsAttached > 0 || c.PullsStaged+rej > 0 || s.CostHints() || s.PullsByKind != nil {
		withheld := ""
		if s.CostHints() {
			withheld = fmt.Sprintf(" (%d withheld by policy cost)", c.Cost.HintsWithheld)
		}
		lines = append(lines, Line{"pulls", fmt.Sprintf("%d hints%s, %d staged: %d success, %d partial, %d failed, %d expired; %d rejected; %d parked, %d superseded; %s pulled",
			c.HintsAttached, withheld, c.PullsStaged, c.PullsSuccess, c.PullsPartial, c.PullsFailed,
			c.PullsExpired, rej, c.PullsParked, c.PullsSuperseded, Bytes(c.BytesPulled))})
	}
	if k := s.PullsByKind; k != nil {
		lines = append(lines, kindLine("  requests", "", &k.Request))
		// a kind of order no event issued has no line: "0 orders of no event" says nothing
		if c.Move.Issued > 0 || k.Move.Staged > 0 {
			lines = append(lines, kindLine("  kv.move", ordersText(c.Move.Issued, c.Move.NothingToFetch, c.Move.Dropped, k.Move.Events), &k.Move))
		}
		if c.Prefetch.Issued > 0 || k.Prefetch.Staged > 0 {
			lines = append(lines, kindLine("  kv.prefetch", ordersText(c.Prefetch.Issued, c.Prefetch.NothingToFetch, c.Prefetch.Dropped, k.Prefetch.Events), &k.Prefetch))
		}
	}
	lines = append(lines, Line{"makespan", fmt.Sprintf("%v virtual, %.2f requests/s, %.0f output tokens/s",
		RoundMs(s.MakespanNs), s.Throughput.RequestsPerS, s.Throughput.OutputTokensPerS)})
	lines = append(lines, Line{"cost", fmt.Sprintf("%.1f worker-seconds provisioned, a mean of %.2f workers to the last request's end (%v)",
		s.Cost.WorkerSeconds, s.Cost.MeanWorkers, RoundMs(s.Cost.UntilNs))})
	if g := s.Goodput; g != nil {
		lines = append(lines, Line{"goodput", fmt.Sprintf("%s, %.2f/s, %s of the completed within TTFT <= %s ms and mean ITL <= %s ms (TTFT met by %s, ITL by %s)",
			Count(g.Requests, "request", "requests"), g.RequestsPerS, Pct(g.Share), Num(g.SLOTTFTMs), Num(g.SLOITLMs), Pct(g.TTFTAttainment), Pct(g.ITLAttainment))})
	}
	if p := s.Planner; p != nil {
		lines = append(lines, Line{"planner", PlannerText(p)})
	}
	return lines
}

// PlannerText is what the planner did, in a sentence.
func PlannerText(p *PlannerActions) string {
	text := fmt.Sprintf("%s: %s (%s), %s (%s)", p.Policy, Count(p.Adds, "add", "adds"), Count(p.WorkersAdded, "worker", "workers"),
		Count(p.Drains, "drain", "drains"), Count(p.WorkersDrained, "worker", "workers"))
	if p.Prewarm {
		text += fmt.Sprintf("; its adds prewarmed %d G2 blocks", p.BlocksPrewarmed)
	}
	switch {
	case p.Evacuate && p.KVCR:
		text += fmt.Sprintf("; its drains evacuated %d G2 blocks and left %d behind with the workers removed", p.BlocksEvacuated, p.G2BlocksLeft)
	case p.KVCR:
		text += fmt.Sprintf("; its drains left %d G2 blocks behind with the workers removed (no evacuate set)", p.G2BlocksLeft)
	}
	return text + "; each action an events.parquet row of origin planner, each decision a planner.parquet row"
}

// kindLine is one kind of pull's line under the pulls line: its label,
// what issued them (orders before the pulls), and the pulls.
func kindLine(label, orders string, k *KindPulls) Line {
	return Line{label, fmt.Sprintf("%s%d staged: %d success, %d partial, %d failed, %d expired; %d rejected; %d superseded; %d blocks landed, %.2f GB",
		orders, k.Staged, k.Success, k.Partial, k.Failed, k.Expired, k.Rejected, k.Superseded, k.BlocksLanded, float64(k.Bytes)/1e9)}
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
	text := fmt.Sprintf("%d orders of %s", issued, EventsText(events))
	if len(none) > 0 {
		text += " (" + strings.Join(none, ", ") + ")"
	}
	return text + ", "
}

// Table is a table in words: its head and its rows, a cell a column.
type Table struct {
	Head []string
	Rows [][]string
}

// LatencyTable is a run's TTFT, TPOT, ITL and E2E percentiles in ms, as
// replay prints them: n/a in a run that completed no request.
func LatencyTable(s *Summary) Table {
	t := Table{Head: []string{"latency (ms)", "p50", "p90", "p95", "p99", "max"}}
	for _, row := range []struct {
		name string
		p    report.Percentiles
	}{{"TTFT", s.TTFT}, {"TPOT", s.TPOT}, {"ITL", s.ITL}, {"E2E", s.E2E}} {
		cells := []string{row.name}
		for _, v := range []float64{row.p.P50, row.p.P90, row.p.P95, row.p.P99, row.p.Max} {
			cells = append(cells, Num(v))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// FidelityLabels name report.FidelityMetrics in the fidelity tables.
var FidelityLabels = []string{"TTFT", "ITL", "E2E", "queue", "prefill", "decode"}

// FidelityTable is, for a run of a measured trace, its simulated against
// measured latencies, as replay prints them; false for any other run.
func FidelityTable(s *Summary) (Table, bool) {
	f := s.Fidelity
	if f == nil {
		return Table{}, false
	}
	t := Table{Head: []string{"vs measured (ms)", "requests", "mean sim/real", "p50 sim/real", "p90 sim/real", "MAPE"}}
	for i, name := range report.FidelityMetrics {
		m := f.Metric(name)
		t.Rows = append(t.Rows, []string{FidelityLabels[i], fmt.Sprint(m.Requests),
			fmt.Sprintf("%.1f / %.1f", m.Simulated.Mean, m.Measured.Mean), fmt.Sprintf("%.1f / %.1f", m.Simulated.P50, m.Measured.P50),
			fmt.Sprintf("%.1f / %.1f", m.Simulated.P90, m.Measured.P90), fmt.Sprintf("%.1f%%", 100*m.MAPE)})
	}
	return t, true
}

// SplitEvents splits a run's events rows into the scenario's own, those
// its chaos drew (origin chaos) and those its planner decided (origin
// planner), each in order.
func SplitEvents(rows []report.EventRow) (own, drawn, planned []report.EventRow) {
	for _, r := range rows {
		switch r.Origin {
		case string(scenarios.OriginChaos):
			drawn = append(drawn, r)
		case string(scenarios.OriginPlanner):
			planned = append(planned, r)
		default:
			own = append(own, r)
		}
	}
	return own, drawn, planned
}

// KindsText is a count of events by kind, in the order of scenarios.Kinds,
// the kinds of none left out: "20 link, 25 slow, 3 down".
func KindsText(n map[string]int) string {
	var kinds []string
	for _, k := range scenarios.Kinds {
		if n[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(kinds, ", ")
}

// ChaosWords are the faults a scenario's chaos drew, in one block: replay
// prints it, and the page, in place of a block a fault. They share one
// twin, the run without chaos, so they have one effect, measured over the
// window after the first of them: chaos's as a whole only when every
// drawn fault starts in that window (Outside says when not).
type ChaosWords struct {
	Head   string   // "82 faults drawn from 4m0.3s to 6m59.8s (20 link, 25 slow, ...), ..."
	Did    string   // what they did, summed
	Effect []string // the effect over the window after the first, as EventWords.Effect; nil without a twin
	Twin   string   // the shared twin's digest, in words; "" without a twin
	// Outside says how many drawn faults start past the window the effect
	// is measured over, whose effect it leaves out; "" when none does.
	Outside string
}

// DescribeChaos is the block of the faults chaos drew (SplitEvents' drawn,
// at least one).
func DescribeChaos(drawn []report.EventRow) ChaosWords {
	n := map[string]int{}
	var f report.EventFault
	for _, r := range drawn {
		n[r.Kind]++
		f.Add(r.Fault)
	}
	first, last := &drawn[0], &drawn[len(drawn)-1]
	w := ChaosWords{
		Head: fmt.Sprintf("%s drawn from %v to %v (%s), each a row of events.parquet with origin chaos",
			Count(len(drawn), "fault", "faults"), RoundMs(first.AtNs), RoundMs(last.AtNs), KindsText(n)),
		Did: fmt.Sprintf("they acted on %d pulls (transfers on faulted links, pulls failed, notices delayed or lost, pulls to engines taken down), "+
			"slowed %d passes, lost %d blocks and migrated %d requests", f.Pulls, f.Passes, f.BlocksLost, f.Migrated),
	}
	if first.Twinned {
		w.Effect, _ = effectText(first)
		w.Effect[0] = fmt.Sprintf("from the first drawn fault, at %v: %s", RoundMs(first.AtNs), w.Effect[0])
		w.Twin = fmt.Sprintf("their twin, the run without chaos, has digest %s", first.TwinDigest)
		end := first.AtNs + first.WindowAfterNs
		out := 0
		for _, r := range drawn[1:] {
			if r.Fired && r.AtNs >= end {
				out++
			}
		}
		if out > 0 {
			starts, its, them := Plural(out, "starts", "start"), Plural(out, "its", "their"), Plural(out, "it", "them")
			w.Outside = fmt.Sprintf("%d of the %d drawn faults %s after that window (which ends at %v, report.event_window after the first or at the last arrival): %s effect is not in it, so it is not chaos's as a whole; a longer window takes %s in unless the last arrival ends it",
				out, len(drawn), starts, RoundMs(end), its, them)
		}
	}
	return w
}
