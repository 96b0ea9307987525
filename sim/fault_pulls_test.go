package sim

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// followUp is TestPartialFollowUp's trace: R0 (ids 1-4) on worker 0,
// 0-10 ms, its 4 blocks in worker 0's G2; R1 (ids 1-8) on worker 1 at 20
// ms, hinted to worker 0: a pull of 4 blocks (4 MB), staged at 20 ms,
// first byte 21 ms, last byte 25 ms.
var followUp = []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}}

// faultRun runs followUp on kvBody with fault event ev at 15 ms (and
// --check) and returns R1's row, its pull's row, the counters and the
// event's fault columns.
func faultRun(t *testing.T, ev string, sets ...string) (report.RequestRow, report.PullRow, map[string]int64, report.EventFault) {
	t.Helper()
	rows, sink, res := runKV(t, followUp, append([]string{"events=[{at: 15ms, " + ev + "}]"}, sets...)...)
	if len(sink.pulls) != 1 || len(res.Summary.EventRows) != 1 {
		t.Fatalf("%d pulls, %d event rows", len(sink.pulls), len(res.Summary.EventRows))
	}
	return rows[1], sink.pulls[0], res.Summary.Counters, res.Summary.EventRows[0].Fault
}

// TestPullErrorsInARun: R1's pull under a pull_errors fault of rate 1. At
// the start: the write is not posted at 21 ms (first_byte_ns and
// write_end_ns -1), the target hears at 22 ms (failed) and R1 computes its
// 128 tokens, 22-32 ms. At the end: the 4 MB cross the link, 21-25 ms,
// nothing lands, the pull fails at 25 ms and R1 computes 25-35 ms. Either
// way pulls_failed_injected is 1, bytes_pulled 0, and the event's
// fault_pulls 1.
func TestPullErrorsInARun(t *testing.T) {
	for _, tc := range []struct {
		when                 string
		firstByte, end, ttft int64
	}{{"start", -1, 22 * ms, 32 * ms}, {"end", 21 * ms, 25 * ms, 35 * ms}} {
		r, p, c, f := faultRun(t, "pull_errors: {rate: 1, when: "+tc.when+"}")
		if p.Outcome != "failed" || p.FirstByteNs != tc.firstByte || p.EndNs != tc.end || p.BlocksLanded != 0 {
			t.Errorf("%s: pull %+v", tc.when, p)
		}
		if r.FirstTokenNs != tc.ttft || r.PulledTokens != 0 || r.ComputedPromptTokens != 128 {
			t.Errorf("%s: R1 %+v", tc.when, r)
		}
		if c["pulls_failed_injected"] != 1 || c["pulls_failed"] != 1 || c["bytes_pulled"] != 0 || f != (report.EventFault{Pulls: 1}) {
			t.Errorf("%s: counters %v, event %+v", tc.when, c, f)
		}
	}
}

// TestNoticesInARun: R1's pull as a move (abandon timeout 200 ms, so its
// target waits until 220 ms). Its notice lost: worker 0 removes its 4
// blocks at 25 ms, the target expires at 220 ms and R1 computes 128 tokens,
// 220-230 ms: move_lost_blocks 4, the event's fault_pulls 1 and
// fault_blocks_lost 4. Delayed 50 ms: the notice comes at 75 ms, the pull
// ends then (partial, write_end_ns still 25 ms) and R1 loads the 4 blocks
// and computes 64 tokens, 75-85 ms. As a copy (operation timeout 100 ms)
// the notice lost expires the pull at 120 ms (R1: 120-130 ms) and loses
// nothing: worker 0 keeps its copy.
func TestNoticesInARun(t *testing.T) {
	for _, tc := range []struct {
		mode, notice   string
		out            string
		end, ttft      int64
		pulled, lost   int64
		delayed, nlost int64
	}{
		{"move", "lost: true", "expired", 220 * ms, 230 * ms, 0, 4, 0, 1},
		{"move", "delay: 50ms", "partial", 75 * ms, 85 * ms, 64, 0, 1, 0},
		{"copy", "lost: true", "expired", 120 * ms, 130 * ms, 0, 0, 0, 1},
	} {
		r, p, c, f := faultRun(t, "notices: {"+tc.notice+"}", "router.hints.mode="+tc.mode)
		if p.Outcome != tc.out || p.EndNs != tc.end || p.WriteEndNs != 25*ms || p.FirstByteNs != 21*ms {
			t.Errorf("%s %s: pull %+v", tc.mode, tc.notice, p)
		}
		if r.FirstTokenNs != tc.ttft || r.PulledTokens != tc.pulled {
			t.Errorf("%s %s: R1 %+v", tc.mode, tc.notice, r)
		}
		removed := int64(0)
		if tc.mode == "move" {
			removed = 4
		}
		if c["move_lost_blocks"] != tc.lost || c["move_removed_blocks"] != removed || c["notices_delayed"] != tc.delayed || c["notices_lost"] != tc.nlost ||
			f != (report.EventFault{Pulls: 1, BlocksLost: tc.lost}) {
			t.Errorf("%s %s: counters %v, event %+v", tc.mode, tc.notice, c, f)
		}
	}
}

// TestPullErrorsHalfDeterministic: the default scenario (600 requests)
// with pull errors at rate 0.5 at the end for the whole run, twice: the
// same digest and rows. About half of the staged pulls fail by injection
// (40 to 60 % of at least 50). The fault's draws do not depend on its
// index: with a notices
// fault that acts on nothing (its window [0, 1 ns)) listed before it, every
// request's row is the same.
func TestPullErrorsHalfDeterministic(t *testing.T) {
	load := func(ev string) *scenarios.Scenario {
		sc, err := scenarios.LoadDefault([]string{"workload.synthetic.requests=600", "events=[" + ev + "]"})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	sc := load("{at: 0s, pull_errors: {rate: 0.5}}")
	a, sa := run(t, sc)
	b, sb := run(t, sc)
	if sa.Digest != sb.Digest || !slices.Equal(a, b) {
		t.Error("same scenario, different runs")
	}
	staged, failed := sa.Counters["pulls_staged"], sa.Counters["pulls_failed_injected"]
	if staged < 50 || failed*10 < staged*4 || failed*10 > staged*6 {
		t.Errorf("%d pulls staged, %d failed by injection", staged, failed)
	}
	c, _ := run(t, load("{at: 0s, for: 1ns, notices: {lost: true}}, {at: 0s, pull_errors: {rate: 0.5}}"))
	if !slices.Equal(a, c) {
		t.Error("the same fault as event 1 draws otherwise")
	}
}

// TestPullFaultsTwins: with twins, the lost notice of TestNoticesInARun's
// move keeps its fault columns (1 pull, 4 blocks lost), and its twin (the
// run without it) lands R1's pull at 25 ms: R1's TTFT, the one request
// after the event, is 230 - 20 = 210 ms in the run and 35 - 20 = 15 ms in
// the twin.
func TestPullFaultsTwins(t *testing.T) {
	sc := traceScenario(t, kvBody, followUp, "router.hints.mode=move", "events=[{at: 15ms, notices: {lost: true}}]")
	_, res := runOpts(t, sc, Options{Twins: true})
	e := res.Summary.EventRows[0]
	if e.Fault != (report.EventFault{Pulls: 1, BlocksLost: 4}) || e.After.TTFTP99Ms != 210 || e.Twin.TTFTP99Ms != 15 {
		t.Errorf("event row %+v", e)
	}
}
