package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// kvsim runs one command line in process and returns the exit code, stdout
// and stderr.
func kvsim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

const small = "workload.synthetic.requests=200"

func TestReplayWritesReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, stderr := kvsim(t, "replay", "-o", dir, "--set", small, "--check")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"scenario", "requests      200: 200 completed", "TTFT", "E2E"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil || s.Requests.Completed != 200 || s.Scenario != "default" {
		t.Errorf("summary.json: %v %+v", err, s.Requests)
	}
	if st, err := os.Stat(filepath.Join(dir, "requests.parquet")); err != nil || st.Size() == 0 {
		t.Errorf("requests.parquet: %v", err)
	}
	// A second run into the same directory is refused (exit 2) and leaves
	// it as it was; --force replaces it.
	code, _, stderr = kvsim(t, "replay", "-o", dir, "--set", small)
	if code != exitBadInput || !strings.Contains(stderr, "--force") {
		t.Errorf("overwrite: exit %d, %s", code, stderr)
	}
	if code, _, stderr = kvsim(t, "replay", "-o", dir, "--set", small, "--force"); code != exitOK {
		t.Errorf("--force: exit %d, %s", code, stderr)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".run.*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary directories left: %v", leftovers)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("cluster:\n  wrokers: 2\n"), 0o644)
	missingTrace := filepath.Join(dir, "trace.yaml")
	os.WriteFile(missingTrace, []byte("workload: {trace: {path: nope.jsonl}}\n"), 0o644)
	// A trace that is a directory opens, but its first read fails: refused
	// as a missing one is, before the run (report.StartIdentifyFile).
	dirTrace := filepath.Join(dir, "dir.yaml")
	os.WriteFile(dirTrace, []byte("workload: {trace: {path: traces}}\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "traces"), 0o755)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"replay", bad, "-o", filepath.Join(dir, "o1")}, exitBadInput, bad + `:2: cluster.wrokers: unknown key (did you mean "workers"?)`},
		{[]string{"validate", bad}, exitBadInput, "cluster.wrokers"},
		{[]string{"replay", filepath.Join(dir, "none.yaml")}, exitBadInput, "cannot read scenario"},
		{[]string{"replay", missingTrace, "-o", filepath.Join(dir, "o2")}, exitBadInput, "workload.trace.path: cannot open trace"},
		{[]string{"replay", dirTrace, "-o", filepath.Join(dir, "o6")}, exitBadInput,
			"workload.trace.path: cannot open trace: read " + filepath.Join(dir, "traces") + ": "},
		{[]string{"replay", "--set", "cluster.workers=-1", "-o", filepath.Join(dir, "o3")}, exitBadInput, "--set: cluster.workers: must be at least 1"},
		{[]string{"replay", "--set", `expect=["no_such_counter > 0"]`, "-o", filepath.Join(dir, "o4")}, exitBadInput,
			`--set: expect[0]: no metric is named "no_such_counter"`},
		{[]string{"replay", "--set", `expect=["pulls_failed >> 0"]`, "-o", filepath.Join(dir, "o5")}, exitBadInput,
			`expect[0]: "pulls_failed >> 0": the comparison ">>" is not one of == != < <= > >=`},
		{[]string{"replay", "a.yaml", "b.yaml"}, exitBadInput, "accepts at most 1 arg"},
		{[]string{"replay", "--bogus"}, exitBadInput, "unknown flag"},
		{[]string{"replay", "-o", ""}, exitBadInput, `-o "": name the output directory`},
		{[]string{"replay", "-o="}, exitBadInput, `-o "=": name the output directory`},
		{[]string{"replay", "-o", filepath.Join(dir, "o7"), "--cpuprofile", filepath.Join(dir, "o7")}, exitBadInput, "the profile would be the run's output directory"},
		{[]string{"replay", "-o", filepath.Join(dir, "o8"), "--memprofile", filepath.Join(dir, "o8", "mem.prof")}, exitBadInput, "the profile would be the run's output directory"},
		{[]string{"replay", "--set", "name=../../etc"}, exitBadInput, `--set: name: "../../etc" is not one directory's name, which the default output out/<name> needs: give -o DIR`},
		{[]string{"bogus"}, exitBadInput, "unknown command"},
	} {
		code, _, stderr := kvsim(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, stderr, c.code, c.stderr)
		}
	}
	for _, o := range []string{"o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8"} {
		if _, err := os.Stat(filepath.Join(dir, o)); err == nil {
			t.Errorf("bad input left output directory %s", o)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("files after bad runs: %v", entries)
	}
}

// TestExpect: a run that does not show what its scenario expects fails
// (exit 1) naming each unmet entry; its report is still written.
func TestExpect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, _, stderr := kvsim(t, "replay", "-o", dir, "--set", small, "--set",
		`expect=["requests_completed == 200", "pulls_failed > 0", "preemptions >= 1"]`)
	want := "pulls_failed is 0, expected pulls_failed > 0; preemptions is 0, expected preemptions >= 1"
	if code != exitFailed || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("no report: %v", err)
	}
	// A metric's entry names the value the run had: a TTFT p99 in ms.
	code, _, stderr = kvsim(t, "replay", "-o", dir, "--force", "--set", small, "--set", `expect=["ttft_p99_ms < 0.5"]`)
	if !regexp.MustCompile(`the run does not show what the scenario expects: ttft_p99_ms is [0-9.]+, expected ttft_p99_ms < 0.5\n$`).MatchString(stderr) || code != exitFailed {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestValidatePrintsResolved(t *testing.T) {
	code, out, _ := kvsim(t, "validate", "--set", "cluster.workers=3")
	if code != exitOK || !strings.Contains(out, "workers: 3") || !strings.Contains(out, "gpu_blocks: 26674") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = kvsim(t, "--version")
	if code != exitOK || !strings.Contains(out, version) {
		t.Errorf("--version: %d %q", code, out)
	}
}

// TestExampleScenarios validates every scenario shipped in scenarios/,
// with the traces they read.
func TestExampleScenarios(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	t.Setenv("KVSIM_TRACES", tracestest.Dir(t))
	t.Setenv("KVSIM_VLLM_TRACES", tracestest.VLLMDir(t))
	for _, f := range files {
		if code, _, stderr := kvsim(t, "validate", f); code != exitOK || stderr != "" {
			t.Errorf("%s: exit %d, stderr %s", f, code, stderr) // a shipped scenario warns of nothing
		}
	}
}

// TestDigest: the digest is printed and stored, recomputes from the Parquet
// files alone, repeats run to run, and --expect-digest fails on a mismatch
// (exit 1) after writing the report.
func TestDigest(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code, _, stderr := kvsim(t, "replay", "-o", a, "--set", small); code != exitOK {
		t.Fatal(stderr)
	}
	var s results.Summary
	raw, _ := os.ReadFile(filepath.Join(a, "summary.json"))
	json.Unmarshal(raw, &s)
	if len(s.Digest) != 64 {
		t.Fatalf("digest %q", s.Digest)
	}
	got, err := parquetio.DigestDir(func(n string) string { return filepath.Join(a, n) })
	if err != nil || got != s.Digest {
		t.Errorf("recomputed from Parquet: %s, %v; summary says %s", got, err, s.Digest)
	}
	code, out, _ := kvsim(t, "replay", "-o", b, "--set", small, "--expect-digest", s.Digest)
	if code != exitOK || !strings.Contains(out, s.Digest) {
		t.Errorf("same run, expected digest: exit %d\n%s", code, out)
	}
	code, _, stderr := kvsim(t, "replay", "-o", filepath.Join(dir, "c"), "--set", small, "--set", "seed=7",
		"--set", "router.policy=random", "--expect-digest", s.Digest)
	if code != exitFailed || !strings.Contains(stderr, "digest mismatch") || !strings.Contains(stderr, s.Digest) {
		t.Errorf("other seed: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "c", "summary.json")); err != nil {
		t.Error("mismatched run left no report")
	}
}

// TestExpectDigestPrefix: --expect-digest takes the digest or a prefix of
// at least the 12 hex digits sweep prints, in either case, and compares it
// as a prefix; anything else is bad input (exit 2), refused before the run
// starts (it leaves no output directory).
func TestExpectDigestPrefix(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := kvsim(t, "replay", "--json", "-o", filepath.Join(dir, "a"), "--set", small)
	var s results.Summary
	if err := json.Unmarshal([]byte(out), &s); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, stderr)
	}
	other := "0"
	if s.Digest[0] == '0' {
		other = "1"
	}
	for i, c := range []struct {
		expect string
		code   int
	}{
		{s.Digest[:shortDigest], exitOK},
		{strings.ToUpper(s.Digest[:20]), exitOK},
		{other + s.Digest[1:shortDigest], exitFailed},
		{"nothex", exitBadInput},
		{"nothexnothexnothex", exitBadInput},
		{s.Digest[:shortDigest-1], exitBadInput},
		{s.Digest + "0", exitBadInput},
		{"", exitBadInput}, // a CI script's unset $DIGEST: once no check at all, exit 0
	} {
		o := filepath.Join(dir, fmt.Sprint(i))
		code, _, stderr := kvsim(t, "replay", "-o", o, "--set", small, "--expect-digest", c.expect)
		_, statErr := os.Stat(o)
		switch {
		case code != c.code:
			t.Errorf("--expect-digest %s: exit %d, want %d: %s", c.expect, code, c.code, stderr)
		case code == exitBadInput && (statErr == nil || stderr != "kvsim: --expect-digest \""+c.expect+"\": want the run's digest in hex, all 64 digits or its first 12 or more (as sweep prints it)\n"):
			t.Errorf("--expect-digest %s: output %v, stderr %q", c.expect, statErr, stderr)
		case code == exitFailed && !strings.Contains(stderr, "digest mismatch"):
			t.Errorf("--expect-digest %s: %s", c.expect, stderr)
		}
	}
}

// TestCompare: equal runs exit 0; runs that differ exit 1 with the counters
// that moved, the first differing rows and the percentile shifts; a
// directory that is not a run is bad input.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	for _, run := range []struct {
		out  string
		sets []string
	}{{a, nil}, {b, nil}, {c, []string{"--set", "router.policy=least_loaded"}}} {
		args := append([]string{"replay", "-o", run.out, "--set", small}, run.sets...)
		if code, _, stderr := kvsim(t, args...); code != exitOK {
			t.Fatal(stderr)
		}
	}
	if code, out, _ := kvsim(t, "compare", a, b); code != exitOK || !strings.Contains(out, "digests match") {
		t.Errorf("equal runs: exit %d\n%s", code, out)
	}
	code, out, _ := kvsim(t, "compare", a, c)
	for _, want := range []string{"digests differ", "hints_attached", "requests.parquet: first difference at row", "ttft p99 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	if code != exitFailed {
		t.Errorf("different runs: exit %d", code)
	}
	if code, _, stderr := kvsim(t, "compare", a, dir); code != exitBadInput || !strings.Contains(stderr, "not a kvsim run directory") {
		t.Errorf("not a run: exit %d %s", code, stderr)
	}
	// A run whose table is damaged is bad input too, not exit 1, which
	// would read as "the runs differ".
	damaged := filepath.Join(c, "requests.parquet")
	if err := os.WriteFile(damaged, []byte("junk!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := kvsim(t, "compare", a, c); code != exitBadInput || !strings.Contains(stderr, damaged+": ") {
		t.Errorf("a damaged table: exit %d %s", code, stderr)
	}
}

// TestCompareConfigApart: runs with copy and move hints differ in every
// pull's mode from row 0; compare's first pull difference is the first
// behavioural one, after row 0, with mode named as configuration.
func TestCompareConfigApart(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "copy"), filepath.Join(dir, "move")
	kvsim(t, "replay", "-o", a, "--set", small)
	kvsim(t, "replay", "-o", b, "--set", small, "--set", "router.hints.mode=move")
	code, out, stderr := kvsim(t, "compare", "--json", a, b)
	var c comparison
	if err := json.Unmarshal([]byte(out), &c); code != exitFailed || err != nil || c.Pulls == nil {
		t.Fatalf("compare --json: exit %d, %v: %s%s", code, err, out, stderr)
	}
	mode := []parquetio.ConfigChange{{Row: 0, ColumnChange: parquetio.ColumnChange{Column: "mode", A: "copy", B: "move"}}}
	if c.Pulls.Row <= 0 || len(c.Pulls.Changes) == 0 || !reflect.DeepEqual(c.Pulls.Config, mode) {
		t.Errorf("pulls diff %+v, want a behavioural row after 0 and mode as configuration from row 0", c.Pulls)
	}
	for _, ch := range c.Pulls.Changes {
		if ch.Column == "mode" {
			t.Errorf("mode counted as behaviour: %+v", c.Pulls)
		}
	}
	_, out, _ = kvsim(t, "compare", a, b)
	if want := fmt.Sprintf("pulls.parquet: first difference at row %d\n", c.Pulls.Row); !strings.Contains(out, want) || !strings.Contains(out, "mode (configuration, from row 0)  copy  move") {
		t.Errorf("compare's table lacks %q or mode as configuration:\n%s", want, out)
	}
}

// TestSweep: a 2 x 2 grid gives the same sweep.parquet with -j 1 and -j 2,
// and as two shards merged; a merge missing a part is refused.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"--set", "workload.synthetic.requests=120", "--vary", "router.policy=kv_aware,least_loaded",
		"--vary", "events=[],[{at: 3s, drain: [1]}]", "../../scenarios/golden/drain.yaml"}
	sweepTo := func(out string, extra ...string) {
		t.Helper()
		args := append(append([]string{"sweep", "-o", out}, extra...), grid...)
		if code, _, stderr := kvsim(t, args...); code != exitOK {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	sweepTo(filepath.Join(dir, "j1"), "-j", "1")
	sweepTo(filepath.Join(dir, "j2"), "-j", "2")
	sweepTo(filepath.Join(dir, "s1"), "--shard", "1/2")
	sweepTo(filepath.Join(dir, "s2"), "--shard", "2/2")
	if code, _, stderr := kvsim(t, "sweep", "merge", "-o", filepath.Join(dir, "m"), filepath.Join(dir, "s1"), filepath.Join(dir, "s2")); code != exitOK {
		t.Fatal(stderr)
	}
	read := func(d string) []report.SweepRow {
		keys, rows, err := parquetio.ReadSweep(filepath.Join(dir, d, "sweep.parquet"))
		if err != nil || len(keys) != 2 || len(rows) != 4 {
			t.Fatalf("%s: %v keys %v rows %d", d, err, keys, len(rows))
		}
		return rows
	}
	j1 := read("j1")
	for _, d := range []string{"j2", "m"} {
		if got := read(d); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", j1) { // as text: a null goodput is NaN, which equals nothing
			t.Errorf("%s differs from -j 1:\n%+v\n%+v", d, got, j1)
		}
	}
	if j1[3].Params[1] != "[{at: 3s, drain: [1]}]" || j1[3].WorkersRemoved != 1 || j1[0].WorkersRemoved != 0 {
		t.Errorf("grid order or values: %+v", j1)
	}
	// Runs 1 and 3 drain: their event's columns; runs 0 and 2 have none.
	// Shard 1 (runs 0, 2) wrote no event columns, shard 2 one event's: the
	// merge has them, as the whole sweep has.
	for i, r := range j1 {
		if drains := i%2 == 1; drains != (len(r.Events) == 1) || drains && (r.Events[0].Kind != "drain" || r.Events[0].Workers != "1") {
			t.Errorf("run %d events %+v", i, r.Events)
		}
	}
	if _, s1, _ := parquetio.ReadSweep(filepath.Join(dir, "s1", "sweep.parquet")); report.SweepEvents(s1) != 0 {
		t.Errorf("shard 1 has the columns of %d events, want 0", report.SweepEvents(s1))
	}
	code, _, stderr := kvsim(t, "sweep", "merge", "-o", filepath.Join(dir, "m2"), filepath.Join(dir, "s1"))
	if code != exitBadInput || !strings.Contains(stderr, "runs 0,2") {
		t.Errorf("incomplete merge: exit %d %s", code, stderr)
	}
	// Parts of two grids do not merge; a part without a shard is named
	// without one.
	other := filepath.Join(dir, "other")
	if code, _, stderr := kvsim(t, "sweep", "../../scenarios/default.yaml", "--set", small, "--vary", "cluster.workers=2", "-q", "-o", other); code != exitOK {
		t.Fatal(stderr)
	}
	code, _, stderr = kvsim(t, "sweep", "merge", "-o", filepath.Join(dir, "m3"), filepath.Join(dir, "s1"), other)
	if want := "kvsim: " + other + " is part of another sweep than " + filepath.Join(dir, "s1") + "\n"; code != exitBadInput || stderr != want {
		t.Errorf("merging two grids: exit %d %q, want %q", code, stderr, want)
	}
	// An existing -o that holds no sweep is not offered --resume.
	code, _, stderr = kvsim(t, "sweep", "../../scenarios/default.yaml", "--vary", "cluster.workers=2", "-o", filepath.Join(dir, "s1", "sweep.parquet"))
	if code != exitBadInput || !strings.Contains(stderr, "already exists and is a file: choose another -o") {
		t.Errorf("sweep -o onto a file: exit %d %s", code, stderr)
	}
	code, _, stderr = kvsim(t, "sweep", "../../scenarios/default.yaml", "--vary", "cluster.workers=2", "-o", filepath.Join(dir, "s1", "runs"))
	if code != exitBadInput || !strings.Contains(stderr, "already exists and holds no sweep: choose another -o, or --force to replace it (an empty folder, or one kvsim wrote)") {
		t.Errorf("sweep -o onto a folder holding no sweep: exit %d %s", code, stderr)
	}
	// A grid point its scenario refuses is named on each line of the error.
	code, _, stderr = kvsim(t, "sweep", "../../scenarios/golden/drain.yaml", "--vary", "cluster.workers=1,4", "-o", filepath.Join(dir, "s4"))
	want := "kvsim: --vary cluster.workers=1: ../../scenarios/golden/drain.yaml:13: events[0].drain[0]: worker 1 does not exist or is already drained or removed at 4s\n" +
		"kvsim: --vary cluster.workers=1: ../../scenarios/golden/drain.yaml:14: events[1].drain[0]: worker 2 does not exist or is already drained or removed at 6s\n"
	if code != exitBadInput || stderr != want {
		t.Errorf("a refused grid point: exit %d %q, want %q", code, stderr, want)
	}
	// --shard "" (a script's unset variables) would run every shard's runs.
	code, _, stderr = kvsim(t, "sweep", "../../scenarios/default.yaml", "--vary", "cluster.workers=2,3", "--shard", "", "-o", filepath.Join(dir, "s3"))
	if _, err := os.Stat(filepath.Join(dir, "s3")); code != exitBadInput || !strings.Contains(stderr, `--shard "": want I/N`) || err == nil {
		t.Errorf(`--shard "": exit %d %s (output: %v)`, code, stderr, err)
	}
}

// TestPlot: a run's charts and a sweep's charts are written as PNG and SVG.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if code, _, stderr := kvsim(t, "replay", "../../scenarios/golden/drain.yaml", "-o", run); code != exitOK {
		t.Fatal(stderr)
	}
	code, out, stderr := kvsim(t, "plot", run)
	if code != exitOK {
		t.Fatal(stderr)
	}
	for _, name := range []string{"ttft", "queue", "pulls", "g1", "g2", "cdf-ttft", "cdf-tpot", "cdf-itl", "cdf-e2e"} {
		for _, ext := range []string{"png", "svg"} {
			f := filepath.Join(run, "charts", name+"."+ext)
			if st, err := os.Stat(f); err != nil || st.Size() < 1000 || !strings.Contains(out, f) {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	sw := filepath.Join(dir, "sweep")
	if code, _, stderr := kvsim(t, "sweep", "../../scenarios/golden/drain.yaml", "-o", sw, "--set", "workload.synthetic.requests=60",
		"--vary", "router.policy=kv_aware,round_robin"); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := kvsim(t, "plot", sw, "--metric", "e2e_p99_ms"); code != exitOK {
		t.Fatal(stderr)
	}
	for _, name := range []string{"sweep-e2e_p99_ms.svg", "cdf-ttft.png", "cdf-e2e.svg"} {
		if _, err := os.Stat(filepath.Join(sw, "charts", name)); err != nil {
			t.Error(err)
		}
	}
	if code, _, _ := kvsim(t, "plot", sw, "--metric", "digest"); code != exitBadInput {
		t.Errorf("non-numeric metric: exit %d", code)
	}
	if code, _, _ := kvsim(t, "plot", dir); code != exitBadInput {
		t.Errorf("not a run: exit %d", code)
	}
}

// TestMain lets a test run the kvsim command in a child process (to send
// it signals): with KVSIM_TEST_MAIN set, the test binary is kvsim.
func TestMain(m *testing.M) {
	if os.Getenv("KVSIM_TEST_MAIN") == "1" {
		if stuck := os.Getenv("KVSIM_TEST_STUCK"); stuck != "" { // every run hangs as it starts, deaf to its context, once it has said so in that file
			testHookRunning = func(*scenarios.Scenario) {
				os.WriteFile(stuck, nil, 0o644)
				select {}
			}
		}
		main()
		return
	}
	os.Exit(m.Run())
}

// TestInterruptLeavesNothing: SIGINT during a long replay stops it with
// exit 130 and leaves neither the output directory nor its temporary one;
// a sweep of two long runs side by side keeps its directory, with its
// sweep.json and no partial run, for --resume.
func TestInterruptLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	t.Run("replay", func(t *testing.T) {
		dir := interrupt(t, ".run.tmp-*", "replay", "--set", "workload.synthetic.requests=2000000")
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("left behind: %v", entries)
		}
	})
	t.Run("sweep", func(t *testing.T) {
		dir := interrupt(t, "run/runs/.run-*.tmp-*", "sweep", "../../scenarios/default.yaml", "-j", "2",
			"--vary", "workload.synthetic.requests=2000000,2000001")
		if entries, _ := os.ReadDir(filepath.Join(dir, "run", "runs")); len(entries) != 0 {
			t.Errorf("partial runs left behind: %v", entries)
		}
		if _, err := os.Stat(filepath.Join(dir, "run", "sweep.json")); err != nil {
			t.Errorf("sweep.json: %v", err)
		}
	})
}

// TestSecondInterruptKills: a run stuck inside an event (here every
// sweep run hangs as it starts, deaf to its context) does not stop at the
// first interrupt; the second kills the process, as SIGINT does by
// default, instead of being swallowed.
func TestSecondInterruptKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "sweep", "../../scenarios/default.yaml", "--vary", "seed=1,2", "-o", filepath.Join(dir, "run"))
	stuck := filepath.Join(dir, "stuck")
	cmd.Env = append(os.Environ(), "KVSIM_TEST_MAIN=1", "KVSIM_TEST_STUCK="+stuck)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) { // until a run is stuck
		if _, err := os.Stat(stuck); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no run started")
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		t.Fatalf("the stuck run ended at the first interrupt: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("ended with %v, want killed by SIGINT", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the second interrupt did not stop the stuck run")
	}
}

// interrupt runs kvsim with args and -o DIR/run, interrupts it once a
// temporary directory matching tmpGlob (in DIR) exists, checks the exit
// code and message, and returns DIR.
func interrupt(t *testing.T, tmpGlob string, args ...string) string {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	cmd := exec.Command(os.Args[0], append(args, "-o", out)...)
	cmd.Env = append(os.Environ(), "KVSIM_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the run has started writing (its temporary directory
	// exists), then interrupt it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if tmp, _ := filepath.Glob(filepath.Join(dir, tmpGlob)); len(tmp) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.HasPrefix(stderr.String(), "kvsim: interrupted") {
		t.Errorf("exit %v, stderr %q", err, stderr.String())
	}
	return dir
}

// TestPanicLeavesNothing: a panic during a run (planted by the hook) is an
// internal error, exit 1 (the run failed), every line of it prefixed; a replay leaves
// neither its output nor its temporary folder nor the parents it made; a
// sweep whose run panics in its goroutine stops the others and leaves no
// partial run.
func TestPanicLeavesNothing(t *testing.T) {
	t.Cleanup(func() { testHookRunning = nil })
	testHookRunning = func(sc *scenarios.Scenario) {
		if sc.Workload.Synthetic.Requests == 200 {
			panic("planted")
		}
	}
	check := func(args []string, first string) {
		t.Helper()
		code, _, stderr := kvsim(t, args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != exitFailed || !strings.HasPrefix(lines[0], first) {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "kvsim: ") {
				t.Errorf("%v: line without the kvsim: prefix: %q", args, l)
			}
		}
	}
	dir := t.TempDir()
	check([]string{"replay", "--set", small, "-o", filepath.Join(dir, "a", "b", "run")},
		"kvsim: internal error: planted (a bug in kvsim")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the replay left %v", entries)
	}
	sw := filepath.Join(dir, "sweep")
	check([]string{"sweep", "../../scenarios/default.yaml", "-j", "2", "-o", sw, "--vary", "workload.synthetic.requests=200,2000000"},
		"kvsim: run 0 (workload.synthetic.requests=200): internal error: planted")
	if entries, _ := os.ReadDir(filepath.Join(sw, "runs")); len(entries) != 0 {
		t.Errorf("the sweep left %v", entries)
	}
}

// TestReadmeExample: the summary README.md shows for the default replay is
// what the default replay prints, figure for figure; only the wall time
// (machine-dependent) and the output folder are left out.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```\nscenario ")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md has no example summary (a block starting with the scenario line)")
	}
	code, out, stderr := kvsim(t, "replay", "-q", "-o", filepath.Join(t.TempDir(), "default"))
	if code != exitOK {
		t.Fatal(stderr)
	}
	unstable := regexp.MustCompile(`(?m)( in )[0-9.]+s wall$|^(output +).*$`)
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(unstable.ReplaceAllString(s, "$1$2")), "\n") {
			out = append(out, strings.TrimRight(l, " "))
		}
		return out
	}
	want, got := lines("scenario "+block), lines(out)
	if !slices.Equal(got, want) {
		t.Errorf("README.md's example summary drifted from the default replay's; it prints\n%s", out)
	}
}

// TestDefaultRate: what scenarios.md and default.yaml say of rate. The
// default scenario's rate 40 with 3 turns a session starts λ = 40/3
// sessions a second (Poisson), each turn an exponential think time (mean
// 10 s) after the one before. Expected: the 1,000 sessions start over
// 1000/λ = 75 s; the last turns trail by about the largest of 1,000 sums
// of two think times, the 1/1000 tail of that sum: 10 s x y with
// e^-y (1 + y) = 1/1000, y = 9.23, 92 s. A span of about 167 s; seed 42's
// is 166 s, so 3000/166 = 18 requests a second on average. At time t the rate is λ(1 + (1 - e^-t/10) + (1 - e^-t/10 (1 +
// t/10))): 31 a second mid-bucket at 17.5 s, 38 at 40 s, 40 once every turn
// overlaps; a 5 s bucket of 200 requests varies by sqrt(200)/5 = 2.8 a
// second. 33 and 44 are seed 42's lowest and highest buckets from 15 s to
// 75 s (at 15 s and at 40 s), which the docs quote.
func TestDefaultRate(t *testing.T) {
	s := statsJSONOf(t, "--bucket", "5s")
	if s.Requests != 3000 || math.Round(s.SpanS) != 166 || math.Round(s.MeanRate) != 18 {
		t.Errorf("%d requests over %.1f s, %.2f a second; want 3000 over 166 s, 18 a second", s.Requests, s.SpanS, s.MeanRate)
	}
	for _, b := range s.Arrivals {
		if r := math.Round(b.Rate); b.StartS >= 15 && b.StartS < 75 && (r < 33 || r > 44) {
			t.Errorf("%.0f s: %.1f requests a second, want 33 to 44", b.StartS, b.Rate)
		}
	}
}

// TestCounterChangesOneSide: a counter only one run has (a group its
// scenario adds) is 0 in the other. A has x 1 and f 0; B has x 1 and g 2:
// f (0 against an absent 0) is no change, g is 0 -> 2, and x is equal.
// Either way round, the change is g's alone.
func TestCounterChangesOneSide(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rows []report.CounterRow) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = r.Name
		}
		w, err := parquetio.NewTableWriter(filepath.Join(d, report.CountersFile), report.CounterColumns(names), 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			w.Append(&rows[i])
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write("a", []report.CounterRow{{Name: "x", Value: 1}, {Name: "f", Value: 0}})
	b := write("b", []report.CounterRow{{Name: "x", Value: 1}, {Name: "g", Value: 2}})
	for _, c := range []struct {
		a, b string
		want counterChange
	}{{a, b, counterChange{Name: "g", A: 0, B: 2}}, {b, a, counterChange{Name: "g", A: 2, B: 0}}} {
		got, err := counterChanges(c.a, c.b)
		if err != nil || len(got) != 1 || got[0] != c.want {
			t.Errorf("%s against %s: %+v, %v; want %+v", filepath.Base(c.a), filepath.Base(c.b), got, err, c.want)
		}
	}
}
