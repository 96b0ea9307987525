package chart

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// latencies are a run's per-request latencies in milliseconds, from the
// completed requests of requests.parquet.
type latencies struct {
	ttft, e2e []float64
	tpot      []float64 // requests with more than one output token
	gaps      []float64 // their number of inter-token gaps (output tokens − 1), by tpot
	exactITL  []float64 // summary.json's ITL p50, p90, p95, p99, max; nil without it
}

// add records a request; it ignores requests that did not complete.
func (l *latencies) add(r *report.RequestRow) {
	if r.Outcome != report.OutcomeCompleted {
		return
	}
	l.ttft = append(l.ttft, float64(r.FirstTokenNs-r.ArrivalNs)/1e6)
	l.e2e = append(l.e2e, float64(r.FinishNs-r.ArrivalNs)/1e6)
	if n := r.OutputTokens - 1; n > 0 {
		l.tpot = append(l.tpot, float64(r.FinishNs-r.FirstTokenNs)/float64(n)/1e6)
		l.gaps = append(l.gaps, float64(n))
	}
}

// readLatencies reads a run directory's requests.parquet and the exact ITL
// percentiles of its summary.json.
func readLatencies(path func(string) string) (*latencies, error) {
	l := &latencies{}
	err := parquetio.ReadRequests(path(report.RequestsFile), func(r *report.RequestRow) error {
		l.add(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.exactITL, err = readExactITL(path(report.SummaryFile))
	return l, err
}

// readExactITL reads the ITL p50, p90, p95, p99 and max of a summary.json;
// nil when the file is absent.
func readExactITL(path string) ([]float64, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s struct {
		ITL *struct {
			P50 float64 `json:"p50_ms"`
			P90 float64 `json:"p90_ms"`
			P95 float64 `json:"p95_ms"`
			P99 float64 `json:"p99_ms"`
			Max float64 `json:"max_ms"`
		} `json:"itl"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("chart: %s: %w", path, err)
	}
	if s.ITL == nil || s.ITL.Max <= 0 {
		return nil, nil
	}
	return []float64{s.ITL.P50, s.ITL.P90, s.ITL.P95, s.ITL.P99, s.ITL.Max}, nil
}

// exactITLShares are the shares of gaps at or below each of exactITL.
var exactITLShares = []float64{0.50, 0.90, 0.95, 0.99, 1}

// maxCDFPoints bounds the steps a CDF keeps: past it, the steps are thinned
// so that the line rises at most 1/maxCDFPoints between the points kept
// (unless a single step is larger), which no chart size shows.
const maxCDFPoints = 2000

// cdf is the empirical distribution function of vals, each weighing its
// weight (1 each when weights is nil), ready to draw as a post-step line:
// a first point (smallest value, 0), then for each distinct value v the
// share of the total weight at or below v. Values at or below 0 cannot be
// placed on a log axis: they are left out of the points but not of the
// total, so the line starts above 0 by their share; skipped counts them.
func cdf(vals, weights []float64) (xys plotter.XYs, skipped int) {
	type vw struct{ v, w float64 }
	s := make([]vw, len(vals))
	total := 0.0
	for i, v := range vals {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		s[i] = vw{v, w}
		total += w
	}
	if total == 0 {
		return nil, 0
	}
	slices.SortFunc(s, func(a, b vw) int { return cmp.Compare(a.v, b.v) })
	cum := 0.0
	var pts plotter.XYs
	for i := 0; i < len(s); {
		v, before := s[i].v, cum
		for ; i < len(s) && s[i].v == v; i++ {
			cum += s[i].w
		}
		if v <= 0 {
			skipped = i
			continue
		}
		if len(pts) == 0 {
			pts = append(pts, plotter.XY{X: v, Y: before / total})
		}
		pts = append(pts, plotter.XY{X: v, Y: cum / total})
	}
	return thin(pts), skipped
}

// thin drops the points that can go while the line rises at most
// 1/maxCDFPoints between the points kept, when there are more than
// maxCDFPoints; the first and last are kept.
func thin(pts plotter.XYs) plotter.XYs {
	if len(pts) <= maxCDFPoints+1 {
		return pts
	}
	out := plotter.XYs{pts[0]}
	for i := 1; i < len(pts); i++ {
		if i == len(pts)-1 || pts[i+1].Y-out[len(out)-1].Y > 1.0/maxCDFPoints {
			out = append(out, pts[i])
		}
	}
	return out
}

// cdfMetric is one of the CDF charts.
type cdfMetric struct {
	name, title, axis string
	vals              func(*latencies) ([]float64, []float64)
	unit              string // what a share counts
}

var cdfMetrics = []cdfMetric{
	{"cdf-ttft", "TTFT", "TTFT (ms, log scale)", func(l *latencies) ([]float64, []float64) { return l.ttft, nil }, "requests"},
	{"cdf-tpot", "TPOT", "TPOT (ms, log scale)", func(l *latencies) ([]float64, []float64) { return l.tpot, nil }, "requests"},
	{"cdf-itl", "ITL", "inter-token gap (ms, log scale)", func(l *latencies) ([]float64, []float64) { return l.tpot, l.gaps }, "gaps"},
	{"cdf-e2e", "E2E latency", "E2E latency (ms, log scale)", func(l *latencies) ([]float64, []float64) { return l.e2e, nil }, "requests"},
}

const itlNote = "requests.parquet holds no per-token times: a line places every gap between " +
	"a request's output tokens at the request's mean gap (its TPOT), each request weighing " +
	"its output tokens − 1. The points are the exact ITL percentiles of summary.json (p50, " +
	"p90, p95, p99, max) over every gap; they part from the line where the gaps vary within " +
	"a request (a pass that also carries other requests' prompts takes longer)."

// cdfLine is one distribution to draw: its name, its run's latencies and
// its style (the palette's blue for a lone line).
type cdfLine struct {
	name string
	l    *latencies
	st   runStyle
}

// cdfFigure draws one metric's distribution for each line, or returns nil
// when no line has any value.
func cdfFigure(m cdfMetric, lines []cdfLine, title string) (*figure, error) {
	p := newPlot(m.axis, "share of "+m.unit+" at or below")
	p.Y.Min, p.Y.Max = 0, 1
	var ticks plot.ConstantTicks
	for i := 0; i <= 10; i++ {
		ticks = append(ticks, plot.Tick{Value: float64(i) / 10, Label: formatNum(float64(i) / 10)})
	}
	p.Y.Tick.Marker = ticks
	f := &figure{title: title, panels: []*plot.Plot{p}}
	lo, hi := math.Inf(1), 0.0
	skipped := 0
	drawn := 0
	var exact []entry
	for _, ln := range lines {
		vals, w := m.vals(ln.l)
		xys, sk := cdf(vals, w)
		skipped += sk
		if len(xys) == 0 {
			continue
		}
		drawn++
		col, dashes := ln.st.color, ln.st.dashes
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		l.Color, l.Width = col, vg.Points(1.5)
		l.Dashes = points(dashes)
		p.Add(l)
		lo, hi = min(lo, xys[0].X), max(hi, xys[len(xys)-1].X)
		name := ln.name
		if m.name == "cdf-itl" {
			name = cmp.Or(name, "each request's mean gap")
		}
		if name != "" {
			f.legend = append(f.legend, entry{name, []plot.Thumbnailer{l}})
		}
		if m.name == "cdf-itl" && ln.l.exactITL != nil {
			var pts plotter.XYs
			for k, v := range ln.l.exactITL {
				if v > 0 {
					pts = append(pts, plotter.XY{X: v, Y: exactITLShares[k]})
					lo, hi = min(lo, v), max(hi, v)
				}
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			if exact == nil {
				ex := *sc
				ex.GlyphStyle.Color = eventGrey
				if len(lines) == 1 {
					ex.GlyphStyle.Color = col
				}
				exact = []entry{{"exact ITL percentiles", []plot.Thumbnailer{&ex}}}
			}
		}
	}
	if drawn == 0 {
		return nil, nil
	}
	logRange(&p.X, lo, hi)
	f.legend = append(f.legend, exact...)
	if vals, w := m.vals(lines[0].l); len(lines) == 1 && w == nil {
		f.notes = append(f.notes, percentileNote(vals, m.unit))
	}
	if m.name == "cdf-itl" {
		f.notes = append(f.notes, itlNote)
	}
	switch {
	case skipped == 1:
		f.notes = append(f.notes, "1 request at 0 ms or less is not on the log axis: the line starts at its share.")
	case skipped > 1:
		f.notes = append(f.notes, fmt.Sprintf("%d requests at 0 ms or less are not on the log axis: the line starts at their share.", skipped))
	}
	return f, nil
}

// percentileNote lists the count and the nearest-rank percentiles of
// unweighted vals, a line each.
func percentileNote(vals []float64, unit string) string {
	s := slices.Clone(vals)
	slices.Sort(s)
	if len(s) == 1 {
		unit = strings.TrimSuffix(unit, "s") // "1 request"
	}
	lines := []string{formatNum(float64(len(s))) + " " + unit}
	for _, p := range []struct {
		name string
		pm   int64
	}{{"p50", 500}, {"p90", 900}, {"p99", 990}, {"max", 1000}} {
		lines = append(lines, fmt.Sprintf("%s %s ms", p.name, formatMs(atRank(s, p.pm))))
	}
	return strings.Join(lines, "\n")
}

// formatMs writes a latency with a precision that suits it: 0.25, 9.4,
// 47.3, 1,074.
func formatMs(v float64) string {
	switch {
	case v >= 1000:
		return formatNum(v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
