package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/study"
)

// burst writes the searches' scenario into a new folder and returns its
// path: 12 requests of one 16-token block and one output token, all at
// 0 ms, on 2 workers that take one request at a time (max_num_seqs 1) for
// 10 ms each (fixed timing, one prefill pass), routed round robin.
// workload.trace.limit L keeps the first L. Worker 0 takes ceil(L/2) of
// them, one after another, so the TTFTs are 10, 20, ..., 10 x ceil(L/2) ms
// and TTFT p99 (the largest of fewer than 100) is 10 x ceil(L/2) ms; the
// last ends then, so requests_per_s is L / (0.01 x ceil(L/2)).
func burst(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, `{"timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [%d]}`+"\n", i)
	}
	os.WriteFile(filepath.Join(dir, "burst.jsonl"), []byte(b.String()), 0o644)
	sc := filepath.Join(dir, "burst.yaml")
	os.WriteFile(sc, []byte(`name: burst
workload: {trace: {path: burst.jsonl, block_size: 16}}
cluster:
  workers: 2
  engine: {kv_bytes_per_token: 1000, max_num_seqs: 1, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
router: {policy: round_robin}
kvcr: {enabled: false}
`), 0o644)
	return sc
}

// searchIn runs kvsim search on the scenario into out, searching
// workload.trace.limit, and returns stdout, stderr and DIR/search.json.
func searchIn(t *testing.T, sc, out string, args ...string) (string, string, study.SearchResult) {
	t.Helper()
	code, stdout, stderr := kvsim(t, append([]string{"search", sc, "-q", "-o", out, "--key", "workload.trace.limit"}, args...)...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	res, err := study.ReadSearch(out)
	if err != nil {
		t.Fatal(err)
	}
	return stdout, stderr, *res
}

func probed(res study.SearchResult) []int64 {
	var vs []int64
	for _, p := range res.Probes {
		vs = append(vs, p.Value)
	}
	return vs
}

func answerOf(res study.SearchResult) string {
	if res.Answer == nil {
		return "none"
	}
	return fmt.Sprint(*res.Answer)
}

// TestSearchBisects: on burst's runs TTFT p99 is 10 x ceil(L/2) ms, which
// grows with L: 10, 10, 20, 20, 30, 30, 40, 40, 50, 50, 60, 60 ms for L =
// 1 to 12.
//   - <= 30 ms holds up to L = 6: A = 1 passes (10), B = 12 fails (60);
//     bisection probes 6 (30, passes), 9 (50, fails), 7 (40, fails): 6.
//   - <= 60 ms: B passes, so B is the answer after the two ends.
//   - < 10 ms: A fails (10), so no value passes, after the two ends.
//   - [5, 5]: the one value, 30 ms: it is the answer.
//
// Each value's run is run value - A; the table has those runs' rows.
func TestSearchBisects(t *testing.T) {
	sc := burst(t)
	for i, c := range []struct {
		span, slo string
		probes    []int64
		answer    string
	}{
		{"1:12", "ttft_p99_ms <= 30", []int64{1, 12, 6, 9, 7}, "6"},
		{"1:12", "ttft_p99_ms <= 60", []int64{1, 12}, "12"},
		{"1:12", "ttft_p99_ms < 10", []int64{1, 12}, "none"},
		{"5:5", "ttft_p99_ms <= 30", []int64{5}, "5"},
	} {
		out := filepath.Join(t.TempDir(), fmt.Sprint(i))
		stdout, _, res := searchIn(t, sc, out, "--range", c.span, "--slo", c.slo)
		if got := probed(res); !slices.Equal(got, c.probes) || answerOf(res) != c.answer || !res.Monotone {
			t.Errorf("%s %s: probes %v, answer %s, monotone %v; want %v, %s, true", c.span, c.slo, got, answerOf(res), res.Monotone, c.probes, c.answer)
		}
		a := c.probes[0]
		var runs, rows []int64
		for _, p := range res.Probes {
			want := 10 * math.Ceil(float64(p.Value)/2)
			if m := p.Metrics["ttft_p99_ms"]; m == nil || *m != want || !slices.Equal(p.Runs, []int{int(p.Value - a)}) {
				t.Errorf("%s %s: probe %+v, want ttft_p99_ms %v, run %d", c.span, c.slo, p, want, p.Value-a)
			}
			runs = append(runs, p.Value-a)
		}
		slices.Sort(runs)
		_, table, err := parquetio.ReadSweep(filepath.Join(out, report.SweepFile))
		for _, r := range table {
			rows = append(rows, r.Run)
			if r.Params[0] != fmt.Sprint(r.Run+a) {
				t.Errorf("run %d holds %s=%s", r.Run, res.Key, r.Params[0])
			}
		}
		if err != nil || !slices.Equal(rows, runs) {
			t.Errorf("%s %s: sweep.parquet runs %v, %v; want %v", c.span, c.slo, rows, err, runs)
		}
		if i == 0 {
			want := `workload.trace.limit=1: passes, 1 of 1 replicates meet the SLOs: ttft_p99_ms 10
workload.trace.limit=12: fails, 0 of 1 replicates meet the SLOs: ttft_p99_ms 60
workload.trace.limit=6: passes, 1 of 1 replicates meet the SLOs: ttft_p99_ms 30
workload.trace.limit=9: fails, 0 of 1 replicates meet the SLOs: ttft_p99_ms 50
workload.trace.limit=7: fails, 0 of 1 replicates meet the SLOs: ttft_p99_ms 40
answer workload.trace.limit=6
`
			if stdout != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
			}
		}
		if c.answer == "none" && !strings.HasSuffix(stdout, "answer: no value of workload.trace.limit in [1, 12] meets the SLOs\n") {
			t.Errorf("stdout: %s", stdout)
		}
	}
}

// TestSearchNotMonotone: burst's requests_per_s, L / (0.01 s x ceil(L/2)),
// is 200 for an even L and less for an odd one: 150, 200, 166.667, 200,
// 175 for L = 3 to 7. Searching "requests_per_s > 180" over [2, 7]: 2
// passes (200), 7 fails (175); bisection probes 4 (200, passes), then 5
// (166.667): 200 at 4, 166.667 at 5 and 175 at 7 go down, then up, so the
// search says so and runs the rest, 3 (150) and 6 (200). The passing values
// are 2, 4 and 6: the answer is 6, where bisection alone would have said 4.
func TestSearchNotMonotone(t *testing.T) {
	stdout, _, res := searchIn(t, burst(t), filepath.Join(t.TempDir(), "s"), "--range", "2:7", "--slo", "requests_per_s > 180")
	if got := probed(res); !slices.Equal(got, []int64{2, 7, 4, 5, 3, 6}) || answerOf(res) != "6" || res.Monotone {
		t.Errorf("probes %v, answer %s, monotone %v; want [2 7 4 5 3 6], 6, false", got, answerOf(res), res.Monotone)
	}
	want := "workload.trace.limit=5: fails, 0 of 1 replicates meet the SLOs: requests_per_s 166.667\n" +
		"requests_per_s is not monotone in workload.trace.limit (200 at 4, 166.667 at 5, 175 at 7): running every value in [2, 7]\n" +
		"workload.trace.limit=3: fails, 0 of 1 replicates meet the SLOs: requests_per_s 150\n" +
		"workload.trace.limit=6: passes, 1 of 1 replicates meet the SLOs: requests_per_s 200\n" +
		"answer workload.trace.limit=6\n" +
		"note: below the answer, workload.trace.limit=3, 5 fail: only 2 passes before them\n"
	if !strings.HasSuffix(stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to end:\n%s", stdout, want)
	}
	if res.PassTo == nil || *res.PassTo != 2 || !slices.Equal(res.Failing, []int64{3, 5}) {
		t.Errorf("pass_to %v, failing %v, want 2, [3 5]", res.PassTo, res.Failing)
	}
}

// TestSearchOppositeSLOs: two SLOs failing at opposite ends. On burst's
// runs requests_completed is L and TTFT p99 10 x ceil(L/2) ms, so
// "requests_completed >= 3" holds from L = 3 and "ttft_p99_ms <= 30" up to
// L = 6: 3 to 6 pass. Over [1, 12] A = 1 fails the first and B = 12 the
// second; no one SLO fails at both ends, so a value between may pass, and
// the search runs every value: the answer is 6. With "ttft_p99_ms <= 5"
// instead, which fails at both ends (10 and 60 ms), no value can pass and
// the search stops after the ends.
func TestSearchOppositeSLOs(t *testing.T) {
	sc := burst(t)
	stdout, _, res := searchIn(t, sc, filepath.Join(t.TempDir(), "s"), "--range", "1:12",
		"--slo", "requests_completed >= 3", "--slo", "ttft_p99_ms <= 30")
	if answerOf(res) != "6" || len(res.Probes) != 12 || !res.Monotone || !res.Scanned {
		t.Errorf("answer %s, probes %v, monotone %v, scanned %v; want 6, all 12, true, true", answerOf(res), probed(res), res.Monotone, res.Scanned)
	}
	for _, want := range []string{
		"workload.trace.limit=1 and 12 fail different SLOs, so a value between them may meet every one: running every value in [1, 12]\n",
		"answer workload.trace.limit=6\nnote: below the answer, workload.trace.limit=1, 2 fail\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout:\n%s\nwant a line %s", stdout, want)
		}
	}
	if res.PassTo != nil || !slices.Equal(res.Failing, []int64{1, 2}) {
		t.Errorf("pass_to %v, failing %v, want none (1 fails), [1 2]", res.PassTo, res.Failing)
	}
	_, _, res = searchIn(t, sc, filepath.Join(t.TempDir(), "s"), "--range", "1:12",
		"--slo", "requests_completed >= 3", "--slo", "ttft_p99_ms <= 5")
	if answerOf(res) != "none" || !slices.Equal(probed(res), []int64{1, 12}) || res.Scanned {
		t.Errorf("answer %s, probes %v, scanned %v; want none, [1 12], false", answerOf(res), probed(res), res.Scanned)
	}
}

// TestSearchResume: a search run again with --resume runs nothing new and
// answers the same. With another SLO (<= 40 ms, which holds up to L = 8)
// it reuses the runs of 1, 12, 6, 9 and 7 and runs only 8's (run 7): the
// bisection goes 6 (30), 9 (50), 7 (40, passes now), 8 (40): the answer is
// 8. Another range is another grid (refused), and so is a search into the
// directory without --resume; --force starts over (1, 11, 6, 8, 7 on
// [1, 11]).
func TestSearchResume(t *testing.T) {
	sc, out := burst(t), filepath.Join(t.TempDir(), "s")
	var ran atomic.Int64
	t.Cleanup(func() { testHookRunDone = nil })
	testHookRunDone = func() { ran.Add(1) }
	first, _, _ := searchIn(t, sc, out, "--range", "1:12", "--slo", "ttft_p99_ms <= 30")
	if ran.Load() != 5 {
		t.Fatalf("%d runs, want 5", ran.Load())
	}
	ran.Store(0)
	again, stderr, res := searchIn(t, sc, out, "--range", "1:12", "--slo", "ttft_p99_ms <= 30", "--resume")
	if ran.Load() != 0 || again != first || stderr != "" || answerOf(res) != "6" {
		t.Errorf("resumed: %d runs, answer %s, stderr %q, stdout\n%s\nwant 0 runs and\n%s", ran.Load(), answerOf(res), stderr, again, first)
	}
	ran.Store(0)
	_, _, res = searchIn(t, sc, out, "--range", "1:12", "--slo", "ttft_p99_ms <= 40", "--resume")
	if got := probed(res); ran.Load() != 1 || !slices.Equal(got, []int64{1, 12, 6, 9, 7, 8}) || answerOf(res) != "8" {
		t.Errorf("another SLO: %d runs, probes %v, answer %s; want 1, [1 12 6 9 7 8], 8", ran.Load(), got, answerOf(res))
	}
	if got := names(t, filepath.Join(out, report.RunsDir)); !slices.Equal(got, []string{"run-000", "run-005", "run-006", "run-007", "run-008", "run-011"}) {
		t.Errorf("runs %v", got)
	}
	for _, args := range [][]string{{"--range", "1:11", "--resume"}, {"--range", "1:12"}} {
		code, _, stderr := kvsim(t, append([]string{"search", sc, "-q", "-o", out, "--key", "workload.trace.limit", "--slo", "ttft_p99_ms <= 30"}, args...)...)
		if code != exitBadInput || !strings.Contains(stderr, "--resume") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
	ran.Store(0)
	if _, _, res := searchIn(t, sc, out, "--range", "1:11", "--slo", "ttft_p99_ms <= 30", "--force"); ran.Load() != 5 || answerOf(res) != "6" {
		t.Errorf("--force: %d runs, answer %s; want 5, 6", ran.Load(), answerOf(res))
	}
}

// TestSearchQuorum: with random routing the seed matters, and replicate r
// of a value runs seed 1 + r (the scenario's seed is 1). Burst's TTFT p99
// is then 10 ms x the most requests one worker took (each takes its own
// one after another), read here from requests.parquet's worker column:
// with seeds 1 to 4, 2, 2, 2, 1 for L = 2; 3, 2, 2, 2 for L = 3; 4, 3, 2, 3
// for L = 4. Under "<= 20 ms" (at most 2) 4 of 4 replicates pass for L =
// 2, 3 of 4 for L = 3 and 1 of 4 for L = 4. Bisecting [2, 4] probes 2 and
// 4, then 3: with quorum 2, 2 and 3 pass and 4 fails, so 3; with quorum 1,
// 4 (B) passes, so 4 after the ends; with quorum 4 only 2 passes (3 has 3
// of 4), so 2. The second and third searches reuse the first one's runs
// (--resume).
func TestSearchQuorum(t *testing.T) {
	sc, out := burst(t), filepath.Join(t.TempDir(), "s")
	args := []string{"--set", "router.policy=random", "--range", "2:4", "--slo", "ttft_p99_ms <= 20", "--replicates", "4"}
	_, _, res := searchIn(t, sc, out, append(args, "--quorum", "2")...)
	passing, most := map[int64]int{}, map[int64][]int{}
	for _, p := range res.Probes {
		for r, run := range p.Runs {
			dir := filepath.Join(out, report.SweepRunDir(int64(run)))
			loaded, err := scenarios.Load(filepath.Join(dir, report.ScenarioFile), nil)
			if err != nil || run != int(p.Value-2)*4+r || loaded.Seed != uint64(1+r) {
				t.Fatalf("value %d replicate %d: run %d, seed %d, %v", p.Value, r, run, loaded.Seed, err)
			}
			took := map[int32]int{}
			if err := parquetio.ReadRequests(filepath.Join(dir, report.RequestsFile), func(q *report.RequestRow) error {
				took[q.Worker]++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			most[p.Value] = append(most[p.Value], max(took[0], took[1]))
			if 10*max(took[0], took[1]) <= 20 {
				passing[p.Value]++
			}
		}
		if p.Passing != passing[p.Value] {
			t.Errorf("value %d: %d replicates pass, requests.parquet says %d", p.Value, p.Passing, passing[p.Value])
		}
	}
	if want := map[int64][]int{2: {2, 2, 2, 1}, 3: {3, 2, 2, 2}, 4: {4, 3, 2, 3}}; !reflect.DeepEqual(most, want) {
		t.Fatalf("the most requests a worker took, by value and seed: %v, want %v", most, want)
	}
	if want := map[int64]int{2: 4, 3: 3, 4: 1}; !reflect.DeepEqual(passing, want) {
		t.Fatalf("replicates passing by value %v, want %v", passing, want)
	}
	for _, c := range []struct {
		quorum, answer string
		probes         []int64
	}{{"2", "3", []int64{2, 4, 3}}, {"1", "4", []int64{2, 4}}, {"4", "2", []int64{2, 4, 3}}} {
		_, _, res := searchIn(t, sc, out, append(args, "--quorum", c.quorum, "--resume")...)
		if answerOf(res) != c.answer || !slices.Equal(probed(res), c.probes) || res.Quorum != int(c.quorum[0]-'0') {
			t.Errorf("quorum %s: answer %s, probes %v; want %s, %v", c.quorum, answerOf(res), probed(res), c.answer, c.probes)
		}
	}
}

// TestSearchNaN: with every request arriving at 0, an event at 1 s has
// no request in its window after, so events[0].ttft_p99_after_ms is NaN
// in every run: it meets no "<" SLO, no value passes, and search.json
// holds null for the mean, as for never.
func TestSearchNaN(t *testing.T) {
	stdout, _, res := searchIn(t, burst(t), filepath.Join(t.TempDir(), "s"), "--range", "1:4",
		"--set", "events=[{at: 1s, drain: [1]}]", "--slo", "events[0].ttft_p99_after_ms < 100")
	if answerOf(res) != "none" || !res.Monotone || len(res.Probes) != 2 {
		t.Errorf("answer %s, monotone %v, probes %v; want none, true, [1 4]", answerOf(res), res.Monotone, probed(res))
	}
	for _, p := range res.Probes {
		if m, ok := p.Metrics["events[0].ttft_p99_after_ms"]; !ok || m != nil {
			t.Errorf("probe %d: metrics %v, want null", p.Value, p.Metrics)
		}
	}
	if want := "workload.trace.limit=1: fails, 0 of 1 replicates meet the SLOs: events[0].ttft_p99_after_ms no value\n"; !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to begin %s", stdout, want)
	}
}

// TestSearchWarnings: a search warns of what its runs found, as a sweep
// does, each warning once after the runs that gave it: burst's runs of 1
// and 4 requests, 2 replicates each (runs 0, 1 and 6, 7), all end long
// before a drain at 1 s, which finds no request in flight; and on a trace
// with a round-robin router the replicates of each value are the same run.
func TestSearchWarnings(t *testing.T) {
	_, stderr, _ := searchIn(t, burst(t), filepath.Join(t.TempDir(), "s"), "--range", "1:4", "--replicates", "2",
		"--set", "events=[{at: 1s, drain: [1]}]", "--slo", "ttft_p99_ms < 100")
	for _, want := range []string{
		"kvsim: warning: run 0-1, 6-7: no request is in flight on 2 workers at 1s: the cluster is lightly loaded",
		"kvsim: warning: --replicates 2: the runs of each grid point have identical digests (runs 0-1; runs 6-7)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr:\n%s\nwant %s", stderr, want)
		}
	}
}

// TestSearchRefusedValue: a value of the range the scenario refuses is
// found only when probed: burst's 12 requests with skip 2, searched over
// limit 0 (no limit: 10 requests, meets requests_completed > 3) to 4 (2
// requests: fails); the midpoint, limit 2, keeps only requests skip
// skips. Bad input (exit 2), and the message names the value.
func TestSearchRefusedValue(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	code, _, stderr := kvsim(t, "search", burst(t), "-q", "-o", out, "--set", "workload.trace.skip=2",
		"--key", "workload.trace.limit", "--range", "0:4", "--slo", "requests_completed > 3")
	if want := "kvsim: --key workload.trace.limit=2: --set: workload.trace.skip: skips all 2 requests the limit keeps\n"; code != exitBadInput || stderr != want {
		t.Errorf("exit %d, %q; want %d, %q", code, stderr, exitBadInput, want)
	}
}

// TestSearchBadInput: a bad command line, key, range, SLO or quorum is
// bad input (exit 2), named, and nothing is written.
func TestSearchBadInput(t *testing.T) {
	sc := burst(t)
	out := filepath.Join(t.TempDir(), "s")
	ok := []string{"--key", "workload.trace.limit", "--range", "1:4", "--slo", "ttft_p99_ms < 30"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--range", "1:4", "--slo", "ttft_p99_ms < 30"}, "kvsim: search needs --key KEY"},
		{[]string{"--key", "workload.trace.limit", "--range", "1:4"}, "kvsim: search needs at least one --slo"},
		{append(slices.Clone(ok), "--range", "4"), `kvsim: --range "4": want A:B, integers with A <= B`},
		{append(slices.Clone(ok), "--range", "4:1"), `kvsim: --range "4:1": want A:B`},
		{append(slices.Clone(ok), "--range", "a:b"), `kvsim: --range "a:b": want A:B`},
		{append(slices.Clone(ok), "--slo", "ttft_p99_ms <"), `kvsim: --slo "ttft_p99_ms <": "ttft_p99_ms <": want "metric op value"`},
		{append(slices.Clone(ok), "--slo", "ttft_p99_m < 30"), `kvsim: --slo "ttft_p99_m < 30": no metric is named "ttft_p99_m" (did you mean "ttft_p99_ms"?)`},
		{append(slices.Clone(ok), "--slo", "events[0].removed_after_s < 30"), `kvsim: --slo "events[0].removed_after_s < 30": "events[0].removed_after_s": the scenario has no events`},
		{append(slices.Clone(ok), "--slo", "goodput_share > 0.5"), `kvsim: --slo "goodput_share > 0.5": goodput_share is measured against planner.slo, which the scenario does not set`},
		{append(slices.Clone(ok), "--replicates", "2", "--quorum", "3"), "kvsim: --quorum 3: want 1 to --replicates (2)"},
		{append(slices.Clone(ok), "--quorum", "0"), "kvsim: --quorum 0: want 1 to --replicates (1)"},
		{append(slices.Clone(ok), "--replicates", "0"), "kvsim: --replicates 0: want at least 1"},
		{append(slices.Clone(ok), "--key", "cluster.wrkers"), `kvsim: --key: cluster.wrkers: unknown key (did you mean "workers"?)`},
		{append(slices.Clone(ok), "--key", "router.policy"), `kvsim: --key: router.policy: "1" is not one of`},
		{append(slices.Clone(ok), "--key", "seed", "--replicates", "2"), "kvsim: --key seed: the replicates are seeds already"},
		{append(slices.Clone(ok), "--range", "0:2000000"), "kvsim: --range 0:2000000 with --replicates 1: more than 1000000 runs"},
	} {
		code, _, stderr := kvsim(t, append([]string{"search", sc, "-q", "-o", out}, c.args...)...)
		if code != exitBadInput || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", c.args, code, stderr, exitBadInput, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: wrote %s", c.args, out)
		}
	}
	if code, _, stderr := kvsim(t, append([]string{"search", sc, "-q"}, ok...)...); code != exitBadInput || stderr != "kvsim: search needs -o DIR\n" {
		t.Errorf("no -o: exit %d, %q", code, stderr)
	}
}
