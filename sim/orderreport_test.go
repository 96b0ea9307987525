package sim

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// TestPullsByKind: summary.json's pulls_by_kind agrees with pulls.parquet.
// The golden evacuate.yaml has pulls of every kind and outcome but partial
// orders: a drain evacuating by move (event 0), one by copy (event 1) and a
// prewarm (event 2), both prefetches. Each kind's figures, the request's
// derived as the totals less the two kinds, equal a count of its rows:
// staged those with bytes (a transfer started), landed blocks and bytes
// those of rows that landed any. A run without orders has none, and its
// summary.json no such key. (results.TestPullsByKindNames holds the keys
// to KVCR's kinds.)
func TestPullsByKind(t *testing.T) {
	sc, err := scenarios.Load("../scenarios/golden/evacuate.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	sink, res := runSink(t, sc)
	byKind := map[string]*results.KindPulls{}
	for _, p := range sink.pulls {
		k := byKind[p.Kind]
		if k == nil {
			k = &results.KindPulls{}
			byKind[p.Kind] = k
		}
		if p.Bytes > 0 {
			k.Staged++
		}
		*map[string]*int64{"success": &k.Success, "partial": &k.Partial, "failed": &k.Failed, "expired": &k.Expired,
			"rejected": &k.Rejected, "superseded": &k.Superseded}[p.Outcome]++
		if p.BlocksLanded > 0 {
			k.BlocksLanded += p.BlocksLanded
			k.Bytes += p.Bytes
		}
	}
	got := res.Summary.PullsByKind
	if got == nil {
		t.Fatal("no pulls_by_kind")
	}
	want := results.PullsByKind{Request: *byKind["request"], Move: *byKind["move"], Prefetch: *byKind["prefetch"]}
	want.Move.Events, want.Prefetch.Events = []int32{0}, []int32{1, 2}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("pulls_by_kind %+v\nwant (pulls.parquet) %+v", *got, want)
	}
	if want.Move.Expired+want.Prefetch.Expired == 0 || want.Request.Partial == 0 || want.Prefetch.Rejected == 0 {
		t.Errorf("the golden no longer has the outcomes this test needs: %+v", want)
	}
	_, _, res = runKV(t, spaced(2))
	if b, _ := json.Marshal(res.Summary); res.Summary.PullsByKind != nil || strings.Contains(string(b), "pulls_by_kind") {
		t.Errorf("a run without orders: %s", b)
	}
}

// TestPullsByKindStagedWithoutBytes: pulls_by_kind's staged is
// pulls_staged's share, whether or not a byte was sent. R0 and R1 (ids
// 1-4, 64 tokens) run on workers 0 (0-10 ms) and 1 (1-11 ms; worker 0's
// G2 is still empty at 1 ms: no hint) and both store the chain. Worker 2
// joins at 30 ms with a prewarm: worker 0's chain is dealt to it, a
// prefetch of 4 blocks staged at 30 ms (TestLedgerLeftOut, "other
// source"). With kvcr.session_setup 150ms its request reaches worker 0 at
// 31 ms and the pair's session is ready at 181 ms; the target gives up at
// 30 + 100 = 130 ms (a copy's operation timeout: expired) and the source
// at 31 + min(100, 100) = 131 ms, before any byte: the row has bytes 0 and
// first_byte_ns -1, yet the pull was staged: prefetch staged 1 and
// expired 1, pulls_staged 1, and the request share (the totals less the
// kinds) 0.
func TestPullsByKindStagedWithoutBytes(t *testing.T) {
	_, sink, res := runKV(t, []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, ids(1, 4)}}, "cluster.workers=2",
		"kvcr.session_setup=150ms", "events=[{at: 30ms, add: 1, prewarm: {blocks: 100}}]")
	if len(sink.pulls) != 1 {
		t.Fatalf("pulls %+v", sink.pulls)
	}
	if p := sink.pulls[0]; p.Kind != "prefetch" || p.Outcome != "expired" || p.Bytes != 0 || p.FirstByteNs != -1 ||
		p.StagedNs != 30*ms || p.EndNs != 130*ms || p.Source != 0 || p.Target != 2 {
		t.Errorf("pull %+v", p)
	}
	got := res.Summary.PullsByKind
	if got == nil {
		t.Fatal("no pulls_by_kind")
	}
	want := results.PullsByKind{Prefetch: results.KindPulls{Events: []int32{0}, Staged: 1, Expired: 1}}
	if !reflect.DeepEqual(*got, want) || res.Summary.Counters["pulls_staged"] != 1 {
		t.Errorf("pulls_by_kind %+v, pulls_staged %d; want %+v, 1", *got, res.Summary.Counters["pulls_staged"], want)
	}
}

// fourChains, on kvBody with 2 workers (round robin: even requests to
// worker 0): 8 requests 100 ms apart, each its own chain of 4 blocks of 1
// MB (64 tokens), done 10 ms after it arrives. At 750 ms worker 0 holds 4
// chains, 16 blocks, in G2 and runs nothing; its last request ended at
// 610 ms.
func fourChains() []traceLine {
	var lines []traceLine
	for i := range 8 {
		lines = append(lines, traceLine{100 * i, 64, 1, ids(10*i+1, 4)})
	}
	return lines
}

// TestOrderWarnings: a what-if by orders that did nothing, or lost most
// of what it planned, says so; one that did its work does not.
//
//   - spaced(2) on 3 workers: worker 0 runs the first request and holds
//     its block in G2 from 10 ms, worker 1 the second from 110 ms. Worker
//     2 holds nothing: evacuating it at 150 ms plans no block. Worker 0's
//     block is moved to worker 1 (lowest id of the equal costs) at 150 ms:
//     planned 1, landed at 152 ms: no warning.
//   - R0 and R1 (ids 1-4) on 2 workers: R1 on worker 1 pulls blocks 1-3
//     from worker 0 and computes block 4, so at 100 ms worker 1, the only
//     worker left to take them, holds all 4 of worker 0's G2 blocks:
//     nothing can be sent.
//   - An add at 5 ms, before any block reached G2, has no chain to
//     prewarm from; at 50 ms worker 0's block is prefetched.
//   - With a 1 ms background timeout that prefetch (staged 50 ms, first
//     byte 51 ms, 1 MB landing at 52 ms) expires at 51 ms.
//   - fourChains, worker 0 drained at 750 ms with a 10 ms background
//     timeout. With kvcr.background_inflight 0 its 4 moves (4 MB each) are
//     staged at once: first bytes at 751 ms, 16 MB at 1 GB/s shared end at
//     767 ms, past the targets' deadline at 760 ms: all 4 expire, 0 of 16
//     blocks land. With 1 (the default) each runs alone, 1 + 4 ms, well
//     inside its 10 ms: 750-755, 755-760, 760-765, 765-770 ms, all land.
//     A drain timeout (100 ms, past the moves) is named among the knobs.
//     With no background timeout and a request pull's shortened to 10 ms
//     (operation) and 20 ms (abandon), a move's target waits to 770 ms but
//     its source gives up at 751 + min(10, 19) = 761 ms, before the shared
//     end at 767 ms: all 4 fail, and the all-at-once warning names them.
//   - Three chains sharing 6 blocks on worker 0 (1-7, 1-6+20, 1-6+30),
//     drained at 500 ms: the plan counts 7 blocks for each (worker 1 holds
//     none then), 21; the first move lands 7 and the next two only their
//     last block: 9 of 21 land, under half, but nothing was lost: no
//     warning.
func TestOrderWarnings(t *testing.T) {
	shared := []traceLine{{0, 112, 1, ids(1, 7)}, {100, 16, 1, ids(90, 1)}, {200, 112, 1, append(ids(1, 6), 20)},
		{300, 16, 1, ids(91, 1)}, {400, 112, 1, append(ids(1, 6), 30)}}
	drain := "events=[{at: 750ms, drain: [0], evacuate: {blocks: 100}}]"
	for _, c := range []struct {
		name            string
		lines           []traceLine
		sets            []string
		planned, landed int64
		want            []string
	}{
		{"empty", spaced(2), []string{"events=[{at: 150ms, drain: [2], evacuate: {blocks: 10}}]"}, 0, 0,
			[]string{"event 0 evacuates worker 2, which held nothing in G2 at 150ms: the evacuation tests nothing"}},
		{"moved", spaced(2), []string{"events=[{at: 150ms, drain: [0], evacuate: {blocks: 10}}]"}, 1, 1, nil},
		{"held", []traceLine{{0, 64, 1, ids(1, 4)}, {20, 64, 1, ids(1, 4)}},
			[]string{"cluster.workers=2", "events=[{at: 100ms, drain: [0], evacuate: {blocks: 10}}]"}, 0, 0,
			[]string{"event 0 evacuates worker 0, but none of its 4 G2 blocks could be sent at 100ms " +
				"(no worker was ready to take them, or those the router would send their chains to held them already): the evacuation tests nothing"}},
		{"early add", spaced(2), []string{"events=[{at: 5ms, add: 1, prewarm: {blocks: 10}}]"}, 0, 0,
			[]string{"event 0 prewarms worker 3, but the ready workers' G2 held no chain to send at 5ms: the prewarm tests nothing"}},
		{"add", spaced(2), []string{"events=[{at: 50ms, add: 1, prewarm: {blocks: 10}}]"}, 1, 1, nil},
		{"all at once", fourChains(), []string{"cluster.workers=2", "kvcr.background_timeout=10ms", "kvcr.background_inflight=0", drain}, 16, 0,
			[]string{"event 0's evacuation landed 0 of the 16 blocks it planned (0.0%): of the run's 4 moves (event 0), " +
				"4 expired, 0 failed, 0 dropped; a longer kvcr.background_timeout, or another kvcr.background_inflight, lets more land",
				"kvcr.background_inflight 0 stages every order at once, and 4 of the run's 4 moves (event 0) expired or failed: " +
					"sharing their sources' links, they all end late; kvcr.background_inflight 1 (the default) sends one at a time from each source"}},
		{"all at once, drain timeout", fourChains(), []string{"cluster.workers=2", "kvcr.background_timeout=10ms", "kvcr.background_inflight=0",
			"events=[{at: 750ms, drain: [0], drain_timeout: 100ms, evacuate: {blocks: 100}}]"}, 16, 0,
			[]string{"event 0's evacuation landed 0 of the 16 blocks it planned (0.0%): of the run's 4 moves (event 0), " +
				"4 expired, 0 failed, 0 dropped; a longer kvcr.background_timeout or drain_timeout, or another kvcr.background_inflight, lets more land",
				"kvcr.background_inflight 0 stages every order at once, and 4 of the run's 4 moves (event 0) expired or failed: " +
					"sharing their sources' links, they all end late; kvcr.background_inflight 1 (the default) sends one at a time from each source"}},
		{"all at once, source deadline", fourChains(), []string{"cluster.workers=2", "kvcr.operation_timeout=10ms", "kvcr.abandon_timeout=20ms",
			"kvcr.background_inflight=0", drain}, 16, 0,
			[]string{"event 0's evacuation landed 0 of the 16 blocks it planned (0.0%): of the run's 4 moves (event 0), " +
				"0 expired, 4 failed, 0 dropped; a longer kvcr.background_timeout, or another kvcr.background_inflight, lets more land",
				"kvcr.background_inflight 0 stages every order at once, and 4 of the run's 4 moves (event 0) expired or failed: " +
					"sharing their sources' links, they all end late; kvcr.background_inflight 1 (the default) sends one at a time from each source"}},
		{"late prefetch", spaced(2), []string{"kvcr.background_timeout=1ms", "events=[{at: 50ms, add: 1, prewarm: {blocks: 10}}]"}, 1, 0,
			[]string{"event 0's prewarm landed 0 of the 1 blocks it planned (0.0%): of the run's 1 prefetches (event 0), " +
				"1 expired, 0 failed, 0 dropped; a longer kvcr.background_timeout, or another kvcr.background_inflight, lets more land"}},
		{"one at a time", fourChains(), []string{"cluster.workers=2", "kvcr.background_timeout=10ms", drain}, 16, 16, nil},
		{"shared", shared, []string{"cluster.workers=2", "events=[{at: 500ms, drain: [0], evacuate: {blocks: 100}}]"}, 21, 9, nil},
	} {
		_, _, res := runKV(t, c.lines, c.sets...)
		var got []string
		for _, w := range res.Summary.Warnings {
			if strings.HasPrefix(w, "event 0 evacuates") || strings.HasPrefix(w, "event 0 prewarms") ||
				strings.HasPrefix(w, "event 0's") || strings.HasPrefix(w, "kvcr.") {
				got = append(got, w)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: warnings %q\nwant %q", c.name, got, c.want)
		}
		if r := res.Summary.EventRows[0]; r.BlocksPlanned != c.planned || r.BlocksLanded != c.landed {
			t.Errorf("%s: %d blocks planned, %d landed; want %d, %d", c.name, r.BlocksPlanned, r.BlocksLanded, c.planned, c.landed)
		}
	}
}

// TestCostWarning: in costLines under kvBody's fixed timing
// (TestCostPolicyHintsLess) policy cost withholds both hints: no request
// pulls, which the run says; under costLinear one hint is attached, and
// with min_blocks none is withheld: no warning. Only the cost runs' summaries
// report the policy's counters (CostHints).
func TestCostWarning(t *testing.T) {
	want := "router.hints.policy cost withheld all 2 hints the router could attach (recomputing was predicted cheaper every time): " +
		"no request pulled, as with hints off; router.hints.policy min_blocks attaches them"
	for _, c := range []struct {
		sets []string
		want []string
	}{
		{[]string{"router.hints.policy=cost"}, []string{want}},
		{[]string{"router.hints.policy=cost", costLinear}, nil},
		{nil, nil},
	} {
		_, res, _ := runCost(t, c.sets...)
		var got []string
		for _, w := range res.Summary.Warnings {
			if strings.HasPrefix(w, "router.hints.policy") {
				got = append(got, w)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: warnings %q, want %q", c.sets, got, c.want)
		}
		if cost := slices.Contains(c.sets, "router.hints.policy=cost"); res.Summary.CostHints() != cost {
			t.Errorf("%v: CostHints %t", c.sets, !cost)
		}
	}
}
