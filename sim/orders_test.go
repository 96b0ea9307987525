package sim

import (
	"testing"

	"github.com/kvsim/kvsim/report"
)

// evacLines puts two chains in worker 0's G2 and one block-run of each
// elsewhere (kvBody: 3 workers, round robin, 16-token blocks of 1 MB, fixed
// 10 ms prefill, 1 GB/s egress, 1 ms latency, instant G2 links). R0 (ids
// 1-8) runs on worker 0 0-10 ms; R1 (ids 40-41) on worker 1 1-11 ms; R2
// (ids 1-4) on worker 2 2-12 ms; R3 (ids 40-43) on worker 0 10-20 ms (it
// waits for R0's pass; no hint: at 3 ms no G2 holds 40-43). Each has one
// output token and ends with its first, its prompt blocks stored in its
// worker's G2 at its pass end. So worker 0 holds chain A (1-8, stored at
// 10 ms) and chain B (40-43, at 20 ms, the more recent); worker 1 holds
// 40-41, worker 2 holds 1-4, in G1 and G2, every load back to zero.
var evacLines = []traceLine{
	{0, 128, 1, ids(1, 8)},
	{1, 32, 1, ids(40, 2)},
	{2, 64, 1, ids(1, 4)},
	{3, 64, 1, ids(40, 4)},
}

// orderRows are the pulls of kind k.
func orderRows(pulls []report.PullRow, kind string) []report.PullRow {
	var out []report.PullRow
	for _, p := range pulls {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

// TestEvacuationToRouterPicks (rules: an evacuation plans the drained
// worker's chains most recent first, each to the worker kv_aware would
// route a request for it to, the chains placed before counted as requests
// routed there; an order's fetch starts past the target's G1 prefix; one
// move at a time; the worker is removed when its evacuation is done).
// Worker 0 drains at 30 ms, evacuating up to 100 blocks. B first:
// kv_aware's cost for its 4 blocks is 4 - 2 (worker 1's G1 holds 40-41) =
// 2 on worker 1 against 4 on worker 2: worker 1. Its fetch starts past
// worker 1's G1 prefix (40-41: no part of it, so not invalidated at the
// source) and sends 42-43: 2 blocks. Then A, with B's 4 blocks counted on
// worker 1: 8 + 4 = 12 there, 8 - 4 = 4 on worker 2 (its G1 holds 1-4),
// worker 0 draining: worker 2, sending 5-8:
// 4 blocks. Planned 6. B's move is staged at 30 ms, first byte 31, 2 MB at
// 1 GB/s: lands at 33 ms; A's is staged then (one at a time), first byte
// 34, 4 MB: 38 ms. Worker 0, idle since 20 ms, waits for them: removed at
// 38 ms, 8 ms after the drain (removal_delay_ns 8 ms), holding the 6
// blocks no fetch covered (40-41, 1-4): g2_blocks_left 6, 6 removed by
// the moves. Both pulls have request_id -1 and kind move.
func TestEvacuationToRouterPicks(t *testing.T) {
	_, sink, res := runKV(t, evacLines, "events=[{at: 30ms, drain: [0], evacuate: {blocks: 100}}]")
	moves := orderRows(sink.pulls, "move")
	want := []report.PullRow{
		{PullID: 0, RequestID: -1, Source: 0, Target: 1, Mode: "move", BlocksRequested: 2, BlocksLanded: 2, Bytes: 2_000_000,
			StagedNs: 30 * ms, FirstByteNs: 31 * ms, EndNs: 33 * ms, Outcome: "success", WriteEndNs: 33 * ms, Kind: "move"},
		{PullID: 1, RequestID: -1, Source: 0, Target: 2, Mode: "move", BlocksRequested: 4, BlocksLanded: 4, Bytes: 4_000_000,
			StagedNs: 33 * ms, FirstByteNs: 34 * ms, EndNs: 38 * ms, Outcome: "success", WriteEndNs: 38 * ms, Kind: "move"},
	}
	if len(moves) != 2 || moves[0] != want[0] || moves[1] != want[1] {
		t.Errorf("moves %+v\nwant %+v", moves, want)
	}
	ev := res.Summary.EventRows[0]
	if ev.Orders != 2 || ev.BlocksPlanned != 6 || ev.BlocksLanded != 6 || ev.OrdersDoneAfterNs != 8*ms || ev.RemovedAfterNs != 8*ms ||
		ev.G2BlocksLeft != 6 || ev.RemovalDelayNs != 8*ms {
		t.Errorf("event row %+v", ev)
	}
	c := res.Summary.Counters
	if c["kv_move_issued"] != 2 || c["kv_move_success"] != 2 || c["kv_move_blocks_landed"] != 6 || c["move_removed_blocks"] != 6 {
		t.Errorf("counters %v", c)
	}

	// Without the evacuation worker 0 goes at once: idle and holding no pull.
	_, _, res = runKV(t, evacLines, "events=[{at: 30ms, drain: [0]}]")
	if ev := res.Summary.EventRows[0]; ev.RemovedAfterNs != 0 || ev.RemovalDelayNs != 0 || ev.G2BlocksLeft != 12 {
		t.Errorf("drain without evacuation: %+v", ev)
	}
	if _, ok := res.Summary.Counters["kv_move_issued"]; ok {
		t.Error("a scenario without orders reports the background counters")
	}
}

// TestEvacuationCutByDrainTimeout (rule: a drained worker's drain_timeout
// removes it with its evacuation unfinished). As above with a 5 ms drain
// timeout: B lands at 33 ms; A is staged at 33 and writing from 34 ms when
// the timeout removes worker 0 at 35 ms, holding 40-41 and 1-4 (no fetch
// covered them) and 5-8, pinned: g2_blocks_left 10. A's
// write stops with its source, and its target, hearing nothing, fails at
// its own deadline: 33 ms + the 200 ms abandon timeout = 233 ms
// (kv_done_after_ns 203 ms). Worker 0 had been idle since 20 ms, so its
// removal waited 35 - 30 = 5 ms. Planned 6, landed 2.
func TestEvacuationCutByDrainTimeout(t *testing.T) {
	_, sink, res := runKV(t, evacLines, "events=[{at: 30ms, drain: [0], drain_timeout: 5ms, evacuate: {blocks: 100}}]")
	moves := orderRows(sink.pulls, "move")
	if len(moves) != 2 || moves[1].Outcome != "failed" || moves[1].EndNs != 233*ms || moves[1].WriteEndNs != 35*ms || moves[1].BlocksLanded != 0 {
		t.Fatalf("moves %+v", moves)
	}
	ev := res.Summary.EventRows[0]
	if ev.BlocksPlanned != 6 || ev.BlocksLanded != 2 || ev.OrdersDoneAfterNs != 203*ms || ev.RemovedAfterNs != 5*ms ||
		ev.RemovedByTimeout != 1 || ev.G2BlocksLeft != 10 || ev.RemovalDelayNs != 5*ms {
		t.Errorf("event row %+v", ev)
	}
	if c := res.Summary.Counters; c["kv_move_success"] != 1 || c["kv_move_failed"] != 1 {
		t.Errorf("counters %v", c)
	}
}

// TestEvacuationBudget (rule: the budget caps the blocks planned, most
// recent chain first, cutting the chain that would pass it). Budget 4: B
// sends 2; A would send 4, more than the 2 left, so it is cut to its
// longest prefix sending at most 2: blocks 1-6 (1-4 in worker 2's G1, 5-6
// sent). Planned 4, landed 4; the move of A requests 2 blocks.
func TestEvacuationBudget(t *testing.T) {
	_, sink, res := runKV(t, evacLines, "events=[{at: 30ms, drain: [0], evacuate: {blocks: 4}}]")
	moves := orderRows(sink.pulls, "move")
	if len(moves) != 2 || moves[1].Target != 2 || moves[1].BlocksRequested != 2 || moves[1].BlocksLanded != 2 {
		t.Fatalf("moves %+v", moves)
	}
	if ev := res.Summary.EventRows[0]; ev.BlocksPlanned != 4 || ev.BlocksLanded != 4 {
		t.Errorf("event row %+v", ev)
	}
}

// TestPrewarmFirstRequestHitsG2 (rule: an add's prewarm prefetches the
// ready workers' most recent chains to the new workers, issued at the add
// and so during their startup). One worker: R0 (ids 1-8) runs 0-10 ms and
// stores 8 blocks in worker 0's G2. At 20 ms worker 1 is added with a
// 10 ms startup and a prewarm: a prefetch of chain 1-8 from worker 0,
// staged at 20 ms, first byte 21, 8 MB: lands at 29 ms, before worker 1 is
// ready at 30. R1 (ids 1-10, 160 tokens) arrives at 40 ms and is routed to
// worker 1 (round robin's turn). Its G1 holds nothing, its G2 blocks 1-8:
// a local G2 hit of 128 tokens (instant H2D), no hint (no worker's G2
// holds block 9); it computes 32 tokens 40-50 ms: first token at 50 ms.
// Without the prewarm it pulls 1-8 from worker 0 (staged 40, first byte
// 41, lands 49) and computes 49-59: first token at 59 ms.
func TestPrewarmFirstRequestHitsG2(t *testing.T) {
	lines := []traceLine{{0, 128, 1, ids(1, 8)}, {40, 160, 1, ids(1, 10)}}
	rows, sink, res := runKV(t, lines, "cluster.workers=1", "events=[{at: 20ms, add: 1, startup: 10ms, prewarm: {blocks: 100}}]")
	pre := orderRows(sink.pulls, "prefetch")
	want := report.PullRow{PullID: 0, RequestID: -1, Source: 0, Target: 1, Mode: "copy", BlocksRequested: 8, BlocksLanded: 8,
		Bytes: 8_000_000, StagedNs: 20 * ms, FirstByteNs: 21 * ms, EndNs: 29 * ms, Outcome: "success", WriteEndNs: 29 * ms, Kind: "prefetch"}
	if len(pre) != 1 || pre[0] != want {
		t.Errorf("prefetches %+v\nwant %+v", pre, want)
	}
	r := rows[1]
	if r.Worker != 1 || r.G2HitTokens != 128 || r.PulledTokens != 0 || r.HintSource != -1 || r.FirstTokenNs != 50*ms {
		t.Errorf("R1 %+v", r)
	}
	if ev := res.Summary.EventRows[0]; ev.BlocksPlanned != 8 || ev.BlocksLanded != 8 || ev.OrdersDoneAfterNs != 9*ms ||
		ev.G2BlocksLeft != -1 || ev.RemovalDelayNs != -1 {
		t.Errorf("event row %+v", ev)
	}

	rows, _, _ = runKV(t, lines, "cluster.workers=1", "events=[{at: 20ms, add: 1, startup: 10ms}]")
	if r := rows[1]; r.Worker != 1 || r.PulledTokens != 128 || r.HintSource != 0 || r.FirstTokenNs != 59*ms {
		t.Errorf("R1 without the prewarm %+v", r)
	}
}

// TestEvacuationSpreads (rule: an evacuation counts each chain it placed
// as a request routed to its destination, so private chains spread as
// the router would spread their requests rather than all going to the
// cheapest worker). Worker 0 runs R0 (ids 1-4) and R3 (ids 30-33), held
// nowhere else; R1 and R2 (ids 10-13, 20-23) run on workers 1 and 2. At
// the drain every load is zero: 30-33 (the more recent) costs 4 on both,
// tie to worker 1; then 1-4 costs 4 + 4 on worker 1 (the chain placed
// there) and 4 on worker 2: worker 2.
func TestEvacuationSpreads(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, ids(10, 4)}, {2, 64, 1, ids(20, 4)}, {3, 64, 1, ids(30, 4)}}
	_, sink, _ := runKV(t, lines, "events=[{at: 30ms, drain: [0], evacuate: {blocks: 100}}]")
	moves := orderRows(sink.pulls, "move")
	if len(moves) != 2 || moves[0].Target != 1 || moves[1].Target != 2 || moves[0].BlocksLanded != 4 || moves[1].BlocksLanded != 4 {
		t.Errorf("moves %+v", moves)
	}
}

// TestPrewarmPastHeadNoG2Holds (rule: an order lists its chain's blocks
// from the first its source holds in G2, so a chain whose head lives only
// in G1 can still be warmed past it). G2 holds 4 blocks a worker. R0 (A:
// ids 1-4) runs on worker 0 0-10 ms and stores 1-4; R1 (B: ids 1-2, 5-6)
// waits, runs 10-20 ms with 1-2 from G1 and stores 5-6, evicting the least
// recent two, 1-2: worker 0's G2 holds 3-6, its G1 the head 1-2. At 30 ms
// worker 1 is added (startup 0) with a prewarm: B's chain (the more recent)
// from block 2, 5-6, then A's from block 2, 3-4; one at a time: staged at
// 30 and 33 ms, each 2 MB, landing at 33 and 36 ms. Planned and landed 4.
// Starting at block 0 instead, no walk could send anything: no G2 holds
// block 1.
func TestPrewarmPastHeadNoG2Holds(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, []int{1, 2, 5, 6}}}
	_, sink, res := runKV(t, lines, "cluster.workers=1", "cluster.g2.capacity_blocks=4",
		"events=[{at: 30ms, add: 1, prewarm: {blocks: 100}}]")
	pre := orderRows(sink.pulls, "prefetch")
	if len(pre) != 2 || pre[0].BlocksRequested != 2 || pre[0].EndNs != 33*ms || pre[1].BlocksRequested != 2 || pre[1].EndNs != 36*ms {
		t.Errorf("prefetches %+v", pre)
	}
	if ev := res.Summary.EventRows[0]; ev.BlocksPlanned != 4 || ev.BlocksLanded != 4 {
		t.Errorf("event row %+v", ev)
	}
}

// TestEventCountsNoWaitingOrderAsReceived (rule: pulls_receiving_at_event
// counts the live pulls a named worker is the target of, not the orders it
// is the source of that wait for their turn). As in
// TestPrewarmPastHeadNoG2Holds, the add at 30 ms has worker 0 prefetch two
// chains to worker 1, one at a time: the first is staged (worker 0 serves
// it), the second waits. A drain of worker 0 at 30 ms, the next event,
// finds it serving 1 pull and receiving none.
func TestEventCountsNoWaitingOrderAsReceived(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, []int{1, 2, 5, 6}}}
	_, _, res := runKV(t, lines, "cluster.workers=1", "cluster.g2.capacity_blocks=4",
		"events=[{at: 30ms, add: 1, prewarm: {blocks: 100}}, {at: 30ms, drain: [0]}]")
	if ev := res.Summary.EventRows[1]; ev.PullsServingAtEvent != 1 || ev.PullsReceivingAtEvent != 0 {
		t.Errorf("drain of the prewarm's source: serving %d, receiving %d; want 1, 0", ev.PullsServingAtEvent, ev.PullsReceivingAtEvent)
	}
}
