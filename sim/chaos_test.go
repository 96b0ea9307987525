package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/scenarios"
)

// TestChaosSettles plants violations of the settle check and runs that
// must pass it. TestPartialFollowUp's pull (pull 0) is staged at 20 ms and
// lands at 25 ms: 4 MB at 1 GB/s from its first byte at 21 ms.
//
// A fault chaos drew that loses pull 0's notice keeps it live to its
// deadline, 20 ms + 100 ms = 120 ms (its write ends at 25 ms, in the
// window): with chaos.to 30 ms and settle 5 ms the
// check at 35 ms finds it and fails the run. The drawn fault is planted (a
// notices fault, lost, over [0, 30 ms), origin chaos, appended after
// loading, as chaos appends what it draws): a draw that does just this
// would hang on the seed.
//
// Without a fault on pull 0, the same pull still live at the check is not
// chaos's doing: a chaos window drawing no fault that ends at 22 ms with
// settle 1 ms checks at 23 ms, two ms before the pull lands, and the run
// passes (it once failed there).
func TestChaosSettles(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}}
	sc := traceScenario(t, kvBody, lines, "chaos={from: 0s, to: 30ms, settle: 5ms}")
	sc.Events = append(sc.Events, scenarios.Event{For: scenarios.Duration(30 * ms), Origin: scenarios.OriginChaos,
		Notices: &scenarios.NoticesFault{Lost: true}})
	_, err := Run(context.Background(), sc, Options{Check: true})
	var ie *InvariantError
	want := "pull 0, which events[0] (notices, drawn by chaos) acted on, is still live 5ms after the chaos window ended at 30ms"
	if !errors.As(err, &ie) || ie.Invariant != invChaosSettles || int64(ie.At) != 35*ms || ie.Err.Error() != want {
		t.Fatalf("a drawn lost notice: %v, want %q at 35ms: %s", err, invChaosSettles, want)
	}
	runKV(t, lines, "chaos={from: 0s, to: 22ms, settle: 1ms}") // fails the test on any error
	// Without --check the settle check is not scheduled: the run passes.
	if _, err := Run(context.Background(), sc, Options{}); err != nil {
		t.Errorf("a drawn lost notice without check: %v", err)
	}
	// The scenario's own down of worker 2 from 1 ms, without for, is in
	// force at 27 ms: worker 2 is down then whatever chaos did, so the
	// check is not made (it once failed the run), and the run says so.
	_, _, res := runKV(t, lines, "chaos={from: 0s, to: 22ms, settle: 5ms}", "events=[{at: 1ms, down: {workers: [2]}}]")
	wantW := "the check that the cluster settles after chaos, at 27ms (chaos.to + chaos.settle), was not made: the scenario's own events[0] (down) is in force then"
	if !slices.Contains(res.Summary.Warnings, wantW) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, wantW)
	}
}

// TestChaosSettlesHealthyPull is the reviewer's first case. R0 (32 tokens,
// ids 1-2) runs on worker 0 (0-10 ms) and stores its 2 blocks in worker 0's
// G2; copies R1 and R2 go to workers 1 and 2 at 20 ms with hints naming
// worker 0. Each fetches 1 block of 1 MB (2 full blocks, the last token
// always recomputed, as in TestPartialFollowUp's 8 less 1): pulls 0 and 1, staged at 20 ms, first byte 21 ms, share worker
// 0's 1 GB/s link, 2 MB in 2 ms: both land at 23 ms. Chaos (to 21 ms,
// pull_errors 0.0001) draws an error for neither. Its check at 22 ms finds
// both live, but no fault acted on them: the run passes (it once failed
// there, blaming chaos).
func TestChaosSettlesHealthyPull(t *testing.T) {
	lines := []traceLine{{0, 32, 1, ids(1, 2)}, {20, 32, 1, ids(1, 2)}, {20, 32, 1, ids(1, 2)}}
	_, sink, res := runKV(t, lines, "chaos={to: 21ms, settle: 1ms, pull_errors: 0.0001}") // --check on; fails the test on any error
	if len(sink.pulls) != 2 || sink.pulls[0].EndNs != 23*ms || sink.pulls[1].EndNs != 23*ms || res.Summary.Counters["pulls_success"] != 2 {
		t.Errorf("pulls %+v, want 2 landing at 23ms", sink.pulls)
	}
}

// TestChaosSettlesScenarioFault is the reviewer's second case: the same
// workload with kvcr.operation_timeout 20 s (abandon 40 s), chaos to 21 ms
// with the default settle 10 s, and the scenario's own notices fault, lost,
// over [0, 25 ms). Pulls 0 and 1 end their writes at 23 ms, in that window:
// their notices are lost and they expire at their deadline, 20 ms + 20 s =
// 20.02 s. The check at 21 ms + 10 s = 10.021 s finds both live, but the
// fault that acted on them is the scenario's, over since 25 ms: the run
// passes and warns (it once failed, blaming chaos).
func TestChaosSettlesScenarioFault(t *testing.T) {
	lines := []traceLine{{0, 32, 1, ids(1, 2)}, {20, 32, 1, ids(1, 2)}, {20, 32, 1, ids(1, 2)}}
	_, sink, res := runKV(t, lines, "chaos={to: 21ms, pull_errors: 0.0001}", "kvcr.operation_timeout=20s", "kvcr.abandon_timeout=40s",
		"events=[{at: 0s, for: 25ms, notices: {lost: true}}]")
	if len(sink.pulls) != 2 || sink.pulls[0].EndNs != 20020*ms || sink.pulls[0].Outcome != "expired" {
		t.Errorf("pulls %+v, want 2 expiring at 20.02s", sink.pulls)
	}
	want := "the check that the cluster settles after chaos, at 10.021s (chaos.to + chaos.settle), passed over 2 live pulls (the first, pull 0) " +
		"that faults of the scenario's own acted on (the first, events[0] (notices)): their effects are not chaos's"
	if !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

var (
	chaosN    = flag.Int("chaos.n", 150, "chaos cases TestGeneratedChaos runs (10000 for the issue's acceptance run)")
	chaosSeed = flag.Uint64("chaos.seed", 1, "first seed TestGeneratedChaos runs (with -chaos.n=1: replay one case)")
)

// TestGeneratedChaos runs random small scenarios with faults
// (scengen.GenerateChaos: scripted faults of every kind and a chaos block)
// with --check on and every event's twin, twice: with the decode
// fast-forward at GOMAXPROCS 1, and pass by pass at GOMAXPROCS 2. No
// invariant may break (the settle check included), except by the admission
// stall of vLLM 0.11's rule in a case that runs it, and both runs must
// give the same digest and the same twin digests. A failing case is saved
// with the command that replays it. The acceptance run:
//
//	go test ./sim -run 'TestGeneratedChaos$' -chaos.n=10000 -timeout 2h -v
func TestGeneratedChaos(t *testing.T) {
	kinds := map[string]int{}
	eachGenerated(t, scengen.GenerateChaos, *chaosSeed, *chaosN, "TestGeneratedChaos", "chaos", nil, func(sc *scenarios.Scenario, _ outcome) {
		for _, ev := range sc.Events {
			kinds[ev.Kind()]++
		}
	})
	t.Logf("%d cases; events by kind: %v", *chaosN, kinds)
	if *chaosN >= 100 {
		for _, k := range scenarios.Kinds {
			if kinds[k] == 0 {
				t.Errorf("no case had an event of kind %s", k)
			}
		}
	}
}

// eachGenerated runs the n cases of gen from seed with --check on and
// every event's twin, twice: with the decode fast-forward at GOMAXPROCS 1,
// and pass by pass at GOMAXPROCS 2. Both must end alike (verdict), with
// the same twin digests and, when more is given, what more compares. A
// failing case is saved with the commands that replay it (test and its
// flags' prefix); tally sees each case that passed.
func eachGenerated(t *testing.T, gen func(uint64) scengen.Case, seed uint64, n int, test, flags string,
	more func(a, b outcome) string, tally func(*scenarios.Scenario, outcome)) {
	dir := t.TempDir()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for s := seed; s < seed+uint64(n); s++ {
		c := gen(s)
		path, err := c.Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := loadCase(path)
		if err != nil {
			t.Fatalf("seed %d: the generator wrote an invalid scenario: %v", s, err)
		}
		runtime.GOMAXPROCS(1)
		a := runTwinned(sc, false)
		runtime.GOMAXPROCS(2)
		b := runTwinned(sc, true)
		msg := verdict(a, b)
		if msg == "" && a.err == nil {
			msg = sameTwins(a.res, b.res)
		}
		if msg == "" && a.err == nil && more != nil {
			msg = more(a, b)
		}
		if msg != "" {
			t.Errorf("seed %d: %s\n%s", s, msg, save(t, c, test, flags))
			continue
		}
		tally(sc, a)
	}
}

// runTwinned runs a loaded case as runCase does, with every event's twin.
func runTwinned(sc *scenarios.Scenario, passByPass bool) outcome {
	p, err := Prepare(sc)
	if err != nil {
		return outcome{err: err}
	}
	res, err := p.Run(context.Background(), Options{Check: true, PassByPass: passByPass, Twins: true})
	v011 := sc.Cluster.Engine.Admission == engine.AdmitV011
	return outcome{res: res, err: err, stall: err != nil && v011 && isStall(err)}
}

// isStall reports whether err breaks only the invariants vLLM 0.11's
// admission stall breaks (stalled checks the cluster too; a twinned run
// returns none).
func isStall(err error) bool {
	for _, e := range unjoin(err) {
		var ie *InvariantError
		if !errors.As(e, &ie) || (ie.Invariant != invWorkersEmpty && ie.Invariant != invRouterLoads) {
			return false
		}
	}
	return true
}

// sameTwins says how two runs' events rows differ in their twins, "" when
// they do not.
func sameTwins(a, b *Result) string {
	ra, rb := a.Summary.EventRows, b.Summary.EventRows
	if len(ra) != len(rb) {
		return fmt.Sprintf("%d events rows, then %d", len(ra), len(rb))
	}
	for i := range ra {
		if ra[i].Twinned != rb[i].Twinned || ra[i].TwinDigest != rb[i].TwinDigest {
			return fmt.Sprintf("event %d: twin %t %s, then %t %s", i, ra[i].Twinned, ra[i].TwinDigest, rb[i].Twinned, rb[i].TwinDigest)
		}
	}
	return ""
}

// TestChaosWarnsOnce: chaos drawing stragglers over [1s, 2s), after
// TestPartialFollowUp's two requests ended (by 35 ms), changes no request:
// one warning says so for all the faults it drew, and none a fault.
func TestChaosWarnsOnce(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}}
	sc := traceScenario(t, kvBody, lines, "chaos={from: 1s, to: 2s, rates: {slow: 36000}}")
	drawn := len(sc.Events)
	if drawn < 5 {
		t.Fatalf("chaos drew %d faults, want about 30", drawn)
	}
	_, res := runOpts(t, sc, Options{Twins: true})
	var chaos []string
	for _, w := range res.Summary.Warnings {
		if strings.Contains(w, "chaos") || strings.Contains(w, "slow at") {
			chaos = append(chaos, w)
		}
	}
	want := fmt.Sprintf("the %d faults chaos drew changed no request: every request's row is the same in the run without chaos; the what-if tests nothing for the requests", drawn)
	if len(chaos) != 1 || chaos[0] != want {
		t.Errorf("warnings %q, want only %q", chaos, want)
	}
}

// TestChaosPullErrorsAll: chaos's pull_errors 1 fails every pull whose
// write is posted in its window. Its two events have rates 0.5 at the
// start and 1 / (2 - 1) = 1 at the end (scenarios.TestChaosPullErrors):
// a write the start's draw spares, the end's strikes. The default
// scenario cut to 600 requests stages its n pulls all in the window (to
// 10m, past the last arrival), none cancelled before its first byte and
// none whose source gives up: all n fail by injection, where halves of
// 0.5 each failed 1 - 0.5 x 0.5 = 3/4 of them (the reviewer's 67 of 93).
// About half fail at the start (no first byte): a Binomial(n, 0.5) count,
// n/2 with a standard deviation of sqrt(n / 4); n/2 ± 4 standard
// deviations holds it for all but one seed in 15,000. (At the default's
// seed n is 295: 147.5 ± 34.)
func TestChaosPullErrorsAll(t *testing.T) {
	sc, err := scenarios.LoadDefault([]string{"workload.synthetic.requests=600", "chaos={to: 10m, pull_errors: 1}"})
	if err != nil {
		t.Fatal(err)
	}
	sink, res := runSink(t, sc)
	c := res.Summary.Counters
	n := c["pulls_staged"]
	if n == 0 || c["pulls_failed_injected"] != n || int64(len(sink.pulls)) != n {
		t.Fatalf("%d pulls staged, %d failed by injection, %d rows; want some, all failed", n, c["pulls_failed_injected"], len(sink.pulls))
	}
	atStart := 0
	for _, p := range sink.pulls {
		if p.Outcome != "failed" {
			t.Errorf("pull %d %s, want failed", p.PullID, p.Outcome)
		}
		if p.FirstByteNs == -1 {
			atStart++
		}
	}
	if mean, sd := float64(n)/2, math.Sqrt(float64(n)/4); math.Abs(float64(atStart)-mean) > 4*sd {
		t.Errorf("%d of %d pulls failed at the start, want %.1f ± %.1f", atStart, n, mean, 4*sd)
	}
}
