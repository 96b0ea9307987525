package study

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
)

// TestGrid: keys a (1, 2) and b (x, y, z) with 2 replicates from seed 7
// are 2 x 3 points of 2 runs: 12 runs, the first key slowest, the seed
// fastest. Run 5 is replicate 1 (seed 8) of point 2 (a=1, b=z); its sets
// are the sweep's --set, then a=1, b=z, seed=8.
func TestGrid(t *testing.T) {
	s := &Spec{Sets: []string{"k=v"}, Keys: []string{"a", "b"}, Values: [][]string{{"1", "2"}, {"x", "y", "z"}}, Replicates: 2, Seed: 7}
	g := s.Grid()
	if len(g) != 12 {
		t.Fatalf("%d runs, want 12", len(g))
	}
	if p := g[5]; p.Run != 5 || p.Point != 2 || !slices.Equal(p.Values, []string{"1", "z", "8"}) {
		t.Errorf("run 5: %+v, want point 2, values [1 z 8]", p)
	}
	if got := s.setsOf(g[5]); !slices.Equal(got, []string{"k=v", "a=1", "b=z", "seed=8"}) {
		t.Errorf("sets of run 5: %q", got)
	}
}

// TestSpecCheck: what a sweep refuses before anything runs, each an
// InputError (exit 2 on the command line): replicates below 1, a grid of
// more than a million runs (2 values x 1e8 replicates; 1000^3 values),
// --vary seed with replicates, and a shard that is not I/N with 1 <= I <= N.
func TestSpecCheck(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		err  string
	}{
		{Spec{Replicates: 0}, "--replicates 0: want at least 1"},
		{Spec{Keys: []string{"cluster.workers"}, Values: [][]string{{"1", "2"}}, Replicates: 100_000_000}, "--vary and --replicates 100000000: more than 1000000 runs"},
		{Spec{Keys: []string{"a", "b", "c"}, Values: [][]string{make([]string, 1000), make([]string, 1000), make([]string, 1000)}, Replicates: 1},
			"--vary and --replicates 1: more than 1000000 runs"},
		{Spec{Keys: []string{"seed"}, Replicates: 3}, "--vary seed and --replicates 3"},
		{Spec{Replicates: 1, Shard: "0/2"}, `--shard "0/2": want I/N`},
		{Spec{Replicates: 1, Shard: "3/2"}, `--shard "3/2": want I/N`},
		{Spec{Replicates: 1, Shard: "2"}, `--shard "2": want I/N`},
	} {
		_, _, err := c.spec.check()
		var ie *InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%+v: %v, want an InputError %q", c.spec, err, c.err)
		}
	}
	if i, n, err := (&Spec{Replicates: 1, Shard: "2/3"}).check(); i != 2 || n != 3 || err != nil {
		t.Errorf("shard 2/3: %d/%d, %v", i, n, err)
	}
}

// counter is a Progress that counts.
type counter struct{ started, done, ended atomic.Int64 }

func (c *counter) Start(n int) { c.started.Add(int64(n)) }
func (c *counter) Done()       { c.done.Add(1) }
func (c *counter) End()        { c.ended.Add(1) }

// TestSweepInProcess: a sweep called from Go, no command line: the
// default scenario's 40 requests on 2 and 3 workers are two runs, each in
// its directory, with sweep.parquet and points.parquet beside them; the
// progress hears one batch of 2. Resumed, the same sweep runs nothing and
// gives the same rows; a second sweep into the directory without Resume
// or Force is refused.
func TestSweepInProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	spec := func() *Spec {
		return &Spec{Sets: []string{"workload.synthetic.requests=40"}, Keys: []string{"cluster.workers"},
			Values: [][]string{{"2", "3"}}, Replicates: 1}
	}
	p := &counter{}
	s := &Sweep{Env: Env{Progress: p}, Spec: spec(), Dir: Dir{Path: dir, Jobs: 2}}
	rows, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !slices.Equal(rows[1].Params, []string{"3"}) || rows[0].Completed != 40 || rows[0].Digest == rows[1].Digest {
		t.Fatalf("rows %+v", rows)
	}
	if p.started.Load() != 2 || p.done.Load() != 2 || p.ended.Load() != 1 {
		t.Errorf("progress: started %d, done %d, ended %d; want 2, 2, 1", p.started.Load(), p.done.Load(), p.ended.Load())
	}
	for _, name := range []string{report.SweepFile, report.PointsFile, report.SweepSpecFile, filepath.Join(report.RunsDir, "run-001", report.SummaryFile)} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	p = &counter{}
	again := &Sweep{Env: Env{Progress: p}, Spec: spec(), Dir: Dir{Path: dir, Jobs: 2, Resume: true}}
	if rows2, err := again.Run(context.Background()); err != nil || p.done.Load() != 0 || rows2[1].Digest != rows[1].Digest {
		t.Errorf("resumed: %v, %d runs", err, p.done.Load())
	}
	var ie *InputError
	if _, err := (&Sweep{Spec: spec(), Dir: Dir{Path: dir, Jobs: 1}}).Run(context.Background()); !errors.As(err, &ie) {
		t.Errorf("into an existing sweep: %v, want an InputError", err)
	}
}

// TestPairedIntervals: with --replicates, an event's effect in
// points.parquet is the mean and interval of the five runs' own deltas
// (each seed's run minus its own twin), worked out here the obvious way
// from the runs' rows, as a reader would: each run's after minus its twin,
// their mean, sample SD, and mean ± t(0.975, 4) x SD / sqrt(5), with
// t(0.975, 4) = 2.7764451 from a table, not from gonum.
func TestPairedIntervals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	spec := &Spec{Sets: []string{"workload.synthetic.requests=600", "cluster.workers=4", "report.event_window=5s",
		"events=[{at: 10s, drain: [0, 1]}]"}, Replicates: 5}
	s := &Sweep{Env: Env{Twins: true}, Spec: spec, Dir: Dir{Path: dir, Jobs: 2}}
	rows, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var d []float64
	for _, r := range rows {
		e := r.Events[0]
		if !e.Twinned {
			t.Fatalf("run %d: no twin", r.Run)
		}
		d = append(d, e.After.TTFTP99Ms-e.Twin.TTFTP99Ms)
	}
	if slices.Min(d) == slices.Max(d) {
		t.Fatalf("the seeds give one delta, %v: the interval would test nothing", d)
	}
	var sum, ss float64
	for _, x := range d {
		sum += x
	}
	mean := sum / 5
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	half := 2.7764451 * math.Sqrt(ss/4) / math.Sqrt(5)
	_, points, err := parquetio.ReadPoints(filepath.Join(dir, report.PointsFile))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(report.PointMetrics(1), func(c report.Column[report.SweepRow]) bool { return c.Name == "event0_ttft_p99_delta_ms" })
	got := points[0].Stats[i]
	if math.Abs(got.Mean-mean) > 1e-9 || math.Abs(got.HalfWidth()-half) > 1e-6 {
		t.Errorf("points: %+v (half-width %v); by hand mean %v ± %v", got, got.HalfWidth(), mean, half)
	}
}

// TestSweepResumeTwins: a sweep run without twins is not resumed with them
// (nor the other way): only runs with twins have their events' effects.
func TestSweepResumeTwins(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	spec := func() *Spec {
		return &Spec{Sets: []string{"workload.synthetic.requests=20", "events=[{at: 1s, drain: [0]}]"},
			Keys: []string{"cluster.workers"}, Values: [][]string{{"2"}}, Replicates: 1}
	}
	if _, err := (&Sweep{Spec: spec(), Dir: Dir{Path: dir, Jobs: 1}}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	_, err := (&Sweep{Env: Env{Twins: true}, Spec: spec(), Dir: Dir{Path: dir, Jobs: 1, Resume: true}}).Run(context.Background())
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "--twins") {
		t.Errorf("resumed with twins: %v, want an InputError naming --twins", err)
	}
}
