package page

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/chart"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/study"
)

// grid is what a sweep's or a search's page reads: its spec, its runs'
// rows and grid points, and the first run's scenario.
type grid struct {
	dir     string
	spec    *study.Spec
	keys    []string // the varied keys, without the replicates' seed
	rows    []report.SweepRow
	points  []report.PointRow
	runs    [][]report.SweepRow // by point, its replicates' rows
	byRun   map[int64]int       // a run's row
	metrics map[string]int      // a points.parquet metric's place in a point's Stats
	events  int
	// summaries are the runs' summary.json by row; nil where a run's
	// directory is not there (a merged sweep keeps none).
	summaries []*study.RunSummary
	sc        *scenarios.Scenario // the first run's, nil when it does not load
	raw       []byte              // its text
	scErr     error
}

// readGrid reads a sweep's or a search's directory.
func readGrid(dir string) (*grid, error) {
	spec, err := study.ReadSpec(dir)
	if err != nil {
		return nil, err
	}
	_, rows, err := parquetio.ReadSweep(filepath.Join(dir, report.SweepFile))
	if err != nil {
		return nil, err
	}
	g := &grid{dir: dir, spec: spec, keys: spec.Keys, rows: rows, points: spec.Points(rows), events: report.SweepEvents(rows),
		byRun: map[int64]int{}, metrics: map[string]int{}, summaries: make([]*study.RunSummary, len(rows))}
	g.runs = report.PointRuns(g.points, rows)
	for i, c := range report.PointMetrics(g.events) {
		g.metrics[c.Name] = i
	}
	for i, r := range rows {
		g.byRun[r.Run] = i
		g.summaries[i], _ = study.ReadRunSummary(runDirOf(dir, r.Run))
	}
	if len(rows) > 0 {
		g.sc, g.raw, g.scErr = scenarioOf(runDirOf(dir, rows[0].Run))
	}
	return g, nil
}

// stat is a grid point's statistic of a points.parquet metric.
func (g *grid) stat(p *report.PointRow, metric string) report.Stat {
	i, ok := g.metrics[metric]
	if !ok {
		return noStat
	}
	return p.Stats[i]
}

// noStat is the statistic of nothing.
var noStat = report.Stat{Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}

// label is a point's values: "router.hints.mode=copy, events[0].at=5m".
func (g *grid) label(p *report.PointRow) string {
	parts := make([]string, len(g.keys))
	for i, k := range g.keys {
		parts[i] = k + "=" + g.value(i, p.Params[i])
	}
	return strings.Join(parts, ", ")
}

// long reports whether some value of key i is numbered.
func (g *grid) long(i int) bool {
	return i < len(g.spec.Values) && slices.ContainsFunc(g.spec.Values[i], func(v string) bool { return len(v) > chart.MaxValueLen })
}

// value is key i's value v as the tables show it: itself, or #j when it
// is longer than the charts write out (chart.MaxValueLen), numbered in
// the order --vary gave them, as the charts number them; the question
// lists what each number stands for.
func (g *grid) value(i int, v string) string {
	if len(v) <= chart.MaxValueLen {
		return v
	}
	if j := slices.Index(g.spec.Values[i], v); j >= 0 {
		return "#" + strconv.Itoa(j)
	}
	return v
}

// paramCells are a row's values as cells.
func (g *grid) paramCells(params []string) []cell {
	cells := make([]cell, len(params))
	for i, v := range params {
		cells[i] = cell{Text: g.value(i, v)}
	}
	return cells
}

// pointCells are a grid point's first cells in its tables: its number,
// its values and its runs.
func (g *grid) pointCells(p *report.PointRow) []cell {
	cells := append([]cell{{Text: strconv.FormatInt(p.Point, 10)}}, g.paramCells(p.Params)...)
	return append(cells, cell{Text: strconv.FormatInt(p.Replicates, 10)})
}

// hitsCell is a grid point's prompt tokens by source, the means of its
// replicates: "61.2% / 3.0% / 12.5%" (G1 / G2 / pulled).
func (g *grid) hitsCell(p *report.PointRow) cell {
	return cell{Text: fmt.Sprintf("%s / %s / %s", results.Pct(g.stat(p, "hit_ratio_g1").Mean), results.Pct(g.stat(p, "hit_ratio_g2").Mean),
		results.Pct(g.stat(p, "hit_ratio_pulled").Mean))}
}

// question is the grid's question: the first run's scenario in words and
// what the grid varies (a search's: the values it ran).
func (g *grid) question(search bool) *section {
	q := &section{ID: "question", Heading: "The question"}
	if g.scErr == nil && g.sc != nil {
		at := make([]string, len(g.keys))
		for i, k := range g.keys {
			at[i] = k + "=" + g.value(i, g.rows[0].Params[i])
		}
		q.note(fmt.Sprintf("The scenario as its first run (run %d) ran it, with %s: where the words below speak of a varied key, they speak of that value.",
			g.rows[0].Run, strings.Join(at, ", ")))
		for _, line := range scenarioWords(g.sc) {
			q.p("%s", line)
		}
	} else if len(g.summaries) == 0 {
		q.add(block{Warn: fmt.Sprintf("The sweep holds no run (a shard whose part of the grid is empty), so the scenario is not put in words; sweep.json names its file: %s.", scenarioName(g.spec.Scenario))})
	} else if errors.Is(g.scErr, fs.ErrNotExist) {
		q.add(block{Warn: fmt.Sprintf("The runs' directories are not here (as after kvsim sweep merge), so the scenario is not put in words; sweep.json names its file: %s.", scenarioName(g.spec.Scenario))})
	} else {
		q.add(block{Warn: fmt.Sprintf("The first run's scenario.yaml does not load here (%v).", g.scErr)})
	}
	var vary, numbered []string
	for i, k := range g.keys {
		if !g.long(i) {
			vary = append(vary, fmt.Sprintf("%s over %s", k, strings.Join(g.spec.Values[i], ", ")))
			continue
		}
		vary = append(vary, fmt.Sprintf("%s over %d values, the long ones numbered below", k, len(g.spec.Values[i])))
		for j, v := range g.spec.Values[i] {
			if len(v) > chart.MaxValueLen {
				numbered = append(numbered, fmt.Sprintf("%s #%d: %s", k, j, v))
			}
		}
	}
	reps := ""
	if g.spec.Replicates > 1 {
		reps = fmt.Sprintf(", each %d times (seeds %d to %d)", g.spec.Replicates, g.spec.Seed, g.spec.Seed+uint64(g.spec.Replicates)-1)
	}
	if search {
		q.p("The search ran %d of the values of %s%s: %s.", len(g.points), g.keys[0], reps, results.Count(len(g.rows), "run", "runs"))
	} else {
		q.p("The sweep varies %s%s: %s, %s.", strings.Join(vary, "; "), reps, results.Count(len(g.rows), "run", "runs"),
			results.Count(len(g.points), "grid point", "grid points"))
	}
	if len(numbered) > 0 {
		q.add(block{List: numbered})
	}
	var eventKeys []string
	for _, k := range g.keys {
		if k == "events" || strings.HasPrefix(k, "events[") {
			eventKeys = append(eventKeys, k)
		}
	}
	if len(eventKeys) > 0 {
		keys := strings.Join(eventKeys, ", ")
		whose := "the events in words above are run 0's"
		if g.sc != nil && len(g.sc.Events) == 0 {
			whose = "run 0 has none"
		}
		q.note(fmt.Sprintf("The grid varies %s: %s; each point's are its value of %s.", keys, whose, keys))
	}
	if g.spec.Twins {
		q.p("Each run replays its events' twins (the same run without the event), so each event's effect is the run minus its twin; over replicates, its interval is that of the paired difference.")
	} else {
		q.add(block{Warn: "The runs ran without twins (--twins=false): no event has an effect to show, only before → after, which mixes the event with the trace's own change."})
	}
	q.source("sweep.json (the grid); the first run's scenario.yaml")
	return q
}

// effects adds each event's effect at every grid point, with intervals
// over replicates: TTFT p99 and p50 and ITL p99, the displaced requests'
// (or, for an add, those routed to the new workers; for a grid varying
// the event's kind, its cohort, beside each point's kind) count and TTFT
// p50 and p99, and but for adds the time until its workers were gone.
// pass, when not nil, marks the points meeting the SLOs, and most the one
// with the most room under the first (-1 none).
func (g *grid) effects(s *section, pass []bool, most int) {
	if len(g.summaries) == 0 {
		s.add(block{Warn: "The sweep holds no run: there is nothing to compare."})
		return
	}
	if g.events == 0 {
		s.add(block{Warn: "The scenario has no events: the grid points compare the runs as they are (the points below)."})
		return
	}
	if g.sc != nil && g.sc.Chaos != nil {
		own := len(g.sc.WithoutChaos().Events)
		s.add(block{Warn: fmt.Sprintf("The scenario draws chaos from each run's seed: past its own %d %s, event k is whatever fault a run drew k-th, "+
			"another in each replicate and point, so the effects below of events %d and on pair different faults, not one: read them as chaos's, "+
			"each run's whole (its events.parquet and report.html), not as one fault's.", own, results.Plural(own, "event", "events"), own)})
	}
	for k := range g.events {
		kinds := g.kinds(k)
		kind, who := kinds[0], "displaced"
		switch {
		case len(kinds) > 1: // the grid varies the event: a kind column says which each point's is
			kind, who = "", "cohort"
		case kind == scenarios.KindAdd:
			who = "to the new workers"
		}
		ttft := fmt.Sprintf("event%d_ttft_p99_delta_ms", k)
		t := &table{Head: append(append([]string{"point"}, g.keys...), "runs")}
		if kind == "" {
			t.Head = append(t.Head, "event")
		}
		t.Head = append(t.Head, "TTFT p99 effect (ms)", "TTFT p50 effect (ms)",
			"ITL p99 effect (ms)", countHead(who), who+": TTFT p50 effect (ms)", who+": TTFT p99 effect (ms)")
		removes := kind == "" || kind == scenarios.KindDrain || kind == scenarios.KindRemove
		if removes {
			t.Head = append(t.Head, "workers gone after (s)")
		}
		faults := faultColumns(kind)
		for _, f := range faults {
			t.Head = append(t.Head, f.head)
		}
		if pass != nil {
			t.Head = append(t.Head, "meets the SLOs")
		}
		var lo, hi report.Stat
		var loAt, hiAt string
		resolved, intervals := 0, 0 // points whose effect has an interval; of them, those excluding 0
		for i := range g.points {
			p := &g.points[i]
			var p50, p99, count []float64
			for _, r := range g.runs[i] {
				if k >= len(r.Events) || !r.Events[k].Twinned {
					continue
				}
				e := &r.Events[k]
				count = append(count, float64(e.CohortAfter.Requests))
				if e.CohortAfter.Requests > 0 {
					p50 = append(p50, e.CohortAfter.TTFTP50Ms-e.CohortTwin.TTFTP50Ms)
					p99 = append(p99, e.CohortAfter.TTFTP99Ms-e.CohortTwin.TTFTP99Ms)
				}
			}
			eff := g.stat(p, ttft)
			if !math.IsNaN(eff.Lo) {
				intervals++
				if eff.Lo > 0 || eff.Hi < 0 {
					resolved++
				}
			}
			if !math.IsNaN(eff.Mean) {
				if loAt == "" || eff.Mean < lo.Mean {
					lo, loAt = eff, g.label(p)
				}
				if hiAt == "" || eff.Mean > hi.Mean {
					hi, hiAt = eff, g.label(p)
				}
			}
			cells := g.pointCells(p)
			if kind == "" {
				cells = append(cells, cell{Text: g.pointKind(i, k)})
			}
			cells = append(cells, pmCell(eff, 1, true), pmCell(g.stat(p, fmt.Sprintf("event%d_ttft_p50_delta_ms", k)), 1, true),
				pmCell(g.stat(p, fmt.Sprintf("event%d_itl_p99_delta_ms", k)), 1, true),
				cell{Text: plainMean(count, "%.0f")}, pmCell(meanOf(p50), 1, true), pmCell(meanOf(p99), 1, true))
			if removes {
				cells = append(cells, pmCell(g.stat(p, fmt.Sprintf("event%d_removed_after_ns", k)), 1e-9, false))
			}
			for _, f := range faults {
				cells = append(cells, pmDigits(g.stat(p, fmt.Sprintf("event%d_%s", k, f.column)), 1, 1, false))
			}
			t.Rows = append(t.Rows, passRow(cells, pass, i, most))
		}
		head := fmt.Sprintf("Event %d", k)
		if g.sc != nil && k < len(g.sc.Events) {
			head += ": " + eventWords(g.sc.Events[k]) + " (as run 0 ran it)"
		}
		s.h3(head)
		if loAt != "" && g.spec.Twins {
			lead := fmt.Sprintf("Its TTFT p99 effect runs from %s ms (%s) to %s ms (%s)", pmCell(lo, 1, true).Text, loAt, pmCell(hi, 1, true).Text, hiAt)
			switch {
			case intervals == 0:
				lead += "; with one run a point, no effect has an interval: these are single seeds."
			case resolved == 0:
				lead += fmt.Sprintf("; no point's 95 %% interval excludes zero: with %d replicates, these effects are not resolved from the replicates' spread.", g.spec.Replicates)
			default:
				lead += fmt.Sprintf("; at %d of %d points its 95 %% interval excludes zero.", resolved, intervals)
			}
			s.add(block{Lead: lead})
		}
		s.add(block{Table: t})
		s.note("An effect is the run minus its twin (the same run without the event), mean ± the half-width of the 95 % interval of the paired difference over the point's replicates; red where the interval lies wholly on the side that hurts (more latency), green wholly on the side that helps, uncoloured where it includes zero or there is no interval (one run a point).")
		cols := fmt.Sprintf("event%[1]d_ttft_p99_delta_ms, event%[1]d_ttft_p50_delta_ms, event%[1]d_itl_p99_delta_ms", k)
		if removes {
			cols += fmt.Sprintf(", event%d_removed_after_ns", k)
		}
		for _, f := range faults {
			cols += fmt.Sprintf(", event%d_%s", k, f.column)
		}
		s.source(fmt.Sprintf("points.parquet %[3]s; "+
			"the %[2]s requests' columns from sweep.parquet event%[1]d_cohort_requests_after and event%[1]d_cohort_ttft_p50 and _p99, _after minus _twin, over each point's runs (those with such requests)", k, who, cols))
	}
}

// faultColumn is a column of what a fault did, beside its effect: its
// head and its events.parquet column.
type faultColumn struct{ head, column string }

// faultColumns are the columns of what a fault of kind did (none for
// another kind): what it acted on and what it lost, and a down's
// migrations.
func faultColumns(kind string) []faultColumn {
	switch kind {
	case scenarios.KindSlow:
		return []faultColumn{{"passes slowed", "fault_passes"}}
	case scenarios.KindLink:
		return []faultColumn{{"transfers on its links", "fault_pulls"}}
	case scenarios.KindPullErrors:
		return []faultColumn{{"pulls it failed", "fault_pulls"}}
	case scenarios.KindNotices:
		return []faultColumn{{"notices delayed or lost", "fault_pulls"}, {"blocks lost", "fault_blocks_lost"}}
	case scenarios.KindDown:
		return []faultColumn{{"pulls to its workers ended", "fault_pulls"}, {"G2 blocks lost", "fault_blocks_lost"},
			{"requests migrated", "requests_migrated"}}
	}
	return nil
}

// countHead heads the column of a cohort's size: "requests displaced",
// "cohort requests".
func countHead(who string) string {
	if who == "cohort" {
		return "cohort requests"
	}
	return "requests " + who
}

// kinds are the kinds of a grid's event k over its runs, in run order;
// one "" when no run has it.
func (g *grid) kinds(k int) []string {
	var kinds []string
	for _, r := range g.rows {
		if k < len(r.Events) && r.Events[k].Kind != "" && !slices.Contains(kinds, r.Events[k].Kind) {
			kinds = append(kinds, r.Events[k].Kind)
		}
	}
	if kinds == nil {
		return []string{""}
	}
	return kinds
}

// pointKind is the kind of grid point i's event k: "drain", "add", "—".
func (g *grid) pointKind(i, k int) string {
	for _, r := range g.runs[i] {
		if k < len(r.Events) && r.Events[k].Kind != "" {
			return r.Events[k].Kind
		}
	}
	return "—"
}

// meanOf is the mean and 95 % interval of xs; NaN for none.
func meanOf(xs []float64) report.Stat {
	if len(xs) == 0 {
		return noStat
	}
	return report.MeanInterval(xs)
}

// plainMean is the mean of xs in format; "—" for none.
func plainMean(xs []float64, format string) string {
	if len(xs) == 0 {
		return "—"
	}
	return fmt.Sprintf(format, meanOf(xs).Mean)
}

// pmCell is a statistic as "mean ± half-width", scaled, on one line;
// signed for an effect, coloured when its interval excludes 0 (a single
// run's, without an interval, is not).
func pmCell(s report.Stat, scale float64, effect bool) cell {
	return pmDigits(s, scale, 1, effect)
}

// pmDigits is pmCell with digits decimals: 0 for a count.
func pmDigits(s report.Stat, scale float64, digits int, effect bool) cell {
	if math.IsNaN(s.Mean) || math.IsInf(s.Mean, 0) {
		return cell{Text: "—"}
	}
	text := fixed(s.Mean*scale, digits)
	if effect {
		text = results.Signed(s.Mean*scale, "")
	}
	class := "num"
	if h := s.HalfWidth(); !math.IsNaN(h) {
		text += " ± " + fixed(h*scale, digits)
		if effect && (s.Lo > 0 || s.Hi < 0) {
			class += " " + judge(s.Mean, true)
		}
	}
	return cell{Text: text, Class: class}
}

// passRow is grid point i's row of cells and, with SLOs (pass not nil),
// whether it meets them, the point with the most room under the first
// (most) marked.
func passRow(cells []cell, pass []bool, i, most int) row {
	r := row{Cells: cells}
	if pass == nil {
		return r
	}
	mark := ""
	if i == most {
		mark, r.Class = "most room", "best"
	}
	r.Cells = append(r.Cells, passCell(pass[i], mark))
	return r
}

// passCell says whether a point meets the SLOs, and why it is marked
// ("the answer"; "" for none).
func passCell(pass bool, mark string) cell {
	switch {
	case pass && mark != "":
		return cell{Text: "yes: " + mark, Class: "better"}
	case pass:
		return cell{Text: "yes", Class: "better"}
	}
	return cell{Text: "no", Class: "worse"}
}

// pointsTable adds the grid points' main metrics, as kvsim sweep prints
// them with replicates.
func (g *grid) pointsTable(s *section, pass []bool, most int) {
	t := &table{Head: append(append([]string{"point"}, g.keys...), "runs", "completed", "TTFT p50 (ms)", "TTFT p99 (ms)",
		"ITL p99 (ms)", "E2E p99 (ms)", "G1 / G2 / pulled", "distinct digests")}
	for i := range g.points {
		p := &g.points[i]
		cells := g.pointCells(p)
		digests := map[string]bool{}
		for _, r := range g.runs[i] {
			digests[r.Digest] = true
		}
		cells = append(cells, pmDigits(g.stat(p, "requests_completed"), 1, 0, false),
			pmCell(g.stat(p, "ttft_p50_ms"), 1, false), pmCell(g.stat(p, "ttft_p99_ms"), 1, false), pmCell(g.stat(p, "itl_p99_ms"), 1, false),
			pmCell(g.stat(p, "e2e_p99_ms"), 1, false), g.hitsCell(p), cell{Text: strconv.Itoa(len(digests))})
		t.Rows = append(t.Rows, passRow(cells, pass, i, most))
	}
	if pass != nil {
		t.Head = append(t.Head, "meets the SLOs")
	}
	s.h3("Grid points")
	s.add(block{Table: t})
	s.source("points.parquet (the *_mean columns, ± the half-width of *_ci95_lo to *_ci95_hi; none with one replicate); distinct digests from sweep.parquet digest")
}

// shortDigest is how many hex digits of a digest the runs' table shows, as
// kvsim sweep prints them.
const shortDigest = 12

// runsTable adds every run: its values, its digest and its main figures.
func (g *grid) runsTable(s *section) {
	keys, _ := g.spec.Dims() // with replicates, the seed last
	t := &table{Head: append(append([]string{"run"}, keys...), "completed", "TTFT p99 (ms)", "digest")}
	for _, r := range g.rows {
		cells := append([]cell{{Text: strconv.FormatInt(r.Run, 10)}}, g.paramCells(r.Params)...)
		cells = append(cells, cell{Text: strconv.FormatInt(r.Completed, 10)},
			cell{Text: results.Num(r.TTFTP99)}, cell{Text: r.Digest[:min(len(r.Digest), shortDigest)]})
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	s.h3("Runs")
	s.add(block{Table: t})
	s.source("sweep.parquet (its digest column holds each digest in full); each run's directory is runs/run-NNN")
}

// warnings are those kvsim printed for the grid: the first run's
// scenario's, the runs' (each once, naming its runs, as sweep prints
// them) and identical replicates'.
func (g *grid) warnings() []string {
	var out []string
	if g.scErr == nil && g.sc != nil {
		out = append(out, g.sc.Warnings()...)
	}
	byRow := make([][]string, len(g.rows))
	for i, s := range g.summaries {
		if s != nil {
			byRow[i] = s.Warnings
		}
	}
	out = append(out, study.RunWarnings(g.rows, byRow)...)
	return append(out, g.spec.InertSeeds(g.rows)...)
}

// charts adds the grid's charts: metrics against the first varied key
// (or x), with the replicates as means in a 95 % band.
func (g *grid) charts(metrics []string, x string) (*section, error) {
	s := &section{ID: "charts", Heading: "Charts"}
	c, err := chart.SweepCharts(g.dir, chart.SweepOptions{Metrics: metrics, X: x, NoDistributions: true})
	if err != nil {
		return nil, err
	}
	list := make([]chartSource, len(metrics))
	for i, m := range metrics {
		list[i] = chartSource{"sweep-" + m, fmt.Sprintf("%s column %s; a point's replicates as points.parquet's %s_mean, %s_ci95_lo and %s_ci95_hi",
			report.SweepFile, m, m, m, m)}
	}
	return s, addCharts(s, c, list)
}

// chartMetrics are a grid's charts: TTFT p50 and p99, the pulled share
// and each event's TTFT and ITL p99 effect.
func (g *grid) chartMetrics() []string {
	var m []string
	if g.spec.Twins {
		for k := range g.events {
			m = append(m, fmt.Sprintf("event%d_ttft_p99_delta_ms", k), fmt.Sprintf("event%d_itl_p99_delta_ms", k))
		}
	}
	return append(m, "ttft_p50_ms", "ttft_p99_ms", "hit_ratio_pulled")
}

// provenance adds the grid's manifest, digests and the first run's
// scenario.
func (g *grid) provenance() *section {
	p := &section{ID: "provenance", Heading: "Provenance"}
	manifest(p, g.spec.Manifest)
	raw, err := os.ReadFile(filepath.Join(g.dir, report.SweepSpecFile))
	if err == nil {
		p.h3("The grid (sweep.json)")
		p.add(block{Pre: string(raw)})
	}
	if g.raw != nil {
		p.h3("The first run's scenario as run (runs/run-000/scenario.yaml)")
		p.add(block{Pre: string(g.raw)})
	}
	return p
}

// sweepDoc is a sweep directory's page.
func sweepDoc(dir string, opt Options) (*doc, error) {
	g, err := readGrid(dir)
	if err != nil {
		return nil, err
	}
	d := &doc{Title: g.title("sweep"),
		Subtitle: fmt.Sprintf("A sweep: %s over %s", results.Count(len(g.rows), "run", "runs"), results.Count(len(g.points), "grid point", "grid points"))}
	d.Sections = append(d.Sections, g.question(false))
	a := &section{ID: "answer", Heading: "The answer"}
	warnings := g.warnings()
	warnedOf(a, warnings)
	pass, best, err := g.checkSLOs(opt.SLOs)
	if err != nil {
		return nil, err
	}
	if pass != nil {
		n := 0
		for _, ok := range pass {
			if ok {
				n++
			}
		}
		lead := fmt.Sprintf("%d of %d grid points meet %s in every replicate", n, len(g.points), strings.Join(opt.SLOs, " and "))
		if best >= 0 {
			lead += fmt.Sprintf("; point %d (%s) has the most room under the first (a search finds the largest value of a key that still meets them)", best, g.label(&g.points[best]))
		}
		a.add(block{Lead: lead + "."})
		a.source("each run's summary.json, the SLOs' metrics as an expect entry names them (docs/scenarios.md)")
	}
	g.effects(a, pass, best)
	d.Sections = append(d.Sections, a)
	cg, err := g.costGoodput()
	if err != nil {
		return nil, err
	}
	if cg != nil {
		d.Sections = append(d.Sections, cg)
	}
	return d, g.rest(d, warnings, pass, best, g.chartMetrics(), "")
}

// title is a grid's page title: "kvsim report: sweep of scale-in-32w".
func (g *grid) title(what string) string {
	if g.sc == nil {
		return "kvsim report: " + what
	}
	return "kvsim report: " + what + " of " + g.sc.Name
}

// rest adds the sections after the answer: the grid points (marked by
// pass and most, as effects marks them) and the runs, the charts of
// metrics against x ("" for the first varied key), the warnings and the
// provenance.
func (g *grid) rest(d *doc, warnings []string, pass []bool, most int, metrics []string, x string) error {
	det := &section{ID: "details", Heading: "The runs"}
	g.pointsTable(det, pass, most)
	g.runsTable(det)
	ch, err := g.charts(metrics, x)
	if err != nil {
		return err
	}
	d.Sections = append(d.Sections, det, ch,
		warningSection(warnings, "the first run's scenario.yaml checks, the grid's replicates (sweep.parquet digest) and each run's summary.json warnings"), g.provenance())
	return nil
}

// checkSLOs checks each grid point against slos: a point passes when
// every replicate meets every SLO. The passing point it marks has the most
// room under the first SLO (the least mean for < and <=, the most for >
// and >=; the first passing for == and !=); -1 for none. nil without
// SLOs.
func (g *grid) checkSLOs(slos []string) ([]bool, int, error) {
	if len(slos) == 0 {
		return nil, -1, nil
	}
	var es []scenarios.Expectation
	for _, s := range slos {
		e, err := scenarios.ParseExpectation(s)
		if err == nil {
			err = results.CheckMetric(e.Metric, g.events)
		}
		if err == nil && !report.HasGoodput(g.rows) && results.IsGoodput(e.Metric) {
			err = fmt.Errorf("%s is measured against planner.slo, which the sweep's runs do not set", e.Metric)
		}
		if err != nil {
			return nil, 0, &OptionError{fmt.Errorf("--slo %q: %w", s, err)}
		}
		es = append(es, e)
	}
	pass := make([]bool, len(g.points))
	best, bestMean := -1, 0.0
	for i := range g.points {
		pass[i] = true
		first := 0.0
		for _, r := range g.runs[i] {
			s := g.summaries[g.byRun[r.Run]]
			if s == nil {
				return nil, 0, fmt.Errorf("page: --slo needs each run's summary.json, and %s has none", runDirOf(g.dir, r.Run))
			}
			for j, e := range es {
				v, err := results.Metric(s.Summary, e.Metric)
				if err != nil { // a point without the event the SLO names (a grid varying events): it cannot meet it
					pass[i] = false
					break
				}
				pass[i] = pass[i] && v.Meets(e)
				if j == 0 {
					first += v.Float64()
				}
			}
		}
		if !pass[i] {
			continue
		}
		better := best < 0
		switch es[0].Op {
		case "<", "<=":
			better = better || first < bestMean
		case ">", ">=":
			better = better || first > bestMean
		}
		if better {
			best, bestMean = i, first
		}
	}
	return pass, best, nil
}

// OptionError is an error in Options: an SLO that does not parse or names
// no metric.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// searchDoc is a search directory's page.
func searchDoc(dir string) (*doc, error) {
	res, err := study.ReadSearch(dir)
	if err != nil {
		return nil, err
	}
	g, err := readGrid(dir)
	if err != nil {
		return nil, err
	}
	d := &doc{Title: g.title("search"),
		Subtitle: fmt.Sprintf("A search of %s in [%d, %d]: %s, %s", res.Key, res.Range[0], res.Range[1],
			results.Count(len(res.Probes), "probe", "probes"), results.Count(len(g.rows), "run", "runs"))}
	q := g.question(true)
	q.p("It looks for the largest %s in [%d, %d] whose runs meet every SLO: %s. A value passes when %d of its %d replicates meet them all.",
		res.Key, res.Range[0], res.Range[1], strings.Join(res.SLOs, "; "), res.Quorum, res.Replicates)
	d.Sections = append(d.Sections, q)

	a := &section{ID: "answer", Heading: "The answer"}
	warnings := g.warnings()
	warnedOf(a, warnings)
	if res.Answer == nil {
		a.add(block{Lead: fmt.Sprintf("No value of %s in [%d, %d] meets the SLOs.", res.Key, res.Range[0], res.Range[1])})
		g.outOfReach(a, res)
	} else {
		a.add(block{Lead: fmt.Sprintf("%s = %d is the largest value meeting the SLOs.", res.Key, *res.Answer)})
	}
	switch {
	case res.Scanned && !res.Monotone:
		a.p("Why: a probe showed an SLO metric not monotone in %s, so bisection could skip a failing value; the search ran every value instead.", res.Key)
	case res.Scanned:
		a.p("Why: the ends of the range failed different SLOs, so bisection could not tell which way to go; the search ran every value.")
	case res.Answer != nil && *res.Answer == res.Range[1]:
		a.p("Why: the top of the range, %d, meets the SLOs, so it is the largest value that does, whatever the values below it do; the search ran no other.", res.Range[1])
	case res.Answer == nil && res.Range[0] == res.Range[1]:
		a.p("Why: the range's one value fails.")
	case res.Answer == nil:
		a.p("Why: both ends of the range fail one SLO, whose metric was monotone in %s in every probe, so every value between fails it too; the search ran no other.", res.Key)
	default:
		a.p("Why: every probe's SLO metrics were monotone in %s, so the search bisected: the values it did not run lie between probes that agree.", res.Key)
	}
	if n := len(res.Failing); n > 0 {
		failing := make([]string, n)
		for i, v := range res.Failing {
			failing[i] = strconv.FormatInt(v, 10)
		}
		every := ""
		if res.PassTo != nil {
			every = fmt.Sprintf(" Every value from %d to %d passes (pass_to).", res.Range[0], *res.PassTo)
		}
		a.add(block{Warn: fmt.Sprintf("Below the answer, %s = %s %s: the answer holds only where the SLOs hold by the replicates' luck.%s",
			res.Key, strings.Join(failing, ", "), results.Plural(n, "fails", "fail"), every)})
	}
	t := &table{Head: []string{"probe", res.Key, "replicates meeting every SLO", "passes"}}
	var metrics []string
	for _, p := range res.Probes {
		for m := range p.Metrics {
			if !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	slices.Sort(metrics)
	for _, m := range metrics {
		t.Head = append(t.Head, m+" (mean of the replicates)")
	}
	twins := g.twinColumns(metrics)
	for i, m := range metrics {
		if twins[i] != nil {
			t.Head = append(t.Head, m+" without the event (its twin)")
		}
	}
	for i, p := range res.Probes {
		answer := ""
		if res.Answer != nil && p.Value == *res.Answer {
			answer = "the answer"
		}
		r := row{Cells: []cell{{Text: strconv.Itoa(i)}, {Text: strconv.FormatInt(p.Value, 10)},
			{Text: fmt.Sprintf("%d of %d", p.Passing, len(p.Runs))}, passCell(p.Passes, answer)}}
		if answer != "" {
			r.Class = "best"
		}
		for _, m := range metrics {
			text := "never"
			if v := p.Metrics[m]; v != nil {
				text = fixed(*v, 1)
			}
			r.Cells = append(r.Cells, cell{Text: text})
		}
		for _, twin := range twins {
			if twin != nil {
				r.Cells = append(r.Cells, cell{Text: results.Num(g.meanOver(p.Runs, twin))})
			}
		}
		t.Rows = append(t.Rows, r)
	}
	a.h3("Probes, in the order made")
	a.add(block{Table: t})
	a.source("search.json (probes: value, passing, passes, runs, metrics as each SLO metric's mean over the replicates; monotone, scanned, answer, pass_to)")
	g.effects(a, nil, -1)
	d.Sections = append(d.Sections, a)

	var chartMetrics []string
	cols := report.SweepColumns(nil, g.events)
	for _, m := range metrics {
		col, err := results.Column(m, g.events)
		if err == nil && slices.ContainsFunc(cols, func(c report.Column[report.SweepRow]) bool { return c.Name == col && c.String == nil && c.Dict == nil }) {
			chartMetrics = append(chartMetrics, col)
		}
	}
	for _, m := range g.chartMetrics() {
		if !slices.Contains(chartMetrics, m) {
			chartMetrics = append(chartMetrics, m)
		}
	}
	return d, g.rest(d, warnings, nil, -1, chartMetrics, res.Key)
}

// scenarioName is a scenario file as the manifests name it.
func scenarioName(path string) string {
	if path == "" {
		return "the embedded default scenario"
	}
	return path
}

// twinColumns are, for each SLO metric of an event's window after, the
// sweep.parquet column of its value without the event (events[0].
// ttft_p99_after_ms: event0_ttft_p99_twin_ms); nil for any other metric.
func (g *grid) twinColumns(metrics []string) []func(*report.SweepRow) float64 {
	cols := report.SweepColumns(nil, g.events)
	out := make([]func(*report.SweepRow) float64, len(metrics))
	for i, m := range metrics {
		col, err := results.Column(m, g.events)
		if err != nil || !strings.Contains(col, "_after") {
			continue
		}
		twin := strings.Replace(col, "_after", "_twin", 1)
		if j := slices.IndexFunc(cols, func(c report.Column[report.SweepRow]) bool { return c.Name == twin }); j >= 0 && cols[j].Float64 != nil {
			out[i] = cols[j].Float64
		}
	}
	return out
}

// meanOver is the mean of get over the runs given by index; NaN when one
// has no value.
func (g *grid) meanOver(runs []int, get func(*report.SweepRow) float64) float64 {
	sum := 0.0
	for _, run := range runs {
		i, ok := g.byRun[int64(run)]
		if !ok {
			return math.NaN()
		}
		sum += get(&g.rows[i])
	}
	return sum / float64(len(runs))
}

// outOfReach says, of a search no value of which passes, which SLOs fail
// even without the event at every probe (its twin's mean): no value of the
// key can meet those.
func (g *grid) outOfReach(s *section, res *study.SearchResult) {
	for _, slo := range res.SLOs {
		e, err := scenarios.ParseExpectation(slo)
		if err != nil {
			continue
		}
		twin := g.twinColumns([]string{e.Metric})[0]
		if twin == nil {
			continue
		}
		lo, hi, fails := math.Inf(1), math.Inf(-1), true
		for _, p := range res.Probes {
			v := g.meanOver(p.Runs, twin)
			lo, hi = min(lo, v), max(hi, v)
			fails = fails && !math.IsNaN(v) && !e.HoldsFloat(v) // a twin with no value measures no reach
		}
		if fails && len(res.Probes) > 0 {
			level := fmt.Sprintf("%s to %s over the probes", results.Num(lo), results.Num(hi))
			if results.Num(lo) == results.Num(hi) {
				level = results.Num(lo) + " at every probe"
			}
			s.add(block{Warn: fmt.Sprintf("Even without the event (its twin), %s is %s (the mean of its replicates): %q fails at every value, so no value of %s can meet it.",
				e.Metric, level, slo, res.Key)})
		}
	}
}
