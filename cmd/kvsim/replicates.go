package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// seedKey is the scenario key a sweep's replicates vary.
const seedKey = "seed"

// checkReplicates refuses --replicates below 1, and above 1 with --vary
// seed: the replicates are the seeds.
func checkReplicates(keys []string, n int) error {
	switch {
	case n < 1:
		return usageError{fmt.Errorf("--replicates %d: want at least 1", n)}
	case n > 1 && slices.Contains(keys, seedKey):
		return usageError{fmt.Errorf("--vary seed and --replicates %d: the replicates are the seeds (the scenario's seed +0 to +%d); give one", n, n-1)}
	}
	return nil
}

// dims are the grid's keys and values: the varied ones, then, with
// replicates, seed with the replicates' seeds, varying fastest, so that
// run r is replicate r % Replicates of grid point r / Replicates.
func (s *sweepSpec) dims() ([]string, [][]string) {
	if s.Replicates <= 1 {
		return s.Keys, s.Values
	}
	seeds := make([]string, s.Replicates)
	for r := range seeds {
		seeds[r] = strconv.FormatUint(s.Seed+uint64(r), 10)
	}
	return append(slices.Clone(s.Keys), seedKey), append(slices.Clone(s.Values), seeds)
}

// points summarises a sweep's rows, in run order, by grid point.
func (s *sweepSpec) points(rows []report.SweepRow) []report.PointRow {
	return report.Points(len(s.Keys), rows, s.Replicates)
}

// writeSweep writes points.parquet, then sweep.parquet (whose presence
// says a sweep is complete): write(name, fill) makes the sweep directory's
// file name, fill writing it at the path it is given.
func writeSweep(spec *sweepSpec, rows []report.SweepRow, write func(name string, fill func(path string) error) error) error {
	err := write(report.PointsFile, func(path string) error { return parquetio.WritePoints(path, spec.Keys, spec.points(rows)) })
	if err != nil {
		return err
	}
	keys, _ := spec.dims()
	return write(report.SweepFile, func(path string) error { return parquetio.WriteSweep(path, keys, rows) })
}

// printPoints prints the grid points' table: for each point its values,
// its runs, the mean ± the 95 % interval's half-width of requests
// completed, TTFT p50 and p99 and E2E p99, the mean hit ratios and pull
// outcomes, each of the rows' events (SweepEvents) its time to removal and
// TTFT after, and how many distinct digests its replicates have.
func printPoints(w io.Writer, spec *sweepSpec, rows []report.SweepRow, events int) error {
	metrics := report.PointMetrics(events)
	col := func(name string) int {
		return slices.IndexFunc(metrics, func(c report.Column[report.SweepRow]) bool { return c.Name == name })
	}
	var evHead strings.Builder
	for k := range events {
		fmt.Fprintf(&evHead, "event %d gone after (s)\tevent %d TTFT p50 after\tevent %d TTFT p99 after\t", k, k, k)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "point\t%s\truns\tdone\tTTFT p50\tTTFT p99\tE2E p99\thit G1/G2/pull\tpulls ok/part/fail/exp/rej\t%sdigests\n",
		strings.Join(spec.Keys, "\t"), evHead.String())
	lo := 0 // the point's first row: its runs are the rows from it
	for _, p := range spec.points(rows) {
		runs := rows[lo : lo+int(p.Replicates)]
		lo += len(runs)
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
				pm(fmt.Sprintf("event%d_ttft_p50_after_ms", k)), pm(fmt.Sprintf("event%d_ttft_p99_after_ms", k)))
		}
		mean := func(format string, names ...string) string {
			vs := make([]string, len(names))
			for i, n := range names {
				vs[i] = fmt.Sprintf(format, p.Stats[col(n)].Mean)
			}
			return strings.Join(vs, "/")
		}
		digests := map[string]bool{}
		for _, r := range runs {
			digests[r.Digest] = true
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s%d distinct\n", p.Point, strings.Join(p.Params, "\t"), p.Replicates,
			pm("requests_completed"), pm("ttft_p50_ms"), pm("ttft_p99_ms"), pm("e2e_p99_ms"),
			mean("%.3f", "hit_ratio_g1", "hit_ratio_g2", "hit_ratio_pulled"),
			mean("%.1f", "pulls_success", "pulls_partial", "pulls_failed", "pulls_expired", "pulls_rejected"), ev.String(), len(digests))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(± is the half-width of the 95 %% confidence interval over the %d replicates; points.parquet has every metric's)\n", spec.Replicates)
	return err
}

// inertSeeds warns when the runs of a sweep that differ only in their
// seed (the replicates of a grid point, or the runs of --vary seed with
// the same other values) have identical digests: nothing in the scenario
// draws from the seed, and the runs are not replicates.
func inertSeeds(spec *sweepSpec, rows []report.SweepRow) []string {
	flag := fmt.Sprintf("--replicates %d", spec.Replicates)
	seedAt := len(spec.Keys) // with replicates, the last of dims
	if spec.Replicates <= 1 {
		if seedAt = slices.Index(spec.Keys, seedKey); seedAt < 0 {
			return nil
		}
		flag = "--vary seed"
	}
	// Runs are grouped by their other values, groups in the order of their
	// first run.
	var groups [][]report.SweepRow
	group := map[string]int{} // by the other values, quoted: the group's index
	for _, r := range rows {
		others := fmt.Sprintf("%q", append(slices.Clone(r.Params[:seedAt]), r.Params[seedAt+1:]...))
		i, ok := group[others]
		if !ok {
			i, group[others] = len(groups), len(groups)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	var inert []string
	for _, g := range groups {
		if len(g) > 1 && !slices.ContainsFunc(g, func(r report.SweepRow) bool { return r.Digest != g[0].Digest }) {
			runs := make([]int, len(g))
			for i, r := range g {
				runs[i] = int(r.Run)
			}
			inert = append(inert, "runs "+strings.TrimPrefix(spans(runs), "run "))
		}
	}
	if len(inert) == 0 {
		return nil
	}
	which := inert[0] + " have identical digests"
	if len(inert) > 1 {
		which = "the runs of each grid point have identical digests (" + strings.Join(inert, "; ") + ")"
	}
	return []string{flag + ": " + which + ": nothing in this scenario draws from the seed " +
		"(a trace with router.temperature 0 and no arrival_jitter); they are not replicates. " +
		"Set router.temperature or workload.trace.arrival_jitter"}
}
