package results

import (
	"math"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
)

// TestRemovalLine: the line after a drain's or a remove's says when its
// workers were gone, the pulls refused from them and the requests taken
// off them; a 0 that nothing was attempted for says so.
func TestRemovalLine(t *testing.T) {
	for _, c := range []struct {
		name string
		row  report.EventRow
		want string
	}{
		{"a drain that took nothing off", report.EventRow{Kind: "drain", RemovedAfterNs: 4e9},
			"removed after 4s (none by a drain timeout); 0 pulls refused as draining (none attempted: the router hints no " +
				"draining source, and no request hinted before the drain was staged from one); no request taken off " +
				"(a drain takes them off only when its timeout removes a busy worker)"},
		{"a drain timed out busy", report.EventRow{Kind: "drain", RemovedAfterNs: 1e9, RemovedByTimeout: 1, PullsRejectedDraining: 2,
			RequestsRerouted: 14}, "removed after 1s (1 by timeout); 2 pulls refused as draining; 14 requests rerouted, 0 failed"},
		{"a drain timed out idle", report.EventRow{Kind: "drain", RemovedAfterNs: 1e9, RemovedByTimeout: 1, PullsRejectedDraining: 2},
			"removed after 1s (1 by timeout); 2 pulls refused as draining; 0 requests rerouted, 0 failed"},
		{"a remove of idle workers", report.EventRow{Kind: "remove", RemovedAfterNs: -1},
			"not all removed by the end; 0 pulls refused as removed (none attempted: the router hints no removed source, " +
				"and no request hinted before the removal was staged from one); no request taken off (none was on them)"},
		{"a remove of busy workers", report.EventRow{Kind: "remove", RequestsAtEvent: 3, RequestsFailed: 3, PullsRejectedRemoved: 5},
			"removed after 0s; 5 pulls refused as removed; 0 requests rerouted, 3 failed"},
	} {
		if got := removalLine(&c.row); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}

// TestSigned: a difference has its sign, and none when it rounds to zero.
func TestSigned(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{352.84, "ms", "+352.8 ms"}, {-3, "", "-3"}, {0, "", "0"}, {-0.04, "ms", "0.0 ms"}, {0.04, "ms", "0.0 ms"},
		{-0.05, "ms", "-0.1 ms"}, {math.NaN(), "ms", "n/a"}} {
		if got := Signed(c.v, c.unit); got != c.want {
			t.Errorf("Signed(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

// TestFaultWords: a fault's title names its window and origin, its line
// what it did; the faults chaos drew are one block, their figures summed
// (pulls 0 + 2 + 3 = 5, passes 40, blocks 7), their span from the first
// one's start (61,234,567,890 ns, to the ms 1m1.235s) to the last one's
// start (63 s, not its end), their effect chaos's (the first's row,
// against the run without chaos), their kinds counted in the order of
// scenarios.Kinds (link, slow, notices).
func TestFaultWords(t *testing.T) {
	link := report.EventRow{Kind: "link", Workers: "3", AtNs: 20e9, ForNs: 10e9, Origin: "scenario", Fired: true, Fault: report.EventFault{Pulls: 3}}
	if got, want := EventTitle(&link), "link 3 at 20s for 10s"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if got, want := faultLine(&link), "3 transfers ran on its links at the lowered rate"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	errs := report.EventRow{Kind: "pull_errors", AtNs: 1e9, ForNs: -1, Origin: "scenario"}
	if got, want := EventTitle(&errs), "pull_errors every worker at 1s to the end of the run"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	drawn := []report.EventRow{
		{Event: 4, Kind: "slow", Workers: "1", AtNs: 61_234_567_890, ForNs: 2e9, Origin: "chaos", Fault: report.EventFault{Passes: 40}, Twinned: true, Fired: true,
			TwinDigest: "abc", WindowAfterNs: 90e9, After: report.EventWindow{TTFTP99Ms: 300}, Twin: report.EventWindow{TTFTP99Ms: 200},
			Delta: report.EventDelta{TTFTP99Ms: 100}},
		{Event: 5, Kind: "link", Workers: "2", AtNs: 62e9, ForNs: 1e9, Origin: "chaos", Fault: report.EventFault{Pulls: 2}, Fired: true},
		{Event: 6, Kind: "notices", Workers: "0", AtNs: 63e9, ForNs: 1e9, Origin: "chaos", Fault: report.EventFault{Pulls: 3, BlocksLost: 7}, Fired: true},
	}
	added := report.EventRow{Event: 7, Kind: "add", Workers: "9", AtNs: 64e9, Origin: "planner", Fired: true}
	own, got, planned := SplitEvents(append([]report.EventRow{link}, append(drawn, added)...))
	if len(own) != 1 || len(got) != 3 || got[0].Event != 4 || len(planned) != 1 || planned[0].Event != 7 {
		t.Fatalf("SplitEvents: %d own, %d drawn, %d planned", len(own), len(got), len(planned))
	}
	w := DescribeChaos(got)
	if want := "3 faults drawn from 1m1.235s to 1m3s (1 link, 1 slow, 1 notices), each a row of events.parquet with origin chaos"; w.Head != want {
		t.Errorf("head %q, want %q", w.Head, want)
	}
	if want := "they acted on 5 pulls (transfers on faulted links, pulls failed, notices delayed or lost, pulls to engines taken down), slowed 40 passes, lost 7 blocks and migrated 0 requests"; w.Did != want {
		t.Errorf("did %q, want %q", w.Did, want)
	}
	if len(w.Effect) == 0 || w.Effect[0] != "from the first drawn fault, at 1m1.235s: effect against its twin (the same run without the chaos), over the 1m30s after:" ||
		w.Twin != "their twin, the run without chaos, has digest abc" {
		t.Errorf("effect %q, twin %q", w.Effect, w.Twin)
	}
	if w.Outside != "" {
		t.Errorf("every fault starts in the first's window (1m1.235s to 2m31.235s), yet %q", w.Outside)
	}
	// A window after of 1.5 s leaves out the fault at 63 s (from 62.735 s);
	// the first fault is never outside its own window, even of 0 ns, and a
	// fault that never fired is not counted.
	got[0].WindowAfterNs = 1.5e9
	if w := DescribeChaos(got); w.Outside != "1 of the 3 drawn faults starts after that window (which ends at 1m2.735s, report.event_window after the first or at the last arrival): its effect is not in it, so it is not chaos's as a whole; a longer window takes it in unless the last arrival ends it" {
		t.Errorf("outside %q", w.Outside)
	}
	got[0].WindowAfterNs, got[2].Fired = 0, false // only the fault at 62 s is outside (the first is in its own window)
	if w := DescribeChaos(got); !strings.HasPrefix(w.Outside, "1 of the 3 drawn faults starts after that window (which ends at 1m1.235s,") {
		t.Errorf("window of 0 ns, the last fault unfired: outside %q", w.Outside)
	}
	if EventNoun(&drawn[0]) != "chaos" || EventNoun(&link) != "link fault" {
		t.Errorf("nouns %q, %q", EventNoun(&drawn[0]), EventNoun(&link))
	}
}

// TestTraceLinesEmptyWindows: an event after the last arrival has no
// request in either window: its latencies are none, not NaN; one with
// both windows measured reads as before.
func TestTraceLinesEmptyWindows(t *testing.T) {
	nan := math.NaN()
	e := &report.EventRow{Twinned: true, WindowBeforeNs: 180e9}
	e.Before.TTFTP50Ms, e.Before.TTFTP99Ms, e.After.TTFTP50Ms, e.After.TTFTP99Ms = nan, nan, nan, nan
	want := "before → after (the trace's own change, not the event's effect): TTFT p50 none → none, p99 none → none (0 requests in the 3m0s before, 0 in the 0s after)"
	if got := TraceLines(e); len(got) != 1 || got[0] != want {
		t.Errorf("empty windows: %q\nwant %q", got, want)
	}
	e.Before.TTFTP50Ms, e.Before.TTFTP99Ms, e.Before.Requests = 12.34, 40, 3
	want = "before → after (the trace's own change, not the event's effect): TTFT p50 12.3 ms → none, p99 40.0 ms → none (3 requests in the 3m0s before, 0 in the 0s after)"
	if got := TraceLines(e); len(got) != 1 || got[0] != want {
		t.Errorf("empty window after: %q\nwant %q", got, want)
	}
	e.After.TTFTP50Ms, e.After.TTFTP99Ms = 14, 50
	if got := TraceLines(e)[0]; !strings.Contains(got, "TTFT p50 12.3 → 14.0 ms, p99 40.0 → 50.0 ms") {
		t.Errorf("both windows: %q", got)
	}
}

// TestRefusedText: one pull refused is "1 pull", more are "pulls".
func TestRefusedText(t *testing.T) {
	for n, want := range map[int64]string{1: "1 pull refused as draining", 3: "3 pulls refused as draining"} {
		if got := refusedText(&report.EventRow{Kind: "drain", PullsRejectedDraining: n}); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

// TestPlannerText: the planner line names an evacuation only when its
// drains evacuate, a prewarm only when its adds prewarm, and the blocks
// left behind only with KVCR, which tracks them: a 0 it shows is one it
// tried for.
func TestPlannerText(t *testing.T) {
	const tail = "; each action an events.parquet row of origin planner, each decision a planner.parquet row"
	base := PlannerActions{Policy: "load", Adds: 1, WorkersAdded: 2, Drains: 1, WorkersDrained: 1, BlocksEvacuated: 0, G2BlocksLeft: 7, BlocksPrewarmed: 5}
	for _, c := range []struct {
		evacuate, prewarm, kvcr bool
		want                    string
	}{
		{false, false, false, "load: 1 add (2 workers), 1 drain (1 worker)" + tail},
		{false, false, true, "load: 1 add (2 workers), 1 drain (1 worker); its drains left 7 G2 blocks behind with the workers removed (no evacuate set)" + tail},
		{true, true, true, "load: 1 add (2 workers), 1 drain (1 worker); its adds prewarmed 5 G2 blocks; its drains evacuated 0 G2 blocks and left 7 behind with the workers removed" + tail},
	} {
		p := base
		p.Evacuate, p.Prewarm, p.KVCR = c.evacuate, c.prewarm, c.kvcr
		if got := PlannerText(&p); got != c.want {
			t.Errorf("evacuate %v, prewarm %v, kvcr %v:\n got %q\nwant %q", c.evacuate, c.prewarm, c.kvcr, got, c.want)
		}
	}
}

// TestBytes: bytes in decimal units to a tenth, GB the largest, so that
// a few MB pulled do not read "0.0 GB".
func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 4_000_000: "4.0 MB", 999_949_999: "999.9 MB",
		2_900_000_000: "2.9 GB", 2_309_880_807_424: "2309.9 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestWindowText: a window under a millisecond is shown exactly, a longer
// one to the millisecond.
func TestWindowText(t *testing.T) {
	for ns, want := range map[int64]string{0: "0s", 1: "1ns", 999_999: "999.999µs", 1_000_000: "1ms", 180_000_400_000: "3m0s"} {
		if got := WindowText(ns).String(); got != want {
			t.Errorf("WindowText(%d) = %s, want %s", ns, got, want)
		}
	}
}

// TestCohortWords: a drain's cohort is displaced (its workers go, with
// their cache), an add's routed, a straggler's returning (its workers
// stay, cache and all); an event on one worker says "on it".
func TestCohortWords(t *testing.T) {
	for kind, want := range map[string]string{"drain": "displaced", "remove": "displaced", "down": "displaced", "add": "routed", "slow": "returning", "link": "returning"} {
		if got, _ := Cohort(kind); got != want {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
	e := report.EventRow{Kind: "slow", Workers: "1", Fired: true, RequestsAtEvent: 2, ClusterRequestsAtEvent: 5, SchedulableAtEvent: 4,
		CohortAfter: report.EventCohort{Requests: 3, TTFTP99Ms: 20, TTFTP50Ms: 10}, CohortTwin: report.EventCohort{TTFTP99Ms: 15, TTFTP50Ms: 10}}
	if got := cohortText(&e); !strings.HasPrefix(got, "returning: 3 requests whose previous turn ran on the faulted workers: TTFT p99 +5.0 ms (20.0 with the straggler, 15.0 without)") {
		t.Errorf("cohort %q", got)
	}
	if w := DescribeEvent(&PullsByKind{}, &Counters{}, &e); !strings.Contains(w.Head, ": 2 requests on it, 5 in flight on 4 ready workers") {
		t.Errorf("head %q", w.Head)
	}
}
