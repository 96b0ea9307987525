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

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// runWays runs sc pass by pass and with the decode fast-forward, with
// invariant checks, and fails unless the two agree on the digest, every
// request, pull, time-series and events row, every worker row, every
// counter and the summary (its event count and wall time aside). Where
// the fast-forward defers its crossings (deferCrossings), it runs a third
// time with every crossing an event, which must agree too. It returns the
// events pass by pass and with the fast-forward fired, and what the
// fast-forward met.
func runWays(t *testing.T, sc *scenarios.Scenario) (slow, fast uint64, met fastForwardMet) {
	t.Helper()
	ways, names := []Options{{PassByPass: true}, {}}, []string{"pass by pass", "fast-forward"}
	if deferCrossings(sc, Options{}) {
		ways, names = append(ways, Options{crossEvents: true}), append(names, "fast-forward with crossing events")
	}
	p, err := Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	run := func(opt Options) (*Result, error) {
		c, err := build(p, opt, nil)
		if err != nil {
			return nil, err
		}
		res, err := c.run(context.Background())
		if !opt.PassByPass && !opt.crossEvents {
			met = c.met
		}
		return res, err
	}
	sinks := make([]rowSink, len(ways))
	res := make([]*Result, len(ways))
	check := true
	for i, opt := range ways {
		var err error
		opt.Sink, opt.Check = &sinks[i], check
		res[i], err = run(opt)
		var ie *InvariantError
		if i == 0 && errors.As(err, &ie) {
			// A model bug outside the fast-forward: every other way must
			// break the same invariant; then the rows are compared unchecked.
			t.Logf("pass by pass: %v", err)
			for j, o := range ways[1:] {
				o.Check = true
				if _, ferr := run(o); ferr == nil || ferr.Error() != err.Error() {
					t.Errorf("%s: %v", names[j+1], ferr)
				}
			}
			check = false
			sinks[0] = rowSink{}
			res[0], err = run(Options{Sink: &sinks[0], PassByPass: true})
		}
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
	}
	for i := 1; i < len(ways); i++ {
		sameRuns(t, names[0]+" and "+names[i], res[0], res[i], &sinks[0], &sinks[i])
	}
	return res[0].Summary.Events, res[1].Summary.Events, met
}

// sameRuns fails unless runs a and b, with rows sa and sb, agree on
// everything but the count of events fired and the wall time.
func sameRuns(t *testing.T, ways string, a, b *Result, sa, sb *rowSink) {
	t.Helper()
	if a.Summary.Digest != b.Summary.Digest {
		t.Errorf("%s: digest %s and %s", ways, a.Summary.Digest, b.Summary.Digest)
	}
	ma, mb := *a.Summary, *b.Summary
	ma.Events, mb.Events, ma.WallTimeS, mb.WallTimeS = 0, 0, 0, 0
	same := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: %s differ", ways, what)
		}
	}
	ea, _ := json.Marshal(ma.EventRows) // a NaN, not equal to itself, is null here
	eb, _ := json.Marshal(mb.EventRows)
	same("event rows", string(ea), string(eb))
	ma.EventRows, mb.EventRows = nil, nil
	pa, _ := json.Marshal([]report.Percentiles{ma.TTFT, ma.TPOT, ma.ITL, ma.E2E}) // NaN (none completed) is null
	pb, _ := json.Marshal([]report.Percentiles{mb.TTFT, mb.TPOT, mb.ITL, mb.E2E})
	same("latencies", string(pa), string(pb))
	ma.TTFT, ma.TPOT, ma.ITL, ma.E2E, mb.TTFT, mb.TPOT, mb.ITL, mb.E2E = report.Percentiles{}, report.Percentiles{}, report.Percentiles{}, report.Percentiles{}, report.Percentiles{}, report.Percentiles{}, report.Percentiles{}, report.Percentiles{}
	same("summaries", ma, mb)
	same("worker rows", a.Workers, b.Workers)
	same("counters", a.Counters, b.Counters)
	same("request rows", sa.rows, sb.rows)
	same("pull rows", sa.pulls, sb.pulls)
	if !slices.EqualFunc(a.Planner, b.Planner, sameDecision) {
		t.Errorf("%s: planner rows differ", ways)
	}
	if !reflect.DeepEqual(sa.samples, sb.samples) {
		for i := range min(len(sa.samples), len(sb.samples)) {
			if sa.samples[i] != sb.samples[i] {
				t.Errorf("%s: sample %d: %+v and %+v", ways, i, sa.samples[i], sb.samples[i])
				break
			}
		}
		t.Errorf("%s: samples differ (%d and %d rows)", ways, len(sa.samples), len(sb.samples))
	}
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
// Either way the worker starts 10 passes and is busy 65 ms, and all ways
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
// under scenarios/ and every shared contract scenario every way runWays runs;
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
			slow, fast, _ := runWays(t, sc)
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
			slow, fast, _ := runWays(t, sc)
			t.Logf("%d events pass by pass, %d with the fast-forward", slow, fast)
		})
	}
}

var fastForwardN = flag.Int("fastforward.n", 400, "cases TestFastForwardRandom runs")

// TestFastForwardRandom runs 400 (-fastforward.n) of scengen's larger cases every way
// (runWays): blocks of 4 to 16 tokens and outputs of up to 80 (300 in one
// case in ten), so requests decode for many passes in a row, arrivals that
// often share an instant, prompts sharing prefixes, every timing model and
// routing policy, KVCR on or off with copy or move hints, parked pulls,
// short timeouts, and drains, removals and additions. Fixed timing in round
// milliseconds puts pass ends of different workers on the same instants as
// each other and as arrivals, which exercises the order of a stretch's
// boundaries against other events. The cases must take the fast-forward's
// rarer turns (in the first 400: 206 stretches started while a pull was
// parked at a busy worker, and 12 drive scans that left their worker idle
// with a parked pull and settled the stretches running).
func TestFastForwardRandom(t *testing.T) {
	n := *fastForwardN
	if testing.Short() {
		n = min(n, 50)
	}
	var slow, fast uint64
	var met fastForwardMet
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
			s, f, m := runWays(t, sc)
			slow += s
			fast += f
			met.parkedStretches += m.parkedStretches
			met.idleSettles += m.idleSettles
		})
	}
	t.Logf("%d events pass by pass, %d with the fast-forward; %+v", slow, fast, met)
	if fast >= slow {
		t.Errorf("the fast-forward fired %d events, pass by pass %d: no stretch ran", fast, slow)
	}
	if n >= 400 && (met.parkedStretches == 0 || met.idleSettles == 0) {
		t.Errorf("the cases took the fast-forward's rarer turns %+v times: each must be taken", met)
	}
}

// TestCrossingsSeenCheck: one worker, fixed timing (10 ms prefill, 5 ms
// decode), one request of 16 prompt tokens (a block) and 40 output tokens:
// its decode passes from 10 ms are a stretch, and it crosses into its third
// block at the start of the pass computing token 33, at 90 ms (10 + 5 x
// 16). An event of the lifecycle phase planted at 92 ms that takes no
// crossing fails the run with "an event that looks sees every crossing
// before it" alone, at 92 ms; planted at 89 ms, before the crossing, or
// with plant, which looks first, or with the crossings as events, the run
// passes. Routing (checkSeen), from an event of any phase, a transfer's at
// 92 ms here, which looks at nothing, fails the run the same way.
func TestCrossingsSeenCheck(t *testing.T) {
	sc := traceScenario(t, fixed10x5, []traceLine{{0, 16, 40, []int{1}}})
	raw := func(c *Cluster, at des.Time, f fireFunc) { c.q.Schedule(at, des.PhaseLifecycle, 0, f, 0) }
	for _, c := range []struct {
		name  string
		at    des.Time
		opt   Options
		plant func(c *Cluster, at des.Time, f fireFunc)
		fails bool
	}{
		{"no look", 92 * des.Millisecond, Options{Check: true}, raw, true},
		{"no look before the crossing", 89 * des.Millisecond, Options{Check: true}, raw, false},
		{"look", 92 * des.Millisecond, Options{Check: true}, plant, false},
		{"cross events", 92 * des.Millisecond, Options{Check: true, crossEvents: true}, raw, false},
		{"routing from a transfer", 92 * des.Millisecond, Options{Check: true}, func(c *Cluster, at des.Time, _ fireFunc) {
			c.q.Schedule(at, des.PhaseTransfer, 0, fireFunc(func(des.Time) { c.checkSeen() }), 0)
		}, true},
	} {
		p, err := Prepare(sc)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := build(p, c.opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (cl.deferred == nil) != c.opt.crossEvents {
			t.Fatalf("%s: crossings deferred %v with crossEvents %v", c.name, cl.deferred != nil, c.opt.crossEvents)
		}
		c.plant(cl, c.at, func(des.Time) {})
		_, err = cl.run(context.Background())
		var ie *InvariantError
		if c.fails {
			if got := broken(err); !slices.Equal(got, []string{invCrossingsSeen}) || !errors.As(err, &ie) || ie.At != 92*des.Millisecond {
				t.Errorf("%s: %v, want only %q at 92ms", c.name, err, invCrossingsSeen)
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
