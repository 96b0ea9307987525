package sim

import (
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
)

// The tests of this file are the KVCR runtime's rules that kvsim once bent
// (docs/kvcr.md, "Runtime behaviour, kvsim rule, test"). Each runs kvBody:
// fixed timing (10 ms prefill, 5 ms decode), 16-token blocks of 1 MB,
// instant G2 links, pulls at 1 GB/s after 1 ms: a block alone takes 1 ms.
// Round robin over 2 workers sends even requests to worker 0, odd ones to
// worker 1.

const us = int64(des.Microsecond)

// wantPullRow compares a pull row with the fields a test works out.
func wantPullRow(t *testing.T, got, want report.PullRow) {
	t.Helper()
	if got != want {
		t.Errorf("pull\n got  %+v\n want %+v", got, want)
	}
}

// TestMoveKeepsTargetG1Blocks (rule: a fetch starts past the target's G1
// prefix). R0 (ids 1-8, 128 tokens) runs on worker 0, 0-10 ms, and stores
// its 8 blocks in worker 0's G2. R1 (ids 1-4) runs on worker 1, 1-11 ms:
// blocks 1-4 in its G1 (and G2). R2 is a filler on worker 0. R3 (ids 1-8)
// reaches worker 1 at 30 ms with a move hint naming worker 0, whose G2
// holds blocks 5-8 past worker 1's prefix of 4. Staged at once: G1 holds
// 4 blocks, the reusable chain is 7 ((128-1)/16), so the fetch is blocks
// 5-7: 3 MB from 31 ms, landing at 34 ms (success). Worker 0 then removes
// its 5-7; its copies of 1-4 stay, for the target never fetched them (the
// old rule invalidated them at staging: 7 removed). R3 computes its last
// 16 tokens, 34-44 ms.
func TestMoveKeepsTargetG1Blocks(t *testing.T) {
	rows, sink, res := runKV(t, []traceLine{{0, 128, 1, ids(1, 8)}, {1, 64, 1, ids(1, 4)}, {20, 32, 1, ids(50, 2)},
		{30, 128, 1, ids(1, 8)}}, "cluster.workers=2", "router.hints.mode=move")
	if r := rows[3]; r.HintSource != 0 || r.G1HitTokens != 64 || r.PulledTokens != 48 || r.FirstTokenNs != 44*ms {
		t.Errorf("R3 %+v", r)
	}
	if len(sink.pulls) != 1 {
		t.Fatalf("pulls %+v", sink.pulls)
	}
	wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 3, Source: 0, Target: 1, Mode: "move",
		BlocksRequested: 3, BlocksLanded: 3, Bytes: 3_000_000, StagedNs: 30 * ms, FirstByteNs: 31 * ms, EndNs: 34 * ms,
		Outcome: "success", WriteEndNs: 34 * ms})
	if c := res.Summary.Counters; c["move_removed_blocks"] != 3 {
		t.Errorf("move_removed_blocks %d, want 3", c["move_removed_blocks"])
	}
}

// hintLines: R0 (ids 1-4) on worker 0, 0-10 ms. R1 keeps worker 1 (one
// request at a time) busy 1-106 ms. R2 (ids 1-8) on worker 0 at 12 ms
// extends worker 0's G2 to blocks 1-8 by 22 ms. R3 (ids 1-8) reaches
// worker 1 at 13 ms with a hint naming worker 0, whose G2 then held blocks
// 1-4: the hint lists 4 blocks.
var hintLines = []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 20, ids(20, 4)}, {12, 128, 1, ids(1, 8)}, {13, 128, 1, ids(1, 8)}}

// TestPullLimitedToHint (rule: only blocks the hint listed are remote
// candidates). R3 is staged when R1 ends, at 106 ms. Of its reusable 7
// blocks worker 0 now holds all 7, but the hint listed 4: the pull takes
// blocks 1-4, 4 MB, 107-111 ms: partial (4 of 7). R3 computes 64 tokens,
// 111-121 ms. In move mode worker 0 removes those 4 blocks, not 7. (The
// old rule pulled all 7, success, landing at 114 ms.) With
// kvcr.opportunistic_query the source's blocks past the hint come too, as
// copies: 7 blocks, success at 114 ms; a move removes only the hint's 4.
func TestPullLimitedToHint(t *testing.T) {
	sets := []string{"cluster.workers=2", "cluster.engine.max_num_seqs=1"}
	rows, sink, _ := runKV(t, hintLines, sets...)
	if r := rows[3]; r.HintSource != 0 || r.PulledTokens != 64 || r.FirstTokenNs != 121*ms {
		t.Errorf("R3 %+v", r)
	}
	want := report.PullRow{Kind: "request", PullID: 0, RequestID: 3, Source: 0, Target: 1, Mode: "copy", BlocksRequested: 7,
		BlocksLanded: 4, Bytes: 4_000_000, StagedNs: 106 * ms, FirstByteNs: 107 * ms, EndNs: 111 * ms, Outcome: "partial", WriteEndNs: 111 * ms}
	wantPullRow(t, sink.pulls[0], want)

	_, sink, res := runKV(t, hintLines, append(sets, "router.hints.mode=move")...)
	want.Mode = "move"
	wantPullRow(t, sink.pulls[0], want)
	if c := res.Summary.Counters; c["move_removed_blocks"] != 4 {
		t.Errorf("move: move_removed_blocks %d, want 4", c["move_removed_blocks"])
	}

	for _, mode := range []string{"copy", "move"} {
		rows, sink, res := runKV(t, hintLines, append(sets, "router.hints.mode="+mode, "kvcr.opportunistic_query=true")...)
		if r := rows[3]; r.PulledTokens != 112 || r.FirstTokenNs != 124*ms {
			t.Errorf("opportunistic %s: R3 %+v", mode, r)
		}
		want := report.PullRow{Kind: "request", PullID: 0, RequestID: 3, Source: 0, Target: 1, Mode: mode, BlocksRequested: 7,
			BlocksLanded: 7, Bytes: 7_000_000, StagedNs: 106 * ms, FirstByteNs: 107 * ms, EndNs: 114 * ms, Outcome: "success", WriteEndNs: 114 * ms}
		wantPullRow(t, sink.pulls[0], want)
		if removed := res.Summary.Counters["move_removed_blocks"]; (mode == "move") != (removed == 4) || removed > 4 {
			t.Errorf("opportunistic %s: move_removed_blocks %d", mode, removed)
		}
	}
}

// parkLines: worker 1's G2 holds 4 blocks, all filling until 15 ms. R0
// (ids 1-4) on worker 0, 0-10 ms: its 4 blocks reach worker 0's G2 over a
// 1 GB/s D2H link at 14 ms. R1 (ids 20-23) on worker 1, 1-11 ms: its 4
// blocks fill worker 1's G2 from 11 ms to 15 ms. R2 is a filler on worker
// 0. R3 (ids 1-4) reaches the idle worker 1 at 14 ms, just after worker
// 0's store landed, with a hint naming worker 0; its pull needs 3 slots
// and all 4 are filling: it parks.
var parkLines = []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, ids(20, 4)}, {13, 32, 1, ids(50, 2)}, {14, 64, 1, ids(1, 4)}}

var parkSets = []string{"cluster.workers=2", "cluster.g2.capacity_blocks=4", "cluster.g2.d2h_gbps=1"}

// TestParkedPullRetriesWhenStoreLands (rule: drive scans run at every
// instant at which anything happened, a G2 store landing included). The
// store to worker 1 lands
// at 15 ms and the parked pull is staged again: 3 slots to be had by
// evicting R1's blocks, 3 MB from 16 ms, landing at 19 ms (success); R3
// computes 16 tokens, 19-29 ms. (Nothing woke the idle worker before: the
// pull expired at its 100 ms deadline, 114 ms, and R3 computed everything,
// 114-124 ms.)
func TestParkedPullRetriesWhenStoreLands(t *testing.T) {
	rows, sink, res := runKV(t, parkLines, parkSets...)
	if r := rows[3]; r.HintSource != 0 || r.PulledTokens != 48 || r.FirstTokenNs != 29*ms {
		t.Errorf("R3 %+v", r)
	}
	wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 3, Source: 0, Target: 1, Mode: "copy",
		BlocksRequested: 3, BlocksLanded: 3, Bytes: 3_000_000, StagedNs: 14 * ms, FirstByteNs: 16 * ms, EndNs: 19 * ms,
		Outcome: "success", WriteEndNs: 19 * ms})
	if c := res.Summary.Counters; c["pulls_parked"] != 1 {
		t.Errorf("pulls_parked %d", c["pulls_parked"])
	}
}

// TestParkedPullRejectedWhenSourceDrains: as above, with worker 0 draining
// at 14.8 ms, before the store lands. The drain is an instant at which
// something happened: the parked pull is staged again, its source is
// draining, and it is rejected at 14.8 ms; R3 computes all 64 tokens,
// 14.8-24.8 ms. (It used to wait for its deadline and expire.)
func TestParkedPullRejectedWhenSourceDrains(t *testing.T) {
	rows, sink, res := runKV(t, parkLines, append(parkSets, "events=[{at: 14800us, drain: [0]}]")...)
	if r := rows[3]; r.PulledTokens != 0 || r.FirstTokenNs != 24800*us {
		t.Errorf("R3 %+v", r)
	}
	wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 3, Source: 0, Target: 1, Mode: "copy",
		BlocksRequested: 3, StagedNs: 14 * ms, FirstByteNs: -1, EndNs: 14800 * us, Outcome: "rejected", WriteEndNs: -1})
	if c := res.Summary.Counters; c["pulls_rejected_draining"] != 1 || c["pulls_expired"] != 0 {
		t.Errorf("counters %v", c)
	}
}

// TestFillingBlocksSettleFirst (rules: target blocks still filling settle
// first; a retry with nothing left to fetch is superseded). R0 (ids 1-4)
// on worker 0, 0-10 ms. R1 keeps worker 1 (one request at a time) busy
// 1-106 ms. R3 and R5 (both ids 1-4) reach worker 1 with hints naming
// worker 0; R2 and R4 are fillers on worker 0. At 106 ms R3 is staged:
// blocks 1-3, 3 MB, 107-110 ms, their slots at worker 1 filling. R5 is
// staged next: its first block is filling, so it parks. At 110 ms R3's
// blocks land and R3 runs, 110-120 ms (computing 16 tokens); at 120 ms R5
// is staged again: worker 1's G1 now holds its reusable 3 blocks, nothing
// is left to fetch: superseded. R5 computes 16 tokens, 120-130 ms. (The
// old rule sent the 3 blocks twice: 6 MB sharing the egress, both landing
// at 113 ms, both success.)
func TestFillingBlocksSettleFirst(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 20, ids(20, 4)}, {11, 32, 1, ids(50, 2)}, {12, 64, 1, ids(1, 4)},
		{13, 32, 1, ids(60, 2)}, {14, 64, 1, ids(1, 4)}}
	rows, sink, res := runKV(t, lines, "cluster.workers=2", "cluster.engine.max_num_seqs=1")
	if r := rows[3]; r.PulledTokens != 48 || r.FirstTokenNs != 120*ms {
		t.Errorf("R3 %+v", r)
	}
	if r := rows[5]; r.PulledTokens != 0 || r.G1HitTokens != 48 || r.FirstTokenNs != 130*ms {
		t.Errorf("R5 %+v", r)
	}
	if len(sink.pulls) != 2 {
		t.Fatalf("pulls %+v", sink.pulls)
	}
	wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 3, Source: 0, Target: 1, Mode: "copy",
		BlocksRequested: 3, BlocksLanded: 3, Bytes: 3_000_000, StagedNs: 106 * ms, FirstByteNs: 107 * ms, EndNs: 110 * ms,
		Outcome: "success", WriteEndNs: 110 * ms})
	wantPullRow(t, sink.pulls[1], report.PullRow{Kind: "request", PullID: 1, RequestID: 5, Source: 0, Target: 1, Mode: "copy",
		BlocksRequested: 3, StagedNs: 106 * ms, FirstByteNs: -1, EndNs: 120 * ms, Outcome: "superseded", WriteEndNs: -1})
	if c := res.Summary.Counters; c["pulls_superseded"] != 1 || c["bytes_pulled"] != 3_000_000 || c["pulls_parked"] != 1 {
		t.Errorf("counters %v", c)
	}
}

// TestMinBlocksCountsFetchable (rule: a hint must fetch at least
// router.hints.min_blocks blocks, and staging never fetches the block
// holding the prompt's last token). On 2 workers R0 (ids 1-4, 64 tokens)
// runs on worker 0, 0-10 ms, and stores its 4 blocks in worker 0's G2. R1
// reaches worker 1 at 20 ms holding none of its chain (T = 0).
//
//   - R1 ids 1-4, 64 tokens: staging can pull (64 - 1) / 16 = 3 blocks,
//     so worker 0's run of 4 offers min(4, 3) = 3. With min_blocks 4 that
//     is too few: no hint, no pull, R1 computes its 64 tokens, 20-30 ms.
//     (Counting the whole run, 4, kvsim hinted and pulled 3 blocks.) With
//     min_blocks 3 it is a hint: 3 blocks, 3 MB, 21-24 ms, success (the
//     reusable chain is 3), and R1 computes its last 16 tokens, 24-34 ms.
//   - R1 id 1, 16 tokens, min_blocks 1: staging can pull (16 - 1) / 16 = 0
//     blocks: no hint. (kvsim hinted, and staging found nothing to fetch:
//     hints_attached 1 and hints_nothing_to_fetch 1.) R1 computes 16
//     tokens, 20-30 ms.
func TestMinBlocksCountsFetchable(t *testing.T) {
	for _, tc := range []struct {
		name         string
		r1           traceLine
		minBlocks    string
		source       int32
		pulled, ttft int64
	}{
		{"run of 4, 3 pullable, min 4", traceLine{20, 64, 1, ids(1, 4)}, "4", -1, 0, 30 * ms},
		{"run of 4, 3 pullable, min 3", traceLine{20, 64, 1, ids(1, 4)}, "3", 0, 48, 34 * ms},
		{"one block, none pullable, min 1", traceLine{20, 16, 1, ids(1, 1)}, "1", -1, 0, 30 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, sink, res := runKV(t, []traceLine{{0, 64, 1, ids(1, 4)}, tc.r1}, "cluster.workers=2",
				"router.hints.min_blocks="+tc.minBlocks)
			if r := rows[1]; r.Worker != 1 || r.HintSource != tc.source || r.PulledTokens != tc.pulled || r.FirstTokenNs != tc.ttft {
				t.Errorf("R1 %+v", r)
			}
			hinted := int64(0)
			if tc.source >= 0 {
				hinted = 1
				if len(sink.pulls) != 1 {
					t.Fatalf("pulls %+v", sink.pulls)
				}
				wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 1, Source: 0, Target: 1, Mode: "copy",
					BlocksRequested: 3, BlocksLanded: 3, Bytes: 3_000_000, StagedNs: 20 * ms, FirstByteNs: 21 * ms, EndNs: 24 * ms,
					Outcome: "success", WriteEndNs: 24 * ms})
			} else if len(sink.pulls) != 0 {
				t.Errorf("pulls %+v", sink.pulls)
			}
			if c := res.Summary.Counters; c["hints_attached"] != hinted || c["hints_nothing_to_fetch"] != 0 || c["pulls_staged"] != hinted {
				t.Errorf("hints_attached %d, hints_nothing_to_fetch %d, pulls_staged %d; want %d, 0, %d",
					c["hints_attached"], c["hints_nothing_to_fetch"], c["pulls_staged"], hinted, hinted)
			}
		})
	}
}

// TestRecomputedBlocksReachG2 (rule: a store takes over the slots of a
// write its target gave up on; the write's end does not free them). kvBody
// on 2 workers with a G1 of 12 blocks and a 0.032 GB/s egress: a 1 MB
// block takes 31.25 ms.
//
//   - R0 (ids 1-4, 64 tokens) runs on worker 0, 0-10 ms, and stores its 4
//     blocks in worker 0's G2.
//   - R1 (ids 1-5, 80 tokens) reaches worker 1 at 20 ms with a hint naming
//     worker 0 for 4 blocks, all it may reuse ((80 - 1) / 16 = 4). Staged
//     at 20 ms: 4 MB, first byte 21 ms, last byte 21 + 125 = 146 ms. A copy
//     waits until 20 + 100 = 120 ms: expired then, and its slots 1-4 at
//     worker 1 are discarded; its source gives up at 21 + min(100, 100) =
//     121 ms and the write runs on to 146 ms. R1 computes its 80 tokens,
//     120-130 ms, and stores blocks 1-5 at 130 ms: 1-4 take over the
//     discarded slots and 5 takes a new one, all ready at once (instant
//     D2H). At 146 ms the write ends, and frees nothing.
//   - R2 (150 ms) and R4 (170 ms), 8 tokens each, run on worker 0, 10 ms
//     each, and store nothing (no full block).
//   - R3 (ids 40-50, 176 tokens, 11 blocks) runs on worker 1, 151-161 ms,
//     storing 11 blocks. Its G1 takes 4 of R1's 5 cached blocks, freed
//     tail first: 5, 4, 3, 2 go, 1 stays.
//   - R5 (ids 1-4 and 9, 80 tokens) reaches worker 1 at 171 ms. Its prefix
//     there is block 1 in G1 and 2-4 in G2: all 4 it may reuse, so no hint.
//     It loads 2-4 from its own G2 (48 tokens, instant H2D) and computes
//     16, 171-181 ms: TTFT 10 ms. It stores block 9, the one it computed.
//
// One pull, expired; g2_stores 4 + 5 + 11 + 1 = 21, none dropped; 3 G2 hit
// blocks. In move mode R1's target waits until 20 + 200 = 220 ms, but its
// source gives up at 121 ms and the target hears it at 122 ms: failed
// then, slots discarded, the source keeping its copies. R1 computes
// 122-132 ms and its store takes 1-4 over as above; R5 is the same local
// hit, and worker 0 removes nothing. (The old rule skipped 1-4 as filling
// and stored 5 alone; the write's end freed 1-4, so R5 was hinted to worker
// 0 for 2-4: 3 MB, 172-265.75 ms, then 16 tokens, 265.75-275.75 ms, TTFT
// 104.75 ms; g2_stores 17, and in move mode worker 0 removed those 3.)
//
// The reviewer's move case, with kvBody's G1: R0 and R1 as above, R1's
// move failing at 122 ms and its store at 132 ms taking 1-4 over; R2 (ids
// 1-4 and 6) reaches worker 0 at 300 ms, hits 64 tokens in its G1 and
// computes 16, 300-310 ms, storing block 6. g2_stores 4 + 5 + 1 = 10, and
// worker 1's G2 ends with 5 blocks (the old rule: 6, and 1 block).
func TestRecomputedBlocksReachG2(t *testing.T) {
	lines := []traceLine{{0, 64, 1, ids(1, 4)}, {20, 80, 1, ids(1, 5)}, {150, 8, 1, ids(90, 1)},
		{151, 176, 1, ids(40, 11)}, {170, 8, 1, ids(91, 1)}, {171, 80, 1, []int{1, 2, 3, 4, 9}}}
	for _, tc := range []struct {
		mode    string
		out     string
		end, r1 int64 // pull 0's end, R1's first token
	}{
		{"copy", "expired", 120 * ms, 130 * ms},
		{"move", "failed", 122 * ms, 132 * ms},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			rows, sink, res := runKV(t, lines, "cluster.workers=2", "cluster.engine.gpu_blocks=12",
				"kvcr.bandwidth_gbps=0.032", "router.hints.mode="+tc.mode)
			if len(sink.pulls) != 1 {
				t.Errorf("pulls %+v, want R1's alone", sink.pulls)
			} else {
				wantPullRow(t, sink.pulls[0], report.PullRow{Kind: "request", PullID: 0, RequestID: 1, Source: 0, Target: 1, Mode: tc.mode,
					BlocksRequested: 4, Bytes: 4_000_000, StagedNs: 20 * ms, FirstByteNs: 21 * ms, EndNs: tc.end,
					Outcome: tc.out, WriteEndNs: 146 * ms})
			}
			if r := rows[1]; r.ComputedPromptTokens != 80 || r.FirstTokenNs != tc.r1 {
				t.Errorf("R1 %+v", r)
			}
			if r := rows[5]; r.Worker != 1 || r.HintSource != -1 || r.G1HitTokens != 16 || r.G2HitTokens != 48 ||
				r.PulledTokens != 0 || r.ComputedPromptTokens != 16 || r.FirstTokenNs != 181*ms {
				t.Errorf("R5 %+v", r)
			}
			c := res.Summary.Counters
			if c["g2_stores"] != 21 || c["g2_stores_dropped"] != 0 || c["g2_hits_blocks"] != 3 || c["hints_attached"] != 1 ||
				c["blocks_pulled"] != 0 || c["move_removed_blocks"] != 0 || c["move_lost_blocks"] != 0 {
				t.Errorf("g2_stores %d, g2_stores_dropped %d, g2_hits_blocks %d, hints_attached %d, blocks_pulled %d, move_removed_blocks %d, move_lost_blocks %d; want 21, 0, 3, 1, 0, 0, 0",
					c["g2_stores"], c["g2_stores_dropped"], c["g2_hits_blocks"], c["hints_attached"], c["blocks_pulled"],
					c["move_removed_blocks"], c["move_lost_blocks"])
			}
		})
	}

	rows, sink, res := runKV(t, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 80, 1, ids(1, 5)}, {300, 80, 1, []int{1, 2, 3, 4, 6}}},
		"cluster.workers=2", "kvcr.bandwidth_gbps=0.032", "router.hints.mode=move")
	if r := rows[2]; r.Worker != 0 || r.G1HitTokens != 64 || r.ComputedPromptTokens != 16 || r.FirstTokenNs != 310*ms {
		t.Errorf("move, R2 %+v", r)
	}
	g2 := int64(-1)
	for _, x := range sink.samples {
		if x.Worker == 1 {
			g2 = x.G2Blocks
		}
	}
	if c := res.Summary.Counters; c["g2_stores"] != 10 || c["g2_stores_dropped"] != 0 || c["pulls_failed"] != 1 || g2 != 5 {
		t.Errorf("move: g2_stores %d, g2_stores_dropped %d, pulls_failed %d, worker 1's G2 at the end %d; want 10, 0, 1, 5",
			c["g2_stores"], c["g2_stores_dropped"], c["pulls_failed"], g2)
	}
}
