package page

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/internal/browsertest"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/study"
)

var update = flag.Bool("update", false, "rewrite testdata/run.golden.html")

// small is a short default scenario on 4 workers with one drain: a run of
// a fraction of a second with an event, its twin and its displaced
// requests.
var small = []string{"workload.synthetic.requests=200", "cluster.workers=4",
	"events=[{at: 3s, drain: {count: 1, pick: busiest}}]"}

// env is the study environment of the tests: a fixed command and build,
// so that the pages' provenance is the same on every machine.
func env() study.Env {
	return study.Env{Command: []string{"kvsim", "test"}, Build: report.Build{Version: "test", GoVersion: "go"}, Twins: true}
}

// fixManifest gives a run's summary.json a manifest without the test
// binary's hash, which differs with every build.
func fixManifest(t *testing.T, dir string) {
	t.Helper()
	s, err := study.ReadRunSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Manifest.Build = report.Build{Version: "test", GoVersion: "go"}
	s.WallTimeS = 0
	if err := report.WriteJSON(filepath.Join(dir, report.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
}

// runTo replays the default scenario with sets into dir, as kvsim replay
// would, checking its invariants.
func runTo(t *testing.T, dir string, sets ...string) {
	t.Helper()
	plan, err := study.Prepare("", sets, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := env()
	m, err := e.Manifest("", sets, plan.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	path := func(n string) string { return filepath.Join(dir, n) }
	if _, err := e.RunTo(context.Background(), path, plan, sim.Options{Check: true, Twins: true}, m); err != nil {
		t.Fatal(err)
	}
	fixManifest(t, dir)
}

// svgs matches each inline chart, for the golden file to hold its hash
// instead of its 50 kB.
var svgs = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// hashSVGs is page with each chart replaced by its SHA-256: the golden
// file still pins every byte.
func hashSVGs(page []byte) []byte {
	return svgs.ReplaceAllFunc(page, func(svg []byte) []byte {
		h := sha256.Sum256(svg)
		return []byte(`<svg sha256="` + hex.EncodeToString(h[:]) + `"/>`)
	})
}

// TestGoldenRun: a small run's page is the golden file's bytes (its charts
// by their hashes), and the same bytes on a second rendering and with
// GOMAXPROCS=1: the page depends on the directory alone. Run with
// -update after a change meant to alter it, and read the diff.
func TestGoldenRun(t *testing.T) {
	dir := t.TempDir()
	runTo(t, dir, small...)
	page, err := Render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	one, err := Render(dir, Options{})
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(page, again) || !bytes.Equal(page, one) {
		t.Fatal("the same directory gave different pages")
	}
	// The scenario's text holds the directory's path, which is the test's
	// temporary one: the golden file has a placeholder.
	got := bytes.ReplaceAll(hashSVGs(page), []byte(dir), []byte("DIR"))
	golden := filepath.Join("testdata", "run.golden.html")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		a, b := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("the page differs from %s at line %d:\n got %.300s\nwant %.300s\n(go test ./study/page -run TestGoldenRun -update rewrites it)", golden, i+1, a[i], b[i])
			}
		}
		t.Fatalf("the page differs from %s in length: %d lines, want %d", golden, len(a), len(b))
	}
}

// TestRunPage: a run's page leads with the question in words and the
// event's effect against its twin, in the order the issue asks; each
// part cites its file.
func TestRunPage(t *testing.T) {
	dir := t.TempDir()
	runTo(t, dir, small...)
	text := pageOf(t, dir)
	inOrder(t, text,
		`<section id="question">`, "Event 0: drain the busiest ready worker at 3s", "its twin",
		`<section id="answer">`, "Event 0: drain", "with the drain", "without (twin)", "Displaced requests",
		"Source: events.parquet",
		`<section id="details">`, "latency (ms)", `<section id="events">`, "The KV ledger",
		`<section id="charts">`, `<figure id="chart-ttft"`, `<section id="warnings">`, `<section id="provenance">`,
		"twin of event 0", "kvsim test",
	)
	// SVG names its namespaces by URL; nothing else may
	for _, fetch := range []string{"<script", `src="http`, `href="http`, "url(", "@import"} {
		if strings.Contains(strings.ToLower(text), fetch) {
			t.Errorf("the page has %q: a script or something to fetch", fetch)
		}
	}
}

// TestEscaped: a scenario named like markup, or a sweep varying its name
// over markup, shows as text and runs nothing, in the page and in its
// charts.
func TestEscaped(t *testing.T) {
	dir := t.TempDir()
	runTo(t, dir, append([]string{`name="<script>alert(1)</script><img src=x onerror=alert(2)>"`}, small...)...)
	text := pageOf(t, dir)
	if strings.Contains(strings.ToLower(text), "<script") || strings.Contains(text, "<img") {
		t.Errorf("the scenario's name reached the page as markup")
	}
	if !strings.Contains(text, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the scenario's name is not on the page as text")
	}
	// A sweep's varied values reach its tables, its charts' axes and the
	// command line in its provenance: all as text.
	sweep := filepath.Join(t.TempDir(), "sweep")
	sweepInto(t, sweep, &study.Spec{Sets: small, Keys: []string{"name"}, Values: [][]string{{"<b>bold</b>", `<svg onload="alert(3)">`}}, Replicates: 1})
	text = pageOf(t, sweep)
	if strings.Contains(text, "<b>bold") || strings.Contains(text, "<svg onload") {
		t.Errorf("a varied value reached the sweep's page as markup")
	}
	if !strings.Contains(text, "&lt;b&gt;bold&lt;/b&gt;") {
		t.Errorf("a varied value is not on the sweep's page as text")
	}
}

// TestNotADirectory: a directory of none of kvsim's says so.
func TestNotADirectory(t *testing.T) {
	if _, err := Render(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "not a run, sweep or search directory") {
		t.Errorf("got %v", err)
	}
}

// pageOf is the page of dir, rendered with no option, as text.
func pageOf(t *testing.T, dir string) string {
	t.Helper()
	page, err := Render(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

// inOrder checks that text holds each of wants, each after the one
// before it.
func inOrder(t *testing.T, text string, wants ...string) {
	t.Helper()
	at := 0
	for _, want := range wants {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Errorf("the page lacks %q after what comes before it", want)
			continue
		}
		at += i + len(want)
	}
}

// sweepInto runs the sweep of spec into dir, two runs at a time.
func sweepInto(t *testing.T, dir string, spec *study.Spec) {
	t.Helper()
	s := &study.Sweep{Env: env(), Dir: study.Dir{Path: dir, Jobs: 2}, Spec: spec}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// sweepTo runs a sweep of the small scenario into dir: hints by copy and
// by move, 3 replicates each.
func sweepTo(t *testing.T, dir string) {
	t.Helper()
	sweepInto(t, dir, &study.Spec{Sets: small, Keys: []string{"router.hints.mode"}, Values: [][]string{{"copy", "move"}}, Replicates: 3})
}

// goodputSweepTo runs a sweep of the small scenario measured against an
// SLO into dir: 2 and 4 workers, 2 replicates each.
func goodputSweepTo(t *testing.T, dir string) {
	t.Helper()
	sweepInto(t, dir, &study.Spec{Sets: append(slices.Clone(small), "planner={slo: {ttft: 300ms, itl: 40ms}}"),
		Keys: []string{"cluster.workers"}, Values: [][]string{{"2", "4"}}, Replicates: 2})
}

// TestGoodputPage: a sweep whose runs measured goodput sets cost against
// goodput in a section of its own, after the answer: the SLO in words,
// the chart, the frontier of the grid points' means (as report.Frontier
// finds it from points.parquet) named in words and listed in a table,
// and the cheapest point at the best goodput. The page is the same bytes
// when rendered again.
func TestGoodputPage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	goodputSweepTo(t, dir)
	text := pageOf(t, dir)
	if pageOf(t, dir) != text {
		t.Fatal("the same directory gave different pages")
	}
	_, points, err := parquetio.ReadPoints(filepath.Join(dir, report.PointsFile))
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		return slices.IndexFunc(report.PointMetrics(1), func(c report.Column[report.SweepRow]) bool { return c.Name == name })
	}
	var cost, good []float64
	for _, p := range points {
		cost, good = append(cost, p.Stats[col("worker_seconds")].Mean), append(good, p.Stats[col("goodput_requests_per_s")].Mean)
	}
	frontier := report.Frontier(cost, good)
	if len(frontier) == 0 {
		t.Fatal("no frontier")
	}
	var on []string
	for _, i := range frontier {
		on = append(on, fmt.Sprintf("point %d (cluster.workers=%s)", i, points[i].Params[0]))
	}
	best := frontier[len(frontier)-1]
	inOrder(t, text, `<section id="answer">`, `<section id="cost-goodput">`,
		"meeting planner.slo (TTFT at most 300 ms, mean ITL at most 40 ms)",
		fmt.Sprintf("Cheapest at the best goodput: point %d (cluster.workers=%s), %.2f goodput requests a second for %.1f worker-seconds",
			best, points[best].Params[0], good[best], cost[best]),
		"On the frontier, from the cheapest: "+strings.Join(on, ", ")+".",
		`<figure id="chart-cost-goodput"`, "<th>worker-seconds</th>", "Source: points.parquet", `<section id="details">`)
}

// TestSweepPage: a sweep's page gives each grid point's effect with its
// paired interval, and marks the points meeting --slo and the one with
// the most room under the first: a point passes when every replicate
// meets every SLO. Without its runs' directories it still has a page.
func TestSweepPage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sweepTo(t, dir)
	page, err := Render(dir, Options{SLOs: []string{"ttft_p99_ms < 100000"}})
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	// The words of run 0's scenario come after what they are words of.
	inOrder(t, string(page), "The scenario as its first run (run 0) ran it, with router.hints.mode=copy: where the words below speak of a varied key, they speak of that value.",
		"Scenario ")
	for _, want := range []string{"over copy, move, each 3 times", "TTFT p99 effect (ms)", " ± ",
		"2 of 2 grid points meet ttft_p99_ms &lt; 100000 in every replicate", "yes: most room", `<section id="charts">`,
		`<figure id="chart-sweep-event0_ttft_p99_delta_ms"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(text, "cost-goodput") {
		t.Error("a sweep without planner.slo has a cost against goodput section")
	}
	none, err := Render(dir, Options{SLOs: []string{"ttft_p99_ms < 0"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(none), "0 of 2 grid points meet") || strings.Contains(string(none), "most room") {
		t.Errorf("no point meets ttft_p99_ms < 0, yet the page marks one")
	}
	for _, bad := range []string{"ttft_p99_ms <", "no_such_metric > 1", "goodput_share > 0.5"} { // the last: no planner.slo, so NaN at every point
		if _, err := Render(dir, Options{SLOs: []string{bad}}); err == nil || !strings.Contains(err.Error(), "--slo") {
			t.Errorf("--slo %q: %v", bad, err)
		}
	}
	// Merged, a sweep keeps no run directory: the page still stands, and
	// says why the scenario is not in words; an SLO it cannot check is an error.
	if err := os.RemoveAll(filepath.Join(dir, report.RunsDir)); err != nil {
		t.Fatal(err)
	}
	merged, err := Render(dir, Options{})
	if err != nil || !strings.Contains(string(merged), "directories are not here (as after kvsim sweep merge)") {
		t.Errorf("the page of a sweep without its runs: %v", err)
	}
	if _, err := Render(dir, Options{SLOs: []string{"ttft_p99_ms < 100000"}}); err == nil {
		t.Error("--slo checked a sweep without its runs' summaries")
	}
}

// searchTo runs a search of the drain's count in [1, 3] into dir.
func searchTo(t *testing.T, dir string) {
	t.Helper()
	s := &study.Search{Env: env(), Sets: small, Key: "events[0].drain.count", From: 1, To: 3,
		SLOs: []string{"events[0].removed_after_s < 1000"}, Replicates: 1, Quorum: 1, Dir: study.Dir{Path: dir, Jobs: 2}}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSearchPage: a search's page states the answer and why, and lists
// the probes in the order made. Every count passes here, the top of the
// range first: the answer without a bisection (the page once said the
// search bisected).
func TestSearchPage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "search")
	searchTo(t, dir)
	text := pageOf(t, dir)
	for _, want := range []string{"events[0].drain.count = 3 is the largest value meeting the SLOs",
		"Why: the top of the range, 3, meets the SLOs, so it is the largest value that does, whatever the values below it do; the search ran no other.",
		"Probes, in the order made", "events[0].removed_after_s &lt; 1000"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestInBrowser: the pages of a run, a sweep with replicates (and one
// measured against an SLO, with its cost against goodput) and a search
// render in headless Chromium with no console error, nothing fetched,
// nothing past the page's edge, no text over text, and every part the
// page promises shown, in a window 1280 and 760 px wide. Screenshots go to $KVSIM_SCREENSHOTS when set.
func TestInBrowser(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name     string
		make     func(t *testing.T, dir string)
		required []string // past every page's
	}{
		{"run", func(t *testing.T, dir string) { runTo(t, dir, small...) }, nil},
		{"sweep", sweepTo, nil},
		{"goodput", goodputSweepTo, []string{"#cost-goodput p", "#cost-goodput figure svg", "#cost-goodput table"}},
		{"search", searchTo, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, c.name)
			c.make(t, dir)
			path, err := Write(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, width := range []int{1280, 760} { // a laptop's window, and half of one
				shot := ""
				if d := os.Getenv("KVSIM_SCREENSHOTS"); d != "" {
					shot = filepath.Join(d, fmt.Sprintf("%s-%d.png", c.name, width))
				}
				res := browsertest.Check(t, path, browsertest.Options{Width: width, Screenshot: shot, Required: append([]string{
					"#question p", "#answer h3", "#answer table", "#details table", "#charts figure svg",
					"#warnings", "#provenance table", "#provenance pre"}, c.required...)})
				for _, p := range res.Problems() {
					t.Errorf("%d px wide: %s", width, p)
				}
			}
		})
	}
}

// TestStudyPages: every page docs/studies links renders in headless
// Chromium as the pages kvsim report writes must: no console error,
// nothing fetched, nothing past the edge, no text over text, its parts
// shown.
func TestStudyPages(t *testing.T) {
	pages, err := filepath.Glob("../../docs/studies/*/*.html")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no study page: %v", err)
	}
	for _, path := range pages {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			res := browsertest.Check(t, path, browsertest.Options{Required: []string{
				"#question p", "#answer", "#details table", "#charts figure svg", "#warnings", "#provenance table"}})
			for _, p := range res.Problems() {
				t.Error(p)
			}
		})
	}
}

// TestSearchOutOfReach: a search whose SLO fails even without the event
// says so, with the twin's level beside each probe.
func TestSearchOutOfReach(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "search")
	s := &study.Search{Env: env(), Sets: small, Key: "events[0].drain.count", From: 1, To: 2,
		SLOs: []string{"events[0].ttft_p99_after_ms < 1"}, Replicates: 1, Quorum: 1, Dir: study.Dir{Path: dir, Jobs: 2}}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	text := pageOf(t, dir)
	for _, want := range []string{"No value of events[0].drain.count in [1, 2] meets the SLOs",
		"Even without the event (its twin), events[0].ttft_p99_after_ms is", "so no value of events[0].drain.count can meet it",
		"events[0].ttft_p99_after_ms without the event (its twin)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestFaultSweepPage: a sweep of a fault's page gives, beside each point's
// effect, what the fault did (events.parquet's fault columns: here the
// notices a lost-notice fault took and the blocks a move lost with them,
// each point's mean over its runs as sweep.parquet has them: a copy loses
// none, a move some), names the fault in words, and has no "workers gone"
// column, which only a drain or a remove has.
func TestFaultSweepPage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sets := []string{"workload.synthetic.requests=200", "cluster.workers=4", "events=[{at: 3s, for: 2s, notices: {lost: true}}]"}
	sweepInto(t, dir, &study.Spec{Sets: sets, Keys: []string{"router.hints.mode"}, Values: [][]string{{"copy", "move"}}, Replicates: 2})
	text := pageOf(t, dir)
	for _, want := range []string{"notices delayed or lost", "blocks lost", "lose the completion notices of transfers into every worker ending at 3s for 2s",
		"event0_fault_pulls, event0_fault_blocks_lost"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(text, "workers gone after") {
		t.Error("a fault's table has a workers gone column")
	}
	_, rows, err := parquetio.ReadSweep(filepath.Join(dir, report.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	lost := map[string]float64{} // by mode: the mean blocks lost over its 2 runs
	for _, r := range rows {
		lost[r.Params[0]] += float64(r.Events[0].Fault.BlocksLost) / 2
	}
	if lost["copy"] != 0 || lost["move"] <= 0 {
		t.Fatalf("blocks lost by mode %v, want none for copy and some for move", lost)
	}
	for mode, want := range lost {
		if cell := fmt.Sprintf(`<td class="num">%.1f`, want); !strings.Contains(text, cell) {
			t.Errorf("%s: the page lacks its blocks lost, %s", mode, cell)
		}
	}
}

// TestChaosPage: the faults chaos drew are one answer (their shared twin,
// the run without chaos), one table a fault in the events in full, and one
// twin digest in the provenance; the scenario's own drain keeps its block.
func TestChaosPage(t *testing.T) {
	dir := t.TempDir()
	runTo(t, dir, append(slices.Clone(small), "cluster.migration_limit=1",
		"chaos={from: 1s, to: 4s, settle: 30s, rates: {slow: 3000, down: 600}}")...)
	text := pageOf(t, dir)
	inOrder(t, text, "Chaos:", "faults drawn from the seeded stream faults in [1s, 4s)", "Event 0: drain", "Chaos: ",
		"with chaos", "The drawn faults share one twin", "Event 0: drain", "faults chaos drew", "passes slowed",
		"twin of event 0 (without it)", "twin of chaos (without every fault it drew)")
	if strings.Count(text, "twin of chaos") != 1 {
		t.Error("the chaos twin is listed more than once")
	}
	// Chaos alone: its table is the events section, with no source line
	// of the scenario's own events (once a section holding only it).
	alone := t.TempDir()
	runTo(t, alone, append(slices.Clone(small), "events=[]", "chaos={from: 1s, to: 4s, settle: 30s, rates: {slow: 3000}}")...)
	text = pageOf(t, alone)
	if !strings.Contains(text, "faults chaos drew") || strings.Contains(text, "as kvsim replay prints them") {
		t.Error("the events section of a run with chaos alone")
	}
}

// TestPlannerPage: a run with a planner and no scripted event says what
// the planner is, that its actions have no twins, what it did, cost and
// served, and lists its actions, an add's G2 blocks left as "—"; it has
// no section of events in full.
func TestPlannerPage(t *testing.T) {
	dir := t.TempDir()
	runTo(t, dir, append(slices.Clone(small), "cluster.workers=1", "events=[]",
		"planner={policy: load, interval: 1s, max_workers: 3, startup: 500ms, load: {queue_up: 5, queue_down: 0.1, kv_up: 0.002, kv_down: 0.001}, slo: {ttft: 1s, itl: 50ms}}")...)
	text := pageOf(t, dir)
	inOrder(t, text, "Planner load every 1s", "The planner&#39;s actions are events of their own, with no twin",
		"No scripted event, so no effect against a twin", "The planner", "worker-seconds", "Goodput:", "<td>add</td>", "<td>—</td>",
		"A planner&#39;s actions have no twins", "planner")
	if strings.Contains(text, `id="events"`) || strings.Contains(text, "Each event is measured against its twin") {
		t.Error("a run with only planner events has a section of events in full, or twins")
	}
}

// TestEmptyShard: the page of a shard whose part of the grid is empty
// (2 runs, shard 3 of 3) says the sweep holds no run, not that its
// scenario failed to load ("<nil>") or has no events.
func TestEmptyShard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard")
	sweepInto(t, dir, &study.Spec{Sets: small, Keys: []string{"cluster.workers"}, Values: [][]string{{"2", "4"}}, Replicates: 1, Shard: "3/3"})
	text := pageOf(t, dir)
	inOrder(t, text, "The sweep holds no run (a shard whose part of the grid is empty)", "The sweep holds no run: there is nothing to compare.")
	for _, bad := range []string{"nil", "does not load here", "has no events"} {
		if strings.Contains(text, bad) {
			t.Errorf("the page says %q", bad)
		}
	}
}

// TestSweepSLOOnEventsOfSomePoints: a grid varying the events (none, or
// an add then a drain), marked by an SLO on the second event: the point
// without events cannot meet it, the other does (its TTFT p99 after the
// drain is far under 100 s); the page once failed, "the scenario has no
// events", and no page was written.
func TestSweepSLOOnEventsOfSomePoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sweepInto(t, dir, &study.Spec{Sets: small, Keys: []string{"events"}, Values: [][]string{{"[]", "[{at: 1s, add: 1}, {at: 2s, drain: [0]}]"}}, Replicates: 1})
	page, err := Render(dir, Options{SLOs: []string{"events[1].ttft_p99_after_ms < 100000"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := string(page); !strings.Contains(text, "1 of 2 grid points meet events[1].ttft_p99_after_ms &lt; 100000 in every replicate") {
		t.Errorf("the page does not mark the one point with the event")
	}
}

// TestSweepChaosWarned: a sweep of a scenario with chaos says its event
// columns pair different faults (each run draws its own), past the
// scenario's own events, here one drain.
func TestSweepChaosWarned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sweepInto(t, dir, &study.Spec{Sets: append(slices.Clone(small), "chaos={to: 20s, rates: {slow: 200}}", "events=[{at: 10s, drain: [0]}]"),
		Keys: []string{"cluster.workers"}, Values: [][]string{{"3", "4"}}, Replicates: 2})
	inOrder(t, pageOf(t, dir), "The scenario draws chaos from each run&#39;s seed: past its own 1 event, event k is whatever fault a run drew k-th")
}

// TestSweepOverEvents: a sweep whose grid varies events says whose events
// the words above are: run 0's, or, when run 0 has none (events=[] first),
// that it has none.
func TestSweepOverEvents(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   string
	}{
		{[]string{"[{at: 3s, drain: [1]}]", "[]"}, "The grid varies events: the events in words above are run 0&#39;s; each point&#39;s are its value of events."},
		{[]string{"[]", "[{at: 3s, drain: [1]}]"}, "The grid varies events: run 0 has none; each point&#39;s are its value of events."},
	} {
		dir := filepath.Join(t.TempDir(), "sweep")
		sweepInto(t, dir, &study.Spec{Sets: []string{"workload.synthetic.requests=20", "cluster.workers=2"}, Keys: []string{"events"}, Values: [][]string{c.values}, Replicates: 1})
		page, err := Render(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), c.want) {
			t.Errorf("events %v: the page lacks %q", c.values, c.want)
		}
	}
}
