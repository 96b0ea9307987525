package page

import (
	"testing"

	"github.com/kvsim/kvsim/report"
)

// TestCheapestNear: three replicates (seeds 1, 2, 3) of four points.
// Point 0, the best, serves 10, 20 and 30 good requests a second; point 1
// serves 9, 19 and 29 for less: its own interval spans the seeds' spread
// (9 to 29) and holds 10-30's mean, but seed by seed it serves 1 less
// every time, so the paired difference (1, 1, 1: interval [1, 1]) tells
// them apart. Point 2 serves 12, 17 and 31: differences -2, 3, -1, mean 0,
// whose interval holds 0: not told apart. Point 3 ran as point 0 did (the
// same digests, so the same cost): identical, and no cheaper.
func TestCheapestNear(t *testing.T) {
	run := func(good float64, digest string) report.SweepRow {
		return report.SweepRow{GoodputRequestsPerS: good, Digest: digest}
	}
	g := &grid{runs: [][]report.SweepRow{
		{run(10, "a"), run(20, "b"), run(30, "c")},
		{run(9, "d"), run(19, "e"), run(29, "f")},
		{run(12, "g"), run(17, "h"), run(31, "i")},
		{run(10, "a"), run(20, "b"), run(30, "c")},
	}, points: make([]report.PointRow, 4)}
	cost := []float64{100, 50, 80, 100}
	if got := g.cheapestNear(0, cost); got != 2 {
		t.Errorf("cheapest near point 0: %d, want 2", got)
	}
	if !g.identical(0, 3) || g.identical(0, 1) {
		t.Errorf("identical(0, 3) %v, identical(0, 1) %v; want true, false", g.identical(0, 3), g.identical(0, 1))
	}
	g.runs[2] = []report.SweepRow{run(12, "g"), run(17, "h"), run(25, "i")} // -2, 3, 5: mean 2, still holds 0
	if got := g.cheapestNear(0, cost); got != 2 {
		t.Errorf("wide paired interval: %d, want 2", got)
	}
	g.runs[2] = []report.SweepRow{run(8, "g"), run(18, "h"), run(28.5, "i")} // 2, 2, 1.5: told apart
	if got := g.cheapestNear(0, cost); got != -1 {
		t.Errorf("every cheaper point told apart: %d, want -1", got)
	}
}
