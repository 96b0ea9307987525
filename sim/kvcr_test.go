package sim

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/report"
)

// kvBody: 3 workers, round robin, fixed timing (10 ms prefill, 5 ms
// decode), 16-token blocks of 1 MB (62,500 bytes a token), instant G2
// links, KVCR at 1 GB/s with 1 ms latency: a block alone takes 1 ms.
const kvBody = `cluster:
  workers: 3
  engine: {block_size: 16, gpu_blocks: 1000, kv_bytes_per_token: 62500, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
  g2: {capacity_blocks: 1000, d2h_gbps: 0, h2d_gbps: 0}
router: {policy: round_robin, hints: {enabled: true, mode: copy}}
kvcr: {enabled: true, latency: 1ms, bandwidth_gbps: 1, operation_timeout: 100ms, abandon_timeout: 200ms}
`

// runKV runs kvBody on a trace.
func runKV(t *testing.T, lines []traceLine, sets ...string) ([]report.RequestRow, *rowSink, *Result) {
	t.Helper()
	sink, res := runTraceSink(t, kvBody, lines, sets...)
	return sink.rows, sink, res
}

// TestPartialFollowUp: R0 (64 tokens, ids 1-4) runs on worker 0 (0-10 ms);
// its 4 blocks go to worker 0's G2. The follow-up R1 (128 tokens, ids 1-8)
// goes to worker 1 at 20 ms with a hint naming worker 0. Staged at once:
// 7 blocks missing (8 full, the last token always recomputed), worker 0
// holds 4: a partial pull of 4 MB, first byte 21 ms, landing 25 ms. R1 then
// loads them (instant H2D) and computes 64 tokens: 25-35 ms.
func TestPartialFollowUp(t *testing.T) {
	rows, sink, res := runKV(t, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}})
	r := rows[1]
	if r.Worker != 1 || r.HintSource != 0 || r.PulledTokens != 64 || r.G2HitTokens != 0 ||
		r.ComputedPromptTokens != 64 || r.FirstTokenNs != 35*ms {
		t.Errorf("R1 %+v", r)
	}
	want := report.PullRow{Kind: "request", PullID: 0, RequestID: 1, Source: 0, Target: 1, Mode: "copy", BlocksRequested: 7,
		BlocksLanded: 4, Bytes: 4_000_000, StagedNs: 20 * ms, FirstByteNs: 21 * ms, EndNs: 25 * ms, Outcome: "partial", WriteEndNs: 25 * ms}
	if len(sink.pulls) != 1 || sink.pulls[0] != want {
		t.Errorf("pulls %+v\nwant %+v", sink.pulls, want)
	}
	if s := res.Summary; s.HitRatio.Pulled != 64.0/192 || s.Counters["pulls_partial"] != 1 || s.Counters["hints_attached"] != 1 {
		t.Errorf("summary %+v %v", s.HitRatio, s.Counters)
	}
}

// TestPullBytesOnlyWhenSent: pulls.parquet's bytes is the size of the
// transfer once its first byte is sent, 0 when none was. followUp on 2
// workers: R1's pull of worker 0's 4 blocks (4 x 16 tokens x 62,500 B =
// 4,000,000 B) is staged at 20 ms and would start at 21 ms (staging + 1 ms
// latency); it lacks 7 blocks ((128 - 1) / 16).
//
//   - Unhindered (TestPartialFollowUp): first byte 21 ms, 4 MB at 1 GB/s,
//     last byte and partial at 25 ms: bytes 4,000,000, bytes_pulled the same.
//   - kvcr.session_setup 150ms: the pair's session is set up from the
//     source's receipt, 21 to 171 ms. The target gives up at 20 + 100 =
//     120 ms (expired); the source at its receipt + min(100, 120 - 20) =
//     121 ms, before any byte: no first byte, no write (-1), bytes 0. R1
//     computes its 128 tokens at 120 ms: first token 130 ms.
//   - pull_errors {rate: 1, when: start} (TestPullErrorsInARun): the write
//     is not posted at 21 ms, the target hears at 22 ms: failed, no first
//     byte, bytes 0; R1's first token 32 ms.
//   - pull_errors {rate: 1, when: end}: the 4 MB cross the link, 21-25 ms,
//     and nothing lands: failed at 25 ms with bytes 4,000,000 (sent), but
//     bytes_pulled 0 (it counts landed pulls); R1's first token 35 ms.
//
// Each pull was staged (pulls_staged 1) whether or not a byte went. Bytes
// used to be set at staging: 4,000,000 in every case.
func TestPullBytesOnlyWhenSent(t *testing.T) {
	for _, tc := range []struct {
		name, set               string
		out                     string
		firstByte, end, wEnd    int64
		bytes, landed, ttft, bp int64
	}{
		{"unhindered", "kvcr.session_setup=0", "partial", 21 * ms, 25 * ms, 25 * ms, 4_000_000, 4, 35 * ms, 4_000_000},
		{"session setup", "kvcr.session_setup=150ms", "expired", -1, 120 * ms, -1, 0, 0, 130 * ms, 0},
		{"error at start", "events=[{at: 15ms, pull_errors: {rate: 1, when: start}}]", "failed", -1, 22 * ms, -1, 0, 0, 32 * ms, 0},
		{"error at end", "events=[{at: 15ms, pull_errors: {rate: 1, when: end}}]", "failed", 21 * ms, 25 * ms, 25 * ms, 4_000_000, 0, 35 * ms, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, sink, res := runKV(t, followUp, "cluster.workers=2", tc.set)
			if len(sink.pulls) != 1 {
				t.Fatalf("pulls %+v", sink.pulls)
			}
			wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 1, Source: 0, Target: 1, Mode: "copy",
				BlocksRequested: 7, BlocksLanded: tc.landed, Bytes: tc.bytes, StagedNs: 20 * ms, FirstByteNs: tc.firstByte,
				EndNs: tc.end, Outcome: tc.out, WriteEndNs: tc.wEnd})
			if rows[1].FirstTokenNs != tc.ttft {
				t.Errorf("R1 %+v", rows[1])
			}
			if c := res.Summary.Counters; c["pulls_staged"] != 1 || c["bytes_pulled"] != tc.bp {
				t.Errorf("pulls_staged %d, bytes_pulled %d; want 1, %d", c["pulls_staged"], c["bytes_pulled"], tc.bp)
			}
		})
	}
}

// TestMoveNamesNewHolder: as TestPartialFollowUp in move mode. When R1's
// pull lands (25 ms), worker 0 removes blocks 1-4 from its G2. R1's pass
// (25-35 ms) commits its 8 blocks on worker 1, so at 50 ms R2 (the same
// 128 tokens) routed to worker 2 gets a hint naming worker 1: 7 blocks
// (success), 7 MB from 51 ms, landing at 58 ms; worker 1 then removes them.
// Moved blocks: 4 + 7.
func TestMoveNamesNewHolder(t *testing.T) {
	rows, sink, res := runKV(t, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}, {50, 128, 1, ids(1, 8)}},
		"router.hints.mode=move")
	if rows[2].Worker != 2 || rows[2].HintSource != 1 || rows[2].PulledTokens != 112 {
		t.Errorf("R2 %+v", rows[2])
	}
	if p := sink.pulls[1]; p.Source != 1 || p.Outcome != "success" || p.BlocksLanded != 7 || p.EndNs != 58*ms || p.Mode != "move" {
		t.Errorf("second pull %+v", p)
	}
	if c := res.Summary.Counters; c["move_removed_blocks"] != 11 || c["pulls_success"] != 1 || c["pulls_partial"] != 1 {
		t.Errorf("counters %v", c)
	}
}

// TestLocalG2Hit: one worker with a G1 of 8 blocks and a 1 GB/s H2D link.
// R0 (ids 1-4, 64 tokens) runs 0-10 ms; its 4 blocks reach G2. R1 (112
// tokens, 16 output tokens) fills G1: 7 blocks at its prefill (20-30 ms),
// the 8th at its first decode; R0's blocks are all evicted from G1, and R1
// decodes until 105 ms holding every block. R2 (ids 1-4) arrives at 40 ms
// and waits for room. At 105 ms it finds 3 blocks in G2 (the last token is
// recomputed): they load in 3 ms, then it computes 16 tokens, 108-118 ms.
// G2 stores: R0's 4 blocks and R1's 7; R2's 4th block is R0's 4th, still
// in G2.
func TestLocalG2Hit(t *testing.T) {
	rows, _, res := runKV(t, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 112, 16, ids(10, 7)}, {40, 64, 1, ids(1, 4)}},
		"cluster.workers=1", "cluster.engine.gpu_blocks=8", "cluster.g2.h2d_gbps=1")
	r := rows[2]
	if r.G1HitTokens != 0 || r.G2HitTokens != 48 || r.ComputedPromptTokens != 16 || r.FirstTokenNs != 118*ms {
		t.Errorf("R2 %+v", r)
	}
	if c := res.Summary.Counters; c["g2_hits_blocks"] != 3 || c["g2_stores"] != 11 {
		t.Errorf("counters %v", c)
	}
}

// drainLines: every worker runs one request at a time. R0 (ids 1-4) on
// worker 0, 0-10 ms. R1 (20 output tokens) keeps worker 1 busy 1-106 ms.
// R2 (30 output tokens) runs on worker 0 10-165 ms. R3 (ids 1-8) arrives
// at 15 ms for worker 1 with a hint naming worker 0 and waits behind R1.
// Worker 0 drains at 30 ms.
var drainLines = []traceLine{
	{0, 64, 1, ids(1, 4)}, {1, 64, 20, ids(20, 4)}, {2, 32, 30, ids(30, 2)}, {15, 128, 1, ids(1, 8)},
}

const drainSets = "events=[{at: 30ms, drain: [0]}]"

// TestDrainRejectsStaging is the drain regression. When worker 1 reaches R3
// at 106 ms, worker 0 is draining: staging is rejected, nothing is pinned,
// R3 computes all 128 tokens (106-116 ms). Worker 0 is removed when R2
// ends, at 165 ms: the same time as with hints off.
func TestDrainRejectsStaging(t *testing.T) {
	rows, sink, res := runKV(t, drainLines, "cluster.workers=2", "cluster.engine.max_num_seqs=1", drainSets)
	r := rows[3]
	if r.HintSource != 0 || r.PulledTokens != 0 || r.ComputedPromptTokens != 128 || r.FinishNs != 116*ms {
		t.Errorf("R3 %+v", r)
	}
	if len(sink.pulls) != 1 || sink.pulls[0].Outcome != "rejected" || sink.pulls[0].StagedNs != 106*ms {
		t.Errorf("pulls %+v", sink.pulls)
	}
	c := res.Summary.Counters
	if c["pulls_rejected_draining"] != 1 || c["pins_acquired"] != 0 || c["pulls_staged"] != 0 {
		t.Errorf("counters %v", c)
	}
	w0 := res.Workers[0]
	if w0.DrainNs != 30*ms || w0.RemovedNs != 165*ms {
		t.Errorf("worker 0 %+v", w0)
	}
	_, off := runTraceSink(t, kvBody, drainLines, "cluster.workers=2", "cluster.engine.max_num_seqs=1", drainSets,
		"router.hints.enabled=false")
	if got := off.Workers[0].RemovedNs; got != w0.RemovedNs {
		t.Errorf("hints off: worker 0 removed at %d, hints on at %d", got, w0.RemovedNs)
	}
}

// TestDrainedSourceRetiresAfterItsTransfer: a draining worker that is only
// the source of a transfer goes when that transfer ends, however it ends,
// and the pull ends once with its 4 pins released once. (kvsim once
// removed the worker inside the transfer's end, which ended the pull a
// second time.) As TestPartialFollowUp, worker 0 draining at 22 ms with no
// request left:
//   - landed: R1's pull is staged at 20 ms (4 of 7 blocks, 4 MB), first
//     byte 21 ms, landing 25 ms (partial); worker 0 goes at 25 ms, R1
//     computes 64 tokens, 25-35 ms.
//   - landed unused: at 40 MB/s with 10 ms latency and a 105 ms timeout,
//     the first byte is at 30 ms, the target gives up at 125 ms (the
//     pull's end; R1 computes all 128 tokens, 125-135 ms) and the 4 MB land
//     at 130 ms, before the source's deadline (30 + 105 ms): worker 0 goes
//     at 130 ms, when its write ends.
//   - given up: at 32 MB/s the 4 MB take 125 ms; the target gives up at
//     120 ms (R1 computes 120-130 ms), the source at its deadline 21 + 100
//     = 121 ms, but a write cannot be recalled: it runs to its last byte
//     at 21 + 125 = 146 ms, and worker 0 goes then.
func TestDrainedSourceRetiresAfterItsTransfer(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}}
	for _, tc := range []struct {
		name                                 string
		sets                                 []string
		outcome                              string
		landed, pulled, computedR1           int64
		firstByte, end, writeEnd, firstToken int64
	}{
		{"landed", nil, "partial", 4, 64, 64, 21 * ms, 25 * ms, 25 * ms, 35 * ms},
		{"landed unused", []string{"kvcr.bandwidth_gbps=0.04", "kvcr.latency=10ms", "kvcr.operation_timeout=105ms", "kvcr.abandon_timeout=210ms"},
			"expired", 0, 0, 128, 30 * ms, 125 * ms, 130 * ms, 135 * ms},
		{"given up", []string{"kvcr.bandwidth_gbps=0.032"}, "expired", 0, 0, 128, 21 * ms, 120 * ms, 146 * ms, 130 * ms},
	} {
		rows, sink, res := runKV(t, lines, append(tc.sets, "events=[{at: 22ms, drain: [0]}]")...)
		if r := rows[1]; r.PulledTokens != tc.pulled || r.ComputedPromptTokens != tc.computedR1 || r.FirstTokenNs != tc.firstToken {
			t.Errorf("%s: R1 %+v", tc.name, r)
		}
		if len(sink.pulls) != 1 {
			t.Fatalf("%s: pulls %+v", tc.name, sink.pulls)
		}
		if p := sink.pulls[0]; p.Outcome != tc.outcome || p.BlocksLanded != tc.landed || p.FirstByteNs != tc.firstByte ||
			p.EndNs != tc.end || p.WriteEndNs != tc.writeEnd {
			t.Errorf("%s: pull %+v", tc.name, p)
		}
		c := res.Summary.Counters
		if c["pins_acquired"] != 4 || c["pins_released"] != 4 || c["workers_drained"] != 1 || c["pulls_failed"] != 0 {
			t.Errorf("%s: counters %v", tc.name, c)
		}
		if w0 := res.Workers[0]; w0.DrainNs != 22*ms || w0.RemovedNs != tc.writeEnd {
			t.Errorf("%s: worker 0 %+v", tc.name, w0)
		}
	}
}

// lifeBody: 2 workers, one request at a time, round robin, KVCR off.
const lifeBody = `cluster:
  workers: 2
  engine: {max_num_seqs: 1, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
router: {policy: round_robin}
`

// lifeLines: R0 on worker 0 (0-55 ms: a 10 ms prefill and 9 decodes), R1
// on worker 1 (1-56 ms), R2 at 45 ms.
var lifeLines = []traceLine{{0, 32, 10, ids(1, 2)}, {1, 32, 10, ids(3, 2)}, {45, 32, 1, ids(5, 2)}}

// TestRemoveAndAdd: worker 1 is removed at 20 ms; R1 is routed again, to
// worker 0, where it waits for R0 (55 ms) and starts over: 55-110 ms. A
// worker added at 30 ms with a 10 ms startup is ready at 40 ms, and round
// robin over workers 0 and 2 gives it R2: 45-55 ms. One worker added, one
// removed, none drained; one request rerouted.
func TestRemoveAndAdd(t *testing.T) {
	rows, sum := runTrace(t, lifeBody, lifeLines,
		"events=[{at: 20ms, remove: [1]}, {at: 30ms, add: 1, startup: 10ms}]")
	if r := rows[1]; r.Worker != 0 || r.Reroutes != 1 || r.FinishNs != 110*ms || r.Outcome != "completed" {
		t.Errorf("R1 %+v", r)
	}
	if r := rows[2]; r.Worker != 2 || r.FinishNs != 55*ms {
		t.Errorf("R2 %+v", r)
	}
	c := sum.Counters
	if c["workers_added"] != 1 || c["workers_removed"] != 1 || c["workers_drained"] != 0 || c["requests_rerouted"] != 1 {
		t.Errorf("counters %v", c)
	}
}

// TestRemoveSeveral: one event removes workers 0 and 1 of 3 at 20 ms. R0
// (0-55 ms on worker 0) and R1 (1-56 ms on worker 1) are routed again once
// both are gone, so both go to worker 2, once each, behind R2 (2-57 ms):
// R0 57-112 ms, R1 112-167 ms. (kvsim once rerouted R0 to worker 1 before
// removing it, and again to worker 2: 3 reroutes.)
func TestRemoveSeveral(t *testing.T) {
	lines := []traceLine{{0, 32, 10, ids(1, 2)}, {1, 32, 10, ids(3, 2)}, {2, 32, 10, ids(5, 2)}}
	rows, sum := runTrace(t, lifeBody, lines, "cluster.workers=3", "events=[{at: 20ms, remove: [0, 1]}]")
	for i, finish := range []int64{112 * ms, 167 * ms} {
		if r := rows[i]; r.Worker != 2 || r.Reroutes != 1 || r.FinishNs != finish {
			t.Errorf("R%d %+v", i, r)
		}
	}
	if c := sum.Counters; c["requests_rerouted"] != 2 || c["workers_removed"] != 2 {
		t.Errorf("counters %v", c)
	}
}

// TestRemoveFail: with on_remove: fail, R1 fails when its worker goes.
func TestRemoveFail(t *testing.T) {
	rows, sum := runTrace(t, lifeBody, lifeLines, "events=[{at: 20ms, remove: [1], on_remove: fail}]")
	if r := rows[1]; r.Outcome != "failed" || r.FinishNs != 20*ms || sum.Requests.Failed != 1 {
		t.Errorf("R1 %+v", r)
	}
}

// TestDrainTimeout: worker 0 drains at 20 ms; without a timeout it finishes
// R0 and goes at 55 ms. With drain_timeout 10 ms it is removed at 30 ms and
// R0 is routed again (to worker 1, busy with R1 until 56 ms): 56-111 ms.
func TestDrainTimeout(t *testing.T) {
	_, res0 := runTraceSink(t, lifeBody, lifeLines, "events=[{at: 20ms, drain: [0]}]")
	if w := res0.Workers[0]; w.RemovedNs != 55*ms {
		t.Errorf("no timeout: worker 0 %+v", w)
	}
	s, res := runTraceSink(t, lifeBody, lifeLines, "events=[{at: 20ms, drain: [0], drain_timeout: 10ms}]")
	if w := res.Workers[0]; w.RemovedNs != 30*ms || w.DrainNs != 20*ms {
		t.Errorf("timeout: worker 0 %+v", w)
	}
	if c := res.Summary.Counters; c["workers_drained"] != 1 || c["workers_removed"] != 1 || c["workers_added"] != 0 {
		t.Errorf("counters %v", c)
	}
	if r := s.rows[0]; r.Worker != 1 || r.FinishNs != 111*ms || r.Reroutes != 1 {
		t.Errorf("R0 %+v", r)
	}
	if !slices.ContainsFunc(s.samples, func(r report.SampleRow) bool { return r.Worker == 0 && r.TimeNs == 0 }) {
		t.Error("no time-series row for worker 0 at 0")
	}
}

// TestDrainEndsWithRejection: TestPreemption's run without chunked prefill
// or prefix caching and with a budget of 8 tokens, worker 0 draining from
// 20 ms (worker 1, added at 1 ms, is still starting: both requests go to
// worker 0). A and B prefill together (8 tokens, 0-10 ms) and decode at
// 15, 20, 25 and 30 ms; at 30 ms A needs a third block and B is
// preempted. A finishes at 35 ms; B's recompute is 4 + 5 = 9 tokens, past
// the budget, so the scan at 35 ms rejects it and starts no pass. The
// worker then holds nothing and is removed at 35 ms, not left draining to
// the end.
func TestDrainEndsWithRejection(t *testing.T) {
	body := `cluster:
  workers: 1
  engine: {block_size: 4, gpu_blocks: 4, max_batched_tokens: 8, chunked_prefill: false, prefix_caching: false, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
events: [{at: 1ms, add: 1}, {at: 20ms, drain: [0]}]
`
	s, res := runTraceSink(t, body, []traceLine{{0, 4, 6, []int{1}}, {0, 4, 6, []int{2}}})
	a, b := s.rows[0], s.rows[1]
	if a.Outcome != report.OutcomeCompleted || a.FinishNs != 35*ms || b.Outcome != report.OutcomeRejected || b.FinishNs != 35*ms || b.Preemptions != 1 {
		t.Errorf("A %+v\nB %+v", a, b)
	}
	if w := res.Workers[0]; w.DrainNs != 20*ms || w.RemovedNs != 35*ms {
		t.Errorf("worker 0 drained at %d, removed at %d: want 20 ms and 35 ms", w.DrainNs, w.RemovedNs)
	}
}
