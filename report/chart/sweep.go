package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/kvsim/kvsim/report"
)

// DefaultSweepMetrics are the sweep charts drawn when none are asked for.
var DefaultSweepMetrics = []string{"ttft_p50_ms", "ttft_p99_ms", "hit_ratio_pulled"}

// Sweep renders, for each metric (a sweep.parquet column), the metric
// against the first varied key, one line per combination of the others,
// into dir/charts; it returns the files written.
func Sweep(dir string, metrics []string) ([]string, error) {
	keys, rows, err := report.ReadSweep(filepath.Join(dir, "sweep.parquet"))
	if err != nil {
		return nil, err
	}
	cols := report.SweepColumns(keys)
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, m := range metrics {
		i := slices.IndexFunc(cols, func(c report.Column[report.SweepRow]) bool { return c.Name == m })
		if i < 0 || (cols[i].Int64 == nil && cols[i].Float64 == nil) {
			return nil, fmt.Errorf("chart: %q is not a numeric column of %s", m, filepath.Join(dir, "sweep.parquet"))
		}
		value := func(r *report.SweepRow) float64 {
			if c := cols[i]; c.Float64 != nil {
				return c.Float64(r)
			}
			return float64(cols[i].Int64(r))
		}
		p, err := sweepPlot(keys, rows, m, value)
		if err != nil {
			return nil, err
		}
		f, err := save(p, filepath.Join(dir, "charts"), "sweep-"+m)
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	return files, nil
}

func sweepPlot(keys []string, rows []report.SweepRow, metric string, value func(*report.SweepRow) float64) (*plot.Plot, error) {
	var xs []string // the first key's values, in grid order
	var lineNames []string
	lines := map[string]plotter.XYs{}
	for i := range rows {
		r := &rows[i]
		if !slices.Contains(xs, r.Params[0]) {
			xs = append(xs, r.Params[0])
		}
		var rest []string
		for j, k := range keys[1:] {
			rest = append(rest, k+"="+r.Params[j+1])
		}
		name := strings.Join(rest, ", ")
		if name == "" {
			name = metric
		}
		if _, ok := lines[name]; !ok {
			lineNames = append(lineNames, name)
		}
		lines[name] = append(lines[name], plotter.XY{X: float64(slices.Index(xs, r.Params[0])), Y: value(r)})
	}
	var ss []series
	for _, n := range lineNames {
		ss = append(ss, series{name: n, xys: lines[n]})
	}
	p, err := drawLines(metric+" by "+keys[0], keys[0], metric, ss)
	if err != nil {
		return nil, err
	}
	var ticks plot.ConstantTicks
	for i, x := range xs {
		if len(x) > 24 {
			x = x[:21] + "..."
		}
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: x})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.3, float64(len(xs))-0.7
	return p, nil
}

// drawLines is lines without lifecycle events, with points marked.
func drawLines(title, x, y string, ss []series) (*plot.Plot, error) {
	p, err := lines(title, x, y, ss, nil)
	if err != nil {
		return nil, err
	}
	for i, s := range ss {
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(i)
		p.Add(sc)
	}
	return p, nil
}
