package chart

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvsim/kvsim/report"
)

// TradeoffCell is one grid point of a tradeoff chart: its label and its
// runs' (replicates') x and y, a pair a run.
type TradeoffCell struct {
	Label string
	X, Y  []float64
}

// Tradeoff draws, as the chart named name, y against x (two numeric
// sweep.parquet columns, named and scaled as the sweep charts show them),
// where less x and more y are better (a cost against what it buys): each
// cell's runs as small marks of a colour and shape of its own, their mean
// as a large mark of the same, and the frontier, the means of the cells
// frontier lists (report.Frontier of the cells' means, by x ascending),
// ringed and joined by a step line: from each frontier mean across to the
// next one's x, then up to it, so that the line is the most y bought at
// each x. A run whose x or y is NaN is left out. Without a run to draw,
// the chart is not drawn (nil).
func Tradeoff(name, x, y string, cells []TradeoffCell, frontier []int) (*Charts, error) {
	xq, yq := quantityOf(x), quantityOf(y)
	p := newPlot(xq.axis(), yq.axis())
	f := &figure{title: fmt.Sprintf("%s against %s: a point a run, a grid point's mean, and the frontier",
		yq.name, xq.inTitle()), panels: []*plot.Plot{p}}
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 0.0
	means := make(plotter.XYs, len(cells))
	for i, c := range cells {
		var runs plotter.XYs
		var xs, ys []float64
		for k := range c.X {
			if math.IsNaN(c.X[k]) || math.IsNaN(c.Y[k]) {
				continue
			}
			pt := plotter.XY{X: c.X[k] * xq.scale, Y: c.Y[k] * yq.scale}
			runs, xs, ys = append(runs, pt), append(xs, pt.X), append(ys, pt.Y)
			xlo, xhi, yhi = min(xlo, pt.X), max(xhi, pt.X), max(yhi, pt.Y)
		}
		means[i] = plotter.XY{X: math.NaN(), Y: math.NaN()}
		if len(runs) == 0 {
			continue
		}
		means[i] = plotter.XY{X: report.MeanInterval(xs).Mean, Y: report.MeanInterval(ys).Mean}
		col, _ := lineStyle(i)
		shape := glyphShapes[i%len(glyphShapes)]
		dots, err := plotter.NewScatter(runs)
		if err != nil {
			return nil, err
		}
		dots.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: shape}
		mean, err := plotter.NewScatter(means[i : i+1])
		if err != nil {
			return nil, err
		}
		mean.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(6), Shape: shape}
		p.Add(dots, mean)
		f.legend = append(f.legend, entry{c.Label, []plot.Thumbnailer{mean}})
	}
	if math.IsInf(xlo, 1) {
		return &Charts{map[string]*figure{name: nil}}, nil
	}
	if step := steps(means, frontier); len(step) > 0 {
		l, err := plotter.NewLine(step)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = black, vg.Points(1.2), points([]float64{5, 3})
		on := make(plotter.XYs, len(frontier))
		for k, i := range frontier {
			on[k] = means[i]
		}
		rings, err := plotter.NewScatter(on) // a frontier of one point has no line to show
		if err != nil {
			return nil, err
		}
		rings.GlyphStyle = draw.GlyphStyle{Color: black, Radius: vg.Points(10), Shape: draw.RingGlyph{}}
		p.Add(l, rings)
		thumb := *rings // a ring the legend's row holds
		thumb.GlyphStyle.Radius = vg.Points(5)
		f.legend = append(f.legend, entry{"frontier", []plot.Thumbnailer{l, &thumb}})
	}
	p.Y.Min, p.Y.Max = 0, yhi*1.08
	if yhi <= 0 { // all zero
		p.Y.Max = 1
	}
	pad := 0.05 * (xhi - xlo)
	if pad == 0 {
		pad = math.Max(1, 0.05*math.Abs(xlo))
	}
	p.X.Min, p.X.Max = xlo-pad, xhi+pad
	f.notes = []string{"Small marks are runs (replicates), a large mark their grid point's mean. The frontier rings and joins the means no other grid point's beats in both: none with less or equal " +
		xq.inTitle() + " has more or equal " + yq.inTitle() + ", better in one."}
	return &Charts{map[string]*figure{name: f}}, nil
}

// steps is the frontier's step line through the means it lists, in its
// order: each mean, then across at its y to the next one's x.
func steps(means plotter.XYs, frontier []int) plotter.XYs {
	var out plotter.XYs
	for k, i := range frontier {
		if k > 0 {
			out = append(out, plotter.XY{X: means[i].X, Y: out[len(out)-1].Y})
		}
		out = append(out, means[i])
	}
	return out
}
