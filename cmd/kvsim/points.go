package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/study"
)

// printPoints prints the grid points' table: for each point its values,
// its runs, the mean ± the 95 % interval's half-width of requests
// completed, TTFT p50 and p99, E2E p99, worker-seconds and, when a run
// measured it, the goodput rate; the mean hit ratios and pull outcomes,
// each of the rows' events (SweepEvents) its time to removal and its
// effect on TTFT and ITL p99 (against its twin: the paired difference),
// and how many distinct digests its replicates have.
func printPoints(w io.Writer, spec *study.Spec, rows []report.SweepRow, events int) error {
	metrics := report.PointMetrics(events)
	col := func(name string) int {
		return slices.IndexFunc(metrics, func(c report.Column[report.SweepRow]) bool { return c.Name == name })
	}
	var evHead strings.Builder
	for k := range events {
		fmt.Fprintf(&evHead, "event %d gone after (s)\tevent %d TTFT p99 effect (ms)\tevent %d ITL p99 effect (ms)\t", k, k, k)
	}
	goodHead, goodput := "", report.HasGoodput(rows)
	if goodput {
		goodHead = "goodput/s\t"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "point\t%s\truns\tdone\tTTFT p50\tTTFT p99\tE2E p99\tworker-s\t%shit G1/G2/pull\tpulls ok/part/fail/exp/rej\t%sdigests\n",
		strings.Join(spec.Keys, "\t"), goodHead, evHead.String())
	points := spec.Points(rows)
	for i, runs := range report.PointRuns(points, rows) {
		p := points[i]
		pmScaled := func(name string, scale float64, format string) string {
			s := p.Stats[col(name)]
			if math.IsNaN(s.Mean) {
				return "—" // in one of its runs: an event it lacks, a worker never removed, a window without requests
			}
			return fmt.Sprintf(format+" ± "+format, s.Mean*scale, s.HalfWidth()*scale)
		}
		pm := func(name string) string { return pmScaled(name, 1, "%.1f") }
		var ev strings.Builder
		for k := range events {
			fmt.Fprintf(&ev, "%s\t%s\t%s\t", pmScaled(fmt.Sprintf("event%d_removed_after_ns", k), 1e-9, "%.2f"),
				pm(fmt.Sprintf("event%d_ttft_p99_delta_ms", k)), pm(fmt.Sprintf("event%d_itl_p99_delta_ms", k)))
		}
		mean := func(format string, names ...string) string {
			vs := make([]string, len(names))
			for i, n := range names {
				vs[i] = orDash(format, p.Stats[col(n)].Mean)
			}
			return strings.Join(vs, "/")
		}
		digests := map[string]bool{}
		for _, r := range runs {
			digests[r.Digest] = true
		}
		good := ""
		if goodput {
			good = pmScaled("goodput_requests_per_s", 1, "%.2f") + "\t"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s%s\t%s\t%s%d distinct\n", p.Point, strings.Join(p.Params, "\t"), p.Replicates,
			pm("requests_completed"), pm("ttft_p50_ms"), pm("ttft_p99_ms"), pm("e2e_p99_ms"), pm("worker_seconds"), good,
			mean("%.3f", "hit_ratio_g1", "hit_ratio_g2", "hit_ratio_pulled"),
			mean("%.1f", "pulls_success", "pulls_partial", "pulls_failed", "pulls_expired", "pulls_rejected"), ev.String(), len(digests))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(± is the half-width of the 95 %% confidence interval over the %d replicates; an event's effect is the run minus its twin, "+
		"and its interval that of the paired difference; — where there is no twin (--twins=false) or no value; points.parquet has every metric's)\n", spec.Replicates)
	return err
}
