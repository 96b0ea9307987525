package sim

import (
	"context"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
)

// linkLines: on kvBody (3 workers, round robin, 1 MB blocks, KVCR at
// 1 GB/s with 1 ms latency, operation timeout 100 ms), R0 (ids 1-2, 32
// tokens) runs on worker 0 0-10 ms and its 2 blocks reach worker 0's G2 at
// 10 ms. R1 and R2, the same 32 tokens, arrive at 20 ms on workers 1 and
// 2, hinted to worker 0: one block missing each (the last token is always
// recomputed), two 1 MB pulls staged at 20 ms, first byte at 21 ms,
// sharing worker 0's egress at 0.5 GB/s each: without a fault both land
// at 23 ms and R1 and R2 compute 16 tokens, first token at 33 ms.
var linkLines = []traceLine{{0, 32, 1, ids(1, 2)}, {20, 32, 1, ids(1, 2)}, {20, 32, 1, ids(1, 2)}}

// runLink runs linkLines with a link fault and returns the pulls and the
// fault's events row.
func runLink(t *testing.T, event string, sets ...string) ([]report.RequestRow, []report.PullRow, report.EventRow) {
	t.Helper()
	rows, sink, res := runKV(t, linkLines, append([]string{"events=[" + event + "]"}, sets...)...)
	if len(sink.pulls) != 2 || len(res.Summary.EventRows) != 1 {
		t.Fatalf("pulls %+v, events %+v", sink.pulls, res.Summary.EventRows)
	}
	return rows, sink.pulls, res.Summary.EventRows[0]
}

// TestLinkFaultScenario works link faults on linkLines by hand (--check
// on throughout):
//
//   - down: worker 0's egress down at 22 ms for 1 ms. Each pull has 0.5 MB
//     left and keeps it, with its pins and slots, while the link is down;
//     from 23 ms they share 1 GB/s: both land at 24 ms, R1 and R2's first
//     token at 34 ms. fault_pulls 2.
//   - down from before the first byte: down at 20.5 ms for 1 ms. The
//     writes are posted at 21 ms (first_byte_ns 21 ms) at rate 0; from
//     21.5 ms they run as before: land at 23.5 ms.
//   - degraded: factor 0.5 at 22 ms for 1 ms: 0.25 GB/s each, 0.25 MB
//     each by 23 ms, 0.25 MB left at 0.5 GB/s: land at 23.5 ms.
//   - ingress: worker 1's ingress at factor 0.25 at 22 ms for 1 ms
//     (ingress unbounded without kvcr.ingress_gbps, so 0.25 x
//     bandwidth_gbps = 0.25 GB/s): R1's pull is fixed at 0.25, R2's takes
//     the 0.75 left of worker 0's egress: its 0.5 MB take 0.666667 ms,
//     landing at 22,666,667 ns. R1's has 333,333.25 bytes left then, 83,333.25
//     served by 23 ms, and its last 250,000 alone at 1 GB/s: 23.25 ms.
//     Only R1's pull ran on the faulted link: fault_pulls 1.
//   - both directions: worker 2 down both ways at 22 ms for 1 ms. It
//     serves nothing, but receives R2's pull, which stalls with 0.5 MB
//     left while R1's has worker 0's egress alone: R1's lands at 22.5 ms;
//     R2's, alone from 23 ms, at 23.5 ms. fault_pulls 1.
//   - an idle link: worker 1's egress down at 22 ms for 1 ms: worker 1
//     serves nothing: both land at 23 ms, fault_pulls 0.
//   - ending at the first byte: worker 0's egress down at 20 ms for 1 ms.
//     Its window [20 ms, 21 ms) ends as the writes are posted at 21 ms:
//     transfers come before lifecycle events in an instant, but a transfer
//     posted at the window's end is not the fault's: both land at 23 ms
//     as without it, fault_pulls 0.
func TestLinkFaultScenario(t *testing.T) {
	for _, c := range []struct {
		name     string
		event    string
		end      [2]int64 // ns
		firstTok [2]int64
		pulls    int64
	}{
		{"down", "{at: 22ms, for: 1ms, link: {workers: [0], factor: 0}}", [2]int64{24 * ms, 24 * ms}, [2]int64{34 * ms, 34 * ms}, 2},
		{"down before the first byte", "{at: 20500us, for: 1ms, link: {workers: [0], factor: 0}}",
			[2]int64{23500_000, 23500_000}, [2]int64{33500_000, 33500_000}, 2},
		{"degraded", "{at: 22ms, for: 1ms, link: {workers: [0], factor: 0.5}}",
			[2]int64{23500_000, 23500_000}, [2]int64{33500_000, 33500_000}, 2},
		{"ingress", "{at: 22ms, for: 1ms, link: {workers: [1], factor: 0.25, direction: ingress}}",
			[2]int64{23250_000, 22666_667}, [2]int64{33250_000, 32666_667}, 1},
		{"both directions", "{at: 22ms, for: 1ms, link: {workers: [2], factor: 0, direction: both}}",
			[2]int64{22500_000, 23500_000}, [2]int64{32500_000, 33500_000}, 1},
		{"idle link", "{at: 22ms, for: 1ms, link: {workers: [1], factor: 0}}",
			[2]int64{23 * ms, 23 * ms}, [2]int64{33 * ms, 33 * ms}, 0},
		{"ending at the first byte", "{at: 20ms, for: 1ms, link: {workers: [0], factor: 0}}",
			[2]int64{23 * ms, 23 * ms}, [2]int64{33 * ms, 33 * ms}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, pulls, ev := runLink(t, c.event)
			if len(pulls) != 2 {
				t.Fatalf("%d pulls, want 2", len(pulls))
			}
			for i, p := range pulls {
				if p.FirstByteNs != 21*ms || p.EndNs != c.end[i] || p.WriteEndNs != c.end[i] || p.Outcome != "success" || p.BlocksLanded != 1 {
					t.Errorf("pull %d %+v, want landing at %d", i, p, c.end[i])
				}
				if r := rows[1+i]; r.FirstTokenNs != c.firstTok[i] || r.PulledTokens != 16 {
					t.Errorf("R%d %+v, want first token at %d", 1+i, r, c.firstTok[i])
				}
			}
			if ev.Kind != "link" || ev.Fault != (report.EventFault{Pulls: c.pulls}) || ev.ForNs != 1*ms {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

// TestLinkDownPastDeadline: worker 0's egress down at 22 ms for 200 ms.
// The targets' deadlines (staging 20 ms + operation timeout 100 ms) pass
// at 120 ms: both pulls are expired then (end_ns 120 ms) and R1 and R2
// compute their 32 tokens, first token at 130 ms. The sources' deadlines
// (121 ms) pass too, but the writes began at 21 ms and cannot be recalled:
// they keep their pins and slots and their 0.5 MB each, and when the link
// returns at 222 ms they share it for 1 ms: write_end_ns 223 ms, landing
// nothing (blocks_landed 0). Every pin is released (--check).
func TestLinkDownPastDeadline(t *testing.T) {
	rows, pulls, ev := runLink(t, "{at: 22ms, for: 200ms, link: {workers: [0], factor: 0}}")
	for i, p := range pulls {
		if p.Outcome != "expired" || p.EndNs != 120*ms || p.WriteEndNs != 223*ms || p.BlocksLanded != 0 || p.FirstByteNs != 21*ms {
			t.Errorf("pull %d %+v", i, p)
		}
		if r := rows[1+i]; r.FirstTokenNs != 130*ms || r.PulledTokens != 0 || r.ComputedPromptTokens != 32 {
			t.Errorf("R%d %+v", 1+i, r)
		}
	}
	if ev.Fault.Pulls != 2 {
		t.Errorf("event %+v", ev)
	}
}

// TestLinkDownToTheEnd: TestLinkDownPastDeadline's link down at 22 ms
// without `for`. The pulls expire at 120 ms and R1 and R2 compute, first
// token at 130 ms, as there; the sources give up at 121 ms, but their
// writes stay on a link that never returns. Three more requests (round
// robin) make a pull whose row waits behind theirs: R3 (blocks 7-8)
// computes on worker 0 at 1,000 ms, R4 (9-10) on worker 1 at 1,010 ms,
// and R5 (9-10) on worker 2 at 1,100 ms pulls them from worker 1, whose
// link is up: its first block (the last token is always computed), 1 MB
// at 1 GB/s, first byte 1,101 ms, landing 1,102 ms.
// Nothing else is left to happen after the sample at 2 s (the sampler's
// interval is 1 s; it reschedules only while other events are pending):
// the run cuts the two stalled writes off there, as a removal of their
// source would (write_end_ns 2 s, their pins and slots freed: --check
// holds), their pulls ending as answered, expired at 120 ms, and says so
// in a warning. Before, those pulls never ended: their rows were never
// written, and the run failed on the row waiting behind them.
func TestLinkDownToTheEnd(t *testing.T) {
	lines := append(slices.Clone(linkLines), traceLine{1000, 32, 1, ids(7, 2)}, traceLine{1010, 32, 1, ids(9, 2)}, traceLine{1100, 32, 1, ids(9, 2)})
	_, sink, res := runKV(t, lines, "events=[{at: 22ms, link: {workers: [0], factor: 0}}]")
	if len(sink.pulls) != 3 {
		t.Fatalf("%d pulls, want 3: %+v", len(sink.pulls), sink.pulls)
	}
	for i, p := range sink.pulls[:2] {
		if p.Outcome != "expired" || p.EndNs != 120*ms || p.WriteEndNs != 2000*ms || p.BlocksLanded != 0 || p.FirstByteNs != 21*ms {
			t.Errorf("pull %d %+v", i, p)
		}
	}
	if p := sink.pulls[2]; p.Source != 1 || p.Target != 2 || p.Outcome != "success" || p.EndNs != 1102*ms {
		t.Errorf("pull 2 %+v", p)
	}
	c := res.Summary.Counters
	if c["pulls_expired"] != 2 || c["pulls_success"] != 1 || c["pins_acquired"] != c["pins_released"] {
		t.Errorf("counters %v", c)
	}
	want := "2 pull writes were still held by links down to the end of the run (a link fault without `for`): " +
		"the run cut them off at its end, 2s (their write_end_ns), each pull ending as its target had answered"
	if !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, want)
	}
}

// TestLinkDownToTheEndOrders: R0 (ids 1-2) runs on worker 0 0-10 ms, R1
// and R2 on workers 1 and 2 from 1 and 2 ms, R3 (ids 7-8) on worker 0
// behind R0, 10-20 ms; each chain's 2 blocks reach its worker's G2 as it
// ends. At 30 ms a fourth worker joins, ready at once, prewarmed from the
// others' G2: a copy of each chain, worker 0 the source of two, and with
// kvcr.background_inflight 1 a source stages one at a time. Worker 0's
// egress goes down at 30 ms, without for.
//   - Workers 1 and 2's prefetches: staged 30 ms, first byte 31 ms, 2 MB at
//     1 GB/s each: land at 33 ms.
//   - Worker 0's first: first byte 31 ms, at rate 0. The target's
//     deadline, 30 + 100 ms: expired at 130 ms; the source gives up at its
//     receipt plus the 100 ms the target had left, 131 ms, the write held.
//     The run's last event is then the sample at 1 s, where the first
//     round cuts the write off (write_end_ns 1 s) and frees worker 0's
//     slot:
//   - its second stages at 1 s, first byte 1.001 s at rate 0, expired at
//     1.1 s; the source gives up at 1.101 s, the run's last event, where
//     the second round cuts it off (write_end_ns 1.101 s).
//
// Before the rounds, the second write was left unended: "every pull ends
// exactly once" failed under --check.
func TestLinkDownToTheEndOrders(t *testing.T) {
	lines := []traceLine{{0, 32, 1, ids(1, 2)}, {1, 32, 1, ids(3, 4)}, {2, 32, 1, ids(5, 6)}, {3, 32, 1, ids(7, 8)}}
	_, sink, res := runKV(t, lines, "kvcr.background_inflight=1",
		"events=[{at: 30ms, add: 1, prewarm: {blocks: 100}}, {at: 30ms, link: {workers: [0], factor: 0}}]")
	type pull struct {
		source                                   int32
		staged, firstByte, end, writeEnd, landed int64
		outcome                                  string
	}
	want := []pull{
		{0, 30 * ms, 31 * ms, 130 * ms, 1000 * ms, 0, "expired"},
		{1, 30 * ms, 31 * ms, 33 * ms, 33 * ms, 2, "success"},
		{2, 30 * ms, 31 * ms, 33 * ms, 33 * ms, 2, "success"},
		{0, 1000 * ms, 1001 * ms, 1100 * ms, 1101 * ms, 0, "expired"},
	}
	var got []pull
	for _, p := range sink.pulls {
		if p.Kind != "prefetch" || p.Target != 3 {
			t.Errorf("pull %+v: want a prefetch to worker 3", p)
		}
		got = append(got, pull{p.Source, p.StagedNs, p.FirstByteNs, p.EndNs, p.WriteEndNs, p.BlocksLanded, p.Outcome})
	}
	if !slices.Equal(got, want) {
		t.Errorf("pulls\n%+v\nwant\n%+v", got, want)
	}
	if c := res.Summary.Counters; c["pins_acquired"] != c["pins_released"] {
		t.Errorf("counters %v", c)
	}
	warn := "2 pull writes were still held by links down to the end of the run (a link fault without `for`): the run cut them off at its end, " +
		"in 2 rounds from 1s to 1.101s (their write_end_ns: each round let orders waiting their turn stage pulls that the links held in turn), " +
		"each pull ending as its target had answered"
	if !slices.Contains(res.Summary.Warnings, warn) {
		t.Errorf("warnings %q, want %q", res.Summary.Warnings, warn)
	}
}

// TestLinkFaultOverlap: two link faults on worker 0's egress: factor 0.5
// over [22, 24 ms) and 0 over [22.5, 23 ms). The lowest in force applies:
// 0.5 over [22, 22.5), 0 over [22.5, 23), 0.5 again over [23, 24). Each
// pull has 0.5 MB left at 22 ms and is served at 0.25 GB/s: 0.125 MB by
// 22.5 ms, none more by 23 ms, 0.25 MB more by 24 ms, and its last 0.125
// MB at 0.5 GB/s: 24.25 ms. Each fault counts both pulls.
func TestLinkFaultOverlap(t *testing.T) {
	_, sink, res := runKV(t, linkLines, "events=[{at: 22ms, for: 2ms, link: {workers: [0], factor: 0.5}}, {at: 22500us, for: 500us, link: {workers: [0], factor: 0}}]")
	if len(sink.pulls) != 2 || len(res.Summary.EventRows) != 2 {
		t.Fatalf("%d pulls and %d events, want 2 and 2", len(sink.pulls), len(res.Summary.EventRows))
	}
	for i, p := range sink.pulls {
		if p.EndNs != 24250_000 {
			t.Errorf("pull %d %+v", i, p)
		}
	}
	for i, ev := range res.Summary.EventRows {
		if ev.Fault.Pulls != 2 {
			t.Errorf("event %d %+v", i, ev)
		}
	}
}

// TestLinkFaultRemovedWorker: a link fault on a worker an earlier event
// removed does nothing: worker 2 is removed at 5 ms, its link faulted at
// 22 ms; R2 goes to worker 0 (round robin over the ready workers) and the
// run is the run with the remove alone. And the workers a fault acts on
// (faultable) are those named that exist and are not removed, once each:
// of [0, 2, 2, 9] on 3 workers with worker 2 removed, [0].
func TestLinkFaultRemovedWorker(t *testing.T) {
	with, _, res := runKV(t, linkLines, "events=[{at: 5ms, remove: [2]}, {at: 22ms, for: 1ms, link: {workers: [2], factor: 0, direction: both}}]")
	without, _, _ := runKV(t, linkLines, "events=[{at: 5ms, remove: [2]}]")
	if !slices.Equal(with, without) {
		t.Errorf("the fault on a removed worker changed the run:\n%+v\n%+v", with, without)
	}
	if ev := res.Summary.EventRows[1]; ev.Fault != (report.EventFault{}) {
		t.Errorf("event %+v", ev)
	}
	p, err := Prepare(traceScenario(t, kvBody, linkLines))
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(p, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.life.Set(2, lifecycle.Removed)
	if got := c.faultable([]int32{0, 2, 2, 9}); !slices.Equal(got, []int32{0}) {
		t.Errorf("faultable %v, want [0]", got)
	}
}

// TestLinkFaultTwin: a run with an ingress link fault shares its links
// max-min fairly from its start, and so does its twin, without the
// fault, so that the twin is the run up to the fault's instant: the plan
// of the twin keeps the network, and every request that ended before the
// fault (R0, at 10 ms) has the same row in the twin run as in the run.
func TestLinkFaultTwin(t *testing.T) {
	sc := traceScenario(t, kvBody, linkLines, "events=[{at: 22ms, for: 1ms, link: {workers: [1], factor: 0.25, direction: ingress}}]")
	p, err := Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := p.twin([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	if !p.KVCR.FairNet || !tp.KVCR.FairNet || len(tp.Scenario.Events) != 0 {
		t.Fatalf("fair network: run %v, twin %v", p.KVCR.FairNet, tp.KVCR.FairNet)
	}
	plain, err := Prepare(tp.Scenario)
	if err != nil || plain.KVCR.FairNet {
		t.Fatalf("a scenario without an ingress fault prepared with the fair network (%v)", err)
	}
	var run, twin rowSink
	if _, err := p.Run(context.Background(), Options{Sink: &run, Check: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Run(context.Background(), Options{Sink: &twin, Check: true}); err != nil {
		t.Fatal(err)
	}
	before := 0
	for i, r := range run.rows {
		if r.FinishNs < 22*ms {
			before++
			if twin.rows[i] != r {
				t.Errorf("request %d ended before the fault: %+v in the run, %+v in the twin", i, r, twin.rows[i])
			}
		}
	}
	if before != 1 || run.rows[1] == twin.rows[1] {
		t.Errorf("%d requests before the fault; R1 %+v in both", before, run.rows[1])
	}
	_, res := runOpts(t, sc, Options{Twins: true})
	if ev := res.Summary.EventRows[0]; !ev.Twinned || ev.Fault.Pulls != 1 {
		t.Errorf("event %+v", ev)
	}
}

// slowLines: one request on fixed10x5 (one worker, fixed timing: 10 ms a
// prefill pass, 5 ms a decode pass), 16 prompt tokens and 10 output
// tokens, arriving at 0: its prefill pass 0-10 ms (first token at 10),
// then 9 decode passes of 5 ms, ending at 15, 20, ..., 55 ms.
var slowLines = []traceLine{{0, 16, 10, ids(1, 1)}}

// TestSlowFault works stragglers' pass times by hand, each both pass by
// pass and with the decode fast-forward (the stretch is cut at the
// fault's start and end: runWays compares every row and the digest):
//
//   - mid-pass: factor 3 over [22, 42 ms). The pass in progress (20-25)
//     keeps its 5 ms; the passes starting at 25 and 40 ms, in the window,
//     take 15 ms: 25-40, 40-55; the rest 5 ms: tokens at 15, 20, 25, 40,
//     55, 60, 65, 70, 75: finish 75 ms, fault_passes 2.
//   - at pass boundaries: factor 3 over [20, 35 ms). The pass ending at 20
//     ends before the fault (pass ends come before scenario events), the
//     one starting at 20 (drive scans come after) is slowed: 20-35; the
//     one starting at 35, at the window's end, is not: 35-40. Tokens at
//     15, 20, 35, 40, ..., 65: finish 65 ms, fault_passes 1.
//   - to the end of the run: factor 2 from 30 ms, no for. Passes from 30
//     take 10 ms: tokens at 15, 20, 25, 30, 40, 50, 60, 70, 80: finish 80
//     ms, fault_passes 5 (started at 30, 40, 50, 60, 70).
//   - overlapping: factor 2 over [12, 32 ms) and 3 over [22, 27 ms): the
//     largest in force applies. Passes start at 10 (not slowed: 10-15),
//     15 (x2: 15-25), 25 (x3: 25-40), 40 (5 ms on), tokens at 15, 25, 40,
//     45, ..., 70: finish 70 ms. The first fault counts the passes started
//     at 15 and 25 (2), the second the one at 25 (1).
//   - rounding: factor 1.0000001 over [0, 100 ms): 5 ms x 1.0000001 =
//     5,000,000.5 ns rounds to 5,000,001 (half away from zero), 10 ms to
//     10,000,001: prefill 0-10,000,001, then 9 passes of 5,000,001:
//     finish 55,000,010 ns; fault_passes 10 (the prefill and the 9
//     decodes, all started in the window).
func TestSlowFault(t *testing.T) {
	for _, c := range []struct {
		name   string
		events string
		finish int64
		passes []int64
	}{
		{"mid-pass", "[{at: 22ms, for: 20ms, slow: {workers: [0], factor: 3}}]", 75 * ms, []int64{2}},
		{"at pass boundaries", "[{at: 20ms, for: 15ms, slow: {workers: [0], factor: 3}}]", 65 * ms, []int64{1}},
		{"to the end", "[{at: 30ms, slow: {workers: [0], factor: 2}}]", 80 * ms, []int64{5}},
		{"overlapping", "[{at: 12ms, for: 20ms, slow: {workers: [0], factor: 2}}, {at: 22ms, for: 5ms, slow: {workers: [0], factor: 3}}]",
			70 * ms, []int64{2, 1}},
		{"rounding", "[{at: 0ms, for: 100ms, slow: {workers: [0], factor: 1.0000001}}]", 55_000_010, []int64{10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := traceScenario(t, fixed10x5, slowLines, "events="+c.events)
			if slow, fast, _ := runWays(t, sc); fast >= slow {
				t.Errorf("the fast-forward fired %d events, pass by pass %d: no stretch", fast, slow)
			}
			sink, res := runSink(t, sc)
			if r := sink.rows[0]; r.FinishNs != c.finish {
				t.Errorf("finish %d, want %d (%+v)", r.FinishNs, c.finish, r)
			}
			for i, ev := range res.Summary.EventRows {
				if ev.Fault != (report.EventFault{Passes: c.passes[i]}) {
					t.Errorf("event %d: %+v, want %d passes", i, ev.Fault, c.passes[i])
				}
			}
		})
	}
}
