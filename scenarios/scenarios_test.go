package scenarios

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvsim/kvsim/des"
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
		{base + "kvcr: {bandwidth_gbps: -1}\n", nil, `s.yaml:6: kvcr.bandwidth_gbps: must be at least 0.001 GB/s (1 MB/s), got -1`},
		{base + "kvcr: {bandwidth_gbps: 1e-12}\n", nil, `s.yaml:6: kvcr.bandwidth_gbps: must be at least 0.001 GB/s (1 MB/s), got 1e-12`},
		{base + "kvcr: {ingress_gbps: 0.0001}\n", nil, `s.yaml:6: kvcr.ingress_gbps: must be 0 (unbounded) or at least 0.001 GB/s (1 MB/s), got 0.0001`},
		{base + "  g2: {d2h_gbps: 1e-12}\n", nil, `s.yaml:6: cluster.g2.d2h_gbps: must be 0 (instant) or at least 0.001 GB/s (1 MB/s), got 1e-12`},
		{base + "  g2: {h2d_gbps: -1}\n", nil, `s.yaml:6: cluster.g2.h2d_gbps: must be 0 (instant) or at least 0.001 GB/s (1 MB/s), got -1`},
		{base + "kvcr: {descriptors_per_block: 0}\n", nil, `s.yaml:6: kvcr.descriptors_per_block: must be at least 1, got 0`},
		{base + "kvcr: {loss_notice: -1ms}\n", nil, `s.yaml:6: kvcr.loss_notice: must be at least 0s, got -1ms`},
		{base + "kvcr: {operation_timeout: 1s, abandon_timeout: 1500ms}\n", nil,
			`s.yaml:6: kvcr.abandon_timeout: must be at least 2 x operation_timeout (2s), got 1.5s`},
		// 2 x 1281025h overflows a time: it once passed as negative.
		{base + "kvcr: {operation_timeout: 1281025h, abandon_timeout: 1s}\n", nil,
			`s.yaml:6: kvcr.operation_timeout: must be at most half of virtual time (1281023h53m38.427387903s), so that abandon_timeout, at least twice it, fits; got 1281025h0m0s`},
		{base + "kvcr: {latency: 5 ms}\n", nil, `kvcr.latency: want a duration like 250ms, got "5 ms"`},
		{base + "kvcr: {latency: 4000000h}\n", nil, `kvcr.latency: duration "4000000h" overflows virtual time`},
		{base + "events:\n  - {at: 1s, drain: [5]}\n", nil, `s.yaml:7: events[0].drain[0]: worker 5 does not exist`},
		{base + "events:\n  - {at: 1s, drain: [0, 1]}\n", nil, `events[0].drain: drains every worker`},
		{base + "events:\n  - {at: -1s, add: 1}\n", nil, `events[0].at: must not be negative`},
		{base + "events:\n  - {drain: [1]}\n", nil, `s.yaml:7: events[0].at: required`},
		{base + "events:\n  - {slow: {workers: [1], factor: 2}, origin: chaos}\n", nil, `s.yaml:7: events[0].at: required`},
		{base + "events:\n  - {at: 1s, drain: {count: 0}}\n", nil, `s.yaml:7: events[0].drain.count: must be at least 1, got 0`},
		{base + "events:\n  - {at: 1s, drain: {count: 1, pick: hottest}}\n", nil, `events[0].drain.pick: "hottest" is not one of busiest, idlest, most_cached, random, highest_id, least_cached, fewest_unique`},
		{base + "events:\n  - {at: 1s, drain: {count: 1, pik: random}}\n", nil, `s.yaml:7: events[0].drain.pik: unknown key (did you mean "pick"?)`},
		{base + "events:\n  - {at: 1s, remove: {count: 3}}\n", nil, `events[0].remove.count: picks 3 workers; only 2 are neither drained nor removed at 1s`},
		{base + "events:\n  - {at: 1s, drain: {count: 2}}\n", nil, `events[0].drain: drains every worker`},
		{base + "events:\n  - {at: 1s, drain: {count: 1}}\n  - {at: 2s, drain: [0]}\n", nil, `events[1].drain: drains every worker`},
		{base + "events:\n  - {at: 1s, drain: 3}\n", nil, `events[0].drain: want a list of worker ids or a pick such as {count: 4, pick: busiest}, got "3"`},
		{base + "events:\n  - {at: 1s, drain: [0]}\n", []string{"events[0].drain.count=1"}, `--set: events[0].drain.count: "count" is not an index of a list of 1`},
		{base + "events:\n  - {at: 1s, add: 1, drain: [0]}\n", nil, `events[0]: set exactly one of drain, remove, add, link, slow, pull_errors, notices, down`},
		{base + "events:\n  - {at: 1s, add: 1, evacuate: {blocks: 5}}\n", nil, `s.yaml:7: events[0].evacuate: only applies to drain`},
		{base + "events:\n  - {at: 1s, drain: [0], prewarm: {blocks: 5}}\n", nil, `s.yaml:7: events[0].prewarm: only applies to add`},
		{base + "events:\n  - {at: 1s, drain: [0], evacuate: {blocks: 0}}\n", nil, `s.yaml:7: events[0].evacuate.blocks: must be at least 1, got 0`},
		{base + "events:\n  - {at: 1s, drain: [0], evacuate: {blocks: 5, mode: swap}}\n", nil, `events[0].evacuate.mode: "swap" is not one of copy, move`},
		{base + "events:\n  - {at: 1s, add: 1, prewarm: {blocks: 5, mode: move}}\n", nil, `events[0].prewarm.mode: a prewarm copies (kv.prefetch); only evacuate takes a mode`},
		{base + "kvcr: {enabled: false}\nevents:\n  - {at: 1s, add: 1, prewarm: {blocks: 5}}\n", nil, `events[0].prewarm: needs kvcr.enabled: true`},
		{base + "  g2: {capacity_blocks: 0}\nevents:\n  - {at: 1s, drain: [0], evacuate: {blocks: 5}}\n", nil, `events[0].evacuate: needs G2`},
		{base + "kvcr: {background_inflight: -1}\n", nil, `s.yaml:6: kvcr.background_inflight: must be at least 0, got -1`},
		// faults (docs/faults.md)
		{base + "events:\n  - {at: 1s, link: {workers: [0], factor: 1.5}}\n", nil, `s.yaml:7: events[0].link.factor: must be in [0, 1] (0 is down), got 1.5`},
		{base + "events:\n  - {at: 1s, for: 10ms, link: {workers: [0], factor: 1e-9}}\n", nil,
			`s.yaml:7: events[0].link.factor: must be 0 (down) or at least 0.001, got 1e-09: a link that slow is down in all but name, its writes taking days`},
		{base + "events:\n  - {at: 1s, link: {factor: 0}}\n", nil, `events[0].link.workers: missing: name the workers as a drain does`},
		{base + "events:\n  - {at: 1s, slow: {workers: [9], factor: 2}}\n", nil, `events[0].slow.workers[0]: worker 9 does not exist at 1s`},
		{base + "events:\n  - {at: 1s, slow: {workers: [0], factor: 0.5}}\n", nil, `events[0].slow.factor: must be in [1, 1e+06]`},
		{base + "events:\n  - {at: 1s, slow: {workers: [0], factor: 1e30}}\n", nil, `s.yaml:7: events[0].slow.factor: must be in [1, 1e+06] (a pass takes factor times as long; slower is down in all but name: use down), got 1e+30`},
		{base + "events:\n  - {at: 1s, pull_errors: {rate: 2}}\n", nil, `events[0].pull_errors.rate: must be a probability in [0, 1], got 2`},
		{base + "events:\n  - {at: 1s, notices: {delay: 1s, lost: true}}\n", nil, `events[0].notices: set one of delay and lost: true, not both`},
		{base + "events:\n  - {at: 1s, notices: {}}\n", nil, `events[0].notices: set delay (a duration above 0) or lost: true`},
		{base + "events:\n  - {at: 1s, down: {workers: [0], g2: gone}}\n", nil, `events[0].down.g2: "gone" is not one of kept, lost`},
		{base + "events:\n  - {at: 1h, for: 2562047h, slow: {workers: [0], factor: 2}}\n", nil,
			`s.yaml:7: events[0].for: the window would end past the end of virtual time (about 292 years), at 1h0m0s + 2562047h0m0s; without for, the fault lasts to the end of the run`},
		{base + "events:\n  - {at: 1s, for: 1s, drain: [0]}\n", nil, `s.yaml:7: events[0].for: only applies to a fault (link, slow, pull_errors, notices, down)`},
		{base + "events:\n  - {at: 1s, down: {workers: [0]}, on_remove: migrate}\n", nil, `events[0].on_remove: migrate needs cluster.migration_limit of at least 1`},
		{base + "events:\n  - {at: 1s, drain: [0], on_remove: fail}\n", nil, `events[0].on_remove: only applies to remove, down, and a drain with a drain_timeout`},
		{base + "  migration_limit: -1\n", nil, `cluster.migration_limit: must be at least 0, got -1`},
		{base + "kvcr: {enabled: false}\nevents:\n  - {at: 1s, link: {workers: [0]}}\n", nil, `events[0].link: needs kvcr.enabled: true (it acts on KVCR links)`},
		{base + "chaos: {from: 2s, to: 1s}\n", nil, `chaos.to: must be after chaos.from (2s), got 1s`},
		{base + "chaos: {to: 1s, for: {min: 2s, max: 1s}}\n", nil, `chaos.for.max: must be at least chaos.for.min (2s), got 1s`},
		{base + "kvcr: {background_timeout: -1ms}\n", nil, `s.yaml:6: kvcr.background_timeout: must be at least 0s, got -1ms`},
		{base + "events:\n  - {at: 1s, remove: [1]}\n  - {at: 2s, drain: [1]}\n", nil, `events[1].drain[0]: worker 1 does not exist or is already drained or removed`},
		{base + "  engine: {timing: {model: fixed, mfu: 0.5}}\n", nil, `s.yaml:6: cluster.engine.timing.mfu: belongs to timing model roofline, not fixed`},
		{base + "  engine: {timing: {model: fixed, gpu: h100}}\n", nil, `s.yaml:6: cluster.engine.timing.model_preset: missing: a timing model that names its gpu names its model too`},
		{base + "  engine: {timing: {model: linear, model_preset: llama-2-7b}}\n", nil, `s.yaml:6: cluster.engine.timing.gpu: missing: a timing model that names its model`},
		{base + "  engine: {timing: {model: polynomial, tp: 2}}\n", nil, `cluster.engine.timing.gpu: missing`},
		{base + "  engine: {timing: {model_preset: llama-2-7b, model_config: c.json}}\n", nil, `s.yaml:6: cluster.engine.timing.model_config: set only one of model_preset and model_config`},
		{base + "  engine: {timing: {model_config: none.json}}\n", nil, `s.yaml:6: cluster.engine.timing.model_config: cannot read model config: open `},
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
		{base + "router: {temperature: -0.5}\n", nil, `s.yaml:6: router.temperature: must not be negative, got -0.5`},
		{base + "router: {policy: least_loaded, temperature: 0.5}\n", nil,
			`s.yaml:6: router.temperature: applies only to router.policy kv_aware (a softmax over its costs), not least_loaded; leave it 0`},
		// workload.envelope: lines 5 and on are its segments
		{envelope + "    - {for: 1m, rate: 2}\n    - {for: 0s, rate: 1}\n", nil, `s.yaml:6: workload.envelope[1].for: must be at least 1ns, got 0s`},
		{envelope + "    - {for: 1m, rate: -0.5}\n", nil, `s.yaml:5: workload.envelope[0].rate: must be positive, got -0.5`},
		{envelope + "    - {for: 1m, rate: 0}\n", nil, `s.yaml:5: workload.envelope[0].rate: must be positive, got 0`},
		{envelope + "    - {for: 1m, rate: .inf}\n", nil, `s.yaml:5: workload.envelope[0].rate: want a finite number, got ".inf"`},
		{envelope + "    - {for: 1m}\n", nil, `s.yaml:5: workload.envelope[0]: missing rate: a segment is {for: DURATION, rate: FACTOR}`},
		{envelope + "    - {}\n", nil, `s.yaml:5: workload.envelope[0]: missing for and rate`},
		{envelope + "    - {for: 1m, rat: 2}\n", nil, `s.yaml:5: workload.envelope[0].rat: unknown key (did you mean "rate"?)`},
		{envelope + "    - 2\n", nil, `s.yaml:5: workload.envelope[0]: want a mapping of keys, got "2"`},
		{envelope + "    - {for: -1m, rate: 1}\n", nil, `s.yaml:5: workload.envelope[0].for: must be at least 1ns, got -1m0s`},
		{envelope + "    []\n", nil, `s.yaml:5: workload.envelope: empty: give at least one segment {for: DURATION, rate: FACTOR}, or leave the key out`},
		{envelope + "    {for: 1m, rate: 2}\n", nil, `s.yaml:5: workload.envelope: want a list, got a mapping`},
		{base, []string{"workload.envelope=[{for: 1m, rate: 0}]"}, `--set: workload.envelope[0].rate: must be positive, got 0`},
		{"name: [1\n", nil, `s.yaml:1: malformed YAML`},
		{"cluster:\n\tworkers: 1\n", nil, `s.yaml:2: malformed YAML`},
		{base, []string{"cluster.workers=0"}, `--set: cluster.workers: must be at least 1, got 0`},
		// the file's event, made invalid by a --set inside it: named at the event's line, with the --set
		{base + "events:\n  - {at: 1s, drain: [0]}\n", []string{"events[0].slow.factor=2"},
			`s.yaml:7: events[0]: set exactly one of drain, remove, add, link, slow, pull_errors, notices, down (with --set events[0].slow.factor)`},
		{base, []string{"planner={policy: load, load: {kv_down: 0.9}}"}, `--set: planner.load.kv_down: want 0 <= kv_down < kv_up <= 1 (G1 usage), got kv_down 0.9 and kv_up 0.8`},
		{base, []string{"planner={policy: load, load: {kv_up: 0.2}}"}, `--set: planner.load.kv_up: want 0 <= kv_down < kv_up <= 1`},
		{base, []string{"planner={policy: load, load: {queue_down: 9}}"}, `--set: planner.load.queue_down: must be below queue_up (5), got 9`},
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

// envelope is a scenario whose workload.envelope's segments follow, from
// line 5.
const envelope = "name: t\nworkload:\n  synthetic: {requests: 10, rate: 1}\n  envelope:\n"

// malformed are YAML documents with a syntax error, each on the line its
// name gives; yaml.v3 names lines 2, 2, 2, 1, 3 and none for the first six,
// and the right ones for the last two.
var malformed = []struct {
	name, yaml string
	line       int
}{
	{"unclosed flow mapping on line 3", "name: x\nseed: 1\ncluster: {workers: 4\n", 3},
	{"a list item in a mapping on line 3", "name: x\nseed: 1\n- a\n", 3},
	{"a tab indenting line 3", "name: x\nseed: 1\n\tcluster: 4\n", 3},
	{"a flow mapping missing a comma at the end of line 3", "name: x\ncluster: {workers: 4,\n  engine: {block_size: 16}\n  g2: {}}\n", 3},
	{"a nested key out of line on line 4", "name: x\ncluster:\n  workers: 4\n bad: 1\nrouter: {}\n", 4},
	{"an unknown alias on line 3", "name: x\nseed: 1\ncluster: *a\n", 3},
	{"an unclosed quote on line 3", "name: x\nseed: 1\ncluster: \"abc\n\n\n", 3},
	{"an unclosed flow sequence on line 1", "name: [1\n", 1},
}

// TestYAMLErrorLine: a YAML syntax error is reported at the line it is on,
// not at the line yaml.v3 names (one before, or where the enclosing
// construct starts).
func TestYAMLErrorLine(t *testing.T) {
	for _, c := range malformed {
		_, err := Parse("s.yaml", []byte(c.yaml), nil)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Line != c.line || !strings.Contains(err.Error(), "malformed YAML") {
			t.Errorf("%s: %v, want line %d", c.name, err, c.line)
		}
	}
}

// TestDecodeErrorOnce: a key that fails to decode is left at its zero
// value; validation does not blame it again. planner.interval "1" is not a
// duration: one error, not a second "must be at least 1ms, got 0s".
func TestDecodeErrorOnce(t *testing.T) {
	_, err := Parse("s.yaml", []byte("name: a\nworkload: {synthetic: {requests: 5}}\nplanner: {policy: load, interval: 1}\n"), nil)
	if err == nil || strings.Count(err.Error(), "planner.interval") != 1 || !strings.Contains(err.Error(), `s.yaml:3: planner.interval: want a duration like 250ms, got "1"`) {
		t.Errorf("error %v, want one, of planner.interval's duration", err)
	}
}

// TestSecondDocument: a scenario file holds one YAML document; another
// that holds anything is refused at its first line (yaml.Unmarshal would
// drop it without a word), a malformed one as malformed YAML; empty ones
// (a "---" at the end, a comment, null) are not.
func TestSecondDocument(t *testing.T) {
	const one = "name: a\nworkload: {synthetic: {requests: 5}}\n"
	for _, c := range []struct {
		yaml string
		line int    // 0: parses
		want string // the error's text
	}{
		{one + "---\nname: b\n", 4, "a second YAML document"},
		{one + "---\n---\n- x\n", 5, "a second YAML document"},
		{one + "---\nname: [\n", 4, "malformed YAML"},
		{one + "---\n", 0, ""},
		{one + "---\n# a comment\n", 0, ""},
		{one + "--- ~\n...\n", 0, ""},
		{"---\n" + one, 0, ""},
	} {
		_, err := Parse("s.yaml", []byte(c.yaml), nil)
		var ie *InputError
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case c.line > 0 && (!errors.As(err, &ie) || ie.Line != c.line || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want line %d: %s", c.yaml, err, c.line, c.want)
		}
	}
}

// durationKeys lists the dotted keys of the Duration and PerToken fields of
// the struct type t, a list's as its element 0's.
func durationKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key, ft := join(prefix, name), t.Field(i).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == durationType || ft == perTokenType:
			keys = append(keys, key)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, durationKeys(ft.Elem(), key+"[0]")...)
		case ft.Kind() == reflect.Struct:
			keys = append(keys, durationKeys(ft, key)...)
		}
	}
	return keys
}

// TestDurationErrors: the error of every duration key, found in the
// Scenario type so that a new one is covered, gives the value -1500us as a
// duration, -1.5ms, never as nanoseconds (-1500000, -1.5e+06).
func TestDurationErrors(t *testing.T) {
	keys := durationKeys(reflect.TypeOf(Scenario{}), "")
	if len(keys) < 20 { // think_time, envelope's for, 7 of timing, event_delay, 6 of kvcr, 3 of events, sample_interval
		t.Errorf("%d duration keys, want at least 20: %v", len(keys), keys)
	}
	for _, key := range keys {
		sets := []string{key + "=-1500us"}
		leaf := key[strings.LastIndex(key, ".")+1:]
		switch {
		case strings.HasPrefix(key, "cluster.engine.timing."):
			for _, m := range TimingModels {
				if slices.Contains(timingKeys[m], leaf) {
					sets = append(sets, "cluster.engine.timing.model="+string(m), "cluster.engine.kv_bytes_per_token=1000")
				}
			}
		case strings.HasPrefix(key, "events[0]."):
			ev := "{at: 1s, add: 1}"
			switch leaf {
			case "drain_timeout":
				ev = "{at: 1s, drain: [0]}"
			case "for":
				ev = "{at: 1s, slow: {workers: [0], factor: 2}}"
			case "delay":
				ev = "{at: 1s, notices: {lost: false}}"
			}
			sets = append([]string{"events=[" + ev + "]"}, sets...)
		case strings.HasPrefix(key, "workload.envelope[0]."):
			sets = append([]string{"workload.envelope=[{for: 1s, rate: 1}]"}, sets...)
		}
		_, err := Parse("s.yaml", []byte(base), sets)
		var msg string
		for line := range strings.Lines(fmt.Sprint(err)) {
			if strings.HasPrefix(line, "--set: "+key+": ") {
				msg = line
			}
		}
		if !strings.Contains(msg, "got -1.5ms") || strings.Contains(msg, "1500000") || strings.Contains(msg, "e+06") {
			t.Errorf("%s=-1500us: %v", key, err)
		}
	}
}

// TestFlagFrom: the errors of the overrides from FlagFrom's index on name
// its flag, those before it --set; a path either gives resolves against the
// working directory, not the scenario file's folder.
func TestFlagFrom(t *testing.T) {
	vary := FlagFrom("--vary", 1)
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"seed=3", "cluster.workers=0"}, "--vary: cluster.workers: must be at least 1, got 0"},
		{[]string{"cluster.workers=0", "seed=3"}, "--set: cluster.workers: must be at least 1, got 0"},
		{[]string{"seed=3", "cluster.wrkers=2"}, `--vary: cluster.wrkers: unknown key (did you mean "workers"?)`},
		{[]string{"seed=3", "cluster.workers"}, `--vary: cluster.workers: want key=value, got "cluster.workers"`},
		{[]string{"seed=3", "events=[{at: 1s, drain: [7]}]"}, "--vary: events[0].drain[0]: worker 7 does not exist"},
	} {
		if _, err := Parse("s.yaml", []byte(base), c.sets, vary); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %s", c.sets, err, c.want)
		}
	}
	sc, err := Parse(filepath.Join("dir", "s.yaml"), []byte(base), []string{"seed=3", "workload={trace: {path: t.jsonl}}"}, vary)
	if want, _ := filepath.Abs("t.jsonl"); err != nil || sc.Workload.Trace.Path != want {
		t.Errorf("a trace path from --vary: %v, want %s", err, want)
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
	t.Setenv("KVSIM_VLLM_TRACES", "/vllm-traces")
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

// TestSLOOnlyRoundTrip: a planner with an SLO and no policy (a fixed
// fleet measured against the SLO) resolves to YAML that parses again, with
// DESIGN.md's max_workers 64; a planner block alone measures goodput
// against DESIGN.md's SLO, 500 ms and 50 ms, and slo: null turns it off;
// max_workers below min_workers is an error.
func TestSLOOnlyRoundTrip(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(base), []string{"planner={slo: {ttft: 300ms, itl: 40ms}}"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := sc.YAML()
	again, err := Parse("s.yaml", a, nil)
	if err != nil || again.Planner.MaxWorkers != 64 || again.Planner.SLO.TTFT != Duration(300*des.Millisecond) {
		t.Errorf("resolved parses to %+v, %v\n%s", again.Planner, err, a)
	}
	if sc, err := Parse("s.yaml", []byte(base), []string{"planner={policy: load}"}); err != nil || !sc.HasPlanner() ||
		*sc.Planner.SLO != (SLO{TTFT: Duration(500 * des.Millisecond), ITL: Duration(50 * des.Millisecond)}) {
		t.Errorf("planner={policy: load}: %+v, %v", sc.Planner, err)
	}
	if sc, err := Parse("s.yaml", []byte(base), []string{"planner={policy: load, slo: null}"}); err != nil || sc.Planner.SLO != nil {
		t.Errorf("slo: null: %+v, %v", sc.Planner, err)
	}
	if _, err := Parse("s.yaml", a, []string{"planner.policy=load", "planner.max_workers=0"}); err == nil || !strings.Contains(err.Error(), "planner.max_workers: must be at least min_workers (1), got 0") {
		t.Errorf("with a policy and max_workers 0: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"0", 0}, {"250ms", 250e6}, {"1h30m", 5400e9}, {"0.5ns", 0.5}, {"60us", 60e3}, {"60µs", 60e3}, {"60μs", 60e3}, {"-1s", -1e9},
		{"1.5s", 1.5e9}, {"+5s", 5e9}, {"-0", 0}, {"+0", 0}} {
		if got, err := ParseDuration(c.in); err != nil || got != c.want {
			t.Errorf("%q: %g, %v; want %g", c.in, got, err, c.want)
		}
		if d, err := time.ParseDuration(c.in); c.in != "0.5ns" && (err != nil || float64(d) != c.want) {
			t.Errorf("%q: Go reads %v, %v", c.in, d, err) // the cases Go reads whole read the same
		}
	}
	for _, bad := range []string{"", "5", "ms", "5 ms", "5d", "1.2.3s", "-", "+", "+-1s", "--1s"} {
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
	f.Add([]byte("events:\n  - {at: 1s, drain: {count: 1, pick: random}}\n"+base), "events[0].drain.count=1")
	f.Add([]byte("events:\n  - {at: 1s, drain: [0], evacuate: {blocks: 9, mode: copy}}\n  - {at: 2s, add: 1, prewarm: {blocks: 3}}\n"+base), "kvcr.background_inflight=0")
	f.Add([]byte("chaos: {from: 1s, to: 10s, rates: {slow: 360, down: 360}, pull_errors: 0.3}\n"+base), "chaos.rates.link=1e12")
	f.Add([]byte("a: [\n"), "x")
	for _, c := range malformed {
		f.Add([]byte(c.yaml), "seed=2")
	}
	f.Fuzz(roundTrip)
}

// FuzzSet: no --set override of a valid scenario makes the loader panic; a
// refused one is an InputError, and an accepted one renders to YAML the
// loader accepts again.
func FuzzSet(f *testing.F) {
	for _, s := range []string{"cluster.workers=3", "events=[{at: 1s, add: 1}]", "events[0].at=2s",
		"router.hints={enabled: false}", "kvcr.latency=1.5ms", "a.b.c=", "=1", "cluster=[1", "workload.trace.path=x",
		"cluster.engine.timing={model: fixed, prefill: 1s, decode: 1s, gpu: h100, model_preset: llama-2-7b}",
		"cluster.engine.timing={model: linear, base: 1ms, gpu: a100, model_preset: mixtral-8x7b, tp: 4}",
		"cluster.engine.timing.model_config=../engine/testdata/models/qwen3-32b.json",
		"workload.envelope=[{for: 1m, rate: 0.25}, {for: 90s, rate: 3}]", "workload.envelope[0].rate=2",
		"chaos={to: 1s, rates: {down: 1e12}}", "chaos={to: 10s, rates: {slow: 360}, pull_errors: 1}"} {
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

// TestHardwareWithEveryModel: a timing model other than roofline that names
// the hardware gets kv_bytes_per_token, max_model_len and gpu_blocks from
// it as roofline does, and passes the physics check when it is slower
// than the hardware. llama-2-7b on one h100: 524,288 B a token,
// max_model_len 4096, (0.9 x 80e9 - 13.48e9) / (16 x 524,288) = 6976.1:
// 6976 blocks. A fixed 1 s pass is above every bound (the largest, a
// 4096-token prefill, is 60.3 ms: engine.TestBound).
func TestHardwareWithEveryModel(t *testing.T) {
	y := base + "  engine: {timing: {model: fixed, prefill: 1s, decode: 1s, gpu: h100, model_preset: llama-2-7b}}\n"
	sc, err := Parse("s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Cluster.Engine
	if e.KVBytesPerToken != 524288 || e.MaxModelLen != 4096 || e.GPUBlocks != 6976 || e.Timing.TP != 1 || sc.Cluster.G2.CapacityBlocks != 4*6976 {
		t.Errorf("engine %+v", e)
	}
	if _, m, tp, ok := sc.Hardware(); !ok || m.Name != "llama-2-7b" || tp != 1 {
		t.Errorf("hardware %v %d %v", m, tp, ok)
	}
	out, _ := sc.YAML()
	if !strings.Contains(string(out), "timing: {model: fixed, prefill: 1s, decode: 1s, gpu: h100, model_preset: llama-2-7b, tp: 1}") {
		t.Errorf("resolved:\n%s", out)
	}
	// Without hardware keys nothing changes: kv_bytes_per_token is
	// required and gpu_blocks defaults to 16384.
	sc, err = Parse("s.yaml", []byte(base+"  engine: {kv_bytes_per_token: 1000, timing: {model: fixed}}\n"), nil)
	if err != nil || sc.Cluster.Engine.GPUBlocks != 16384 || sc.Cluster.Engine.MaxModelLen != 0 {
		t.Errorf("fixed without hardware: %v %+v", err, sc.Cluster.Engine)
	}
	if _, _, _, ok := sc.Hardware(); ok {
		t.Error("names hardware")
	}
	if out, _ := sc.YAML(); strings.Contains(string(out), "gpu:") {
		t.Errorf("resolved without hardware:\n%s", out)
	}
}

// TestModelConfig: model_config reads a Hugging Face config.json, relative
// to the scenario file (to the working directory from --set), absolute
// once resolved. Mixtral-8x7B (engine/testdata/models) on 2 x h100:
// 46,702,792,704 parameters x 2 B = 93.41e9 B of weights, 131,072 KV bytes
// a token; (0.9 x 160e9 - 93.405585408e9) / (16 x 131,072) = 24125.6:
// 24125 blocks. Active parameters: an expert is 3 x 4096 x 14336 =
// 176,160,768 parameters, 32 layers x 8 of them 45,097,156,608, so the
// shared weights are 46,702,792,704 - 45,097,156,608 = 1,605,636,096; a
// token uses 2 experts a layer, 32 x 2 x 176,160,768 = 11,274,289,152,
// together 12,879,925,248.
func TestModelConfig(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "engine", "testdata", "models", "mixtral-8x7b.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "models"), 0o755)
	cfg := filepath.Join(dir, "models", "mixtral.json")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.yaml")
	y := base + "  engine: {timing: {model_config: models/mixtral.json, tp: 2}}\n"
	sc, err := Parse(file, []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Cluster.Engine
	if e.Timing.ModelConfig != cfg || e.Timing.ModelPreset != "" || e.KVBytesPerToken != 131072 || e.MaxModelLen != 32768 || e.GPUBlocks != 24125 {
		t.Errorf("engine %+v", e)
	}
	if _, m, _, _ := sc.Hardware(); m.Params != 46_702_792_704 || m.ActiveParams != 12_879_925_248 || m.Experts != 8 {
		t.Errorf("model %+v", m)
	}
	out, _ := sc.YAML()
	t.Chdir(t.TempDir())
	again, err := Parse(filepath.Join("elsewhere", "s.yaml"), out, nil)
	if err != nil || again.Cluster.Engine.Timing.ModelConfig != cfg || again.Cluster.Engine.GPUBlocks != 24125 {
		t.Errorf("resolved scenario loaded elsewhere: %v\n%s", err, out)
	}
	// From --set: relative to the working directory.
	t.Chdir(dir)
	sc, err = Parse(filepath.Join(dir, "sub", "s.yaml"), []byte(base), []string{"cluster.engine.timing.model_config=models/mixtral.json", "cluster.engine.timing.tp=2"})
	if err != nil || sc.Cluster.Engine.Timing.ModelConfig != cfg {
		t.Errorf("--set: %v", err)
	}
}

// TestPerTokenRoundTrip: a per-token cost renders to YAML that parses back
// to the same value, however small or large its fraction (no exponent).
func TestPerTokenRoundTrip(t *testing.T) {
	for _, v := range []float64{0.00001, 0.5, 60_000, 1_234_567.8, 7.25e9 + 0.5} {
		out, err := PerToken(v).MarshalYAML()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseDuration(out.(string))
		if err != nil || got != v {
			t.Errorf("%g ns renders %q, parses to %g (%v)", v, out, got, err)
		}
	}
}

// TestSelection: drain and remove take a list of ids or a pick; the pick
// defaults to busiest; --set reaches into a pick; the resolved YAML reads
// back the same.
func TestSelection(t *testing.T) {
	y := base + "  workers: 8\nevents:\n  - {at: 1s, drain: {count: 2}}\n  - {at: 2s, remove: {count: 1, pick: random}}\n  - {at: 3s, drain: [7]}\n"
	y = strings.Replace(y, "  workers: 2\n", "", 1)
	sc, err := Parse("s.yaml", []byte(y), []string{"events[0].drain.count=3", "events[0].drain.pick=most_cached"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{At: Duration(des.Second), Drain: &Selection{Count: 3, Pick: PickMostCached}, OnRemove: RemoveReroute},
		{At: Duration(2 * des.Second), Remove: &Selection{Count: 1, Pick: PickRandom}, OnRemove: RemoveReroute},
		{At: Duration(3 * des.Second), Drain: IDsOf(7), OnRemove: RemoveReroute},
	}
	if !reflect.DeepEqual(sc.Events, want) {
		t.Errorf("events %+v", sc.Events)
	}
	out, err := sc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"drain: {count: 3, pick: most_cached}", "remove: {count: 1, pick: random}", "drain: [7]"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("resolved YAML has no %q:\n%s", line, out)
		}
	}
	again, err := Parse("s.yaml", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Events, want) {
		t.Errorf("read back: %+v", again.Events)
	}
}

// TestEventWindow: report.event_window defaults to 3 minutes and must be
// positive: 0 is refused at its key, naming the bound (1ns), which is
// accepted.
func TestEventWindow(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(base), nil)
	if err != nil || sc.Report.EventWindow != Duration(3*des.Minute) {
		t.Fatalf("default: %v, %v", sc, err)
	}
	_, err = Parse("s.yaml", []byte(base), []string{"report.event_window=0s"})
	if want := "--set: report.event_window: must be at least 1ns, got 0s"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("0s: got %v, want %s", err, want)
	}
	if _, err := Parse("s.yaml", []byte(base), []string{"report.event_window=1ns"}); err != nil {
		t.Errorf("1ns refused: %v", err)
	}
}

// TestSelectionWrongKind: a drain that is neither a list nor a pick gets
// one error, its own, and none of the checks of a pick it is not.
func TestSelectionWrongKind(t *testing.T) {
	_, err := Parse("s.yaml", []byte(base+"events:\n  - {at: 1s, drain: [0]}\n"), []string{"events[0].drain=5"})
	want := `--set: events[0].drain: want a list of worker ids or a pick such as {count: 4, pick: busiest}, got "5"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestResolvedKeepsEvents: the resolved YAML keeps every key an event
// set (evacuate and prewarm once went missing, so a run's scenario.yaml
// replayed to another digest).
func TestResolvedKeepsEvents(t *testing.T) {
	y := base + "events:\n  - {at: 1s, drain: [0], drain_timeout: 2s, evacuate: {blocks: 9, mode: copy}}\n" +
		"  - {at: 2s, add: 1, startup: 1s, prewarm: {blocks: 3}}\n  - {at: 3s, remove: {count: 1, pick: idlest}, on_remove: fail}\n"
	sc, err := Parse("s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := sc.YAML()
	again, err := Parse("s.yaml", a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sc.Events, again.Events) {
		t.Errorf("events %+v\nresolved and parsed again %+v\n%s", sc.Events, again.Events, a)
	}
}

// TestBackgroundWithoutOrders: kvcr.background_timeout and
// background_inflight set to other than their defaults in a scenario whose
// events and planner neither evacuate nor prewarm change nothing, and say
// so at their lines; with an order, a planner's included, or at their
// defaults (as a resolved scenario writes them), they warn of nothing.
func TestBackgroundWithoutOrders(t *testing.T) {
	const nothing = "applies to request-independent pulls only, and neither an event nor the planner evacuates or prewarms: it changes nothing"
	drain := "events:\n  - {at: 1s, drain: [0]}\n"
	checkWarnings(t, "s.yaml", []warningCase{
		{base + "kvcr: {background_timeout: 30s, background_inflight: 0}\n" + drain,
			[]string{"s.yaml:6: kvcr.background_timeout: " + nothing, "s.yaml:6: kvcr.background_inflight: " + nothing}},
		{base + "kvcr:\n  background_inflight: 2\n", []string{"s.yaml:7: kvcr.background_inflight: " + nothing}},
		{base + "kvcr: {background_timeout: 0s, background_inflight: 1}\n" + drain, nil},
		{base + "kvcr: {background_timeout: 30s, background_inflight: 0}\nevents:\n  - {at: 1s, drain: [0], evacuate: {blocks: 9}}\n", nil},
		// a planner that evacuates or prewarms issues orders; one without a policy does not
		{base + "kvcr: {background_timeout: 30s}\nplanner: {policy: load, prewarm: {blocks: 9}}\n", nil},
		{base + "kvcr: {background_timeout: 30s}\nplanner: {policy: target, scale_in: {evacuate: {blocks: 9}}}\n", nil},
		{base + "kvcr: {background_timeout: 30s}\nplanner: {prewarm: {blocks: 9}}\n", []string{"s.yaml:6: kvcr.background_timeout: " + nothing}},
	})
}

// TestPlannerShiftsIDs: with a planner adding workers, an event naming
// an id only an add makes (2 on a 2-worker cluster) may act on one of the
// planner's: the scenario warns at that event's line. An id the scenario
// starts with (1), a pick, or no planner: no warning.
func TestPlannerShiftsIDs(t *testing.T) {
	const two = "name: s\nworkload: {synthetic: {requests: 5}}\ncluster: {workers: 2}\n"
	const shift = "s.yaml:6: events[1]: names a worker of id 2 or more, which only an add makes; the planner adds workers too, " +
		"and ids go in the order workers are added, so the id may be one of the planner's: pick by count (drain: {count: N, pick: ...}) to act on what is there"
	checkWarnings(t, "s.yaml", []warningCase{
		{two + "events:\n  - {at: 5s, add: 1}\n  - {at: 8s, drain: [2]}\nplanner: {policy: throughput}\n", []string{shift}},
		{two + "events:\n  - {at: 5s, add: 1}\n  - {at: 8s, drain: [1]}\nplanner: {policy: throughput}\n", nil},
		{two + "events:\n  - {at: 5s, add: 1}\n  - {at: 8s, drain: {count: 1, pick: idlest}}\nplanner: {policy: throughput}\n", nil},
		{two + "events:\n  - {at: 5s, add: 1}\n  - {at: 8s, drain: [2]}\n", nil},
	})
}

// TestNoOpFaults: a straggler of factor 1 and a link fault of factor 1
// change nothing, and say so at their lines; factors 2 and 0.5 do not
// warn.
func TestNoOpFaults(t *testing.T) {
	const kv = "kvcr: {enabled: true}\n"
	checkWarnings(t, "s.yaml", []warningCase{
		{base + "events:\n  - {at: 1s, slow: {workers: [0], factor: 1}}\n", []string{"s.yaml:7: events[0].slow.factor: 1 slows nothing: every pass takes as long as without the fault, which tests nothing"}},
		{base + kv + "events:\n  - {at: 1s, link: {workers: [0], factor: 1}}\n", []string{"s.yaml:8: events[0].link.factor: 1 runs the links at their full rate: the fault tests nothing"}},
		{base + "events:\n  - {at: 1s, slow: {workers: [0], factor: 2}}\n", nil},
		{base + kv + "events:\n  - {at: 1s, link: {workers: [0], factor: 0.5}}\n", nil},
	})
}

// TestEventKeysRoundTrip: every key of every kind of event, each at a
// value other than its default, survives the resolved YAML: the events
// parsed again equal the events parsed first. (A drain's on_remove, which
// says what becomes of the requests of a worker its drain_timeout removes,
// was once left out: the run's own scenario.yaml then replayed to another
// result.)
func TestEventKeysRoundTrip(t *testing.T) {
	events := `events=[
  {at: 1s, drain: [1], drain_timeout: 1ms, on_remove: fail, evacuate: {blocks: 10, mode: copy}},
  {at: 2s, drain: {count: 1, pick: busiest}, drain_timeout: 1s, on_remove: migrate},
  {at: 3s, remove: [2], on_remove: fail},
  {at: 4s, add: 2, startup: 5s, prewarm: {blocks: 7}},
  {at: 5s, for: 1s, down: {workers: [0], g2: lost}, startup: 2s, on_remove: fail},
  {at: 6s, for: 2s, link: {workers: [3], direction: ingress, factor: 0.5}},
  {at: 7s, for: 3s, slow: {workers: [3], factor: 2}}]`
	sc, err := Parse("s.yaml", []byte(base), []string{"cluster.workers=4", "cluster.migration_limit=1", events})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := sc.YAML()
	again, err := Parse("s.yaml", a, nil)
	if err != nil {
		t.Fatalf("resolved does not parse: %v\n%s", err, a)
	}
	if !reflect.DeepEqual(sc.Events, again.Events) {
		t.Errorf("events after the resolved YAML:\n%+v\nwant\n%+v\n%s", again.Events, sc.Events, a)
	}
}

// TestLateChaosOneWarning: of the events after the last arrival (4 s), a
// scripted one is named by its index, the faults chaos drew are counted in
// one warning at chaos.to: here 2 (at 6 s and 7 s; the one at 2 s is
// before), the first at 6 s.
func TestLateChaosOneWarning(t *testing.T) {
	sc, err := Parse("s.yaml", []byte(base+"chaos: {to: 10s, rates: {slow: 1}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := Duration(des.Second)
	sc.Events = []Event{{At: 5 * s, Add: 1}, {At: 2 * s, Origin: OriginChaos}, {At: 6 * s, Origin: OriginChaos}, {At: 7 * s, Origin: OriginChaos}}
	w := sc.LateEvents(4 * des.Second)
	if len(w) != 2 || !strings.Contains(w[0], "events[0].at: 5s is after the last arrival (4s)") ||
		!strings.Contains(w[1], "s.yaml:6: chaos.to: 2 faults chaos drew, the first at 6s, are after the last arrival (4s)") {
		t.Errorf("warnings %q", w)
	}
}

// warningCase is a scenario's text and the warnings it must give, in order.
type warningCase struct {
	yaml string
	want []string
}

// checkWarnings parses each case as the file named file and checks its
// warnings.
func checkWarnings(t *testing.T, file string, cases []warningCase) {
	t.Helper()
	for _, c := range cases {
		sc, err := Parse(file, []byte(c.yaml), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if w := sc.Warnings(); !slices.Equal(w, c.want) {
			t.Errorf("%q: warnings %q\nwant %q", c.yaml, w, c.want)
		}
	}
}
