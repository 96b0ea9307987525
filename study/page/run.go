package page

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/chart"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/study"
)

// runDoc is a run directory's page.
func runDoc(dir string) (*doc, error) {
	s, err := study.ReadRunSummary(dir)
	if err != nil {
		return nil, err
	}
	sum := s.Summary
	sc, raw, scErr := scenarioOf(dir)
	d := &doc{
		Title:    "kvsim report: " + sum.Scenario,
		Subtitle: fmt.Sprintf("One run: seed %d, %s, digest %s", sum.Seed, results.Count(sum.Workers, "worker", "workers"), sum.Digest),
	}
	q := &section{ID: "question", Heading: "The question"}
	if scErr == nil {
		for _, line := range scenarioWords(sc) {
			q.p("%s", line)
		}
	} else {
		q.add(block{Warn: fmt.Sprintf("scenario.yaml does not load here (%v); its text is under Provenance.", scErr)})
	}
	own, drawn, planned := results.SplitEvents(sum.EventRows)
	twinned := len(own)+len(drawn) > 0 // events measured against a twin: the scenario's own and chaos's
	switch {
	case twinned:
		q.p("Each event is measured against its twin: the same scenario and seed without that event, replayed beside the run. The difference between the two is the event's effect, free of the trace's own change over time.")
	case sum.Planner != nil:
		q.p("The planner's actions are events of their own, with no twin: this page reports what the planner did and what the run cost and served; planners are compared with one another by a sweep.")
	default:
		q.add(block{Warn: "The scenario has no events: this page reports the run as it is, with nothing to compare it against."})
	}
	q.source("scenario.yaml (the scenario as run)")
	d.Sections = append(d.Sections, q)

	var warnings []string // as replay printed them: the scenario's, its late events', the run's
	if scErr == nil {
		warnings = append(sc.Warnings(), sc.LateEvents(des.Time(sum.LastArrivalNs))...)
	}
	warnings = once(append(warnings, sum.Warnings...))

	a := &section{ID: "answer", Heading: "The answer"}
	warnedOf(a, warnings)
	if !twinned {
		a.p("No scripted event, so no effect against a twin: %s", runHeadline(sum))
	}
	for i := range own {
		eventAnswer(a, &own[i])
	}
	if len(drawn) > 0 {
		chaosAnswer(a, drawn)
	}
	if sum.Planner != nil {
		plannerAnswer(a, sum, planned)
	}
	if twinned {
		a.note(fmt.Sprintf("One run at seed %d: each effect is exact for this seed, the run against its twin; how much it varies with the seed takes a sweep with --replicates, whose page gives each effect's interval.", sum.Seed))
	}
	d.Sections = append(d.Sections, a)

	det := &section{ID: "details", Heading: "The run"}
	runDetails(det, sum, twinned)
	d.Sections = append(d.Sections, det)

	if twinned {
		ev := &section{ID: "events", Heading: "The events in full"}
		c := results.CountersOf(sum.Counters)
		for i := range own {
			e := &own[i]
			w := results.DescribeEvent(sum.PullsByKind, &c, e)
			ev.h3(fmt.Sprintf("Event %d: %s", e.Event, w.Head))
			ev.add(block{List: w.Lines()})
		}
		if len(own) > 0 { // with chaos alone, the table of its faults is the section
			ev.source("summary.json lifecycle_events (the rows of events.parquet), as kvsim replay prints them")
		}
		if len(drawn) > 0 {
			chaosTable(ev, drawn)
		}
		if len(own) > 0 {
			ledger(ev, own)
		}
		d.Sections = append(d.Sections, ev)
	}

	ch := &section{ID: "charts", Heading: "Charts"}
	charts, err := chart.RunCharts(dir, pagePanels)
	if err != nil {
		return nil, err
	}
	list := runCharts
	if slices.ContainsFunc(sum.EventRows, func(e report.EventRow) bool { return e.Twinned }) {
		list = slices.Clone(runCharts)
		list[0].source += ". The run alone: its twins are not drawn, so the change across an event's marker is not its effect (the tables above give that)"
	}
	if err := addCharts(ch, charts, list); err != nil {
		return nil, err
	}
	d.Sections = append(d.Sections, ch)

	d.Sections = append(d.Sections, warningSection(warnings, "scenario.yaml's checks and summary.json warnings, as kvsim replay printed them on stderr"))

	p := &section{ID: "provenance", Heading: "Provenance"}
	digests := &table{Head: []string{"run", "digest"}}
	digests.Rows = append(digests.Rows, textRow("this run", sum.Digest))
	for _, e := range own {
		if e.Twinned {
			digests.Rows = append(digests.Rows, textRow(fmt.Sprintf("twin of event %d (without it)", e.Event), e.TwinDigest))
		}
	}
	if len(drawn) > 0 && drawn[0].Twinned {
		digests.Rows = append(digests.Rows, textRow("twin of chaos (without every fault it drew)", drawn[0].TwinDigest))
	}
	p.add(block{Table: digests})
	p.source("summary.json digest; events.parquet twin_digest. Equal digests, equal behaviour (docs/digest.md).")
	manifest(p, s.Manifest)
	p.h3("The scenario as run (scenario.yaml)")
	p.add(block{Pre: string(raw)})
	d.Sections = append(d.Sections, p)
	return d, nil
}

// runHeadline is a run's outcome in a sentence.
func runHeadline(s *results.Summary) string {
	if s.Requests.Completed == 0 {
		return fmt.Sprintf("%s, none completed (%d rejected, %d failed, %d unfinished): no latency to report.",
			results.Count(s.Requests.Total, "request", "requests"), s.Requests.Rejected, s.Requests.Failed, s.Requests.Unfinished)
	}
	return fmt.Sprintf("%s, %d completed; TTFT p50 %s ms and p99 %s ms; ITL p99 %s ms; %.2f requests/s over %v.",
		results.Count(s.Requests.Total, "request", "requests"), s.Requests.Completed, results.Num(s.TTFT.P50), results.Num(s.TTFT.P99), results.Num(s.ITL.P99),
		s.Throughput.RequestsPerS, results.RoundMs(s.MakespanNs))
}

// effectRows are the answer's metrics: a label, the unit, whether more is
// worse, and each side's value.
var effectRows = []struct {
	label string
	unit  string // "ms", "" (a count or rate), "share"
	worse bool   // a rise is worse
	get   func(w *report.EventWindow) float64
}{
	{"TTFT p99", "ms", true, func(w *report.EventWindow) float64 { return w.TTFTP99Ms }},
	{"TTFT p50", "ms", true, func(w *report.EventWindow) float64 { return w.TTFTP50Ms }},
	{"ITL p99", "ms", true, func(w *report.EventWindow) float64 { return w.ITLP99Ms }},
	{"TPOT p99", "ms", true, func(w *report.EventWindow) float64 { return w.TPOTP99Ms }},
	{"E2E p99", "ms", true, func(w *report.EventWindow) float64 { return w.E2EP99Ms }},
	{"queue p99", "ms", true, func(w *report.EventWindow) float64 { return w.QueueP99Ms }},
	{"completed requests", "", false, func(w *report.EventWindow) float64 { return float64(w.Requests) }},
	{"output tokens/s", "", false, func(w *report.EventWindow) float64 { return w.OutputTokensPerS }},
	{"prompt tokens from G1", "share", false, func(w *report.EventWindow) float64 { return w.HitG1 }},
	{"prompt tokens from G2", "share", false, func(w *report.EventWindow) float64 { return w.HitG2 }},
	{"prompt tokens pulled", "share", false, func(w *report.EventWindow) float64 { return w.HitPulled }},
	{"prompt tokens computed", "share", true, func(w *report.EventWindow) float64 { return w.HitComputed }},
}

// eventAnswer adds an event's effect against its twin to s: a sentence,
// the table of the window after with and without the event, the trace's
// own change across it, and its displaced requests.
func eventAnswer(s *section, e *report.EventRow) {
	noun := results.EventNoun(e)
	at := results.RoundMs(e.AtNs)
	s.h3(fmt.Sprintf("Event %d: %s", e.Event, results.EventTitle(e)))
	switch {
	case !e.Fired:
		s.add(block{Warn: fmt.Sprintf("The %s never happened: the run ended before %v.", noun, at)})
		return
	case !e.Twinned:
		s.add(block{Warn: fmt.Sprintf("No twin: the run did not replay itself without the %s (--twins=false, or the twin failed: see the warnings), so it has no effect to show. Before → after mixes the %s with the trace's own change.", noun, noun)})
		return
	case e.WindowAfterNs == 0:
		s.add(block{Warn: fmt.Sprintf("Nothing to measure: the %s came after the last arrival.", noun)})
		return
	}
	effectAnswer(s, e, "the "+noun, "it")
	s.note("Red: the event made it worse in this run (more latency, fewer requests or tokens served, fewer prompt tokens from a cache, more computed); green: better. One seed: the sign alone says nothing of the spread.")
	for _, line := range results.TraceLines(e) {
		s.note(capitalize(line) + ".")
	}
	s.source("events.parquet: the *_after, *_twin and *_delta columns (ttft_p99_after_ms, ttft_p99_twin_ms, ttft_p99_delta_ms, ...)")
	cohortAnswer(s, e)
}

// effectAnswer adds the lead and the table of event e's effect over the
// window after since: what who ("the drain", "chaos") changed against
// its twin.
func effectAnswer(s *section, e *report.EventRow, who, since string) {
	d := e.Delta.TTFTP99Ms
	lead := fmt.Sprintf("Over the %v after %s, %s %s TTFT p99 by %s ms (%s with it, %s without) and %s ITL p99 by %s ms.",
		results.WindowText(e.WindowAfterNs), since, who, changed(d), results.Num(math.Abs(d)), results.Num(e.After.TTFTP99Ms), results.Num(e.Twin.TTFTP99Ms),
		changed(e.Delta.ITLP99Ms), results.Num(math.Abs(e.Delta.ITLP99Ms)))
	switch with, without := math.IsNaN(e.After.TTFTP99Ms), math.IsNaN(e.Twin.TTFTP99Ms); {
	case with && without:
		lead = fmt.Sprintf("Over the %v after %s no request completed, with %s or without it: no effect to measure there.",
			results.WindowText(e.WindowAfterNs), since, who)
	case with:
		lead = fmt.Sprintf("Over the %v after %s no request completed with %s; without it (its twin) %d did, TTFT p99 %s ms.",
			results.WindowText(e.WindowAfterNs), since, who, e.Twin.Requests, results.Num(e.Twin.TTFTP99Ms))
	case without:
		lead = fmt.Sprintf("Over the %v after %s %d requests completed with %s (TTFT p99 %s ms), and none without it (its twin).",
			results.WindowText(e.WindowAfterNs), since, e.After.Requests, who, results.Num(e.After.TTFTP99Ms))
	}
	s.add(block{Lead: lead})
	t := &table{Head: []string{"over the window after", "with " + who, "without (twin)", "effect"}}
	for _, m := range effectRows {
		t.Rows = append(t.Rows, effectRow(m.label, m.unit, m.worse, m.get(&e.After), m.get(&e.Twin)))
	}
	s.add(block{Table: t})
}

// chaosAnswer is the answer for the faults chaos drew (at least one): they
// share one twin, the run without chaos, so they have one effect, measured
// over the window after the first of them, and what they did, summed.
func chaosAnswer(s *section, drawn []report.EventRow) {
	w := results.DescribeChaos(drawn)
	s.h3("Chaos: " + w.Head)
	s.p("%s.", capitalize(w.Did))
	first := &drawn[0]
	if !first.Twinned {
		s.add(block{Warn: "No twin: the run did not replay itself without chaos (--twins=false, or the twin failed: see the warnings), so chaos has no effect to show."})
		return
	}
	effectAnswer(s, first, "chaos", fmt.Sprintf("the first drawn fault (at %v)", results.RoundMs(first.AtNs)))
	if w.Outside != "" {
		s.add(block{Warn: capitalize(w.Outside) + "."})
	} else {
		s.note("The drawn faults share one twin, the run without any of them, and all start in this window: the effect is chaos's as a whole. Each fault's own row (events.parquet, origin chaos) measures the same twin over the window after its own instant.")
	}
	s.source(fmt.Sprintf("events.parquet: event %d's *_after, *_twin and *_delta columns; fault_* columns summed over the rows of origin chaos", first.Event))
}

// plannerAnswer is the answer for a run with a planner: what it did, what
// it cost and served, and its actions. Planners are compared with each
// other by sweeps, so its actions have no twins.
func plannerAnswer(s *section, sum *results.Summary, planned []report.EventRow) {
	s.h3("The planner")
	s.p("%s.", capitalize(results.PlannerText(sum.Planner)))
	served := "No planner.slo is set, so goodput is not measured."
	if g := sum.Goodput; g != nil {
		served = fmt.Sprintf("Goodput: %d requests (%.2f/s), %s of the completed within TTFT <= %s ms and mean ITL <= %s ms.",
			g.Requests, g.RequestsPerS, results.Pct(g.Share), results.Num(g.SLOTTFTMs), results.Num(g.SLOITLMs))
	}
	s.p("It provisioned %.1f worker-seconds, a mean of %.2f workers to the last request's end. %s", sum.Cost.WorkerSeconds, sum.Cost.MeanWorkers, served)
	const shown = 40
	t := &table{Head: []string{"event", "action", "at", "worker ids", "G2 blocks evacuated", "G2 blocks left at removal"}}
	for _, e := range planned[:min(len(planned), shown)] {
		left := cell{Text: "—"} // an add removes nothing; without G2 nothing is left
		switch {
		case e.Kind == scenarios.KindDrain && e.RemovedAfterNs < 0:
			left = cell{Text: "not all removed"}
		case e.G2BlocksLeft >= 0:
			left = num(e.G2BlocksLeft)
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: strconv.Itoa(int(e.Event))}, {Text: e.Kind}, {Text: results.RoundMs(e.AtNs).String()},
			{Text: e.Workers}, num(e.BlocksLanded), left}})
	}
	if len(planned) > 0 {
		s.add(block{Table: t})
	}
	if len(planned) > shown {
		s.note(fmt.Sprintf("The first %d of its %d actions; planner.parquet holds every decision, with what it read and why it held.", shown, len(planned)))
	}
	s.note("A planner's actions have no twins: compare planners with a sweep over planner.policy (or planner.scale_in.pick), whose page draws cost against goodput.")
	s.source("summary.json cost, goodput and planner; events.parquet rows of origin planner: kind, at_ns, workers, kv_blocks_landed, g2_blocks_left")
}

// chaosTable lists the faults chaos drew, a row each: what each was and
// what it did.
func chaosTable(s *section, drawn []report.EventRow) {
	s.h3(fmt.Sprintf("The %d faults chaos drew", len(drawn)))
	t := &table{Head: []string{"event", "kind", "workers", "at", "for", "pulls acted on", "passes slowed", "blocks lost", "migrated"}}
	for _, e := range drawn {
		span := "to the end"
		if e.ForNs >= 0 {
			span = results.RoundMs(e.ForNs).String()
		}
		who := e.Workers
		if who == "" {
			who = "every worker"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: strconv.Itoa(int(e.Event))}, {Text: e.Kind}, {Text: who},
			{Text: results.RoundMs(e.AtNs).String()}, {Text: span}, num(e.Fault.Pulls), num(e.Fault.Passes), num(e.Fault.BlocksLost), num(e.Fault.Migrated)}})
	}
	s.add(block{Table: t})
	s.source("events.parquet rows of origin chaos: kind, workers, at_ns, for_ns, fault_pulls, fault_passes, fault_blocks_lost, requests_migrated")
}

// num is a count's cell.
func num(n int64) cell { return cell{Text: strconv.FormatInt(n, 10), Class: "num"} }

// cohortAnswer adds what an event's displaced requests measured, with it
// and without it.
func cohortAnswer(s *section, e *report.EventRow) {
	a, t := &e.CohortAfter, &e.CohortTwin
	name, who := results.Cohort(e.Kind)
	if a.Requests <= 0 {
		s.p("%s requests: none of the window after %s.", capitalize(name), who)
		return
	}
	s.p("%s requests: %d of the window after %s. They are chosen in the run and measured, the same requests, in the twin.", capitalize(name), a.Requests, who)
	tab := &table{Head: []string{name + " requests", "with the " + results.EventNoun(e), "without (twin)", "effect"}}
	for _, m := range []struct {
		label string
		unit  string
		worse bool
		a, b  float64
	}{
		{"TTFT p99", "ms", true, a.TTFTP99Ms, t.TTFTP99Ms},
		{"TTFT p50", "ms", true, a.TTFTP50Ms, t.TTFTP50Ms},
		{"prompt tokens from G1", "share", false, a.HitG1, t.HitG1},
		{"prompt tokens from G2", "share", false, a.HitG2, t.HitG2},
		{"prompt tokens pulled", "share", false, a.HitPulled, t.HitPulled},
		{"prompt tokens computed", "share", true, a.HitComputed, t.HitComputed},
	} {
		tab.Rows = append(tab.Rows, effectRow(m.label, m.unit, m.worse, m.a, m.b))
	}
	s.add(block{Table: tab})
	s.source("events.parquet cohort_*_after and cohort_*_twin columns; requests.parquet prev_request_id says each request's previous turn")
}

// effectRow is a metric's row of an effect's table: its value with the
// event (a) and without it (b), and their difference, coloured by whether
// a rise is worse.
func effectRow(label, unit string, worseUp bool, a, b float64) row {
	return row{Cells: []cell{{Text: label}, {Text: value(a, unit)}, {Text: value(b, unit)},
		{Text: effectText(a-b, unit), Class: judge(a-b, worseUp)}}}
}

// changed is the verb of a difference: "raised", "lowered", "changed".
func changed(v float64) string {
	switch {
	case v > 0:
		return "raised"
	case v < 0:
		return "lowered"
	}
	return "changed"
}

// value is a metric's value in its unit: "3612.5", "29.5%".
func value(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case unit == "share":
		return results.Pct(v)
	case unit == "" && v == math.Trunc(v):
		return fixed(v, 0)
	}
	return results.Num(v)
}

// effectText is a difference in its unit: "+715.5 ms", "-2.6 pts", "+3".
func effectText(v float64, unit string) string {
	if unit == "share" {
		return results.Signed(100*v, "pts")
	}
	return results.Signed(v, unit)
}

// judge is a difference's class: "worse" when it moves the way that hurts.
func judge(v float64, worseUp bool) string {
	switch {
	case math.IsNaN(v) || v == 0:
		return ""
	case (v > 0) == worseUp:
		return "worse"
	}
	return "better"
}

// runDetails adds a run's summary as replay prints it (results' words):
// requests, tokens, hits, pulls by kind, the latency percentiles and, for
// a measured trace, simulated against measured; then every counter that
// is not zero. The headline comes first when twinned (the run has events
// measured against a twin); without them the answer gives it.
func runDetails(s *section, sum *results.Summary, twinned bool) {
	if twinned {
		s.p("%s", runHeadline(sum))
	}
	t := &table{}
	for _, l := range results.SummaryLines(sum) {
		label := l.Label
		if kind, ok := strings.CutPrefix(label, "  "); ok { // a kind of pull, indented under pulls on a terminal
			label = "pulls: " + kind
		}
		t.Rows = append(t.Rows, textRow(label, l.Text))
	}
	c := results.CountersOf(sum.Counters)
	t.Rows = append(t.Rows, textRow("workers", fmt.Sprintf("%d at the start; %d added, %d drained, %d removed", sum.Workers, c.WorkersAdded, c.WorkersDrained, c.WorkersRemoved)))
	s.add(block{Table: t})
	s.add(block{Table: wordsTable(results.LatencyTable(sum))})
	if f, ok := results.FidelityTable(sum); ok {
		s.add(block{Table: wordsTable(f)})
	}
	s.source("summary.json (requests, tokens, hit_ratio, counters, pulls_by_kind, throughput, makespan_ns, ttft, tpot, itl, e2e, fidelity), as kvsim replay prints it; counters.parquet has every counter")
	counters := &table{Head: []string{"counter", "value"}}
	for _, name := range results.CounterNames() {
		if v := sum.Counters[name]; v != 0 {
			counters.Rows = append(counters.Rows, textRow(name, strconv.FormatInt(v, 10)))
		}
	}
	s.add(block{H3: "Counters that are not zero"})
	s.add(block{Table: counters})
	s.source("counters.parquet (summary.json counters)")
}

// ledger adds the events' KV ledger: every kv_* and g2_* column of
// events.parquet that is not zero in some event.
func ledger(s *section, rows []report.EventRow) {
	t := &table{Head: []string{"events.parquet column"}}
	for _, e := range rows {
		t.Head = append(t.Head, fmt.Sprintf("event %d", e.Event))
	}
	for _, c := range report.EventColumns(nil) {
		if c.Int64 == nil || !(strings.HasPrefix(c.Name, "kv_") || strings.HasPrefix(c.Name, "g2_")) {
			continue
		}
		r := row{Cells: []cell{{Text: c.Name}}}
		any := false
		for i := range rows {
			v := c.Int64(&rows[i])
			any = any || v != 0
			r.Cells = append(r.Cells, cell{Text: strconv.FormatInt(v, 10)})
		}
		if any {
			t.Rows = append(t.Rows, r)
		}
	}
	s.h3("The KV ledger")
	if len(t.Rows) == 0 {
		s.p("Every kv_* and g2_* column is zero: no event held G2 blocks or issued orders.")
		return
	}
	s.p("What each event's KVCR work did with the G2 blocks its workers held; the columns satisfy the identities docs/outputs.md states (held = planned once + left out; planned = landed − extra + short + lost; left at removal = held + stored + pulled in − evicted − moved away − dropped − lost with a crash), which --check enforces. -1 is none (no removal, no order).")
	s.add(block{Table: t})
	s.source("events.parquet kv_* and g2_* columns, those not zero in some event")
}

// pagePanels is how many workers get a panel each in a page's per-worker
// charts; more are drawn as their band, minimum to maximum, and mean, which
// keeps a page small (32 workers' panels take 1 MB, 16 an hour-long run's
// 2.6 MB).
const pagePanels = 8

// runCharts are a run's charts in the page's order, with what each reads.
var runCharts = []chartSource{
	{"ttft", "requests.parquet (arrival_ns, first_token_ns); workers.parquet marks the lifecycle instants"}, // first: a run with twins adds to it
	{"queue", "timeseries.parquet (running, waiting); workers.parquet marks the lifecycle instants"},
	{"pulls", "pulls.parquet (end_ns, outcome); workers.parquet marks the lifecycle instants"},
	{"g1", "timeseries.parquet (g1_blocks); workers.parquet marks the lifecycle instants"},
	{"g2", "timeseries.parquet (g2_blocks); workers.parquet marks the lifecycle instants"},
	{"cdf-ttft", report.RequestsFile},
	{"cdf-tpot", report.RequestsFile},
	{"cdf-itl", "requests.parquet; summary.json itl"},
	{"cdf-e2e", report.RequestsFile},
	{"fidelity-scatter", "requests.parquet (the measured columns beside the simulated)"},
	{"fidelity-cdf", "requests.parquet (the measured columns beside the simulated)"},
}
