package scenarios

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/sim/des"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// The golden tests of scenarios/golden re-record with -update; defined here
// too so that go test ./scenarios/... -run Golden -update accepts it.
var _ = flag.Bool("update", false, "re-record scenarios/golden/*.golden (used by scenarios/golden)")

const base = `name: t
workload:
  synthetic: {requests: 10, rate: 1}
cluster:
  workers: 2
`

func TestDefaultsAndResolution(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(base), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Cluster.Engine
	// Roofline h100 + llama-3.1-8b: 26674 G1 blocks (engine.TestRoofline),
	// 131072 B per token, max_model_len 131072; G2 = 4 x G1.
	if e.GPUBlocks != 26674 || e.KVBytesPerToken != 131072 || e.MaxModelLen != 131072 || sc.Cluster.G2.CapacityBlocks != 4*26674 {
		t.Errorf("engine %+v g2 %+v", e, sc.Cluster.G2)
	}
	if sc.Router.Policy != "kv_aware" || !sc.KVCR.Enabled || sc.KVCR.Latency != Duration(des.Millisecond) ||
		sc.Workload.Synthetic.Arrival != "poisson" || sc.Seed != 1 {
		t.Errorf("defaults: %+v %+v", sc.Router, sc.KVCR)
	}
}

func TestSetOverrides(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(base), []string{
		"cluster.workers=16", "router.policy=round_robin", "kvcr.latency=250us",
		"cluster.engine.timing={model: fixed, prefill: 2ms}", "cluster.engine.kv_bytes_per_token=1000", "events=[{at: 1s, add: 2}]",
		"events[0].startup=3s", "cluster.g2.capacity_blocks=0",
	})
	if err != nil {
		t.Fatal(err)
	}
	tm := sc.Cluster.Engine.Timing
	if sc.Cluster.Workers != 16 || sc.Router.Policy != "round_robin" || sc.KVCR.Latency != 250_000 ||
		tm.Model != "fixed" || tm.Prefill != Duration(2*des.Millisecond) || tm.Decode != Duration(5*des.Millisecond) ||
		sc.Events[0].Startup != Duration(3*des.Second) || sc.Cluster.G2.CapacityBlocks != 0 {
		t.Errorf("after --set: %+v %+v %+v", sc.Cluster, tm, sc.Events)
	}
}

// TestErrors: each bad input names the file, line and key.
func TestErrors(t *testing.T) {
	for _, c := range []struct {
		yaml string
		sets []string
		want string
	}{
		{base + "  wrokers: 3\n", nil, `s.yaml:6: cluster.wrokers: unknown key (did you mean "workers"?)`},
		{base + "routr: {}\n", nil, `s.yaml:6: routr: unknown key (did you mean "router"?)`},
		{base + "  engine: {block_size: big}\n", nil, `s.yaml:6: cluster.engine.block_size: want an integer, got "big"`},
		{base + "  engine: {block_size: 0}\n", nil, `s.yaml:6: cluster.engine.block_size: must be at least 1, got 0`},
		{base + "kvcr: {bandwidth_gbps: -1}\n", nil, `s.yaml:6: kvcr.bandwidth_gbps: must be positive, got -1`},
		{base + "kvcr: {operation_timeout: 1s, abandon_timeout: 1500ms}\n", nil,
			`s.yaml:6: kvcr.abandon_timeout: must be at least 2 x operation_timeout (2s), got 1.5s`},
		{base + "kvcr: {latency: 5 ms}\n", nil, `kvcr.latency: want a duration like 250ms, got "5 ms"`},
		{base + "kvcr: {latency: 4000000h}\n", nil, `kvcr.latency: duration "4000000h" overflows virtual time`},
		{base + "events:\n  - {at: 1s, drain: [5]}\n", nil, `s.yaml:7: events[0].drain[0]: worker 5 does not exist`},
		{base + "events:\n  - {at: 1s, drain: [0, 1]}\n", nil, `events[0].drain: drains every worker`},
		{base + "events:\n  - {at: -1s, add: 1}\n", nil, `events[0].at: must not be negative`},
		{base + "events:\n  - {at: 1s, add: 1, drain: [0]}\n", nil, `events[0]: set exactly one of drain, remove and add`},
		{base + "events:\n  - {at: 1s, remove: [1]}\n  - {at: 2s, drain: [1]}\n", nil, `events[1].drain[0]: worker 1 does not exist or is already drained or removed`},
		{base + "  engine: {timing: {model: fixed, gpu: h100}}\n", nil, `cluster.engine.timing.gpu: belongs to timing model roofline, not fixed`},
		{base + "  engine: {timing: {model: linear}}\n", nil, `cluster.engine.kv_bytes_per_token: required when timing.model is linear`},
		{base + "  engine: {timing: {gpu: h900}}\n", nil, `cluster.engine.timing.gpu: "h900" is not one of a100, h100, h200, b200`},
		{base + "  engine: {timing: {model_preset: llama-3.1-70b, gpu: a100}}\n", nil, `leave no KV cache`},
		{"name: t\ncluster: {workers: 1}\n", nil, `s.yaml: workload: set workload.trace or workload.synthetic`},
		{"cluster: {workers: 1}\nworkload:\n  trace: {format: azure}\n", nil, `s.yaml:3: workload.trace.path: missing`},
		{"cluster: {workers: 1}\nworkload:\n  trace: {path: t.jsonl, shared_prefix: 64}\n", nil,
			`s.yaml:3: workload.trace.shared_prefix: applies only to format otel, whose prompts are unknown; a mooncake trace says what its prompts share`},
		{"cluster: {workers: 1}\nworkload:\n  trace: {path: t.json, format: otel, shared_prefix: -1}\n", nil,
			`s.yaml:3: workload.trace.shared_prefix: must be at least 0, got -1`},
		{"cluster: {workers: 1}\nworkload:\n  trace: {path: t.json, format: otlp}\n", nil,
			`workload.trace.format: "otlp" is not one of mooncake, azure, otel (did you mean "otel"?)`},
		{"name: [1\n", nil, `s.yaml:1: malformed YAML`},
		{"cluster:\n\tworkers: 1\n", nil, `s.yaml:2: malformed YAML`},
		{base, []string{"cluster.workers=0"}, `--set: cluster.workers: must be at least 1, got 0`},
		{base, []string{"cluster.wrkers=4"}, `--set: cluster.wrkers: unknown key (did you mean "workers"?)`},
		{base, []string{"cluster.workers"}, `--set: cluster.workers: want key=value`},
		{base, []string{"events[3].at=1s"}, `--set: events[3].at: events has no element 3`},
		{base, []string{"router.policy=fastest"}, `--set: router.policy: "fastest" is not one of round_robin, random, least_loaded, kv_aware`},
	} {
		_, err := Parse("s.yaml", []byte(c.yaml), c.sets)
		var ie *InputError
		if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %v:\n got %v\nwant %s", c.yaml, c.sets, err, c.want)
		}
	}
}

func TestTracePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	y := "workload: {trace: {path: traces/a.csv}}\n"
	sc, err := Parse(file, []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr := sc.Workload.Trace; tr.Path != filepath.Join(dir, "traces/a.csv") || tr.Format != "azure" {
		t.Errorf("trace %+v", tr)
	}
	sc, _ = Parse(file, []byte(y), []string{"workload.trace.path=b.jsonl"})
	wd, _ := os.Getwd()
	if tr := sc.Workload.Trace; tr.Path != filepath.Join(wd, "b.jsonl") || tr.Format != "mooncake" {
		t.Errorf("--set path is relative to the working directory, resolved absolute: %+v", tr)
	}
	// The resolved scenario names the same file from anywhere.
	out, _ := sc.YAML()
	t.Chdir(dir)
	if again, err := Parse(filepath.Join(dir, "sub", "scenario.yaml"), out, nil); err != nil || again.Workload.Trace.Path != sc.Workload.Trace.Path {
		t.Errorf("resolved scenario loaded elsewhere: %v", err)
	}
	// An OTLP JSON file is otel by its contents, whatever its name; the
	// resolved scenario says so, with its shared_prefix.
	os.WriteFile(filepath.Join(dir, "spans.json"), []byte(`{"resourceSpans":[]}`+"\n"), 0o644)
	sc, err = Parse(file, []byte("workload: {trace: {path: spans.json, shared_prefix: 32}}\n"), nil)
	if err != nil || sc.Workload.Trace.Format != "otel" || sc.Workload.Trace.SharedPrefix != 32 {
		t.Fatalf("otel by content: %v %+v", err, sc.Workload.Trace)
	}
	if out, _ := sc.YAML(); !strings.Contains(string(out), "format: otel") || !strings.Contains(string(out), "shared_prefix: 32") {
		t.Errorf("resolved otel scenario:\n%s", out)
	}
	if out, _ := Parse(file, []byte(y), nil); out != nil {
		if y, _ := out.YAML(); strings.Contains(string(y), "shared_prefix") {
			t.Errorf("shared_prefix written for a trace of another format:\n%s", y)
		}
	}
	t.Setenv("KVSIM_TRACES", "/data/traces")
	sc, _ = Parse(file, []byte("workload: {trace: {path: $KVSIM_TRACES/c.jsonl}}\n"), nil)
	if sc.Workload.Trace.Path != "/data/traces/c.jsonl" {
		t.Errorf("expanded: %s", sc.Workload.Trace.Path)
	}
	os.Unsetenv("KVSIM_TRACES")
	if _, err := Parse(file, []byte("workload: {trace: {path: \"${KVSIM_TRACES}/c.jsonl\"}}\n"), nil); err == nil ||
		!strings.Contains(err.Error(), "$KVSIM_TRACES, which is not set") {
		t.Errorf("unset KVSIM_TRACES: %v", err)
	}
}

// TestResolvedRoundTrip: the resolved YAML of every example and contract
// scenario parses again to the same resolved YAML.
func TestResolvedRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	contract, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	if len(contract) < 4 {
		t.Errorf("%d contract scenarios", len(contract))
	}
	t.Setenv("KVSIM_TRACES", "/traces")
	for _, f := range append(files, contract...) {
		sc, err := Load(f, nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		a, _ := sc.YAML()
		again, err := Parse(f, a, nil)
		if err != nil {
			t.Errorf("%s resolved does not parse: %v\n%s", f, err, a)
			continue
		}
		if b, _ := again.YAML(); string(a) != string(b) {
			t.Errorf("%s: resolved YAML changes on a second pass", f)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"0", 0}, {"250ms", 250e6}, {"1h30m", 5400e9}, {"0.5ns", 0.5}, {"60us", 60e3}, {"60µs", 60e3}, {"-1s", -1e9}, {"1.5s", 1.5e9}} {
		if got, err := ParseDuration(c.in); err != nil || got != c.want {
			t.Errorf("%q: %g, %v; want %g", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "5", "ms", "5 ms", "5d", "1.2.3s", "-"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzParse: no input makes the loader panic, and anything it accepts
// renders to YAML that it accepts again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base), "cluster.workers=3")
	f.Add(defaultYAML, "events=[{at: 1s, add: 1}]")
	f.Add([]byte("events:\n  - {at: 1s, drain: [0]}\n"+base), "router.hints.mode=move")
	f.Add([]byte("a: [\n"), "x")
	f.Fuzz(roundTrip)
}

// FuzzSet: no --set override of a valid scenario makes the loader panic; a
// refused one is an InputError, and an accepted one renders to YAML the
// loader accepts again.
func FuzzSet(f *testing.F) {
	for _, s := range []string{"cluster.workers=3", "events=[{at: 1s, add: 1}]", "events[0].at=2s",
		"router.hints={enabled: false}", "kvcr.latency=1.5ms", "a.b.c=", "=1", "cluster=[1", "workload.trace.path=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) { roundTrip(t, []byte(base), set) })
}

// roundTrip: the loader refuses data with set with an InputError or
// accepts it, and then accepts the YAML it renders.
func roundTrip(t *testing.T, data []byte, set string) {
	sc, err := Parse("f.yaml", data, []string{set})
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("error is not an InputError: %v", err)
		}
		return
	}
	out, err := sc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("f.yaml", out, nil); err != nil {
		t.Fatalf("resolved scenario rejected: %v\n%s", err, out)
	}
}
