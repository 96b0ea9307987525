package page

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/chart"
	"github.com/kvsim/kvsim/results"
)

// The columns the cost-against-goodput section sets against each other.
const (
	costColumn    = "worker_seconds"
	goodputColumn = "goodput_requests_per_s"
)

// costGoodput is the section that sets each run's cost, the worker-seconds
// it provisioned, against its goodput rate, when the sweep's runs measured
// goodput (their scenario sets planner.slo); nil otherwise. The chart
// marks each grid point's runs and mean and the frontier of the means
// (report.Frontier); the words name the frontier's points and the
// cheapest point at the best goodput, and a table gives the frontier's
// points.
func (g *grid) costGoodput() (*section, error) {
	if !report.HasGoodput(g.rows) {
		return nil, nil
	}
	s := &section{ID: "cost-goodput", Heading: "Cost against goodput"}
	cost, good := make([]float64, len(g.points)), make([]float64, len(g.points))
	cells := make([]chart.TradeoffCell, len(g.points))
	for i := range g.points {
		p := &g.points[i]
		cost[i], good[i] = g.stat(p, costColumn).Mean, g.stat(p, goodputColumn).Mean // NaN when a run has no goodput
		cells[i].Label = g.label(p)
		for _, r := range g.runs[i] {
			cells[i].X, cells[i].Y = append(cells[i].X, r.WorkerSeconds), append(cells[i].Y, r.GoodputRequestsPerS)
		}
	}
	frontier := report.Frontier(cost, good)
	s.p("Each run's cost is the worker-seconds it provisioned: every worker from its add to its removal or the run's end, starting, draining and down included. "+
		"Its goodput rate is the completed requests meeting %s, a second over the makespan. The chart sets one against the other, a point a run; "+
		"a grid point's runs (its replicates) share a colour and shape, their mean marked large, and a ring and a step line mark the frontier: "+
		"the grid points whose mean no other's beats in both (none costs as little or less and serves as much or more, better in one).", g.sloWords())
	if len(frontier) == 0 {
		s.add(block{Warn: "No grid point measured goodput in every run: there is no frontier to draw."})
	} else {
		best := frontier[len(frontier)-1] // the most goodput; of the points with it, the cheapest
		lead := fmt.Sprintf("Cheapest at the best goodput: point %d (%s), %s goodput requests a second for %s worker-seconds.",
			best, g.label(&g.points[best]), fixed(good[best], 2), fixed(cost[best], 1))
		var same []string
		for i := range g.points {
			if i != best && g.identical(i, best) {
				same = append(same, fmt.Sprintf("point %d (%s)", i, g.label(&g.points[i])))
			}
		}
		if len(same) > 0 {
			lead += fmt.Sprintf(" It ran exactly as %s, the same digest in every replicate: what varies between them changed nothing in these runs.", strings.Join(same, " and "))
		}
		if near := g.cheapestNear(best, cost); near >= 0 {
			lead += fmt.Sprintf(" Point %d (%s) serves %s a second for %s worker-seconds, %.0f %% less: "+
				"over the same %d seeds, the 95 %% interval of their paired difference in goodput holds 0, so the replicates do not tell the two apart by goodput.",
				near, g.label(&g.points[near]), fixed(good[near], 2), fixed(cost[near], 1), 100*(1-cost[near]/cost[best]), g.spec.Replicates)
		}
		s.add(block{Lead: lead})
		on := make([]string, len(frontier))
		for k, i := range frontier {
			on[k] = fmt.Sprintf("point %d (%s)", i, g.label(&g.points[i]))
		}
		s.p("On the frontier, from the cheapest: %s. %s", strings.Join(on, ", "), offFrontier(len(g.points)-len(frontier)))
	}
	c, err := chart.Tradeoff("cost-goodput", costColumn, goodputColumn, cells, frontier)
	if err != nil {
		return nil, err
	}
	if err := addCharts(s, c, []chartSource{{"cost-goodput", fmt.Sprintf("%s columns %s and %s, a run each; the means as points.parquet's %s_mean and %s_mean",
		report.SweepFile, costColumn, goodputColumn, costColumn, goodputColumn)}}); err != nil {
		return nil, err
	}
	if len(frontier) > 0 {
		s.add(block{Table: g.frontierTable(frontier)})
		s.note("The frontier's grid points: worker-seconds and goodput rate as the mean and, in brackets, the sample standard deviation over the point's replicates (the mean alone for one run); " +
			"the rest as the mean over its replicates.")
		s.source("points.parquet's _mean and _sd of worker_seconds, goodput_requests_per_s, goodput_share, ttft_p99_ms, itl_p99_ms, hit_ratio_g1, hit_ratio_g2 and hit_ratio_pulled")
	}
	return s, nil
}

// sloWords is planner.slo as the runs ran it, from their summary.json:
// "planner.slo (TTFT at most 300 ms, mean ITL at most 40 ms)".
func (g *grid) sloWords() string {
	var slos []string
	for _, s := range g.summaries {
		if s == nil || s.Goodput == nil {
			continue
		}
		w := fmt.Sprintf("TTFT at most %s ms, mean ITL at most %s ms", plain(s.Goodput.SLOTTFTMs), plain(s.Goodput.SLOITLMs))
		if !slices.Contains(slos, w) {
			slos = append(slos, w)
		}
	}
	switch len(slos) {
	case 0:
		return "planner.slo"
	case 1:
		return "planner.slo (" + slos[0] + ")"
	}
	return "each run's planner.slo (the grid varies it)"
}

// cheapestNear is the cheapest grid point, other than best, that the
// replicates do not tell apart from it by goodput: the 95 % interval of
// the paired difference of their goodput rates, seed by seed (a point's
// replicate k runs the seed of every point's replicate k), holds 0. The
// paired difference, not the two points' own intervals, which hold the
// spread the seeds give both alike: two planners whose rates differ by
// the same in every seed are told apart however the seeds spread them.
// -1 for none, or without an interval (one run a point). (A point that
// ran as best did costs as much: it is named apart, as identical.)
func (g *grid) cheapestNear(best int, cost []float64) int {
	out := -1
	for i := range g.points {
		if i == best || cost[i] >= cost[best] || len(g.runs[i]) != len(g.runs[best]) || len(g.runs[i]) < 2 {
			continue
		}
		d := make([]float64, len(g.runs[i]))
		for k := range d {
			d[k] = g.runs[best][k].GoodputRequestsPerS - g.runs[i][k].GoodputRequestsPerS
		}
		if st := report.MeanInterval(d); !(st.Lo <= 0 && 0 <= st.Hi) {
			continue // told apart (or NaN: a run without goodput)
		}
		if out < 0 || cost[i] < cost[out] {
			out = i
		}
	}
	return out
}

// identical reports whether grid points i and j ran the same: every
// replicate's digest equal.
func (g *grid) identical(i, j int) bool {
	if len(g.runs[i]) != len(g.runs[j]) {
		return false
	}
	for k := range g.runs[i] {
		if g.runs[i][k].Digest != g.runs[j][k].Digest {
			return false
		}
	}
	return true
}

// offFrontier says how many grid points the frontier leaves out.
func offFrontier(n int) string {
	switch n {
	case 0:
		return "Every grid point is on it."
	case 1:
		return "The one other grid point costs more for no more goodput."
	}
	return fmt.Sprintf("The %d others each cost more for no more goodput than a point on it.", n)
}

// frontierTable is the frontier's grid points, in its order: their
// values, runs, worker-seconds and goodput rate (mean and sd), goodput
// share, TTFT and ITL p99 and hit ratios (means).
func (g *grid) frontierTable(frontier []int) *table {
	t := &table{Head: append(append([]string{"point"}, g.keys...), "runs", "worker-seconds", "goodput (requests/s)", "goodput share",
		"TTFT p99 (ms)", "ITL p99 (ms)", "G1 / G2 / pulled")}
	for _, i := range frontier {
		p := &g.points[i]
		cells := append(g.pointCells(p),
			sdCell(g.stat(p, costColumn), 1), sdCell(g.stat(p, goodputColumn), 2),
			cell{Text: results.Pct(g.stat(p, "goodput_share").Mean), Class: "num"},
			cell{Text: fixed(g.stat(p, "ttft_p99_ms").Mean, 1), Class: "num"}, cell{Text: fixed(g.stat(p, "itl_p99_ms").Mean, 1), Class: "num"},
			g.hitsCell(p))
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// sdCell is a statistic as "mean (sd x)" with digits decimals; the mean
// alone for one run. Not "±", which the page keeps for a 95 % interval's
// half-width.
func sdCell(s report.Stat, digits int) cell {
	text := fixed(s.Mean, digits)
	if !math.IsNaN(s.SD) {
		text += " (sd " + fixed(s.SD, digits) + ")"
	}
	return cell{Text: text, Class: "num"}
}
