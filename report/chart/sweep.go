package chart

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/kvsim/kvsim/report"
)

// defaultSweepMetrics are the sweep charts drawn when none are asked for.
var defaultSweepMetrics = []string{"ttft_p50_ms", "ttft_p99_ms", "hit_ratio_pulled"}

// ErrOption marks an error in SweepOptions: a column or key the sweep does
// not have.
var ErrOption = errors.New("bad chart option")

// SweepOptions choose a sweep chart's axes.
type SweepOptions struct {
	Metrics []string // y: numeric sweep.parquet columns; nil means ttft_p50_ms, ttft_p99_ms, hit_ratio_pulled
	// X is the x axis: a varied key (its values in grid order) or a numeric
	// column; "" means the first varied key.
	X string
	// By are the varied keys whose values make one line each; nil means
	// every varied key but X.
	By []string
}

// Sweep renders each metric against X, a line per combination of the By
// keys, into dir/charts; it returns the files written.
func Sweep(dir string, opt SweepOptions) ([]string, error) {
	table := filepath.Join(dir, "sweep.parquet")
	keys, rows, err := report.ReadSweep(table)
	if err != nil {
		return nil, err
	}
	cols := report.SweepColumns(keys)
	numeric := func(name string) (func(*report.SweepRow) float64, error) {
		i := slices.IndexFunc(cols, func(c report.Column[report.SweepRow]) bool { return c.Name == name })
		if i < 0 || cols[i].Int64 == nil && cols[i].Float64 == nil { // key columns are strings
			return nil, fmt.Errorf("chart: %w: %q is not a numeric column of %s", ErrOption, name, table)
		}
		c := cols[i]
		if c.Float64 != nil {
			return c.Float64, nil
		}
		return func(r *report.SweepRow) float64 { return float64(c.Int64(r)) }, nil
	}
	if len(opt.Metrics) == 0 {
		opt.Metrics = defaultSweepMetrics
	}
	if opt.X == "" {
		opt.X = keys[0]
	}
	xKey := slices.Index(keys, opt.X)
	var xNum func(*report.SweepRow) float64
	if xKey < 0 {
		if xNum, err = numeric(opt.X); err != nil {
			return nil, err
		}
	}
	if opt.By == nil {
		for _, k := range keys {
			if k != opt.X {
				opt.By = append(opt.By, k)
			}
		}
	}
	var by []int
	for _, k := range opt.By {
		i := slices.Index(keys, k)
		if i < 0 {
			return nil, fmt.Errorf("chart: %w: --by %q is not a varied key of %s (%s)", ErrOption, k, table, strings.Join(keys, ", "))
		}
		by = append(by, i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, m := range opt.Metrics {
		y, err := numeric(m)
		if err != nil {
			return nil, err
		}
		p, err := sweepPlot(keys, rows, m, opt.X, xKey, xNum, by, y)
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

func sweepPlot(keys []string, rows []report.SweepRow, metric, xName string, xKey int,
	xNum func(*report.SweepRow) float64, by []int, y func(*report.SweepRow) float64) (*plot.Plot, error) {
	var xs []string // a key's values, in grid order, when X is a key
	var names []string
	lines := map[string]plotter.XYs{}
	for i := range rows {
		r := &rows[i]
		var x float64
		if xKey >= 0 {
			if !slices.Contains(xs, r.Params[xKey]) {
				xs = append(xs, r.Params[xKey])
			}
			x = float64(slices.Index(xs, r.Params[xKey]))
		} else {
			x = xNum(r)
		}
		var parts []string
		for _, k := range by {
			parts = append(parts, keys[k]+"="+r.Params[k])
		}
		name := strings.Join(parts, ", ")
		if name == "" {
			name = metric
		}
		if _, ok := lines[name]; !ok {
			names = append(names, name)
		}
		lines[name] = append(lines[name], plotter.XY{X: x, Y: y(r)})
	}
	var ss []series
	for _, n := range names {
		xys := lines[n]
		slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		ss = append(ss, series{name: n, xys: xys})
	}
	p, err := lines2(metric+" by "+xName, xName, metric, ss)
	if err != nil {
		return nil, err
	}
	if xKey >= 0 {
		var ticks plot.ConstantTicks
		for i, x := range xs {
			label := x
			if len(label) > 24 { // long YAML values: number them, in grid order
				label = "#" + strconv.Itoa(i)
			}
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: label})
		}
		p.X.Tick.Marker = ticks
		p.X.Min, p.X.Max = -0.3, float64(len(xs))-0.7
	}
	return p, nil
}

// lines2 is lines without lifecycle events, with the points marked.
func lines2(title, x, y string, ss []series) (*plot.Plot, error) {
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
