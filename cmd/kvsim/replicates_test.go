package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/study"
)

// TestSweepReplicates: --replicates 2 over two policies on the drain golden
// (seed 18) runs 4 runs, each policy's two at seeds 18 and 19, with a seed
// column in sweep.parquet and the seed in each run's summary. points.parquet
// has one row a policy: for two values a and b the mean is (a + b) / 2, the
// sample SD |a - b| / sqrt(2), and the half-width t(0.975, 1) x SD / sqrt(2)
// = 12.7062 x |a - b| / 2. Two shards hold whole points and merge to the
// same files; --force replaces the finished sweep; sweep.json records the
// replicates, so a --resume with another count is refused; --vary seed
// with replicates is refused.
func TestSweepReplicates(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"--set", "workload.synthetic.requests=120", "--vary", "router.policy=kv_aware,least_loaded",
		"--replicates", "2", "../../scenarios/golden/drain.yaml"}
	sweepTo := func(out string, extra ...string) string {
		t.Helper()
		args := append(append([]string{"sweep", "-q", "-o", out}, extra...), grid...)
		code, stdout, stderr := kvsim(t, args...)
		if code != exitOK || strings.Contains(stderr, "identical digests") {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	whole := filepath.Join(dir, "whole")
	out := sweepTo(whole)
	if !strings.HasPrefix(out, "point  router.policy  runs  done") || !strings.Contains(out, " ± ") || !strings.Contains(out, "2 distinct") {
		t.Errorf("the table is not the points':\n%s", out)
	}
	keys, rows, err := parquetio.ReadSweep(filepath.Join(whole, "sweep.parquet"))
	if err != nil || !slices.Equal(keys, []string{"router.policy", "seed"}) || len(rows) != 4 {
		t.Fatalf("sweep.parquet: %v, keys %v, %d rows", err, keys, len(rows))
	}
	for i, want := range [][]string{{"kv_aware", "18"}, {"kv_aware", "19"}, {"least_loaded", "18"}, {"least_loaded", "19"}} {
		s, err := study.ReadRunSummary(filepath.Join(whole, report.SweepRunDir(int64(i))))
		if !slices.Equal(rows[i].Params, want) || err != nil || fmt.Sprint(s.Summary.Seed) != want[1] {
			t.Errorf("run %d: params %v, want %v (summary %v)", i, rows[i].Params, want, err)
		}
	}
	pkeys, pts, err := parquetio.ReadPoints(filepath.Join(whole, "points.parquet"))
	if err != nil || !slices.Equal(pkeys, []string{"router.policy"}) || len(pts) != 2 {
		t.Fatalf("points.parquet: %v, keys %v, %d rows", err, pkeys, len(pts))
	}
	ttft := slices.IndexFunc(report.PointMetrics(0), func(c report.Column[report.SweepRow]) bool { return c.Name == "ttft_p50_ms" })
	for i, p := range pts {
		a, b := rows[2*i].TTFTP50, rows[2*i+1].TTFTP50
		mean, half := (a+b)/2, 12.7062*math.Abs(a-b)/2
		s := p.Stats[ttft]
		if p.Point != int64(i) || p.Params[0] != rows[2*i].Params[0] || p.Replicates != 2 || a == b ||
			math.Abs(s.Mean-mean) > 1e-9 || math.Abs(s.SD-math.Abs(a-b)/math.Sqrt2) > 1e-9 || math.Abs(s.Hi-mean-half) > 1e-3*half || math.Abs(mean-s.Lo-half) > 1e-3*half {
			t.Errorf("point %d: %+v %+v from TTFT p50 %g and %g: want mean %g ± %g", i, p, s, a, b, mean, half)
		}
	}
	sweepTo(filepath.Join(dir, "s1"), "--shard", "1/2")
	sweepTo(filepath.Join(dir, "s2"), "--shard", "2/2")
	if got := names(t, filepath.Join(dir, "s1", "runs")); !slices.Equal(got, []string{"run-000", "run-001"}) {
		t.Errorf("shard 1 ran %v, want point 0's replicates, runs 0 and 1", got)
	}
	merged := filepath.Join(dir, "m")
	if code, _, stderr := kvsim(t, "sweep", "merge", "-o", merged, filepath.Join(dir, "s1"), filepath.Join(dir, "s2")); code != exitOK {
		t.Fatal(stderr)
	}
	for _, f := range []string{"sweep.parquet", "points.parquet"} {
		want, _ := os.ReadFile(filepath.Join(whole, f))
		if got, err := os.ReadFile(filepath.Join(merged, f)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("merged %s differs from the unsharded sweep's: %v", f, err)
		}
	}
	var spec study.Spec
	if b, err := os.ReadFile(filepath.Join(merged, "sweep.json")); err != nil || json.Unmarshal(b, &spec) != nil || spec.Replicates != 2 || spec.Seed != 18 || spec.Runs != 4 {
		t.Errorf("merged sweep.json: %+v, %v", spec, err)
	}
	resume := append([]string{"sweep", "-q", "-o", whole, "--resume"}, grid...)
	if code, _, stderr := kvsim(t, resume...); code != exitOK {
		t.Errorf("resume: exit %d %s", code, stderr)
	}
	sweepTo(whole, "--force") // a finished sweep, points.parquet and all, is kvsim's to replace
	resume[len(resume)-2] = "3"
	if code, _, stderr := kvsim(t, resume...); code != exitBadInput || !strings.Contains(stderr, "another sweep") {
		t.Errorf("resume with 3 replicates: exit %d %s", code, stderr)
	}
	code, _, stderr := kvsim(t, "sweep", "-o", filepath.Join(dir, "x"), "--replicates", "2", "--vary", "seed=1,2", "../../scenarios/golden/drain.yaml")
	if code != exitBadInput || !strings.Contains(stderr, "--vary seed and --replicates 2: the replicates are the seeds (the scenario's seed +0 to +1); give one") {
		t.Errorf("--vary seed with --replicates: exit %d %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, "sweep", "-o", filepath.Join(dir, "x"), "--replicates", "0", "--vary", "seed=1,2", "../../scenarios/golden/drain.yaml"); code != exitBadInput || !strings.Contains(stderr, "--replicates 0: want at least 1") {
		t.Errorf("--replicates 0: exit %d %s", code, stderr)
	}
}

// TestSweepOneReplicate: without --replicates, sweep.parquet has no seed
// column and points.parquet one row a run, with NaN spreads.
func TestSweepOneReplicate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	code, stdout, stderr := kvsim(t, "sweep", "-q", "-o", out, "--set", "workload.synthetic.requests=60",
		"--vary", "cluster.workers=3,4", "../../scenarios/golden/drain.yaml")
	if code != exitOK || !strings.HasPrefix(stdout, "run  cluster.workers") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	keys, pts, err := parquetio.ReadPoints(filepath.Join(out, "points.parquet"))
	if err != nil || !slices.Equal(keys, []string{"cluster.workers"}) || len(pts) != 2 || pts[1].Params[0] != "4" ||
		pts[1].Replicates != 1 || !math.IsNaN(pts[1].Stats[0].SD) || !math.IsNaN(pts[1].Stats[0].Lo) {
		t.Errorf("points.parquet: %v %v %+v", err, keys, pts)
	}
}

// TestInertSeedWarning: a trace draws nothing from the seed, so runs that
// differ only in it are identical and the sweep says so (exit 0), for
// --vary seed and --replicates, one line for all the grid points; a shard
// holding one run of a point has nothing to compare, a router.temperature
// or an arrival_jitter makes the runs differ, and a synthetic workload
// draws from the seed: no warning.
func TestInertSeedWarning(t *testing.T) {
	dir := t.TempDir()
	var trace strings.Builder
	for i := range 40 {
		fmt.Fprintf(&trace, `{"timestamp": %d, "input_length": 64, "output_length": 4, "hash_ids": [%d]}`+"\n", 20*i, i%5)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "s.yaml")
	err := os.WriteFile(scenario, []byte("workload: {trace: {path: t.jsonl, block_size: 64}}\n"+
		"cluster: {workers: 3, engine: {kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}}\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	const why = ": nothing in this scenario draws from the seed (a trace with router.temperature 0 and no arrival_jitter); " +
		"they are not replicates. Set router.temperature or workload.trace.arrival_jitter\n"
	n := 0
	for _, c := range []struct {
		args []string
		want string // the warning, "" for none
	}{
		{[]string{"--vary", "seed=1,2,3", scenario}, "kvsim: warning: --vary seed: runs 0-2 have identical digests" + why},
		{[]string{"--replicates", "3", scenario}, "kvsim: warning: --replicates 3: runs 0-2 have identical digests" + why},
		{[]string{"--vary", "seed=1,2", "--vary", "router.hints.mode=copy,move", scenario},
			"kvsim: warning: --vary seed: the runs of each grid point have identical digests (runs 0, 2; runs 1, 3)" + why},
		{[]string{"--vary", "seed=1,2", "--shard", "1/2", scenario}, ""}, // one run of the two: nothing to compare
		{[]string{"--replicates", "3", "--set", "router.temperature=1", scenario}, ""},
		{[]string{"--replicates", "3", "--set", "workload.trace.arrival_jitter=50ms", scenario}, ""},
		{[]string{"--vary", "seed=1,2,3", "--set", "workload.synthetic.requests=60", "../../scenarios/golden/drain.yaml"}, ""},
	} {
		n++
		code, _, stderr := kvsim(t, append([]string{"sweep", "-q", "-o", filepath.Join(dir, fmt.Sprint(n))}, c.args...)...)
		if code != exitOK || stderr != c.want {
			t.Errorf("%v: exit %d, stderr %q\nwant %q", c.args, code, stderr, c.want)
		}
	}
}
