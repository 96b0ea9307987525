package sim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// runWays runs sc pass by pass and with the decode fast-forward, with
// invariant checks, and fails unless the two agree on the digest, every
// request, pull, time-series and events row, every worker row, every
// counter and the summary (its event count and wall time aside). It returns the
// events each way fired.
func runWays(t *testing.T, sc *scenarios.Scenario) (slow, fast uint64) {
	t.Helper()
	var sinks [2]rowSink
	var res [2]*Result
	var errs [2]error
	check := true
	for i, pbp := range []bool{true, false} {
		res[i], errs[i] = Run(context.Background(), sc, Options{Sink: &sinks[i], Check: check, PassByPass: pbp})
		var ie *InvariantError
		if i == 0 && errors.As(errs[0], &ie) {
			// A model bug outside the fast-forward: the fast-forward must
			// break the same invariant; then the rows are compared unchecked.
			t.Logf("pass by pass: %v", errs[0])
			if _, err := Run(context.Background(), sc, Options{Check: true}); err == nil || err.Error() != errs[0].Error() {
				t.Errorf("fast-forward: %v", err)
			}
			check = false
			sinks[0] = rowSink{}
			res[0], errs[0] = Run(context.Background(), sc, Options{Sink: &sinks[0], PassByPass: true})
		}
		if errs[i] != nil {
			t.Fatalf("pass by pass %v: %v", pbp, errs[i])
		}
	}
	a, b := res[0], res[1]
	slow, fast = a.Summary.Events, b.Summary.Events
	if a.Summary.Digest != b.Summary.Digest {
		t.Errorf("digest %s pass by pass, %s fast-forward", a.Summary.Digest, b.Summary.Digest)
	}
	sa, sb := *a.Summary, *b.Summary
	sa.Events, sb.Events, sa.WallTimeS, sb.WallTimeS = 0, 0, 0, 0
	same := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s differ", what)
		}
	}
	ea, _ := json.Marshal(sa.EventRows) // a NaN, not equal to itself, is null here
	eb, _ := json.Marshal(sb.EventRows)
	same("event rows", string(ea), string(eb))
	sa.EventRows, sb.EventRows = nil, nil
	same("summaries", sa, sb)
	same("worker rows", a.Workers, b.Workers)
	same("counters", a.Counters, b.Counters)
	same("request rows", sinks[0].rows, sinks[1].rows)
	same("pull rows", sinks[0].pulls, sinks[1].pulls)
	if !slices.EqualFunc(a.Planner, b.Planner, sameDecision) {
		t.Errorf("planner rows differ")
	}
	if !reflect.DeepEqual(sinks[0].samples, sinks[1].samples) {
		for i := range min(len(sinks[0].samples), len(sinks[1].samples)) {
			if sinks[0].samples[i] != sinks[1].samples[i] {
				t.Errorf("sample %d: %+v pass by pass, %+v fast-forward", i, sinks[0].samples[i], sinks[1].samples[i])
				break
			}
		}
		t.Errorf("samples differ (%d and %d rows)", len(sinks[0].samples), len(sinks[1].samples))
	}
	return slow, fast
}

// TestStretchArrival: one worker, fixed timing (10 ms prefill, 5 ms
// decode, 15 ms both), requests 0-2 of 20 prompt tokens (2 blocks of 16
// each, room for 32 tokens) and 10 output tokens at 0 ms, request 3 of 16
// prompt tokens and 2 output tokens arriving during the stretch of 0-2's
// decode passes 10-15, ..., 50-55 ms (min(32-20, 10-1) = 9 passes).
//
// Arriving at 27 ms, 3 waits for the pass 25-30 ms to end: the stretch is
// settled with boundaries 15, 20 and 25 ms applied. 3's prompt pass with
// 0-2's decode runs 30-45 ms (first token 45 ms), its last token takes a
// new block, 45-50 ms; 0-2 then have 26 tokens computed and 3 to emit, a
// stretch of 3 passes to 65 ms.
//
// Arriving at 25 ms, the pass ending at 25 ms has ended (pass ends come
// before arrivals) but the next has not started (drive scans come after):
// 3 is scheduled at 25 ms, its prompt pass runs 25-40 ms, its last token
// 40-45 ms; 0-2 then have 25 computed and 4 to emit: 45-65 ms.
//
// Either way the worker starts 10 passes and is busy 65 ms, and both ways
// of running agree (runWays).
func TestStretchArrival(t *testing.T) {
	for _, c := range []struct {
		at                         int
		scheduled, first, finished int64
	}{
		{27, 30, 45, 50},
		{25, 25, 40, 45},
	} {
		lines := []traceLine{{0, 20, 10, []int{1, 2}}, {0, 20, 10, []int{3, 4}}, {0, 20, 10, []int{5, 6}}, {c.at, 16, 2, []int{7}}}
		sc := traceScenario(t, fixed10x5, lines)
		runWays(t, sc)
		sink, res := runSink(t, sc)
		for _, r := range sink.rows[:3] {
			if r.FirstTokenNs != 10*ms || r.FinishNs != 65*ms {
				t.Errorf("arrival at %d ms: request %d first token %d, finish %d ns", c.at, r.RequestID, r.FirstTokenNs, r.FinishNs)
			}
		}
		if r := sink.rows[3]; r.ScheduledNs != c.scheduled*ms || r.FirstTokenNs != c.first*ms || r.FinishNs != c.finished*ms {
			t.Errorf("arrival at %d ms: request 3 scheduled %d, first token %d, finish %d ns", c.at, r.ScheduledNs, r.FirstTokenNs, r.FinishNs)
		}
		if w := res.Workers[0]; w.Passes != 10 || w.BusyNs != 65*ms {
			t.Errorf("arrival at %d ms: %d passes, busy %d ns", c.at, w.Passes, w.BusyNs)
		}
	}
}

// TestFastForwardScenarios runs every golden scenario, every scenario
// under scenarios/ and every shared contract scenario both ways (runWays);
// those on a shared trace or a synthetic workload replay their first 1,500
// requests.
func TestFastForwardScenarios(t *testing.T) {
	t.Setenv("KVSIM_TRACES", tracestest.Dir(t))
	t.Setenv("KVSIM_VLLM_TRACES", tracestest.VLLMDir(t))
	golden, _ := filepath.Glob("../scenarios/golden/*.yaml")
	examples, _ := filepath.Glob("../scenarios/*.yaml")
	contract, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	if len(golden) == 0 || len(examples) == 0 || len(contract) == 0 {
		t.Fatalf("found %d golden, %d example and %d contract scenarios", len(golden), len(examples), len(contract))
	}
	for _, f := range append(golden, append(examples, contract...)...) {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			sc, err := scenarios.Load(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(f, "golden") {
				limit := "workload.trace.limit=1500"
				if sc.Workload.Synthetic != nil {
					limit = fmt.Sprintf("workload.synthetic.requests=%d", min(sc.Workload.Synthetic.Requests, 1500))
				} else if l := sc.Workload.Trace.Limit; l > 0 && l < 1500 {
					limit = fmt.Sprintf("workload.trace.limit=%d", l)
				}
				if sc, err = scenarios.Load(f, []string{limit}); err != nil {
					t.Fatal(err)
				}
			}
			slow, fast := runWays(t, sc)
			t.Logf("%d events pass by pass, %d with the fast-forward", slow, fast)
		})
	}
}

// TestFastForwardTraces runs the shared traces' first 1,500 requests both
// ways (runWays) on 4 kv_aware workers with KVCR and its default hints.
func TestFastForwardTraces(t *testing.T) {
	for _, tr := range []struct{ file, format, block string }{
		{"conversation_trace.jsonl", "mooncake", "512"},
		{"synthetic_trace.jsonl", "mooncake", "512"},
		{"azure_code_2023.csv", "azure", "16"},
	} {
		t.Run(tr.file, func(t *testing.T) {
			path := tracestest.Path(t, tr.file)
			y := "name: " + tr.file + "\nworkload: {trace: {path: " + path + ", format: " + tr.format +
				", block_size: " + tr.block + ", limit: 1500}}\ncluster: {workers: 4}\n"
			sc, err := scenarios.Parse("trace.yaml", []byte(y), nil)
			if err != nil {
				t.Fatal(err)
			}
			slow, fast := runWays(t, sc)
			t.Logf("%d events pass by pass, %d with the fast-forward", slow, fast)
		})
	}
}

var fastForwardN = flag.Int("fastforward.n", 400, "cases TestFastForwardRandom runs")

// TestFastForwardRandom runs 400 (-fastforward.n) of scengen's larger cases both ways
// (runWays): blocks of 4 to 16 tokens and outputs of up to 80 (300 in one
// case in ten), so requests decode for many passes in a row, arrivals that
// often share an instant, prompts sharing prefixes, every timing model and
// routing policy, KVCR on or off with copy or move hints, parked pulls,
// short timeouts, and drains, removals and additions. Fixed timing in round
// milliseconds puts pass ends of different workers on the same instants as
// each other and as arrivals, which exercises the order of a stretch's
// boundaries against other events.
func TestFastForwardRandom(t *testing.T) {
	n := *fastForwardN
	if testing.Short() {
		n = min(n, 50)
	}
	var slow, fast uint64
	for i := range n {
		c := scengen.GenerateLarge(uint64(i))
		path, err := c.Write(filepath.Join(t.TempDir(), "case"))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenarios.Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s, f := runWays(t, sc)
			slow += s
			fast += f
		})
	}
	t.Logf("%d events pass by pass, %d with the fast-forward", slow, fast)
	if fast >= slow {
		t.Errorf("the fast-forward fired %d events, pass by pass %d: no stretch ran", fast, slow)
	}
}
