package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvsim/kvsim/calibrate"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// userFolder makes dir holding files of the user's and returns a function
// that fails the test unless they are all still there, unchanged.
func userFolder(t *testing.T, dir string) func() {
	t.Helper()
	files := map[string]string{"notes.md": "my notes", "data/results.csv": "a,b\n1,2\n", "summary.json": `{"mine": true}`}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		t.Helper()
		for name, text := range files {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != text {
				t.Errorf("user file %s: %q, %v", name, b, err)
			}
		}
	}
}

// TestForceNeverTakesUserFiles: replay and sweep with --force refuse a
// folder of the user's files, the working directory and its parent (exit
// 2, before running), and leave every file as it was and no temporary
// directory behind.
func TestForceNeverTakesUserFiles(t *testing.T) {
	parent := t.TempDir()
	scenario, _ := filepath.Abs("../../scenarios/default.yaml")
	notes := filepath.Join(parent, "notes")
	intact := userFolder(t, notes)
	work := filepath.Join(parent, "work")
	intactWork := userFolder(t, work)
	t.Chdir(work)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--set", small, "-o", notes, "--force"}, "kvsim did not write it"},
		{[]string{"sweep", scenario, "--vary", "cluster.workers=2,3", "-o", notes, "--force"}, "kvsim did not write it"},
		{[]string{"sweep", scenario, "--vary", "cluster.workers=2,3", "-o", notes, "--resume"}, "not a sweep directory"},
		{[]string{"replay", "--set", small, "-o", ".", "--force"}, "working directory"},
		{[]string{"replay", "--set", small, "-o", "..", "--force"}, "working directory"},
		{[]string{"sweep", scenario, "--vary", "cluster.workers=2", "-o", ".", "--force"}, "working directory"},
	} {
		code, _, stderr := kvsim(t, c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || !strings.HasPrefix(stderr, "kvsim: ") {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	intact()
	intactWork()
	if got := names(t, parent); !slices.Equal(got, []string{"notes", "work"}) {
		t.Errorf("%s holds %v", parent, got)
	}
	// kvsim's own output is replaced by --force; once the user adds a file
	// to it, it is not.
	run := filepath.Join(parent, "run")
	for range 2 {
		if code, _, stderr := kvsim(t, "replay", "--set", small, "-o", run, "--force"); code != exitOK {
			t.Fatalf("forced replay over kvsim's run: %s", stderr)
		}
	}
	os.WriteFile(filepath.Join(run, "analysis.txt"), []byte("mine"), 0o644)
	if code, _, stderr := kvsim(t, "replay", "--set", small, "-o", run, "--force"); code != exitBadInput || !strings.Contains(stderr, "analysis.txt") {
		t.Errorf("forced replay over a run holding a user file: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(run, "analysis.txt")); string(b) != "mine" {
		t.Error("the user's file in the run was lost")
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestRunExplainsItself: a run directory holds its scenario resolved (as
// validate prints it) and a manifest naming the build, the command line,
// the --set values and the trace's path, size and SHA-256; kvsim version
// prints the same build.
func TestRunExplainsItself(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	text := `{"timestamp": 0, "input_length": 1024, "output_length": 8, "hash_ids": [1, 2]}
{"timestamp": 500, "input_length": 1024, "output_length": 8, "hash_ids": [1, 3]}
`
	os.WriteFile(trace, []byte(text), 0o644)
	sets := []string{"--set", "workload={trace: {path: " + trace + "}}", "--set", "cluster.workers=2"}
	out := filepath.Join(dir, "run")
	args := append([]string{"replay", "-o", out}, sets...)
	if code, _, stderr := kvsim(t, args...); code != exitOK {
		t.Fatal(stderr)
	}
	_, resolved, _ := kvsim(t, append([]string{"validate"}, sets...)...)
	if got, err := os.ReadFile(filepath.Join(out, "scenario.yaml")); err != nil || string(got) != resolved {
		t.Errorf("scenario.yaml is not validate's output: %v\n%s\nwant\n%s", err, got, resolved)
	}
	s, err := study.ReadRunSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	m := s.Manifest
	wantTrace := &report.FileID{Path: trace, Bytes: int64(len(text)), SHA256: hex.EncodeToString(sum[:])}
	if m == nil || m.Tool != "kvsim" || m.Build != report.ReadBuild(version).WithExecutable() || m.Build.GoVersion == "" || len(m.Build.ExecutableSHA256) != 64 ||
		!slices.Equal(m.Command, append([]string{"kvsim"}, args...)) || !slices.Equal(m.Sets, []string{sets[1], sets[3]}) ||
		m.Scenario != "" || !reflect.DeepEqual(m.Trace, wantTrace) {
		t.Errorf("manifest %+v (trace %+v), want trace %+v", m, m.Trace, wantTrace)
	}
	// scenario.yaml runs again, from anywhere, to the same digest.
	t.Chdir(t.TempDir())
	if code, _, stderr := kvsim(t, "replay", filepath.Join(out, "scenario.yaml"), "-o", "again", "--expect-digest", s.Digest); code != exitOK {
		t.Errorf("replaying scenario.yaml: %s", stderr)
	}
	_, vout, _ := kvsim(t, "version", "--json")
	var b report.Build
	if err := json.Unmarshal([]byte(vout), &b); err != nil || b != m.Build {
		t.Errorf("version --json %q (%v), manifest build %+v", vout, err, m.Build)
	}
	if _, vout, _ = kvsim(t, "version"); !strings.Contains(vout, "kvsim "+version) || !strings.Contains(vout, "go "+m.Build.GoVersion) {
		t.Errorf("version: %q", vout)
	}
}

// TestSweepResume: a sweep interrupted after two of its four runs keeps
// them (exit 130, saying how to resume); --resume runs only the other two
// and writes the sweep.parquet of an uninterrupted sweep, byte for byte. A
// run whose recorded scenario no longer matches its grid point is run
// again; a --resume with another grid is refused.
func TestSweepResume(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"../../scenarios/golden/drain.yaml", "-j", "1", "--set", "workload.synthetic.requests=60",
		"--vary", "router.policy=kv_aware,least_loaded", "--vary", "cluster.workers=3,4"}
	whole := filepath.Join(dir, "whole")
	if code, _, stderr := kvsim(t, append([]string{"sweep", "-o", whole}, grid...)...); code != exitOK {
		t.Fatal(stderr)
	}
	var done atomic.Int64
	t.Cleanup(func() { testHookRunDone = nil })
	part := filepath.Join(dir, "part")
	ctx, cancel := context.WithCancel(context.Background())
	testHookRunDone = func() {
		if done.Add(1) == 2 {
			cancel()
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, append([]string{"sweep", "-o", part}, grid...), &stdout, &stderr)
	if code != exitInterrupted || !strings.Contains(stderr.String(), "2 of the 4 runs to do finished") || !strings.Contains(stderr.String(), "--resume") {
		t.Fatalf("interrupted sweep: exit %d, %q", code, stderr.String())
	}
	if code, _, stderr := kvsim(t, "sweep", "merge", "-o", filepath.Join(dir, "m"), part); code != exitBadInput || !strings.Contains(stderr, "unfinished sweep") {
		t.Errorf("merging an unfinished sweep: exit %d %s", code, stderr)
	}
	if got := names(t, filepath.Join(part, "runs")); !slices.Equal(got, []string{"run-000", "run-001"}) {
		t.Errorf("kept runs %v, want run-000 and run-001", got)
	}
	if _, err := os.Stat(filepath.Join(part, "sweep.parquet")); err == nil {
		t.Error("an interrupted sweep wrote sweep.parquet")
	}
	// resume resumes the sweep, which runs wantRuns runs, saying why it
	// runs again any it had finished in the line redo ("" for none).
	resume := func(wantRuns int64, redo string) {
		t.Helper()
		done.Store(0)
		testHookRunDone = func() { done.Add(1) }
		code, _, stderr := kvsim(t, append([]string{"sweep", "-o", part, "--resume"}, grid...)...)
		if code != exitOK || done.Load() != wantRuns {
			t.Fatalf("resume: exit %d, %d runs, want %d: %s", code, done.Load(), wantRuns, stderr)
		}
		if redo == "" && strings.Contains(stderr, "--resume") || redo != "" && stderr != "kvsim: warning: --resume: "+redo+"\n" {
			t.Errorf("resume: stderr %q, want the line %q", stderr, redo)
		}
		want, _ := os.ReadFile(filepath.Join(whole, "sweep.parquet"))
		if got, err := os.ReadFile(filepath.Join(part, "sweep.parquet")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("resumed sweep.parquet differs from the uninterrupted one: %v", err)
		}
	}
	resume(2, "")
	resume(0, "")
	// A run whose scenario.yaml is not its grid point's is not done.
	stale := filepath.Join(part, "runs", "run-002", "scenario.yaml")
	b, _ := os.ReadFile(stale)
	os.WriteFile(stale, bytes.Replace(b, []byte("workers: 3"), []byte("workers: 5"), 1), 0o644)
	resume(1, "1 finished run is run again (run 2): their scenario.yaml is not their grid point's scenario, resolved")
	// Runs another build made are run again, and the line says so: here
	// their manifests name another executable, as after a rebuild.
	exe := report.ReadBuild(version).WithExecutable().ExecutableSHA256
	for _, run := range []string{"run-000", "run-001", "run-003"} {
		p := filepath.Join(part, "runs", run, "summary.json")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.Replace(b, []byte(exe), []byte(strings.Repeat("0", 64)), 1), 0o644)
	}
	resume(3, "3 finished runs are run again (run 0-1, 3): another kvsim build made them (executable sha256 000000000000…, this one "+exe[:12]+"…)")
	if code, _, stderr := kvsim(t, "sweep", "-o", part, "--resume", "../../scenarios/golden/drain.yaml", "--vary", "cluster.workers=3,4"); code != exitBadInput || !strings.Contains(stderr, "another sweep") {
		t.Errorf("resume with another grid: exit %d %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, append([]string{"sweep", "-o", part}, grid...)...); code != exitBadInput || !strings.Contains(stderr, "--resume") {
		t.Errorf("sweep into an existing sweep: exit %d %s", code, stderr)
	}
}

// TestErrorsAsDocumented: the exit codes and messages of docs/cli.md.
func TestErrorsAsDocumented(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("cluster:\n  wrokers: 2\n  engine: {block_size: 0}\nrouter: {policy: kv_awre}\n"), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		args   []string
		code   int
		stderr []string // each a whole line
	}{
		// Every error at once, each line prefixed; did-you-mean for values.
		{[]string{"validate", bad}, exitBadInput, []string{
			"kvsim: " + bad + `:2: cluster.wrokers: unknown key (did you mean "workers"?)`,
			"kvsim: " + bad + ":3: cluster.engine.block_size: must be at least 1, got 0",
			"kvsim: " + bad + `:4: router.policy: "kv_awre" is not one of round_robin, random, least_loaded, kv_aware (did you mean "kv_aware"?)`,
		}},
		{[]string{"validate", "--set", "router.hints.mode=mvoe", "--set", "cluster.engine.timing.gpu=H100"}, exitBadInput, []string{
			`kvsim: --set: router.hints.mode: "mvoe" is not one of copy, move (did you mean "move"?)`,
		}},
		// The bound reads the KV cache as configured: this linear model is
		// faster than a BF16 cache allows (a decode pass of 27 sequences at
		// 4,095 tokens reads 13.48 GB of weights and 58 GB of KV) but not
		// than an FP8 one of half the bytes.
		{[]string{"validate", "--set", "cluster.engine.timing={model: linear, base: 6ms, per_prefill_token: 16us, per_decode_token: 0ns, per_context_token: 90ns, gpu: h100, model_preset: llama-2-7b}",
			"--set", "cluster.engine.max_batched_tokens=4096"}, exitBadInput, []string{}},
		{[]string{"validate", "--set", "cluster.engine.timing={model: linear, base: 6ms, per_prefill_token: 16us, per_decode_token: 0ns, per_context_token: 90ns, gpu: h100, model_preset: llama-2-7b}",
			"--set", "cluster.engine.max_batched_tokens=4096", "--set", "cluster.engine.kv_bytes_per_token=262144"}, exitOK, nil},
		{[]string{"sweep", "../../scenarios/default.yaml", "--vary", "cluster.workers=2"}, exitBadInput, []string{"kvsim: sweep needs -o DIR"}},
		{[]string{"sweep", "merge", dir}, exitBadInput, []string{"kvsim: sweep merge needs -o OUT"}},
		{[]string{"help", "bogus"}, exitBadInput, []string{`kvsim: unknown help topic "bogus": kvsim help lists the commands`}},
		{[]string{"help", "sweep", "merge"}, exitOK, nil},
		// An output that cannot be written is a failed run, not bad input.
		{[]string{"replay", "--set", small, "-o", filepath.Join(file, "run")}, exitFailed, nil},
	} {
		code, _, stderr := kvsim(t, c.args...)
		var lines []string
		if stderr != "" {
			lines = strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		}
		for _, want := range c.stderr {
			if !slices.Contains(lines, want) {
				t.Errorf("%v: stderr lacks the line %q:\n%s", c.args, want, stderr)
			}
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "kvsim: ") {
				t.Errorf("%v: line without the kvsim: prefix: %q", c.args, l)
			}
		}
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, stderr)
		}
	}
}

// TestPhysicsRefusal: a timing model faster than the hardware it names is
// bad input, its message naming the pass furthest below its bound, as
// worked out in engine.TestCheckPhysics (a full 8,192-token budget in four
// chunks of 2,048 after 2,048 tokens of context: 123.6 TFLOP, 124.999441 ms
// at 989 TFLOP/s, against the fixed model's 10 ms), then how many probe
// passes are below (engine.TestCheckPhysics checks that count's range).
func TestPhysicsRefusal(t *testing.T) {
	code, _, stderr := kvsim(t, "validate", "--set", "cluster.engine.timing={model: fixed, gpu: h100, model_preset: llama-2-7b}")
	want := "kvsim: --set: cluster.engine.timing: the fixed timing model is faster than the hardware (1 x h100 running llama-2-7b): " +
		"a prefill pass of 4 sequences of 2048 tokens after 2048 tokens of context takes 10ms, the physical bound is 124.999441ms (compute: 123.6 TFLOP at 989 TFLOP/s); "
	if code != exitBadInput || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, " probe passes are below their bound\n") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestWarnings: suspicious but valid scenarios run (exit 0) with a warning
// naming the key.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := kvsim(t, "replay", "-o", filepath.Join(dir, "r"), "--set", "workload.synthetic.requests=50",
		"--set", "kvcr.enabled=false", "--set", "router.hints.enabled=true",
		"--set", "cluster.engine={kv_bytes_per_token: 1024, timing: {model: fixed, prefill: 0s, decode: 0s}}",
		"--set", "events=[{at: 1h, drain: [1]}]")
	for _, want := range []string{
		"kvsim: warning: --set: router.hints.enabled: hints are on but kvcr.enabled is false",
		"kvsim: warning: --set: cluster.engine.timing: the fixed timing model takes no time",
		"kvsim: warning: --set: events[0].at: 1h0m0s is after the last arrival",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
	_, _, stderr = kvsim(t, "validate", "--set", "kvcr.enabled=false", "--set", "router.hints.enabled=true")
	if !strings.HasPrefix(stderr, "kvsim: warning: --set: router.hints.enabled") {
		t.Errorf("validate does not warn: %q", stderr)
	}
	// Hints are on by default: a KVCR-off baseline that leaves them alone
	// is warned of nothing.
	if _, _, stderr = kvsim(t, "validate", "--set", "kvcr.enabled=false"); stderr != "" {
		t.Errorf("a KVCR-off baseline warns: %q", stderr)
	}
}

// TestJSONOutput: --json prints replay's summary.json, compare's findings
// and sweep's rows (named by sweep.parquet's columns) on stdout.
func TestJSONOutput(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	code, out, stderr := kvsim(t, "replay", "--json", "-o", a, "--set", small)
	var s study.RunSummary
	if err := json.Unmarshal([]byte(out), &s); code != exitOK || err != nil || s.Summary == nil || s.Manifest == nil {
		t.Fatalf("replay --json: exit %d, %v: %s%s", code, err, out, stderr)
	}
	file, _ := study.ReadRunSummary(a)
	if s.Digest != file.Digest || s.Requests.Completed != 200 {
		t.Errorf("replay --json digest %s, summary.json %s", s.Digest, file.Digest)
	}
	kvsim(t, "replay", "-o", b, "--set", small, "--set", "cluster.workers=3")
	// The default scenario has 8 workers.
	code, out, _ = kvsim(t, "compare", "--json", a, b)
	var c comparison
	if err := json.Unmarshal([]byte(out), &c); code != exitFailed || err != nil || c.Equal || c.Requests == nil {
		t.Fatalf("compare --json: exit %d, %v: %s", code, err, out)
	}
	if !reflect.DeepEqual(c.Scenario, []keyChange{{Key: "cluster.workers", A: "8", B: "3"}}) {
		t.Errorf("scenario changes %+v, want cluster.workers 8 -> 3", c.Scenario)
	}
	code, out, _ = kvsim(t, "sweep", "--json", "-o", filepath.Join(dir, "s"), "--set", small, "--vary", "cluster.workers=8,3", "../../scenarios/default.yaml")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); code != exitOK || err != nil || len(rows) != 2 {
		t.Fatalf("sweep --json: exit %d, %v: %s", code, err, out)
	}
	if rows[1]["cluster.workers"] != "3" || rows[1]["requests_completed"] != 200.0 || rows[0]["digest"] != s.Digest {
		t.Errorf("sweep --json rows %v", rows)
	}
}

// TestCompareScenarioFirst: compare's table names the differing scenario
// keys before anything else.
func TestCompareScenarioFirst(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	kvsim(t, "replay", "-o", a, "--set", small)
	kvsim(t, "replay", "-o", b, "--set", small, "--set", "router.policy=round_robin")
	_, out, _ := kvsim(t, "compare", a, b)
	first, _, _ := strings.Cut(out, "\n\n")
	if !strings.HasPrefix(first, "scenario key") || !strings.Contains(first, "router.policy") || !strings.Contains(first, "round_robin") {
		t.Errorf("compare does not start with the scenario keys:\n%s", out)
	}
}

// TestProgress: the replay bar shows requests done of the total, virtual
// time, the rate and the time left; progress goes only to a terminal.
func TestProgress(t *testing.T) {
	var w bytes.Buffer
	bar := newBar(&w, 200, "requests")
	bar.Set64(1) // starts the clock the rate and estimate use
	time.Sleep(10 * time.Millisecond)
	replayProgress(bar)(50, 90e9)
	got := w.String()
	for _, want := range []string{"50/200", "requests/", "virtual 1m30s"} {
		if !strings.Contains(got, want) {
			t.Errorf("bar %q lacks %q", got, want)
		}
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	if showProgress(&w, false) || showProgress(f, false) {
		t.Error("progress shown on a buffer or a file")
	}
}

// TestCalibrateCommand: calibrate prints the fitted timing as one YAML
// line that --set takes as it is, and its report on stderr; a scenario
// without a measured trace is bad input.
func TestCalibrateCommand(t *testing.T) {
	trace := tracestest.VLLMPath(t, "jan21-llama7b-train-1/traces.json")
	train := []string{"../../scenarios/vllm-llama2-7b.yaml", "--set", "workload.trace.path=" + trace, "--set", "workload.trace.limit=60"}
	code, out, stderr := kvsim(t, append([]string{"calibrate", "--evaluations", "12"}, train...)...)
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "{model: roofline,") || !strings.Contains(stderr, "parameter") {
		t.Fatalf("calibrate: exit %d\nstdout %q\nstderr %s", code, out, stderr)
	}
	args := []string{"replay", "-o", filepath.Join(t.TempDir(), "r"), "--set", "cluster.engine.timing=" + strings.TrimSpace(out)}
	if code, _, stderr := kvsim(t, append(args, train...)...); code != exitOK {
		t.Errorf("replay with the fitted timing: %s", stderr)
	}
	// The fit report writes durations with their units: the scenario's
	// overhead (1.5ms) and the fitted one.
	if !regexp.MustCompile(`(?m)^overhead +1\.5 ms +[0-9.]+ [mµn]?s$`).MatchString(stderr) {
		t.Errorf("calibrate's report does not give the overhead as a duration:\n%s", stderr)
	}
	if code, _, stderr := kvsim(t, "calibrate", "../../scenarios/default.yaml"); code != exitBadInput || !strings.Contains(stderr, "measured trace") {
		t.Errorf("calibrate on a synthetic workload: exit %d %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, append([]string{"calibrate"}, append(train, "--set", "workload.trace.time_scale=0.5")...)...); code != exitBadInput || !strings.Contains(stderr, "must be 1 to calibrate") {
		t.Errorf("calibrate at another load: exit %d %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, append([]string{"calibrate"}, append(train, "--set", "workload.envelope=[{for: 1m, rate: 2}]")...)...); code != exitBadInput || !strings.Contains(stderr, "workload.envelope: must be left out to calibrate") {
		t.Errorf("calibrate under an envelope: exit %d %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, append([]string{"calibrate"}, append(train, "--set", "workload.trace.arrival_jitter=10ms")...)...); code != exitBadInput || !strings.Contains(stderr, "workload.trace.arrival_jitter: must be 0 to calibrate") {
		t.Errorf("calibrate with jittered arrivals: exit %d %s", code, stderr)
	}
}

// TestCalibrateEvaluations: a replay budget below 1 is bad input, refused
// before the scenario is read (none.yaml does not exist), where -5 used to
// print the unfitted timing as a fit and 0 to mean the default.
func TestCalibrateEvaluations(t *testing.T) {
	for _, n := range []string{"-5", "0"} {
		code, out, stderr := kvsim(t, "calibrate", "--evaluations", n, "none.yaml")
		if code != exitBadInput || out != "" || stderr != "kvsim: --evaluations "+n+": want at least 1 replay\n" {
			t.Errorf("--evaluations %s: exit %d, stdout %q, stderr %q", n, code, out, stderr)
		}
	}
}

// TestParamText: calibrate's report writes durations and per-token costs
// with a unit, to four decimals (humanize truncates), and other
// parameters as numbers.
func TestParamText(t *testing.T) {
	dur := calibrate.Fitted{Duration: true}
	for _, c := range []struct {
		p    calibrate.Fitted
		v    float64
		want string
	}{{dur, 1.5e6, "1.5 ms"}, {dur, 1523456.7, "1.5234 ms"}, {dur, 90.4, "90.4 ns"}, {dur, 16e3, "16 µs"}, {calibrate.Fitted{}, 0.66, "0.66"}} {
		if got := paramText(c.p, c.v); got != c.want {
			t.Errorf("paramText(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestBadTraceLeavesNothing: a run whose trace is empty or malformed fails
// (exit 2) and leaves neither its output folder nor the parents it made
// for it; --force takes an empty folder, which holds nothing to lose.
func TestBadTraceLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("garbage\n"), 0o644)
	for _, trace := range []string{"empty.jsonl", "bad.jsonl"} {
		set := "workload={trace: {path: " + filepath.Join(dir, trace) + "}}"
		if code, _, stderr := kvsim(t, "replay", "--set", set, "-o", filepath.Join(dir, "a", "b", "c")); code != exitBadInput {
			t.Errorf("%s: exit %d, %s", trace, code, stderr)
		}
		if got := names(t, dir); !slices.Equal(got, []string{"bad.jsonl", "empty.jsonl"}) {
			t.Errorf("%s: the failed run left %v", trace, got)
		}
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if code, _, stderr := kvsim(t, "replay", "--set", small, "-o", empty, "--force"); code != exitOK {
		t.Errorf("--force over an empty folder: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, "summary.json")); err != nil {
		t.Error(err)
	}
}

// TestKilledRunLeftoverRemoved: a run killed outright (SIGKILL, as the
// out-of-memory killer does) leaves its temporary folder; the next run into
// the same output removes it, since no process holds it any more.
func TestKilledRunLeftoverRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	cmd := exec.Command(os.Args[0], "replay", "-q", "--set", "workload.synthetic.requests=2000000", "-o", out)
	cmd.Env = append(os.Environ(), "KVSIM_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for deadline := time.Now().Add(20 * time.Second); len(tmp) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run never started")
		}
		tmp, _ = filepath.Glob(filepath.Join(dir, ".run.tmp-*"))
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(tmp[0]); err != nil {
		t.Fatalf("the killed run left nothing to clean: %v", err)
	}
	if code, _, stderr := kvsim(t, "replay", "--set", small, "-o", out); code != exitOK {
		t.Fatal(stderr)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"run"}) {
		t.Errorf("after the next run %s holds %v", dir, got)
	}
}

// TestReplayEvents: replay writes events.parquet, the same rows as
// summary.json's lifecycle_events, and prints a block for each event; a
// drain of a worker holding nothing warns on stderr and exits 0.
func TestReplayEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, stderr := kvsim(t, "replay", "-o", dir, "--set", small, "--set", "events=[{at: 3s, drain: [6, 7], drain_timeout: 1s}]")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"event 0       drain 6,7 at 3s: ", "removed after 1s (1 by timeout)", "TTFT p50 "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	rows, err := parquetio.ReadEvents(filepath.Join(dir, report.EventsFile))
	s, _ := study.ReadRunSummary(dir)
	got, _ := json.Marshal(rows) // NaN as null, as in summary.json
	want, _ := json.Marshal(s.EventRows)
	if err != nil || len(rows) != 1 || rows[0].RemovedByTimeout != 1 || string(got) != string(want) {
		t.Errorf("events.parquet %s, %v\nsummary.json %s", got, err, want)
	}
	code, _, stderr = kvsim(t, "replay", "-o", dir, "--force", "--set", small, "--set", "events=[{at: 1ms, drain: [7]}]")
	if want := "kvsim: warning: event 0 drains worker 7, which holds no work and no cache at 1ms: the drain moves nothing off it and tests only the capacity it takes away\n"; code != exitOK || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q lacks %q", code, stderr, want)
	}
	// A sweep prints its runs' warnings once each, after the runs that
	// gave them.
	code, _, stderr = kvsim(t, "sweep", "-o", filepath.Join(t.TempDir(), "s"), "--set", small, "--set", "events=[{at: 1ms, drain: [7]}]",
		"--vary", "seed=1,2", "../../scenarios/default.yaml")
	if want := "kvsim: warning: run 0-1: event 0 drains worker 7, which holds no work and no cache at 1ms: the drain moves nothing off it and tests only the capacity it takes away\n"; code != exitOK || !strings.Contains(stderr, want) {
		t.Errorf("sweep: exit %d, stderr %q lacks %q", code, stderr, want)
	}
}

// TestSweepResumeModelConfig: a sweep whose engine reads a config.json
// (cluster.engine.timing.model_config) runs its finished runs again on
// --resume once the file changed: its resolved scenario names it by path
// only (with gpu_blocks and the G2 capacity given, nothing it derives from
// the file changes when the MLP's width does, but the roofline's pass
// times do), so the manifest carries its size and SHA-256, as a trace's.
func TestSweepResumeModelConfig(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := os.ReadFile("../../engine/testdata/models/llama-2-7b.json")
	os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644)
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte("workload: {synthetic: {requests: 40, rate: 20}}\n"+
		"cluster: {workers: 2, g2: {capacity_blocks: 4000}, engine: {gpu_blocks: 2000, timing: {model: roofline, gpu: h100, model_config: config.json}}}\n"), 0o644)
	out := filepath.Join(dir, "sweep")
	args := []string{"sweep", sc, "-o", out, "--vary", "cluster.workers=1,2"}
	if code, _, stderr := kvsim(t, args...); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := kvsim(t, append(args, "--resume")...); code != exitOK || strings.Contains(stderr, "run again") {
		t.Errorf("resume, nothing changed: exit %d %q", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), bytes.Replace(cfg, []byte(`"intermediate_size": 11008`), []byte(`"intermediate_size": 11000`), 1), 0o644)
	want := "kvsim: warning: --resume: 2 finished runs are run again (run 0-1): the engine's model_config changed since they ran (its size or SHA-256 differs)\n"
	if code, _, stderr := kvsim(t, append(args, "--resume")...); code != exitOK || stderr != want {
		t.Errorf("resume, config changed: exit %d %q, want %q", code, stderr, want)
	}
}
