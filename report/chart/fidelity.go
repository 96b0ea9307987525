package chart

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvsim/kvsim/report"
)

// fidelityPanels are the latencies the fidelity charts compare, a panel
// each: their names in report.FidelityMetrics and as shown.
var fidelityPanels = []struct{ name, label string }{
	{"ttft", "TTFT"}, {"itl", "ITL"}, {"e2e", "E2E"}, {"prefill", "Prefill"},
}

// fidelityNote defines the compared latencies (report.Fidelity's, vLLM's).
const fidelityNote = "TTFT = first token − arrival; ITL = a request's mean gap, " +
	"(last token − first token) / (output tokens − 1), for requests of more than one; " +
	"E2E = finish − arrival; prefill = first token − first scheduled."

// panelLogTicks label the log axes of the fidelity charts' panels, half
// the figure wide.
var panelLogTicks = logTicks{compact: true, narrow: true}

// dotRadius is the size of a request's point on the scatter.
const dotRadius = vg.Length(2.2)

// fidelityPair is a request's simulated and measured value of a metric, in
// ms.
type fidelityPair struct{ sim, meas float64 }

// fidelityData is what the fidelity charts draw: for each of
// fidelityPanels, the comparison of summary.json's fidelity section and the
// per-request pairs it is computed from.
type fidelityData struct {
	f     *report.Fidelity
	pairs [][]fidelityPair // by fidelityPanels
}

// newFidelityData collects c's pairs, or returns nil when no request
// carried a measurement of the charted latencies.
func newFidelityData(c *report.FidelityCollector) *fidelityData {
	f := c.Result()
	if f == nil {
		return nil
	}
	d := &fidelityData{f: f}
	some := false
	for _, m := range fidelityPanels {
		var ps []fidelityPair
		for _, p := range c.Pairs(m.name) {
			ps = append(ps, fidelityPair{float64(p[0]) / 1e6, float64(p[1]) / 1e6})
		}
		d.pairs = append(d.pairs, ps)
		some = some || len(ps) > 0
	}
	if !some {
		return nil
	}
	return d
}

// fidelityGrid sets up a 2 by 2 grid of panels of height h, one a metric
// with data (a metric without any leaves its cell empty), axes labelled on
// the outer panels.
func fidelityGrid(d *fidelityData, title string, h vg.Length, xLabel, yLabel string) *figure {
	f := &figure{title: title, cols: 2, h: h, labelFont: labelFont, xLabel: xLabel, yLabel: yLabel}
	for i := range fidelityPanels {
		if len(d.pairs[i]) == 0 {
			f.panels = append(f.panels, nil)
			f.labels = append(f.labels, "")
			continue
		}
		f.panels = append(f.panels, newPlot("", ""))
		f.labels = append(f.labels, "")
	}
	return f
}

// setLabel gives panel i its label, with room above its data.
func (f *figure) setLabel(i int, s string) {
	p := f.panels[i]
	p.Title.Text = " " // room for the label drawGrid centres over the data; a transparent colour would show in SVG
	p.Title.TextStyle.Font = labelFont
	p.Title.Padding = vg.Points(3)
	f.labels[i] = s
}

// fidelityScatterFigure draws, a panel a metric, each request's measured
// value (x) against its simulated one (y) on log-log axes with the line
// y = x, the panel labelled with the metric's MAPE and mean error; nil
// without measurements.
func fidelityScatterFigure(d *fidelityData) (*figure, error) {
	if d == nil {
		return nil, nil
	}
	f := fidelityGrid(d, "Simulated against measured latency, a point a request", 8.5*vg.Inch, "measured (ms, log scale)", "simulated (ms, log scale)")
	var dot *plotter.Scatter
	var diag *plotter.Line
	var skipped []string
	for i, m := range fidelityPanels {
		p := f.panels[i]
		if p == nil {
			continue
		}
		var xys plotter.XYs
		lo, hi := math.Inf(1), 0.0
		for _, q := range d.pairs[i] {
			if q.sim <= 0 || q.meas <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: q.meas, Y: q.sim})
			lo, hi = min(lo, q.sim, q.meas), max(hi, q.sim, q.meas)
		}
		if n := len(d.pairs[i]) - len(xys); n > 0 {
			skipped = append(skipped, fmt.Sprintf("%s %d", m.label, n))
		}
		fm := d.f.Metric(m.name)
		f.setLabel(i, fmt.Sprintf("%s (ms): MAPE %.1f %%, mean %+.1f %%", m.label, 100*fm.MAPE, 100*fm.MeanError()))
		if len(xys) == 0 {
			continue
		}
		logRange(&p.X, lo, hi)
		logRange(&p.Y, lo, hi)
		p.X.Tick.Marker, p.Y.Tick.Marker = panelLogTicks, panelLogTicks
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: p.Y.Min}, {X: p.X.Max, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = eventGrey, vg.Points(1), points([]float64{5, 3})
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.NRGBA{R: blue.R, G: blue.G, B: blue.B, A: 0x99}, Radius: dotRadius, Shape: draw.CircleGlyph{}}
		p.Add(l, sc)
		dot, diag = sc, l
	}
	if dot == nil {
		return nil, nil
	}
	f.legend = []entry{{"a request", []plot.Thumbnailer{dot}}, {"simulated = measured", []plot.Thumbnailer{diag}}}
	f.notes = []string{
		"Above the dashed line the simulation is slower than the server, below it faster.",
		"MAPE: the mean over requests of |simulated − measured| / measured; mean: the simulated mean's error against the measured mean (summary.json's fidelity section).",
		fidelityCounts(d),
		fidelityNote,
	}
	if len(skipped) > 0 {
		f.notes = append(f.notes, "Requests at 0 ms or less, which a log axis cannot show, are left out of the points (not of MAPE and mean): "+strings.Join(skipped, ", ")+".")
	}
	return f, nil
}

// fidelityCounts says over how many requests each metric is compared.
func fidelityCounts(d *fidelityData) string {
	var parts []string
	for i, m := range fidelityPanels {
		parts = append(parts, fmt.Sprintf("%s %s", m.label, formatNum(float64(len(d.pairs[i])))))
	}
	return "Completed requests whose trace carried the measurement: " + strings.Join(parts, ", ") + "."
}

// fidelityCDFFigure draws, a panel a metric, the distributions of the
// simulated and the measured values over the same requests; nil without
// measurements.
func fidelityCDFFigure(d *fidelityData) (*figure, error) {
	if d == nil {
		return nil, nil
	}
	f := fidelityGrid(d, "Simulated and measured latency distributions (CDF)", 7*vg.Inch, "latency (ms, log scale)", "share of requests at or below")
	var thumbs [2]*plotter.Line
	var skipped []string
	for i, m := range fidelityPanels {
		p := f.panels[i]
		if p == nil {
			continue
		}
		fm := d.f.Metric(m.name)
		f.setLabel(i, fmt.Sprintf("%s (ms): p50 %s / %s, p90 %s / %s", m.label,
			formatMs(fm.Simulated.P50), formatMs(fm.Measured.P50), formatMs(fm.Simulated.P90), formatMs(fm.Measured.P90)))
		p.Y.Min, p.Y.Max = 0, 1
		var ticks plot.ConstantTicks
		for k := 0; k <= 10; k++ {
			t := plot.Tick{Value: float64(k) / 10}
			if k%2 == 0 {
				t.Label = formatNum(float64(k) / 10)
			}
			ticks = append(ticks, t)
		}
		p.Y.Tick.Marker = ticks
		lo, hi := math.Inf(1), 0.0
		for s, side := range []struct {
			val    func(fidelityPair) float64
			col    color.Color
			dashes []float64
		}{
			{func(q fidelityPair) float64 { return q.sim }, blue, nil},
			{func(q fidelityPair) float64 { return q.meas }, black, []float64{5, 2.5}},
		} {
			vals := make([]float64, len(d.pairs[i]))
			for k, q := range d.pairs[i] {
				vals[k] = side.val(q)
			}
			xys, sk := cdf(vals, nil)
			if sk > 0 {
				skipped = append(skipped, fmt.Sprintf("%s %s %d", m.label, [...]string{"simulated", "measured"}[s], sk))
			}
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.StepStyle = plotter.PostStep
			l.Color, l.Width, l.Dashes = side.col, vg.Points(1.5), points(side.dashes)
			p.Add(l)
			thumbs[s] = l
			lo, hi = min(lo, xys[0].X), max(hi, xys[len(xys)-1].X)
		}
		if hi > 0 {
			logRange(&p.X, lo, hi)
			p.X.Tick.Marker = panelLogTicks
		}
	}
	if thumbs[0] == nil && thumbs[1] == nil {
		return nil, nil
	}
	for s, name := range []string{"simulated (kvsim)", "measured (server)"} {
		if thumbs[s] != nil {
			f.legend = append(f.legend, entry{name, []plot.Thumbnailer{thumbs[s]}})
		}
	}
	f.notes = []string{
		"Each panel's label gives the p50 and p90, simulated / measured (nearest rank).",
		fidelityCounts(d) + " Both lines are over the same requests.",
		fidelityNote,
	}
	if len(skipped) > 0 {
		f.notes = append(f.notes, "Values of 0 ms or less, which a log axis cannot show, are counted in the line's start: "+strings.Join(skipped, ", ")+".")
	}
	return f, nil
}
