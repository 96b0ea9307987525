package chart

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// simulate runs the default scenario, shortened, with the given --set
// overrides into dir as kvsim replay would, in process.
func simulate(t *testing.T, dir string, sets ...string) *results.Summary {
	t.Helper()
	sc, err := scenarios.LoadDefault(append([]string{"workload.synthetic.requests=300"}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := func(n string) string { return filepath.Join(dir, n) }
	tables, err := parquetio.NewTables(path, results.PullColumns, results.EventColumns)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Sink: tables})
	if err != nil {
		t.Fatal(err)
	}
	if err := tables.Close(res.Workers, res.Counters, res.Summary.EventRows, res.Planner); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(path("summary.json"), res.Summary); err != nil {
		t.Fatal(err)
	}
	return res.Summary
}

func names(files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f))
	}
	return out
}

// TestRunCharts: a run with KVCR draws every chart, each SVG colour valid; one with KVCR off has
// no pulls to chart and no G2 in use, so neither chart is drawn, and a
// pulls chart left by an earlier plot is removed. The list is sorted.
func TestRunCharts(t *testing.T) {
	dir := t.TempDir()
	on, off := filepath.Join(dir, "on"), filepath.Join(dir, "off")
	if s := simulate(t, on); s.Counters["pulls_staged"] == 0 {
		t.Fatalf("the KVCR run staged no pulls: the test needs some")
	}
	simulate(t, off, "kvcr.enabled=false")

	files, err := Run(on)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(files) {
		t.Errorf("files not sorted: %v", files)
	}
	var want []string
	for _, n := range []string{"cdf-e2e", "cdf-itl", "cdf-tpot", "cdf-ttft", "g1", "g2", "pulls", "queue", "ttft"} {
		want = append(want, n+".png", n+".svg")
	}
	if got := names(files); !slices.Equal(got, want) {
		t.Errorf("KVCR on: %v, want %v", got, want)
	}
	// Every colour an SVG names is one a browser reads: a transparent
	// colour came out as "#-8000000000000000...", which browsers show
	// black (the per-worker panels' hidden titles did, doubling their labels).
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.HasSuffix(f, ".svg") && strings.Contains(string(b), "#-") {
			t.Errorf("%s names a colour no browser reads (#-...)", f)
		}
	}

	stale := filepath.Join(off, "charts", "pulls.png")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte("old"), 0o644)
	files, err = Run(off)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range names(files) {
		if strings.HasPrefix(f, "pulls.") || strings.HasPrefix(f, "g2.") {
			t.Errorf("KVCR off: %s drawn", f)
		}
	}
	if !slices.Contains(names(files), "ttft.png") {
		t.Errorf("KVCR off: no ttft chart in %v", files)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale pulls chart left: %v", err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestOutcomeColors: every pull outcome the model names has a colour of
// its own (pullsFigure indexes outcomeColors by the outcome's place in
// pulls.parquet's dictionary).
func TestOutcomeColors(t *testing.T) {
	for _, c := range results.PullColumns {
		if c.Name == "outcome" && len(c.Values) > len(outcomeColors) {
			t.Errorf("%d pull outcomes %q, %d colours", len(c.Values), c.Values, len(outcomeColors))
		}
	}
}

// TestRollingWindow: a thirtieth of the span, rounded up to a nice
// duration.
func TestRollingWindow(t *testing.T) {
	for _, c := range []struct{ span, want int64 }{
		{0, 1e9}, {10e9, 1e9}, {167e9, 10e9}, {3550e9, 120e9}, {24 * 3600e9, 3600e9},
	} {
		if got := rollingWindow(c.span); got != c.want {
			t.Errorf("span %ds: window %ds, want %ds", c.span/1e9, got/1e9, c.want/1e9)
		}
	}
}

// TestLogTicks: labels at 1, 2, 5 times powers of ten, none at 0 or below.
func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(20, 5000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"20", "50", "100", "200", "500", "1,000", "2,000", "5,000"}; !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	// Compact and narrow (for small multiples): 1k, 2k; past three decades
	// only the powers of ten.
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{20, 10000, []string{"20", "50", "100", "200", "500", "1k", "2k", "5k", "10k"}},
		{20, 50000, []string{"100", "1k", "10k"}},
		{500, 2e6, []string{"1k", "10k", "100k", "1M"}},
	} {
		labels = nil
		for _, tk := range (logTicks{compact: true, narrow: true}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.want) {
			t.Errorf("compact, narrow, %g to %g: labels %v, want %v", c.lo, c.hi, labels, c.want)
		}
	}
	if ticks := (logTicks{}).Ticks(0, 10); ticks != nil {
		t.Errorf("range from 0: %v", ticks)
	}
}

// TestManyWorkers: a panel a worker up to maxPanels (4 columns up to 16,
// 8 past), then one panel of their range and mean.
func TestManyWorkers(t *testing.T) {
	for _, c := range []struct{ workers, panels, cols int }{{8, 8, 4}, {16, 16, 4}, {32, 32, 8}, {80, 1, 0}} {
		var samples []report.SampleRow
		for w := range c.workers {
			for s := range 3 {
				samples = append(samples, report.SampleRow{TimeNs: int64(s) * 1e9, Worker: int32(w), G1Blocks: int64(w + s)})
			}
		}
		f, err := occupancyFigure(samples, nil, newTimeAxis(2e9), maxPanels, "G1", func(s *report.SampleRow) int64 { return s.G1Blocks })
		if err != nil || f == nil || len(f.panels) != c.panels || f.cols != c.cols {
			t.Errorf("%d workers: %v, %d panels, %d columns", c.workers, err, len(f.panels), f.cols)
		}
	}
}
