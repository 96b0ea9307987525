package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// TestValidateAgreesWithReplay: what validate accepts, replay runs, and
// what validate refuses, replay refuses with the same error (exit 2): for
// every scenario in scenarios/, every contract scenario, and bad ones that
// only a check past the scenario file's own keys finds — an expect entry
// naming no metric or an event the scenario does not have, a missing, empty, non-monotonic or malformed trace,
// a timing model faster than its hardware, more workers than the memory
// holds, a time series past sim.MaxSampleRows. Each run is cut to its
// first 300 requests, in both commands.
func TestValidateAgreesWithReplay(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("empty.jsonl", "")
	write("backwards.jsonl", `{"timestamp": 2000, "input_length": 10, "output_length": 2, "hash_ids": [1]}`+"\n"+
		`{"timestamp": 1000, "input_length": 10, "output_length": 2, "hash_ids": [2]}`+"\n")
	write("bad.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}`+"\n{\n")
	trace := func(name string) string {
		return write(name+".yaml", "workload: {trace: {path: "+name+".jsonl, block_size: 16}}\ncluster: {workers: 2}\n")
	}
	type tc struct {
		name string
		args []string // scenario and --set flags
		ok   bool
	}
	t.Setenv("KVSIM_TRACES", tracestest.Dir(t))
	t.Setenv("KVSIM_VLLM_TRACES", tracestest.VLLMDir(t))
	var cases []tc
	const cut300 = "workload.synthetic.requests=300"
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	contract, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	for _, f := range append(files, contract...) {
		sc, err := scenarios.Load(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		cut := "workload.trace.limit=300"
		if sc.Workload.Synthetic != nil {
			cut = cut300
		}
		cases = append(cases, tc{f, []string{f, "--set", cut}, true})
	}
	cases = append(cases,
		tc{"expect", []string{"--set", "expect=[no_such_counter > 0]"}, false},
		tc{"expect metric", []string{"--set", "expect=[ttft_p99_m < 2000]"}, false},
		tc{"expect event", []string{"--set", `expect=["events[0].removed_after_s < 30"]`}, false},
		tc{"expect metrics", []string{"--set", cut300, "--set", "expect=[ttft_p99_ms < 1e9, makespan_s > 0, pulls_rejected >= 0]"}, true},
		tc{"missing", []string{write("missing.yaml", "workload: {trace: {path: none.jsonl}}\ncluster: {workers: 2}\n")}, false},
		tc{"empty", []string{trace("empty")}, false},
		tc{"backwards", []string{trace("backwards")}, false},
		tc{"malformed", []string{trace("bad")}, false},
		tc{"physics", []string{"--set", "cluster.engine.timing={model: fixed, gpu: h100, model_preset: llama-2-7b}"}, false},
		tc{"memory", []string{"--set", "cluster.workers=100000"}, false},
		tc{"memory with twins", []string{"--set", "cluster.workers=40000", "--set", "events=[{at: 1s, drain: [0]}]"}, false},
		tc{"time series", []string{"--set", "cluster.workers=50000", "--set", "report.sample_interval=100ms"}, false},
	)
	// The memory case: 64 MiB + 100,000 workers x 3 KiB = 357 MiB, more than
	// a 256 MiB GOMEMLIMIT; 40,000 workers need 182 MiB, under it alone but
	// not beside a twin (128 MiB each). The time series: 50,000 workers need 211 MiB,
	// and write 50,000 x 1,674 samples of 100 ms over the default
	// workload's 167.334 s, 83.7 million rows.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	for _, c := range cases {
		code, _, verr := kvsim(t, append([]string{"validate"}, c.args...)...)
		rcode, _, rerr := kvsim(t, append([]string{"replay", "-q", "-o", filepath.Join(dir, "out"), "--force"}, c.args...)...)
		if rcode == exitFailed && strings.Contains(rerr, "does not show what the scenario expects") {
			rcode = exitOK // the run's outcome (an expect entry), not its input
		}
		want := exitOK
		if !c.ok {
			want = exitBadInput
		}
		if code != want || rcode != want {
			t.Errorf("%s: validate exit %d, replay exit %d, want %d\nvalidate: %s\nreplay: %s", c.name, code, rcode, want, verr, rerr)
		}
		if !c.ok && firstLine(verr) != firstLine(rerr) {
			t.Errorf("%s: validate says %q, replay %q", c.name, firstLine(verr), firstLine(rerr))
		}
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestSweepReadsTracesFirst: a sweep reads every grid point's trace before
// the first run, so a bad trace in point 2 fails (exit 2) with nothing run
// and nothing written, rather than after run 1 with advice to --resume.
func TestSweepReadsTracesFirst(t *testing.T) {
	dir := t.TempDir()
	good := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	os.WriteFile(filepath.Join(dir, "good.jsonl"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte(good+"{\n"), 0o644)
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte("workload: {trace: {path: good.jsonl, block_size: 16}}\ncluster: {workers: 2}\n"), 0o644)
	out := filepath.Join(dir, "sweep")
	code, _, stderr := kvsim(t, "sweep", "-o", out, "--vary", "workload.trace.path="+filepath.Join(dir, "good.jsonl")+","+filepath.Join(dir, "bad.jsonl"), sc)
	if code != exitBadInput || !strings.Contains(stderr, "bad.jsonl:2:") || strings.Contains(stderr, "--resume") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the sweep wrote %s: %v", out, err)
	}
}

// TestProgressTotal: the progress bar counts the requests the run reads: a
// trace of 5 records with limit 4 and skip 1 runs 3 (the limit keeps 4,
// the skip drops the first of them).
func TestProgressTotal(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 5 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 10, "output_length": 2, "hash_ids": [%d]}`+"\n", i*1000, i)
	}
	os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(b.String()), 0o644)
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte("workload: {trace: {path: t.jsonl, block_size: 16, limit: 4, skip: 1}}\ncluster: {workers: 2}\n"), 0o644)
	p, err := study.Prepare(sc, nil, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.ReadWorkload(); n != 3 || err != nil {
		t.Errorf("ReadWorkload = %d, %v; want 3", n, err)
	}
	code, out, stderr := kvsim(t, "replay", "-o", filepath.Join(dir, "out"), sc)
	if code != exitOK || !strings.Contains(out, "requests      3: 3 completed") {
		t.Errorf("exit %d: %s%s", code, out, stderr)
	}
}
