package chart

import (
	"cmp"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// TestFidelityCharts: a run without measurements (the default scenario's
// synthetic trace) draws neither fidelity chart and loses those an earlier
// plot left; the same run with a hand-made requests.parquet that carries
// measurements draws both. The rows, in ms (arrival, scheduled, first
// token, finish, output tokens; measured TTFT, E2E, queue, prefill,
// decode):
//
//	r0: 0, 10, 30, 130, 11;        measured 20, 120, 0, 20, 100
//	r1: 1000, 1000, 1050, 1250, 5; measured 100, 200, 5, 95, 100
//	r2: completed, no measurements (-1): in no panel
//	r3: rejected, with measurements: in no panel
//	r4: 2000, 2000, 2040, 2040, 1; measured 40, 45, 0, 40, 0 (one output token: no ITL)
//
// The scatter's points, (measured, simulated):
//
//	TTFT    (20, 30), (100, 50), (40, 40)
//	ITL     (100/10, 100/10) = (10, 10), (100/4, 200/4) = (25, 50)
//	E2E     (120, 130), (200, 250), (45, 40)
//	prefill (20, 20), (95, 50), (40, 40)
//
// TTFT: MAPE (10/20 + 50/100 + 0) / 3 = 33.3 %, means 40 simulated against
// 160/3 measured: −25.0 %. ITL: MAPE (0 + 25/25) / 2 = 50.0 %, means 30
// against 17.5: +71.4 %. E2E: MAPE (10/120 + 50/200 + 5/45) / 3 = 14.8 %,
// means 140 against 365/3: +15.1 %. Prefill: MAPE (0 + 45/95 + 0) / 3 =
// 15.8 %, means 110/3 against 155/3: −29.0 %.
func TestFidelityCharts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	simulate(t, dir)
	charts := filepath.Join(dir, "charts")
	os.MkdirAll(charts, 0o755)
	stale := filepath.Join(charts, "fidelity-scatter.png")
	os.WriteFile(stale, []byte("old"), 0o644)
	files, err := Run(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range names(files) {
		if strings.HasPrefix(f, "fidelity-") {
			t.Errorf("without measurements: %s drawn", f)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale fidelity-scatter chart left: %v", err)
	}

	ms := int64(1e6)
	row := func(arr, sched, first, finish, out, mTTFT, mE2E, mQueue, mPrefill, mDecode int64, outcome string) report.RequestRow {
		return report.RequestRow{ArrivalNs: arr * ms, ScheduledNs: sched * ms, FirstTokenNs: first * ms, FinishNs: finish * ms,
			OutputTokens: out, HintSource: -1, Outcome: outcome,
			MeasuredTTFTNs: mTTFT * ms, MeasuredE2ENs: mE2E * ms, MeasuredQueueNs: mQueue * ms,
			MeasuredPrefillNs: mPrefill * ms, MeasuredDecodeNs: mDecode * ms}
	}
	rows := []report.RequestRow{
		row(0, 10, 30, 130, 11, 20, 120, 0, 20, 100, report.OutcomeCompleted),
		row(1000, 1000, 1050, 1250, 5, 100, 200, 5, 95, 100, report.OutcomeCompleted),
		row(1500, 1500, 1520, 1600, 3, 0, 0, 0, 0, 0, report.OutcomeCompleted),
		row(1800, -1, -1, 1800, 3, 10, 10, 10, 10, 10, report.OutcomeRejected),
		row(2000, 2000, 2040, 2040, 1, 40, 45, 0, 40, 0, report.OutcomeCompleted),
	}
	r2 := &rows[2]
	r2.MeasuredTTFTNs, r2.MeasuredE2ENs, r2.MeasuredQueueNs, r2.MeasuredPrefillNs, r2.MeasuredDecodeNs = -1, -1, -1, -1, -1
	path := filepath.Join(dir, "requests.parquet")
	w, err := parquetio.NewRequestWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].RequestID = int64(i)
		if err := w.Append(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	files, err = Run(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"fidelity-cdf.png", "fidelity-cdf.svg", "fidelity-scatter.png", "fidelity-scatter.svg"} {
		if !slices.Contains(names(files), n) {
			t.Errorf("with measurements: no %s in %v", n, names(files))
		}
	}

	// The figures as Run drew them from the file.
	var c report.FidelityCollector
	if err := parquetio.ReadRequests(path, func(r *report.RequestRow) error { c.Add(r); return nil }); err != nil {
		t.Fatal(err)
	}
	d := newFidelityData(&c)
	f, err := fidelityScatterFigure(d)
	if err != nil || f == nil {
		t.Fatalf("scatter: %v, %v", f, err)
	}
	want := []struct {
		label  string
		points [][2]float64 // (measured, simulated) ms
	}{
		{"TTFT (ms): MAPE 33.3 %, mean -25.0 %", [][2]float64{{20, 30}, {100, 50}, {40, 40}}},
		{"ITL (ms): MAPE 50.0 %, mean +71.4 %", [][2]float64{{10, 10}, {25, 50}}},
		{"E2E (ms): MAPE 14.8 %, mean +15.1 %", [][2]float64{{120, 130}, {200, 250}, {45, 40}}},
		{"Prefill (ms): MAPE 15.8 %, mean -29.0 %", [][2]float64{{20, 20}, {95, 50}, {40, 40}}},
	}
	for i, w := range want {
		p := f.panels[i]
		if f.labels[i] != w.label {
			t.Errorf("panel %d: label %q, want %q", i, f.labels[i], w.label)
		}
		// The points drawn are the dots' glyphs, at normalised axis
		// positions (the diagonal's ends have glyph boxes of its width).
		var got, exp [][2]float64
		for _, b := range p.GlyphBoxes(p) {
			if b.Size().X == 2*dotRadius {
				got = append(got, [2]float64{b.X, b.Y})
			}
		}
		for _, q := range w.points {
			exp = append(exp, [2]float64{p.X.Norm(q[0]), p.Y.Norm(q[1])})
		}
		order := func(a, b [2]float64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }
		slices.SortFunc(got, order)
		slices.SortFunc(exp, order)
		if !slices.EqualFunc(got, exp, func(a, b [2]float64) bool { return math.Abs(a[0]-b[0]) < 1e-9 && math.Abs(a[1]-b[1]) < 1e-9 }) {
			t.Errorf("%s: points %v, want %v (normalised)", w.label, got, exp)
		}
	}

	cf, err := fidelityCDFFigure(d)
	if err != nil || cf == nil {
		t.Fatalf("CDF: %v, %v", cf, err)
	}
	var legend []string
	for _, e := range cf.legend {
		legend = append(legend, e.name)
	}
	if want := []string{"simulated (kvsim)", "measured (server)"}; !slices.Equal(legend, want) {
		t.Errorf("CDF legend %v, want %v", legend, want)
	}
}
