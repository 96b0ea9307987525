package chart

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestTradeoff: two grid points of two runs each and one of a run. A
// (100, 2) and (110, 4): mean (105, 3); B (200, 5) and (220, 7): mean
// (210, 6); C (150, 2), whose y is NaN in its other run, which is left
// out: mean (150, 2), dominated by A. The frontier, A then B, steps
// from A's mean across to B's x at A's y, then up to B's: (105, 3),
// (210, 3), (210, 6). A sweep with no run to draw has no chart.
func TestTradeoff(t *testing.T) {
	cells := []TradeoffCell{
		{Label: "k=a", X: []float64{100, 110}, Y: []float64{2, 4}},
		{Label: "k=b", X: []float64{200, 220}, Y: []float64{5, 7}},
		{Label: "k=c", X: []float64{150, 160}, Y: []float64{2, math.NaN()}},
	}
	c, err := Tradeoff("cost-goodput", "worker_seconds", "goodput_requests_per_s", cells, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	f := c.figs["cost-goodput"]
	if f == nil || f.title != "Goodput against worker-seconds provisioned: a point a run, a grid point's mean, and the frontier" {
		t.Fatalf("figure %+v", f)
	}
	var legend []string
	for _, e := range f.legend {
		legend = append(legend, e.name)
	}
	if got := strings.Join(legend, "; "); got != "k=a; k=b; k=c; frontier" {
		t.Errorf("legend %q", got)
	}
	if p := f.panels[0]; p.X.Min != 100-6 || p.X.Max != 220+6 || p.Y.Min != 0 || math.Abs(p.Y.Max-7.56) > 1e-12 {
		t.Errorf("axes x [%g, %g], y [%g, %g]: want x 100 to 220 with 5 %% room each side, y 0 to 7 + 8 %%", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	means := plotter.XYs{{X: 105, Y: 3}, {X: 210, Y: 6}, {X: 150, Y: 2}}
	want := plotter.XYs{{X: 105, Y: 3}, {X: 210, Y: 3}, {X: 210, Y: 6}}
	if got := steps(means, []int{0, 1}); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("steps %v, want %v", got, want)
	}
	svg, err := c.SVG("cost-goodput")
	if err != nil || !strings.Contains(string(svg), "k=b") || !strings.Contains(string(svg), "Small marks are runs") {
		t.Errorf("SVG lacks the legend or the note: %v", err)
	}
	none, err := Tradeoff("cost-goodput", "worker_seconds", "goodput_requests_per_s",
		[]TradeoffCell{{Label: "k=a", X: []float64{1}, Y: []float64{math.NaN()}}}, nil)
	if err != nil || len(none.Names()) != 0 {
		t.Errorf("no run to draw: %v, charts %v", err, none.Names())
	}
}
