package report

import (
	"math"
	"slices"
	"testing"
)

// near reports whether a and b agree to 1e-4 (the hand figures' digits).
func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// TestSummarize: 1, 2, 3, 4, 5 have mean 3 and sample variance (4 + 1 + 0
// + 1 + 4) / 4 = 2.5, SD 1.5811; t(0.975, 4) = 2.7764, so the half-width
// is 2.7764 x 1.5811 / sqrt(5) = 1.9632: [1.0368, 4.9632]. 10 and 14 have
// mean 12, SD sqrt(8) = 2.8284, SD / sqrt(2) = 2, t(0.975, 1) = 12.7062:
// [-13.4124, 37.4124]. Equal values have SD 0 and the interval [x, x]. One
// value has no spread: NaN.
func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want Stat
	}{
		{[]float64{1, 2, 3, 4, 5}, Stat{3, 1.5811, 1.0368, 4.9632}},
		{[]float64{10, 14}, Stat{12, 2.8284, -13.4124, 37.4124}},
		{[]float64{7, 7, 7}, Stat{7, 0, 7, 7}},
	} {
		got := MeanInterval(c.xs)
		if !near(got.Mean, c.want.Mean) || !near(got.SD, c.want.SD) || !near(got.Lo, c.want.Lo) || !near(got.Hi, c.want.Hi) {
			t.Errorf("%v: %+v, want %+v", c.xs, got, c.want)
		}
	}
	if got := MeanInterval([]float64{4}); got.Mean != 4 || !math.IsNaN(got.SD) || !math.IsNaN(got.Lo) || !math.IsNaN(got.Hi) {
		t.Errorf("one value: %+v, want mean 4 and NaN", got)
	}
	if hw := MeanInterval([]float64{1, 2, 3, 4, 5}).HalfWidth(); !near(hw, 1.9632) {
		t.Errorf("half-width %g, want 1.9632", hw)
	}
}

// TestPointColumns: points.parquet has point, the keys, replicates, and the
// four summary columns of every numeric sweep.parquet column but run, in
// its order; digest (a string) has none.
func TestPointColumns(t *testing.T) {
	var names []string
	for _, c := range PointColumns([]string{"router.policy"}, 0) {
		names = append(names, c.Name)
	}
	want := []string{"point", "router.policy", "replicates"}
	for _, c := range SweepColumns(nil, 0)[1:] {
		if c.Int64 != nil || c.Int32 != nil || c.Float64 != nil {
			want = append(want, c.Name+"_mean", c.Name+"_sd", c.Name+"_ci95_lo", c.Name+"_ci95_hi")
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("columns %v\nwant %v", names, want)
	}
	if !slices.Contains(names, "ttft_p99_ms_ci95_hi") || !slices.Contains(names, "requests_completed_sd") || slices.Contains(names, "digest_mean") || slices.Contains(names, "run_mean") {
		t.Errorf("columns %v", names)
	}
}

// TestPoints: four runs of two replicates each (the key's value, then the
// seed): point 0 is runs 0 and 1, TTFT p50 10 and 14 ms (TestSummarize's
// [-13.4124, 37.4124]) and 200 completed requests both (SD 0); point 1 is
// runs 2 and 3. A shard holding only point 1 gives it its own index.
func TestPoints(t *testing.T) {
	rows := []SweepRow{
		{Run: 0, Params: []string{"copy", "1"}, TTFTP50: 10, Completed: 200},
		{Run: 1, Params: []string{"copy", "2"}, TTFTP50: 14, Completed: 200},
		{Run: 2, Params: []string{"move", "1"}, TTFTP50: 3, Completed: 190},
		{Run: 3, Params: []string{"move", "2"}, TTFTP50: 3, Completed: 210},
	}
	metric := func(name string) int {
		return slices.IndexFunc(PointMetrics(0), func(c Column[SweepRow]) bool { return c.Name == name })
	}
	ttft, done := metric("ttft_p50_ms"), metric("requests_completed")
	pts := Points(1, rows, 2)
	if len(pts) != 2 || pts[0].Point != 0 || pts[1].Point != 1 || !slices.Equal(pts[1].Params, []string{"move"}) || pts[0].Replicates != 2 {
		t.Fatalf("points %+v", pts)
	}
	if s := pts[0].Stats[ttft]; !near(s.Mean, 12) || !near(s.Lo, -13.4124) || !near(s.Hi, 37.4124) {
		t.Errorf("point 0 TTFT p50: %+v", s)
	}
	if s := pts[0].Stats[done]; s.Mean != 200 || s.SD != 0 || s.Lo != 200 {
		t.Errorf("point 0 completed: %+v", s)
	}
	if s := pts[1].Stats[done]; !near(s.Mean, 200) || !near(s.SD, 14.1421) {
		t.Errorf("point 1 completed: %+v, want mean 200, SD sqrt(200) = 14.1421", s)
	}
	if shard := Points(1, rows[2:], 2); len(shard) != 1 || shard[0].Point != 1 || shard[0].Stats[ttft].Mean != 3 {
		t.Errorf("a shard's points: %+v", shard)
	}
}

// TestPointEvents: a point's event columns are summarised like the
// others, and an event's -1 (a worker never removed, an event a run
// lacks) is no value: with replicates removed after 2 s and 4 s the mean
// is 3 s; with one never removed it is NaN, not (2 - 1e-9) / 2 s; a point
// whose runs lack event 1 (sweep.parquet's -1 and NaN) summarises it as
// NaN. PointEvents reads back the 2 events the rows were made with.
func TestPointEvents(t *testing.T) {
	ev := func(removed int64) EventRow {
		r := NoEvent()
		r.Kind, r.RemovedAfterNs, r.After.TTFTP50Ms = "drain", removed, 100
		return r
	}
	rows := []SweepRow{
		{Run: 0, Params: []string{"a"}, Events: []EventRow{ev(2e9), ev(1e9)}},
		{Run: 1, Params: []string{"a"}, Events: []EventRow{ev(4e9), ev(1e9)}},
		{Run: 2, Params: []string{"b"}, Events: []EventRow{ev(2e9)}},
		{Run: 3, Params: []string{"b"}, Events: []EventRow{ev(-1)}},
	}
	pts := Points(1, rows, 2)
	m := PointMetrics(2)
	col := func(name string) int {
		return slices.IndexFunc(m, func(c Column[SweepRow]) bool { return c.Name == name })
	}
	removed0, removed1, p50 := col("event0_removed_after_ns"), col("event1_removed_after_ns"), col("event1_ttft_p50_after_ms")
	if got := pts[0].Stats[removed0].Mean; got != 3e9 {
		t.Errorf("point a: event 0 removed after %g, want 3e9", got)
	}
	if got := pts[0].Stats[p50].Mean; got != 100 {
		t.Errorf("point a: event 1 TTFT p50 after %g, want 100", got)
	}
	for _, i := range []int{removed0, removed1, p50} {
		if got := pts[1].Stats[i].Mean; !math.IsNaN(got) {
			t.Errorf("point b: %s mean %g, want NaN", m[i].Name, got)
		}
	}
	if n := PointEvents(pts); n != 2 {
		t.Errorf("PointEvents %d, want 2", n)
	}
}

// TestFrontier: cost against value, less cost and more value better.
// Points: 0 (10, 5), 1 (8, 5): 1 costs less for the same value and
// dominates 0; 2 (12, 9); 3 (12, 7), dominated by 2 (same cost, less
// value); 4 (20, 9), dominated by 2 (more cost, same value); 5 (4, 1); 6
// (NaN, 50) has no cost and is left out; 7 (8, 5) equals 1 and neither
// dominates the other. The frontier by cost: 5, 1, 7, 2.
func TestFrontier(t *testing.T) {
	nan := math.NaN()
	cost := []float64{10, 8, 12, 12, 20, 4, nan, 8}
	value := []float64{5, 5, 9, 7, 9, 1, 50, 5}
	if got, want := Frontier(cost, value), []int{5, 1, 7, 2}; !slices.Equal(got, want) {
		t.Errorf("frontier %v, want %v", got, want)
	}
	if got := Frontier(nil, nil); len(got) != 0 {
		t.Errorf("no points: %v", got)
	}
}

// TestPointRuns: five runs of two replicates a point are points 0 (runs
// 0, 1), 1 (runs 2, 3) and 2 (run 4 alone, its replicate missing).
func TestPointRuns(t *testing.T) {
	rows := make([]SweepRow, 5)
	for i := range rows {
		rows[i] = SweepRow{Run: int64(i), Params: []string{"a"}}
	}
	var got [][]int64
	for _, runs := range PointRuns(Points(1, rows, 2), rows) {
		var ids []int64
		for _, r := range runs {
			ids = append(ids, r.Run)
		}
		got = append(got, ids)
	}
	if want := [][]int64{{0, 1}, {2, 3}, {4}}; !slices.EqualFunc(got, want, slices.Equal[[]int64]) {
		t.Errorf("PointRuns %v, want %v", got, want)
	}
}
