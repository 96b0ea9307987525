package chart

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
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
	// NoDistributions draws only the metrics' charts, not each run's
	// distributions, which read every run's requests.parquet.
	NoDistributions bool
}

// Sweep renders into dir/charts each metric against X, a line per
// combination of the By keys (sweep-<metric>), and the distributions of
// TTFT, TPOT, ITL and E2E of every run whose directory dir/runs/run-NNN
// holds requests.parquet, a line a run (cdf-ttft, cdf-tpot, cdf-itl,
// cdf-e2e; none when no run directory is there, as after sweep merge). It
// returns the files written, sorted.
func Sweep(dir string, opt SweepOptions) ([]string, error) {
	c, err := SweepCharts(dir, opt)
	if err != nil {
		return nil, err
	}
	return c.Save(filepath.Join(dir, report.ChartsDir))
}

// SweepCharts draws the charts Sweep writes, without writing them.
func SweepCharts(dir string, opt SweepOptions) (*Charts, error) {
	table := filepath.Join(dir, report.SweepFile)
	keys, rows, err := parquetio.ReadSweep(table)
	if err != nil {
		return nil, err
	}
	cols := report.SweepColumns(keys, report.SweepEvents(rows))
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
	reps := replicates(dir, keys)
	if opt.By == nil {
		for i, k := range keys {
			if k != opt.X && !(reps > 1 && i == len(keys)-1) {
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
	params := make([][]string, len(rows))
	for i := range rows {
		params[i] = rows[i].Params
	}
	names := newValueNames(keys, params)
	figs := map[string]*figure{}
	for _, m := range opt.Metrics {
		y, err := numeric(m)
		if err != nil {
			return nil, err
		}
		band := reps > 1 && xKey != len(keys)-1 && !slices.Contains(by, len(keys)-1)
		f, err := sweepFigure(names, rows, m, opt.X, xKey, xNum, by, y, band)
		if err != nil {
			return nil, err
		}
		if band {
			f.title += fmt.Sprintf(": mean and 95%% interval over %d seeds", reps)
		}
		figs["sweep-"+m] = f
	}
	if !opt.NoDistributions {
		cdfs, err := sweepCDFs(dir, names, rows)
		if err != nil {
			return nil, err
		}
		maps.Copy(figs, cdfs)
	}
	return &Charts{figs}, nil
}

// sweepCDFs draws the distributions of TTFT, TPOT, ITL and E2E of each run
// whose directory holds requests.parquet, a line a run; a nil figure for
// each when no run's is there.
func sweepCDFs(dir string, names *valueNames, rows []report.SweepRow) (map[string]*figure, error) {
	params := make([][]string, len(rows))
	for i := range rows {
		params[i] = rows[i].Params
	}
	styles := runStyles(names, params)
	all := make([]int, len(names.keys))
	for k := range all {
		all[k] = k
	}
	var lines []cdfLine
	var missing []string
	for i := range rows {
		run := filepath.Join(dir, report.SweepRunDir(rows[i].Run))
		path := func(n string) string { return filepath.Join(run, n) }
		if _, err := os.Stat(path(report.RequestsFile)); err != nil {
			missing = append(missing, fmt.Sprint(rows[i].Run))
			continue
		}
		l, err := readLatencies(path)
		if err != nil {
			return nil, err
		}
		lines = append(lines, cdfLine{fmt.Sprintf("%d: %s", rows[i].Run, names.label(all, rows[i].Params)), l, styles[i]})
	}
	figs := map[string]*figure{}
	for _, m := range cdfMetrics {
		figs[m.name] = nil
		if len(lines) == 0 {
			continue
		}
		f, err := cdfFigure(m, lines, m.title+" distribution (CDF) by run")
		if err != nil {
			return nil, err
		}
		if f != nil {
			f.notes = append(f.notes, names.notes(all)...)
			if len(missing) > 0 {
				f.notes = append(f.notes, "Runs "+strings.Join(missing, ", ")+" have no requests.parquet here and are left out.")
			}
		}
		figs[m.name] = f
	}
	return figs, nil
}

// runStyle is a line's colour and dash pattern.
type runStyle struct {
	color  plotColor
	dashes []float64
}

// glyphShapes tell apart the points of lines that coincide.
var glyphShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}}

// lineDashes tell apart up to three lines of a colour.
var lineDashes = [][]float64{nil, {6, 3}, {1.5, 2}}

// runStyles are the styles of the runs with the given params. With two or
// more varied keys, the first of at most three values, the runs that differ
// only in the first key's value share a colour and the first key's value
// sets the dash pattern (solid, dashed, dotted), so that such lines read as
// a group; otherwise each run has a colour of its own (lineStyle).
func runStyles(names *valueNames, params [][]string) []runStyle {
	out := make([]runStyle, len(params))
	if len(names.keys) < 2 || len(names.values[0]) > len(lineDashes) {
		for i := range out {
			c, d := lineStyle(i)
			out[i] = runStyle{c, d}
		}
		return out
	}
	var rest []string // the other keys' values, in order of first use
	for i, ps := range params {
		r := strings.Join(ps[1:], "\x00")
		k := slices.Index(rest, r)
		if k < 0 {
			rest = append(rest, r)
			k = len(rest) - 1
		}
		c, d := lineStyle(k)
		if d == nil {
			d = lineDashes[slices.Index(names.values[0], ps[0])]
		}
		out[i] = runStyle{c, d}
	}
	return out
}

// xAxis places a sweep's runs on a chart's x axis: by a varied key's value
// (key >= 0: its values in grid order, 0, 1, ...) or by a numeric column
// (num, times scale).
type xAxis struct {
	key    int
	num    func(*report.SweepRow) float64
	scale  float64
	values []string // the key's values met so far, in grid order
}

// of is the run's x.
func (a *xAxis) of(r *report.SweepRow) float64 {
	if a.key < 0 {
		return a.num(r) * a.scale
	}
	v := r.Params[a.key]
	if !slices.Contains(a.values, v) {
		a.values = append(a.values, v)
	}
	return float64(slices.Index(a.values, v))
}

// keyAxis makes p's x axis a varied key's values xs, in grid order, one
// tick each, and adds the key's notes to f.
func keyAxis(f *figure, p *plot.Plot, names *valueNames, key int, xs []string) {
	var ticks plot.ConstantTicks
	for _, x := range xs {
		ticks = append(ticks, plot.Tick{Value: float64(len(ticks)), Label: names.value(key, x)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.3, float64(len(xs))-0.7
	f.notes = append(f.notes, names.notes([]int{key})...)
}

// replicates is the runs of each grid point of the sweep in dir, from its
// sweep.json, when its last varied key is the replicates' seed; 1
// otherwise.
func replicates(dir string, keys []string) int {
	b, err := os.ReadFile(filepath.Join(dir, report.SweepSpecFile))
	var spec struct {
		Replicates int `json:"replicates"`
	}
	if err != nil || json.Unmarshal(b, &spec) != nil || len(keys) == 0 || keys[len(keys)-1] != "seed" {
		return 1
	}
	return max(1, spec.Replicates)
}

// sweepFigure draws a metric of a sweep against X, a line per combination
// of the by keys' values. With band (a sweep with replicates, whose seed
// is not a by key), a line's point is the mean of its runs at that x (a
// grid point's replicates) in a band of their 95 % interval
// (report.MeanInterval); otherwise each run is a point of its own. A run
// without a value (NaN) is left out.
func sweepFigure(names *valueNames, rows []report.SweepRow, metric, xName string, xKey int,
	xNum func(*report.SweepRow) float64, by []int, y func(*report.SweepRow) float64, band bool) (*figure, error) {
	yq, xq := quantityOf(metric), quantityOf(xName)
	type point struct {
		x  float64
		ys []float64
	}
	var order []string
	xa := &xAxis{key: xKey, num: xNum, scale: xq.scale}
	lines := map[string][]*point{}
	for i := range rows {
		r := &rows[i]
		x := xa.of(r)
		name := names.label(by, r.Params)
		if _, ok := lines[name]; !ok {
			order = append(order, name)
		}
		k := -1
		if band {
			k = slices.IndexFunc(lines[name], func(p *point) bool { return p.x == x })
		}
		if k < 0 {
			lines[name] = append(lines[name], &point{x: x})
			k = len(lines[name]) - 1
		}
		if v := y(r) * yq.scale; !math.IsNaN(v) {
			lines[name][k].ys = append(lines[name][k].ys, v)
		}
	}
	p := newPlot(xq.axis(), yq.axis())
	f := &figure{title: yq.name + " by " + xq.inTitle(), panels: []*plot.Plot{p}}
	lo, hi, xlo, xhi := 0.0, 0.0, math.Inf(1), math.Inf(-1)
	for i, n := range order {
		pts := lines[n]
		slices.SortStableFunc(pts, func(a, b *point) int { return cmp.Compare(a.x, b.x) })
		var mean, upper, lower plotter.XYs
		for _, pt := range pts {
			if len(pt.ys) == 0 {
				continue
			}
			s := report.MeanInterval(pt.ys)
			if math.IsNaN(s.Lo) { // one value: no interval
				s.Lo, s.Hi = s.Mean, s.Mean
			}
			mean = append(mean, plotter.XY{X: pt.x, Y: s.Mean})
			upper, lower = append(upper, plotter.XY{X: pt.x, Y: s.Hi}), append(lower, plotter.XY{X: pt.x, Y: s.Lo})
			lo, hi, xlo, xhi = min(lo, s.Lo), max(hi, s.Hi), min(xlo, pt.x), max(xhi, pt.x)
		}
		if len(mean) == 0 {
			continue
		}
		// Lines that coincide stay apart: each has its own colour, dash
		// pattern and point shape.
		col, _ := lineStyle(i)
		l, err := plotter.NewLine(mean)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		sc, err := plotter.NewScatter(mean)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: glyphShapes[i%len(glyphShapes)]}
		if !band {
			l.Dashes = points(lineDashes[i%len(lineDashes)])
			p.Add(l, sc)
			if n != "" {
				f.legend = append(f.legend, entry{n, []plot.Thumbnailer{l, sc}})
			}
			continue
		}
		slices.Reverse(lower)
		poly, err := plotter.NewPolygon(append(upper, lower...))
		if err != nil {
			return nil, err
		}
		r, g, b, _ := col.RGBA()
		poly.Color, poly.LineStyle.Width = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}, 0
		p.Add(poly, l, sc)
		label := "mean"
		if n != "" {
			label = n + ": mean"
		}
		f.legend = append(f.legend, entry{label, []plot.Thumbnailer{l, sc}}, entry{"95% interval", []plot.Thumbnailer{poly}})
	}
	p.Y.Min, p.Y.Max = lo*1.08, hi*1.08
	if hi <= lo { // all zero
		p.Y.Max = lo + 1
	}
	if xKey < 0 && xhi > xlo { // room for the points at the ends
		p.X.Min, p.X.Max = xlo-0.03*(xhi-xlo), xhi+0.03*(xhi-xlo)
	}
	f.notes = names.notes(by)
	if band {
		note := "Each point is the mean of a grid point's replicates (seeds), in a band of the 95 % confidence interval of that mean."
		if strings.Contains(metric, "_delta") {
			note += " The effect is each seed's run minus its own twin, so its band is that of the paired difference."
		}
		f.notes = append(f.notes, note)
	}
	if xKey >= 0 {
		keyAxis(f, p, names, xKey, xa.values)
	}
	return f, nil
}
