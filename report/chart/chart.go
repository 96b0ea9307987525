// Package chart renders the charts of a run or a sweep directory as PNG and
// SVG files with gonum.org/v1/plot, reading only the files kvsim wrote.
//
// Every chart keeps its legend and notes in a column to the right of the
// data, never over it; a chart whose data is absent (a run without pulls,
// a tier never used) is not drawn at all.
package chart

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// maxPanels is how many workers get a panel each in the per-worker charts
// kvsim plot draws; more are drawn as the band of their minimum to
// maximum, and their mean.
const maxPanels = 64

// Run renders a run directory's charts into dir/charts and returns the
// files written, sorted: ttft (p50 and p99 by arrival time, over a rolling
// window, log axis), queue (requests running and waiting), pulls (pulls
// ended by outcome), g1 and g2 (blocks in use, a panel per worker),
// cdf-ttft, cdf-tpot, cdf-itl and cdf-e2e (distributions) and, when the
// requests carry a real server's measurements, fidelity-scatter (measured
// against simulated, a point a request) and fidelity-cdf (both
// distributions). Lifecycle events are marked on the charts over time. A
// chart with no data is not drawn.
func Run(dir string) ([]string, error) {
	c, err := RunCharts(dir, maxPanels)
	if err != nil {
		return nil, err
	}
	return c.Save(filepath.Join(dir, report.ChartsDir))
}

// RunCharts draws the charts Run writes, without writing them; up to
// panels workers get a panel each in the per-worker charts.
func RunCharts(dir string, panels int) (*Charts, error) {
	path := func(n string) string { return filepath.Join(dir, n) }
	workers, err := parquetio.ReadWorkers(path(report.WorkersFile))
	if err != nil {
		return nil, err
	}
	evs := lifecycle(workers)
	var samples []report.SampleRow // read once for the queue and occupancy charts
	err = parquetio.ReadSamples(path(report.TimeseriesFile), func(r *report.SampleRow) error {
		samples = append(samples, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var reqs []request
	lat := &latencies{}
	var fid report.FidelityCollector
	err = parquetio.ReadRequests(path(report.RequestsFile), func(r *report.RequestRow) error {
		if r.Outcome == report.OutcomeCompleted {
			reqs = append(reqs, request{r.ArrivalNs, r.FirstTokenNs - r.ArrivalNs})
		}
		lat.add(r)
		fid.Add(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if lat.exactITL, err = readExactITL(path(report.SummaryFile)); err != nil {
		return nil, err
	}
	var pulls []pullEnd
	err = parquetio.ReadPulls(path(report.PullsFile), func(r *report.PullRow) error {
		pulls = append(pulls, pullEnd{r.EndNs, r.Outcome})
		return nil
	})
	if err != nil {
		return nil, err
	}
	outcomes, err := parquetio.Dictionary(path(report.PullsFile), "outcome")
	if err != nil {
		return nil, err
	}
	end := int64(0)
	for _, s := range samples {
		end = max(end, s.TimeNs)
	}
	for _, r := range reqs {
		end = max(end, r.arrival)
	}
	t := newTimeAxis(end)

	fd := newFidelityData(&fid)
	figs := map[string]*figure{}
	for _, c := range []struct {
		name string
		draw func() (*figure, error)
	}{
		{"fidelity-scatter", func() (*figure, error) { return fidelityScatterFigure(fd) }},
		{"fidelity-cdf", func() (*figure, error) { return fidelityCDFFigure(fd) }},
		{"ttft", func() (*figure, error) { return ttftFigure(reqs, evs, t) }},
		{"queue", func() (*figure, error) { return queueFigure(samples, evs, t, end) }},
		{"pulls", func() (*figure, error) { return pullsFigure(pulls, outcomes, evs, t, end) }},
		{"g1", func() (*figure, error) {
			return occupancyFigure(samples, evs, t, panels, "G1 blocks in use (referenced) per worker", func(s *report.SampleRow) int64 { return s.G1Blocks })
		}},
		{"g2", func() (*figure, error) {
			return occupancyFigure(samples, evs, t, panels, "G2 blocks in use (slots taken) per worker", func(s *report.SampleRow) int64 { return s.G2Blocks })
		}},
	} {
		if figs[c.name], err = c.draw(); err != nil {
			return nil, err
		}
	}
	for _, m := range cdfMetrics {
		if figs[m.name], err = cdfFigure(m, []cdfLine{{"", lat, runStyle{color: blue}}}, m.title+" distribution (CDF)"); err != nil {
			return nil, err
		}
	}
	return &Charts{figs}, nil
}

// Charts are a directory's charts by name ("ttft", "sweep-ttft_p99_ms"),
// drawn and not yet written; a chart without data is there as nil.
type Charts struct{ figs map[string]*figure }

// Names are the charts drawn (those with data), sorted.
func (c *Charts) Names() []string {
	var names []string
	for name, f := range c.figs {
		if f != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Title is the chart's title; "" when it was not drawn.
func (c *Charts) Title(name string) string {
	if f := c.figs[name]; f != nil {
		return f.title
	}
	return ""
}

// SVG is the chart as an SVG element, without the XML declaration, for a
// page to inline; nil when it was not drawn. Its text is escaped.
func (c *Charts) SVG(name string) ([]byte, error) {
	f := c.figs[name]
	if f == nil {
		return nil, nil
	}
	w, h := f.size()
	canvas := vgsvg.New(w, h)
	f.draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart: %s: %w", name, err)
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i >= 0 {
		out = out[i:]
	}
	return out, nil
}

// Save writes the charts drawn into dir as PNG and SVG and returns the
// files written, sorted. For a chart not drawn (no data) it removes the
// chart's files left by an earlier plot, so that none in dir contradicts
// the data.
func (c *Charts) Save(dir string) ([]string, error) {
	figs := c.figs
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, report.Unwritable(dir, err)
	}
	var files []string
	for name, f := range figs {
		if f == nil {
			for _, format := range Formats {
				if err := os.Remove(filepath.Join(dir, name+"."+format)); err != nil && !os.IsNotExist(err) {
					return nil, err
				}
			}
			continue
		}
		out, err := f.save(dir, name)
		if err != nil {
			return nil, err
		}
		files = append(files, out...)
	}
	slices.Sort(files)
	return files, nil
}

// request is a completed request: its arrival and its TTFT.
type request struct {
	arrival, ttft int64 // ns
}

// rollingWindow is the TTFT chart's window for arrivals spanning span: a
// thirtieth of it rounded up to a nice duration (1 s at least), so about
// 30 windows' worth of points cover the run.
func rollingWindow(span int64) int64 { return niceDuration(max(span/30, 1)) }

// ttftFigure draws the TTFT p50 and p99 of the requests arriving in a
// trailing window, evaluated every eighth of the window, on a log axis; a
// window without requests, or whose percentile is 0, leaves a gap.
func ttftFigure(reqs []request, evs []event, t timeAxis) (*figure, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b request) int { return cmp.Compare(a.arrival, b.arrival) })
	first, last := reqs[0].arrival, reqs[len(reqs)-1].arrival
	win := rollingWindow(last - first)
	step := win / 8
	p50, p99 := newSegments(), newSegments()
	lo, hi := math.Inf(1), 0.0
	var buf []float64
	i0, i1 := 0, 0
	for at := (first/step + 1) * step; at < last+step; at += step {
		for i1 < len(reqs) && reqs[i1].arrival <= at {
			i1++
		}
		for i0 < i1 && reqs[i0].arrival <= at-win {
			i0++
		}
		buf = buf[:0]
		for _, r := range reqs[i0:i1] {
			buf = append(buf, float64(r.ttft)/1e6)
		}
		slices.Sort(buf)
		x := t.x(at)
		for _, s := range []struct {
			seg *segments
			pm  int64
		}{{p50, 500}, {p99, 990}} {
			// No requests, or a TTFT of 0 the log axis cannot show: a gap.
			if len(buf) == 0 || atRank(buf, s.pm) <= 0 {
				s.seg.gap()
				continue
			}
			v := atRank(buf, s.pm)
			s.seg.add(x, v)
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi == 0 {
		return nil, nil
	}
	p := newPlot("arrival "+t.label, "TTFT (ms, log scale)")
	logRange(&p.Y, lo, hi)
	p.X.Min, p.X.Max = 0, t.x(last+step)
	f := &figure{
		title:  "TTFT p50 and p99 by arrival time, rolling " + durationText(win) + " window",
		panels: []*plot.Plot{p},
		notes: []string{"Each point is over the completed requests arriving in the " + durationText(win) +
			" before it, with a point every " + durationText2(step) + "; p99 of fewer than 100 requests is their largest."},
	}
	for _, s := range []struct {
		name string
		seg  *segments
		col  plotColor
	}{{"p50", p50, blue}, {"p99", p99, red}} {
		l := s.seg.lines(s.col, 1.5)
		for _, ln := range l {
			p.Add(ln)
		}
		if len(l) > 0 {
			f.legend = append(f.legend, entry{s.name, []plot.Thumbnailer{l[0]}})
		}
	}
	f.legend = append(f.legend, eventEntries(evs)...)
	f.mark(p, marks{evs: evs, t: t, labels: true})
	return f, nil
}

// durationText2 writes a duration that may not be whole seconds.
func durationText2(ns int64) string {
	if ns%1e9 == 0 {
		return durationText(ns)
	}
	return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) + " s"
}

// segments is a line that may have gaps.
type segments struct{ parts []plotter.XYs }

func newSegments() *segments { return &segments{parts: []plotter.XYs{nil}} }

func (s *segments) add(x, y float64) {
	s.parts[len(s.parts)-1] = append(s.parts[len(s.parts)-1], plotter.XY{X: x, Y: y})
}

func (s *segments) gap() {
	if len(s.parts[len(s.parts)-1]) > 0 {
		s.parts = append(s.parts, nil)
	}
}

func (s *segments) lines(c plotColor, w float64) []*plotter.Line {
	var out []*plotter.Line
	for _, xys := range s.parts {
		if len(xys) == 0 {
			continue
		}
		l, _ := plotter.NewLine(xys) // the values are finite
		l.Color, l.Width = c, vg.Points(w)
		out = append(out, l)
	}
	return out
}

// maxQueuePoints is how many sample times the queue chart draws as they
// are; longer runs are drawn in buckets.
const maxQueuePoints = 500

// queueFigure draws the requests running and waiting over all workers: as
// sampled, or past maxQueuePoints sample times, in buckets of a 250th of
// the run (rounded up to a nice duration) as each bucket's mean and the
// band from its least to its most.
func queueFigure(samples []report.SampleRow, evs []event, t timeAxis, endNs int64) (*figure, error) {
	type total struct {
		ns               int64
		running, waiting float64
	}
	var totals []total // by sample time
	nonzero := false
	for _, r := range samples {
		if n := len(totals); n == 0 || totals[n-1].ns != r.TimeNs {
			totals = append(totals, total{ns: r.TimeNs})
		}
		tt := &totals[len(totals)-1]
		tt.running += float64(r.Running)
		tt.waiting += float64(r.Waiting)
		nonzero = nonzero || r.Running > 0 || r.Waiting > 0
	}
	if !nonzero {
		return nil, nil
	}
	p := newPlot(t.label, "requests")
	p.X.Min, p.X.Max, p.Y.Min = 0, t.x(endNs), 0
	f := &figure{title: "Requests running and waiting, all workers", panels: []*plot.Plot{p}}
	top := 0.0
	for _, s := range []struct {
		name string
		val  func(total) float64
		col  color.RGBA
	}{{"running", func(x total) float64 { return x.running }, blue}, {"waiting", func(x total) float64 { return x.waiting }, orange}} {
		if len(totals) <= maxQueuePoints {
			var xys plotter.XYs
			for _, x := range totals {
				xys = append(xys, plotter.XY{X: t.x(x.ns), Y: s.val(x)})
				top = max(top, s.val(x))
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = s.col, vg.Points(1.2)
			p.Add(l)
			f.legend = append(f.legend, entry{s.name, []plot.Thumbnailer{l}})
			continue
		}
		bw := niceDuration(max(endNs/250, 1))
		f.title = "Requests running and waiting, all workers (" + durationText(bw) + " buckets)"
		type acc struct{ lo, hi, sum, n float64 }
		var buckets []acc
		for _, x := range totals {
			b := int(x.ns / bw)
			for len(buckets) <= b {
				buckets = append(buckets, acc{lo: math.Inf(1), hi: math.Inf(-1)})
			}
			v, a := s.val(x), &buckets[b]
			a.lo, a.hi, a.sum, a.n = min(a.lo, v), max(a.hi, v), a.sum+v, a.n+1
		}
		var mean, band plotter.XYs
		for b, a := range buckets {
			if a.n == 0 {
				continue
			}
			x := t.x(int64(b)*bw + bw/2)
			mean = append(mean, plotter.XY{X: x, Y: a.sum / a.n})
			band = append(band, plotter.XY{X: x, Y: a.hi})
			top = max(top, a.hi)
		}
		for b := len(buckets) - 1; b >= 0; b-- {
			if a := buckets[b]; a.n > 0 {
				band = append(band, plotter.XY{X: t.x(int64(b)*bw + bw/2), Y: a.lo})
			}
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, err
		}
		poly.Color = color.NRGBA{R: s.col.R, G: s.col.G, B: s.col.B, A: 0x40}
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(mean)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = s.col, vg.Points(1.5)
		p.Add(poly, l)
		f.legend = append(f.legend,
			entry{s.name + ": mean", []plot.Thumbnailer{l}},
			entry{s.name + ": least to most", []plot.Thumbnailer{poly}})
		f.notes = []string{fmt.Sprintf("%s sample times; each %s bucket is drawn as its mean and the band from its least to its most.",
			formatNum(float64(len(totals))), durationText(bw))}
	}
	p.Y.Max = top * 1.05
	f.legend = append(f.legend, eventEntries(evs)...)
	f.mark(p, marks{evs: evs, t: t, labels: true})
	return f, nil
}

// pullEnd is a pull's end time and outcome.
type pullEnd struct {
	ns      int64
	outcome string
}

// outcomeColors colour the pull outcomes, in the order of pulls.parquet's
// outcome dictionary (the model's: success, partial, failed, expired,
// rejected, superseded).
var outcomeColors = []plotColor{green, blue, red, orange, purple, black}

// pullsFigure draws the pulls that ended in each bucket of a hundredth of
// the run (rounded up to a nice duration), a step line an outcome that
// occurred, the outcomes named and ordered as the file's dictionary lists
// them; nil without pulls.
func pullsFigure(pulls []pullEnd, outcomes []string, evs []event, t timeAxis, endNs int64) (*figure, error) {
	if len(pulls) == 0 {
		return nil, nil
	}
	last := endNs
	for _, e := range pulls {
		last = max(last, e.ns)
	}
	bw := niceDuration(max(last/100, 1))
	nb := last/bw + 1
	counts := make([][]float64, len(outcomes))
	totals := make([]int, len(outcomes))
	for _, e := range pulls {
		o := slices.Index(outcomes, e.outcome)
		if o < 0 {
			continue
		}
		if counts[o] == nil {
			counts[o] = make([]float64, nb)
		}
		counts[o][e.ns/bw]++
		totals[o]++
	}
	top := 0.0
	for _, c := range counts {
		for _, v := range c {
			top = max(top, v)
		}
	}
	p := newPlot(t.label, "pulls ended per "+durationText(bw))
	p.Y.Min = 0
	p.X.Min, p.X.Max = 0, t.x(last)
	f := &figure{title: "KVCR pulls ended by outcome, per " + durationText(bw), panels: []*plot.Plot{p}}
	for o, name := range outcomes {
		if totals[o] == 0 {
			continue
		}
		var xys plotter.XYs
		for b, c := range counts[o] {
			xys = append(xys, plotter.XY{X: t.x(int64(b) * bw), Y: c})
		}
		xys = append(xys, plotter.XY{X: t.x(nb * bw), Y: counts[o][nb-1]})
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		l.Color, l.Width = outcomeColors[o], vg.Points(1.2)
		p.Add(l)
		f.legend = append(f.legend, entry{fmt.Sprintf("%s (%s)", name, formatNum(float64(totals[o]))), []plot.Thumbnailer{l}})
	}
	p.Y.Max = top * 1.05
	f.legend = append(f.legend, eventEntries(evs)...)
	f.notes = []string{"In brackets: pulls of that outcome over the run. Outcomes no pull had are left out."}
	f.mark(p, marks{evs: evs, t: t, labels: true})
	return f, nil
}

// occupancyFigure draws a per-worker value over time, a panel a worker
// (small multiples on a shared scale, each marked with its own lifecycle
// events), or past panels workers the band from their minimum to their
// maximum and their mean; nil when the value is 0 throughout.
func occupancyFigure(samples []report.SampleRow, evs []event, t timeAxis, panels int, title string, val func(*report.SampleRow) int64) (*figure, error) {
	byWorker := map[int32]plotter.XYs{}
	top, end := int64(0), 0.0
	for i := range samples {
		r := &samples[i]
		v := val(r)
		byWorker[r.Worker] = append(byWorker[r.Worker], plotter.XY{X: t.x(r.TimeNs), Y: float64(v)})
		top, end = max(top, v), max(end, t.x(r.TimeNs))
	}
	if top == 0 {
		return nil, nil
	}
	ids := make([]int32, 0, len(byWorker))
	for w := range byWorker {
		ids = append(ids, w)
	}
	slices.Sort(ids)
	if len(ids) > panels {
		return envelopeFigure(title, ids, byWorker, evs, t, end)
	}
	cols, h := gridLayout(len(ids))
	rows := (len(ids) + cols - 1) / cols
	f := &figure{title: title, cols: cols, h: h}
	for i, w := range ids {
		p := newPlot("", "")
		// a blank title keeps room for the label drawn centred over the data
		// (a transparent one would show in SVG, which has no such colour)
		p.Title.Text = " "
		p.Title.TextStyle.Font = tickFont
		p.Title.Padding = vg.Points(2)
		f.labels = append(f.labels, "worker "+strconv.Itoa(int(w)))
		p.X.Min, p.X.Max = 0, end
		p.Y.Min, p.Y.Max = 0, float64(top)*1.05
		p.X.Tick.Marker = linearTicks{few: true}
		p.Y.Tick.Marker = linearTicks{compact: true, few: true}
		if i%cols != 0 {
			p.Y.Tick.Marker = unlabelled{linearTicks{compact: true, few: true}}
		} else if i/cols == rows/2 {
			p.Y.Label.Text = "blocks"
		}
		if i/cols != rows-1 && i+cols < len(ids) {
			p.X.Tick.Marker = unlabelled{linearTicks{few: true}}
		} else {
			p.X.Label.Text = t.label
		}
		l, err := plotter.NewLine(byWorker[w])
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = blue, vg.Points(1)
		l.FillColor = lightBlue
		p.Add(l)
		var own []event
		for _, e := range evs {
			if e.worker == w {
				own = append(own, e)
			}
		}
		p.Add(marks{evs: own, t: t})
		f.panels = append(f.panels, p)
	}
	f.legend = eventEntries(evs)
	if len(f.legend) > 0 {
		f.notes = []string{"Each panel is marked with its own worker's events."}
	}
	return f, nil
}

// envelopeFigure draws many workers' values as the band from their
// minimum to their maximum at each sample time, and their mean.
func envelopeFigure(title string, ids []int32, byWorker map[int32]plotter.XYs, evs []event, t timeAxis, end float64) (*figure, error) {
	type acc struct{ lo, hi, sum, n float64 }
	at := map[float64]*acc{}
	for _, w := range ids {
		for _, v := range byWorker[w] {
			a := at[v.X]
			if a == nil {
				a = &acc{lo: v.Y, hi: v.Y}
				at[v.X] = a
			}
			a.lo, a.hi, a.sum, a.n = min(a.lo, v.Y), max(a.hi, v.Y), a.sum+v.Y, a.n+1
		}
	}
	xs := make([]float64, 0, len(at))
	for x := range at {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	var band, mean plotter.XYs
	for _, x := range xs {
		band = append(band, plotter.XY{X: x, Y: at[x].hi})
		mean = append(mean, plotter.XY{X: x, Y: at[x].sum / at[x].n})
	}
	for i := len(xs) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: xs[i], Y: at[xs[i]].lo})
	}
	p := newPlot(t.label, "blocks")
	p.X.Min, p.X.Max, p.Y.Min = 0, end, 0
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return nil, err
	}
	poly.Color, poly.LineStyle.Width = lightBlue, 0
	ml, err := plotter.NewLine(mean)
	if err != nil {
		return nil, err
	}
	ml.Color, ml.Width = blue, vg.Points(1.5)
	p.Add(poly, ml)
	f := &figure{
		title:  fmt.Sprintf("%s (%d workers: range and mean)", strings.TrimSuffix(title, " per worker"), len(ids)),
		panels: []*plot.Plot{p},
		legend: append([]entry{{"least to most", []plot.Thumbnailer{poly}}, {"mean", []plot.Thumbnailer{ml}}}, eventEntries(evs)...),
	}
	f.mark(p, marks{evs: evs, t: t, labels: true})
	return f, nil
}
