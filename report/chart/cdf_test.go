package chart

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// TestCDF checks the distributions on four hand-made requests:
//
//	request  arrival  first token  finish  output tokens  TTFT  E2E  TPOT
//	0        0 ms     10 ms        40 ms   4              10    40   10 (30 ms / 3 gaps)
//	1        100 ms   130 ms       150 ms  2              30    50   20 (20 ms / 1 gap)
//	2        200 ms   210 ms       210 ms  1              10    10   — (no gap)
//	3        rejected                                     —     —    —
//
// TTFT {10, 10, 30}: 2/3 at 10 ms, all at 30 ms. E2E {10, 40, 50}: thirds.
// TPOT {10, 20}: halves. ITL: 3 gaps at 10 ms, 1 at 20 ms: 3/4 at 10 ms.
func TestCDF(t *testing.T) {
	ms := int64(1e6)
	var l latencies
	for _, r := range []report.RequestRow{
		{ArrivalNs: 0, FirstTokenNs: 10 * ms, FinishNs: 40 * ms, OutputTokens: 4, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 100 * ms, FirstTokenNs: 130 * ms, FinishNs: 150 * ms, OutputTokens: 2, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 200 * ms, FirstTokenNs: 210 * ms, FinishNs: 210 * ms, OutputTokens: 1, Outcome: report.OutcomeCompleted},
		{ArrivalNs: 300 * ms, FirstTokenNs: -1, FinishNs: 300 * ms, OutputTokens: 5, Outcome: report.OutcomeRejected},
	} {
		l.add(&r)
	}
	want := map[string]plotter.XYs{
		"cdf-ttft": {{X: 10, Y: 0}, {X: 10, Y: 2.0 / 3}, {X: 30, Y: 1}},
		"cdf-e2e":  {{X: 10, Y: 0}, {X: 10, Y: 1.0 / 3}, {X: 40, Y: 2.0 / 3}, {X: 50, Y: 1}},
		"cdf-tpot": {{X: 10, Y: 0}, {X: 10, Y: 0.5}, {X: 20, Y: 1}},
		"cdf-itl":  {{X: 10, Y: 0}, {X: 10, Y: 0.75}, {X: 20, Y: 1}},
	}
	for _, m := range cdfMetrics {
		got, skipped := cdf(m.vals(&l))
		if !close(got, want[m.name]) || skipped != 0 {
			t.Errorf("%s: %v (%d skipped), want %v", m.name, got, skipped, want[m.name])
		}
	}
	// A value of 0 cannot go on a log axis: the line starts at its share.
	got, skipped := cdf([]float64{0, 2, 2, 4}, nil)
	if w := (plotter.XYs{{X: 2, Y: 0.25}, {X: 2, Y: 0.75}, {X: 4, Y: 1}}); !close(got, w) || skipped != 1 {
		t.Errorf("with 0: %v (%d skipped), want %v", got, skipped, w)
	}
	// Many values are thinned to at most 2 maxCDFPoints steps of at most
	// 1/maxCDFPoints, from (1, 0) to (100000, 1).
	var many []float64
	for i := range 100000 {
		many = append(many, float64(i+1))
	}
	got, _ = cdf(many, nil)
	if len(got) > 2*maxCDFPoints+2 || len(got) < maxCDFPoints || got[len(got)-1] != (plotter.XY{X: 100000, Y: 1}) || got[0] != (plotter.XY{X: 1, Y: 0}) {
		t.Errorf("thinned: %d points, from %v to %v", len(got), got[0], got[len(got)-1])
	}
	for i := 1; i < len(got); i++ {
		if got[i].Y-got[i-1].Y > 1.0/maxCDFPoints+1e-9 {
			t.Fatalf("thinned: a step of %g at %v", got[i].Y-got[i-1].Y, got[i])
		}
	}
}

func close(a, b plotter.XYs) bool {
	return slices.EqualFunc(a, b, func(p, q plotter.XY) bool {
		return math.Abs(p.X-q.X) < 1e-9 && math.Abs(p.Y-q.Y) < 1e-9
	})
}

// TestSweepCDF: the overlay has one line a run, named by the run's varied
// values; a run without its directory is left out, and said so.
func TestSweepCDF(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"workload.synthetic.requests"}
	var rows []report.SweepRow
	for i, n := range []string{"100", "200", "300"} {
		simulate(t, filepath.Join(dir, "runs", fmt.Sprintf("run-%03d", i)), keys[0]+"="+n)
		rows = append(rows, report.SweepRow{Run: int64(i), Params: []string{n}})
	}
	if err := parquetio.WriteSweep(filepath.Join(dir, "sweep.parquet"), keys, rows); err != nil {
		t.Fatal(err)
	}
	lines := func(f *figure) []string {
		var out []string
		for _, e := range f.legend {
			if _, ok := e.thumbs[0].(*plotter.Line); ok {
				out = append(out, e.name)
			}
		}
		return out
	}
	figs, err := sweepCDFs(dir, newValueNames(keys, [][]string{{"100"}, {"200"}, {"300"}}), rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0: workload.synthetic.requests=100", "1: workload.synthetic.requests=200", "2: workload.synthetic.requests=300"}
	for _, m := range cdfMetrics {
		if f := figs[m.name]; f == nil || !slices.Equal(lines(f), want) {
			t.Errorf("%s: lines %v, want %v", m.name, lines(f), want)
		}
	}

	files, err := Sweep(dir, SweepOptions{Metrics: []string{"ttft_p50_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	want = nil
	for _, n := range []string{"cdf-e2e", "cdf-itl", "cdf-tpot", "cdf-ttft", "sweep-ttft_p50_ms"} {
		want = append(want, n+".png", n+".svg")
	}
	if got := names(files); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}

	os.RemoveAll(filepath.Join(dir, "runs", "run-001"))
	figs, err = sweepCDFs(dir, newValueNames(keys, [][]string{{"100"}, {"200"}, {"300"}}), rows)
	if err != nil {
		t.Fatal(err)
	}
	f := figs["cdf-ttft"]
	if got := lines(f); len(got) != 2 || !strings.Contains(strings.Join(f.notes, " "), "Runs 1 have no requests.parquet") {
		t.Errorf("without run 1: lines %v, notes %q", got, f.notes)
	}
}

// TestPercentileNoteOne: one value is "1 request", not "1 requests"; its
// percentiles are that value.
func TestPercentileNoteOne(t *testing.T) {
	if got, want := percentileNote([]float64{19}, "requests"), "1 request\np50 19.0 ms\np90 19.0 ms\np99 19.0 ms\nmax 19.0 ms"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := percentileNote([]float64{1, 2}, "requests"); !strings.HasPrefix(got, "2 requests\n") {
		t.Errorf("note %q, want 2 requests", got)
	}
}
