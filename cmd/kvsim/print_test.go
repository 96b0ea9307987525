package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/study"
)

// eventRow is a fired event's row with the given order figures and no
// window figures.
func eventRow(i int32, kind string, orders, planned, landed, done, left, delay int64) report.EventRow {
	nan := math.NaN()
	w := report.EventWindow{TTFTP50Ms: nan, TTFTP99Ms: nan}
	return report.EventRow{Event: i, Kind: kind, Workers: "1", Fired: true, Orders: orders, BlocksPlanned: planned, BlocksLanded: landed,
		OrdersDoneAfterNs: done, G2BlocksLeft: left, RemovalDelayNs: delay, RemovedAfterNs: -1, Before: w, After: w}
}

// TestPrintOrders: the summary table says what each event's orders did,
// breaks the pulls out by kind and names the hints policy cost withheld,
// all from the summary's figures. In the first summary event 0 (a drain)
// is the only event of kind move: its line counts the run's 4 moves and
// how they ended, and its ledger: 14 G2 blocks held = 12 planned + 2 at
// their destination; 12 planned = 8 landed + 2 expired + 2 dropped; 4 left
// = 14 held - 10 moved away. Event 1 (an add) is the only one of kind
// prefetch. In the second, an evacuation by copy (event 0) and a prewarm
// (event 1) share the prefetch counters: each counts its own orders
// (kv_orders) but not their ends; event 0's ledger: 8 held = 5 planned (6
// counted, 1 again) + 3 past the budget; 6 planned = 3 landed - 1 past a
// plan + 2 short + 2 failed; 2 left = 8 + 1 stored - 7 evicted. Event 2's
// prewarm planned nothing from nothing held. A drain whose orders drew on
// fewer blocks (3) than its named workers held at the event (5: it lists a
// worker an earlier event drained already) says whose blocks its ledger
// counts; the others do not. A run of policy cost (its
// counters hold hints_withheld) says what it withheld, none included; a
// run with hints off whose one order was dropped still prints a pulls line
// above its kinds' lines; a run without orders or policy cost prints none
// of it.
func TestPrintOrders(t *testing.T) {
	ms := int64(time.Millisecond)
	one := &results.Summary{
		Counters: map[string]int64{"hints_attached": 3, "hints_withheld": 2, "pulls_staged": 9,
			"kv_move_issued": 4, "kv_move_success": 2, "kv_move_expired": 1, "kv_move_dropped": 1,
			"kv_prefetch_issued": 2, "kv_prefetch_success": 2},
		PullsByKind: &results.PullsByKind{
			Request:  results.KindPulls{Staged: 4, Success: 1, Partial: 3, Rejected: 2, BlocksLanded: 20, Bytes: 20e6},
			Move:     results.KindPulls{Events: []int32{0}, Staged: 3, Success: 2, Expired: 1, BlocksLanded: 8, Bytes: 8e6},
			Prefetch: results.KindPulls{Events: []int32{1}, Staged: 2, Success: 2, BlocksLanded: 5, Bytes: 5e6}},
		EventRows: []report.EventRow{eventRow(0, "drain", 4, 12, 8, 20*ms, 4, 20*ms), eventRow(1, "add", 2, 5, 5, 900*ms, -1, -1)},
	}
	drain := &one.EventRows[0]
	drain.G2BlocksAtEvent, drain.Plan = 14, report.KVPlan{BlocksHeld: 14, LeftAtDestination: 2}
	drain.Ends, drain.Removal = report.KVEnds{LostExpired: 2, LostDropped: 2}, report.KVRemoval{MovedAwayAfter: 10}
	shared := &results.Summary{
		Counters: map[string]int64{"kv_prefetch_issued": 3, "kv_prefetch_success": 3},
		PullsByKind: &results.PullsByKind{Prefetch: results.KindPulls{Events: []int32{0, 1, 2}, Staged: 3, Success: 3,
			BlocksLanded: 7, Bytes: 7e6}},
		EventRows: []report.EventRow{eventRow(0, "drain", 1, 6, 3, 5*ms, 2, 0), eventRow(1, "add", 2, 4, 4, 3*ms, -1, -1),
			eventRow(2, "add", 0, 0, 0, -1, -1, -1)},
	}
	copied := &shared.EventRows[0]
	copied.G2BlocksAtEvent, copied.Plan = 8, report.KVPlan{BlocksHeld: 8, PlannedAgain: 1, LeftBudget: 3}
	copied.Ends = report.KVEnds{LandedExtra: 1, LandedShort: 2, LostFailed: 2}
	copied.Removal = report.KVRemoval{StoredAfter: 1, EvictedAfter: 7}
	// a drain listing a worker an earlier event drained already: its
	// orders drew on 3 of the 5 blocks its workers held at the event
	again := &results.Summary{Counters: map[string]int64{"kv_move_issued": 1, "kv_move_success": 1},
		PullsByKind: &results.PullsByKind{Move: results.KindPulls{Events: []int32{0}, Staged: 1, Success: 1, BlocksLanded: 3, Bytes: 3e6}},
		EventRows:   []report.EventRow{eventRow(0, "drain", 1, 3, 3, 2*ms, 2, 0)}}
	drainedAgain := &again.EventRows[0]
	drainedAgain.G2BlocksAtEvent, drainedAgain.Plan = 5, report.KVPlan{BlocksHeld: 3}
	drainedAgain.Removal = report.KVRemoval{MovedAwayAfter: 3}
	cost := &results.Summary{Counters: map[string]int64{"hints_attached": 3, "hints_withheld": 0}}
	plain := &results.Summary{Counters: map[string]int64{"hints_attached": 3, "pulls_staged": 2}, EventRows: []report.EventRow{eventRow(0, "drain", 0, 0, 0, -1, -1, -1)}}
	// hints off, and the one order dropped: the kinds' lines still sit
	// under a pulls line
	dropped := &results.Summary{Counters: map[string]int64{"kv_move_issued": 1, "kv_move_dropped": 1},
		PullsByKind: &results.PullsByKind{Move: results.KindPulls{Events: []int32{0}}}}
	for _, c := range []struct {
		name      string
		s         *results.Summary
		want, not []string
	}{
		{"one event a kind", one, []string{
			"3 hints (2 withheld by policy cost), 9 staged: ",
			"\n\trequests\t4 staged: 1 success, 3 partial, 0 failed, 0 expired; 2 rejected; 0 superseded; 20 blocks landed, 0.02 GB\n",
			"\n\tkv.move\t4 orders of event 0 (1 dropped), 3 staged: 2 success, 0 partial, 0 failed, 1 expired; 0 rejected; 0 superseded; 8 blocks landed, 0.01 GB\n",
			"\n\tkv.prefetch\t2 orders of event 1, 2 staged: 2 success, 0 partial, 0 failed, 0 expired; 0 rejected; 0 superseded; 5 blocks landed, 0.01 GB\n",
			"\tevacuated 8 of 12 planned blocks by 4 moves (2 success, 1 expired, 1 dropped) in 20ms; left 4 G2 blocks; removal waited 20ms for it\n",
			"\tprewarmed 5 of 5 planned blocks by 2 prefetches, done 900ms after\n",
			"\theld 14 G2 blocks = 12 planned + 2 left out: 2 held at their destination\n",
			"\tplanned 12 = 8 landed + 4 lost: 2 expired, 2 dropped\n",
			"\tleft 4 G2 blocks at removal = 14 held at the event − 10 moved away\n"}, []string{"of the workers it drained"}},
		{"a kind shared", shared, []string{
			"\n\tkv.prefetch\t3 orders of events 0, 1, 2, 3 staged: ",
			"\tevacuated 3 of 6 planned blocks by 1 copy in 5ms; left 2 G2 blocks; removal waited 0s for it\n",
			"\tprewarmed 4 of 4 planned blocks by 2 prefetches, done 3ms after\n",
			"\tprewarm planned no block\n\theld no G2 block: none to plan\n",
			"\theld 8 G2 blocks = 5 planned (6 counting a block once per chain that sends it) + 3 left out: 3 past the budget\n",
			"\tplanned 6 = 3 landed − 1 landed past their copies' plans + 2 short of their copies' plans + 2 lost: 2 failed\n",
			"\tleft 2 G2 blocks at removal = 8 held at the event + 1 stored − 7 evicted; copies leave their source's blocks\n"},
			[]string{"withheld", "kv.move", "of no event"}},
		{"a worker drained already", again, []string{
			"\theld 3 G2 blocks of the workers it drained = 3 planned\n",
			"\tleft 2 G2 blocks at removal = 5 held at the event − 3 moved away\n"}, nil},
		{"cost, none withheld", cost, []string{"pulls\t3 hints (0 withheld by policy cost), 0 staged: "}, nil},
		{"orders, no pull", dropped, []string{"pulls\t0 hints, 0 staged: ", "\n\tkv.move\t1 orders of event 0 (1 dropped), 0 staged: "}, nil},
		{"no orders", plain, []string{"pulls\t3 hints, 2 staged: "}, []string{"withheld", "kv.move", "\trequests", "planned"}},
	} {
		var b bytes.Buffer
		printSummary(&b, c.s, "out")
		// the table's columns as tabs, whatever their widths
		out := regexp.MustCompile("  +").ReplaceAllString(b.String(), "\t")
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the table lacks %q:\n%s", c.name, w, b.String())
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: the table has %q:\n%s", c.name, w, b.String())
			}
		}
	}
}

// TestReplayOrders: replay of the golden prewarm.yaml prints its orders'
// figures as summary.json has them: worker 1's evacuation by the run's 4
// moves, each a success (the golden expects kv_move_success == 4), the
// prewarm's 7 prefetches, one superseded; and docs/cli.md's example of
// its table is what it prints.
func TestReplayOrders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, stderr := kvsim(t, "replay", "-q", "-o", dir, "../../scenarios/golden/prewarm.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := study.ReadRunSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, d, a := results.CountersOf(s.Counters), s.EventRows[0], s.EventRows[1]
	for _, want := range []string{
		fmt.Sprintf("evacuated %d of %d planned blocks by %d moves in %v; left %d G2 blocks; removal waited %v for it\n",
			d.BlocksLanded, d.BlocksPlanned, c.Move.Issued, results.RoundMs(d.OrdersDoneAfterNs), d.G2BlocksLeft, results.RoundMs(d.RemovalDelayNs)),
		fmt.Sprintf("prewarmed %d of %d planned blocks by %d prefetches (%d success, 1 superseded), done %v after\n",
			a.BlocksLanded, a.BlocksPlanned, c.Prefetch.Issued, c.Prefetch.Success, results.RoundMs(a.OrdersDoneAfterNs)),
		fmt.Sprintf("%d orders of event 0, %d staged: ", c.Move.Issued, s.PullsByKind.Move.Staged),
		fmt.Sprintf("%d staged: %d success, %d partial", s.PullsByKind.Request.Staged, s.PullsByKind.Request.Success, s.PullsByKind.Request.Partial),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if c.Move.Issued != 4 || c.Move.Success != 4 || c.Prefetch.Superseded != 1 {
		t.Errorf("the golden changed: %+v, %+v", c.Move, c.Prefetch)
	}
	// docs/cli.md shows this run's table: each of its lines but "..." is one
	// of stdout's, whatever the column widths.
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(doc), "`scenarios/golden/prewarm.yaml`:\n\n```\n")
	example, _, _ = strings.Cut(example, "```")
	if !ok || example == "" {
		t.Fatal("docs/cli.md has no example of prewarm.yaml's table")
	}
	space := regexp.MustCompile(` +`)
	printed := space.ReplaceAllString(out, " ")
	for _, line := range strings.Split(strings.TrimSpace(example), "\n") {
		if l := space.ReplaceAllString(line, " "); strings.TrimSpace(l) != "..." && !strings.Contains(printed, l+"\n") {
			t.Errorf("docs/cli.md's example has %q, which replay of prewarm.yaml does not print:\n%s", line, out)
		}
	}
}

// TestPrintSweepGoodput: the sweep's table has each run's worker-seconds
// and, when a run measured goodput, its rate and share ("—" for a run
// without planner.slo); with replicates, the points' worker-seconds and
// goodput rate as mean ± half-width. Point 0's runs: worker-seconds 100
// and 110, mean 105, sd 7.0711, half-width t(0.975, 1) x 7.0711 / √2 =
// 12.706 x 5 = 63.53; goodput 2 and 3 a second, mean 2.5, half-width
// 12.706 x 0.5 = 6.35.
func TestPrintSweepGoodput(t *testing.T) {
	nan := math.NaN()
	row := func(run int64, ws, rate, share float64, good int64) report.SweepRow {
		return report.SweepRow{Run: run, Params: []string{"a"}, WorkerSeconds: ws, GoodputRequests: good,
			GoodputRequestsPerS: rate, GoodputShare: share, TTFTAttainment: share, ITLAttainment: share, Digest: strings.Repeat("0", 64)}
	}
	rows := []report.SweepRow{row(0, 100, 2, 0.95, 20), row(1, 110, 3, 0.9, 30)}
	var b strings.Builder
	if err := printSweep(&b, &study.Spec{Keys: []string{"k"}, Replicates: 1}, rows, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"worker-s", "goodput/s (share)", "100.0", "2.00 (95.0%)", "3.00 (90.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	rows[1] = row(1, 110, nan, nan, -1)
	b.Reset()
	if err := printSweep(&b, &study.Spec{Keys: []string{"k"}, Replicates: 1}, rows, false); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(b.String(), "\n"); !regexp.MustCompile(`110\.0 +— `).MatchString(lines[2]) {
		t.Errorf("a run without planner.slo: %q", lines[2])
	}
	rows[1] = row(1, 110, 3, 0.9, 30)
	b.Reset()
	if err := printSweep(&b, &study.Spec{Keys: []string{"k"}, Replicates: 2, Seed: 1}, rows, false); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`105\.0 ± 63\.5 +2\.50 ± 6\.35 `).MatchString(b.String()) {
		t.Errorf("points table:\n%s", b.String())
	}
	b.Reset()
	rows[0], rows[1] = row(0, 100, nan, nan, -1), row(1, 110, nan, nan, -1)
	if err := printSweep(&b, &study.Spec{Keys: []string{"k"}, Replicates: 1}, rows, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "goodput") {
		t.Errorf("no run measured goodput, yet:\n%s", b.String())
	}
}
