package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// pickBody: 3 workers, round robin, fixed 10 ms prefill and 5 ms decode
// passes, KVCR on (for G2) with a pool large enough to keep every block.
const pickBody = `cluster:
  workers: 3
  engine: {kv_bytes_per_token: 1000, gpu_blocks: 256, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
  g2: {capacity_blocks: 1024, d2h_gbps: 0, h2d_gbps: 0}
router: {policy: round_robin, hints: {enabled: false}}
kvcr: {enabled: true}
report: {sample_interval: 100ms}
`

// pickLines: round robin sends R0, R3, R6 to worker 0, R1, R4, R7 to
// worker 1, R2, R5, R8 to worker 2. The short ones (1 output token) are done
// by 30 ms: R0 at 10 ms; R3 and R6 in worker 0's 10-20 ms pass; R4 in
// worker 1's 11-21 ms pass. The long ones (100 output tokens) last past
// 505 ms. At 100 ms worker 0 holds no request, worker 1 holds 2 (R1, R7)
// and worker 2 holds 3 (R2, R5, R8).
var pickLines = []traceLine{
	{0, 32, 1, ids(1, 2)}, {1, 32, 100, ids(3, 2)}, {2, 32, 100, ids(5, 2)},
	{3, 32, 1, ids(7, 2)}, {4, 32, 1, ids(9, 2)}, {5, 32, 100, ids(11, 2)},
	{6, 32, 1, ids(13, 2)}, {7, 32, 100, ids(15, 2)}, {8, 32, 100, ids(17, 2)},
}

// drained lists the workers a run drained, and checks they drained at at.
func drained(t *testing.T, res *Result, at int64) []int32 {
	t.Helper()
	var out []int32
	for _, w := range res.Workers {
		if w.DrainNs >= 0 {
			if w.DrainNs != at {
				t.Errorf("worker %d drained at %d, want %d", w.Worker, w.DrainNs, at)
			}
			out = append(out, w.Worker)
		}
	}
	return out
}

// wantG2 checks the time series' samples at at (ns): one for
// each of want's workers, holding want[worker] blocks in G2.
func wantG2(t *testing.T, s *rowSink, at int64, want []int64, label string) {
	t.Helper()
	seen := 0
	for _, r := range s.samples {
		if r.TimeNs == at {
			seen++
			if r.G2Blocks != want[r.Worker] {
				t.Errorf("%s: worker %d holds %d G2 blocks at %d ms", label, r.Worker, r.G2Blocks, at/ms)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%s: %d samples at %d ms, want %d", label, seen, at/ms, len(want))
	}
}

// TestPickBusiestIdlest: at 100 ms the requests on workers 0, 1, 2 are 0,
// 2 and 3 (pickLines). busiest 1 is worker 2; busiest 2 is workers 1 and
// 2; idlest 1 is worker 0; idlest 2 is workers 0 and 1.
func TestPickBusiestIdlest(t *testing.T) {
	for _, tc := range []struct {
		pick  string
		count int
		want  []int32
	}{
		{"busiest", 1, []int32{2}}, {"busiest", 2, []int32{1, 2}},
		{"idlest", 1, []int32{0}}, {"idlest", 2, []int32{0, 1}},
	} {
		s, res := runTraceSink(t, pickBody, pickLines, fmt.Sprintf("events=[{at: 100ms, drain: {count: %d, pick: %s}}]", tc.count, tc.pick))
		if got := drained(t, res, 100*ms); !slices.Equal(got, tc.want) {
			t.Errorf("%s %d drained %v, want %v", tc.pick, tc.count, got, tc.want)
		}
		// The hand count, from the time series at 100 ms.
		for _, r := range s.samples {
			if r.TimeNs == 100*ms && r.Running+r.Waiting != []int32{0, 2, 3}[r.Worker] {
				t.Errorf("%s: worker %d holds %d requests at 100 ms", tc.pick, r.Worker, r.Running+r.Waiting)
			}
		}
	}
}

// TestPickTiesLowestID: at 200 ms every request of R0, R1, R2 (short) is
// done, so every worker holds none: busiest 2 and idlest 2 both take the
// lowest ids, 0 and 1, and a warning says the 3 workers shared the top
// score (0 requests), so the ids chose, not the pick. Busiest 1 at 100 ms
// (pickLines: 0, 2 and 3 requests) has no tie, and no warning.
func TestPickTiesLowestID(t *testing.T) {
	for _, pick := range []string{"busiest", "idlest"} {
		_, res := runTraceSink(t, pickBody, pickLines[:1], fmt.Sprintf("events=[{at: 200ms, drain: {count: 2, pick: %s}}]", pick))
		if got := drained(t, res, 200*ms); !slices.Equal(got, []int32{0, 1}) {
			t.Errorf("%s drained %v, want [0 1]", pick, got)
		}
		want := fmt.Sprintf("events[0] picks 2 by %s at 200ms, but 3 ready workers share the top score, 0: the lowest ids won, not the pick", pick)
		if !slices.Contains(res.Summary.Warnings, want) {
			t.Errorf("%s: warnings %q lack %q", pick, res.Summary.Warnings, want)
		}
	}
	_, res := runTraceSink(t, pickBody, pickLines, "events=[{at: 100ms, drain: {count: 1, pick: busiest}}]")
	for _, w := range res.Summary.Warnings {
		if strings.Contains(w, "share the top score") {
			t.Errorf("busiest 1 of 0, 2, 3 requests warned %q", w)
		}
	}
}

// TestPickTiesLastPlace: with R8 short too, at 100 ms the workers hold 0,
// 2 and 2 requests. idlest 2 takes worker 0 (none) and one of 1 and 2,
// tied on 2 requests for its last place: worker 1 by id, and a warning
// says so, though no tie is at the top. busiest 2 takes 1 and 2, tied
// with no one left out: no warning.
func TestPickTiesLastPlace(t *testing.T) {
	lines := slices.Clone(pickLines)
	lines[8].out = 1
	_, res := runTraceSink(t, pickBody, lines, "events=[{at: 100ms, drain: {count: 2, pick: idlest}}]")
	if got := drained(t, res, 100*ms); !slices.Equal(got, []int32{0, 1}) {
		t.Errorf("idlest drained %v, want [0 1]", got)
	}
	want := "events[0] picks 2 by idlest at 100ms, but 2 ready workers tie at a score of 2 for its last places: the lowest ids won, not the pick"
	if !slices.Contains(res.Summary.Warnings, want) {
		t.Errorf("warnings %q lack %q", res.Summary.Warnings, want)
	}
	_, res = runTraceSink(t, pickBody, lines, "events=[{at: 100ms, drain: {count: 2, pick: busiest}}]")
	if got := drained(t, res, 100*ms); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("busiest drained %v, want [1 2]", got)
	}
	for _, w := range res.Summary.Warnings {
		if strings.Contains(w, "picks 2 by busiest") {
			t.Errorf("busiest 2 of 0, 2, 2 requests warned %q", w)
		}
	}
}

// TestPickMostCached: short requests only, round robin. Each stores its
// full prompt blocks in its worker's G2: worker 0 gets R0 (32 tokens, 2
// blocks) and R3 (2), 4 blocks; worker 1 R1 (160 tokens, 10 blocks) and R4
// (2), 12; worker 2 R2 (64 tokens, 4) and R5 (4), 8. At 200 ms
// most_cached 2 is workers 1 and 2; most_cached 1 is worker 1; busiest 2
// would be 0 and 1 (all idle).
func TestPickMostCached(t *testing.T) {
	lines := []traceLine{
		{0, 32, 1, ids(1, 2)}, {1, 160, 1, ids(3, 10)}, {2, 64, 1, ids(13, 4)},
		{3, 32, 1, ids(17, 2)}, {4, 32, 1, ids(19, 2)}, {5, 64, 1, ids(21, 4)},
	}
	for _, tc := range []struct {
		count int
		want  []int32
	}{{2, []int32{1, 2}}, {1, []int32{1}}} {
		s, res := runTraceSink(t, pickBody, lines, fmt.Sprintf("events=[{at: 200ms, drain: {count: %d, pick: most_cached}}]", tc.count))
		if got := drained(t, res, 200*ms); !slices.Equal(got, tc.want) {
			t.Errorf("most_cached %d drained %v, want %v", tc.count, got, tc.want)
		}
		for _, r := range s.samples {
			if r.TimeNs == 200*ms && r.G2Blocks != []int64{4, 12, 8}[r.Worker] {
				t.Errorf("worker %d holds %d G2 blocks at 200 ms", r.Worker, r.G2Blocks)
			}
		}
	}
}

// TestPickRandom: a random pick is the same for a seed, always one of the
// ready workers, and over 300 seeds takes each of 3 workers about 100
// times (a binomial(300, 1/3) is within 100 ± 30 with probability above
// 0.999).
func TestPickRandom(t *testing.T) {
	count := make([]int, 3)
	for seed := 1; seed <= 300; seed++ {
		_, res := runTraceSink(t, pickBody, pickLines[:1], fmt.Sprintf("seed=%d", seed),
			"events=[{at: 200ms, drain: {count: 1, pick: random}}]")
		got := drained(t, res, 200*ms)
		if len(got) != 1 {
			t.Fatalf("seed %d drained %v", seed, got)
		}
		count[got[0]]++
		if seed == 7 {
			_, again := runTraceSink(t, pickBody, pickLines[:1], "seed=7", "events=[{at: 200ms, drain: {count: 1, pick: random}}]")
			if g := drained(t, again, 200*ms); !slices.Equal(g, got) {
				t.Errorf("seed 7 drained %v, then %v", got, g)
			}
		}
	}
	for w, n := range count {
		if n < 70 || n > 130 {
			t.Errorf("worker %d picked %d times in 300, want about 100 (all: %v)", w, n, count)
		}
	}
}

// TestPickSkipsDrained: the first event drains the busiest (worker 2, 3
// requests at 100 ms); the second, at 110 ms, picks among the ready
// workers only: worker 1 (2 requests), not worker 2 again.
func TestPickSkipsDrained(t *testing.T) {
	_, res := runTraceSink(t, pickBody, pickLines,
		"events=[{at: 100ms, drain: {count: 1, pick: busiest}}, {at: 110ms, drain: {count: 1, pick: busiest}}]")
	if w := res.Workers; w[2].DrainNs != 100*ms || w[1].DrainNs != 110*ms || w[0].DrainNs != -1 {
		t.Errorf("workers %+v", w)
	}
}

// TestPickRemove: a remove takes its pick too: busiest 1 at 100 ms removes
// worker 2 and reroutes its 3 requests.
func TestPickRemove(t *testing.T) {
	_, res := runTraceSink(t, pickBody, pickLines, "events=[{at: 100ms, remove: {count: 1, pick: busiest}}]")
	if w := res.Workers[2]; w.RemovedNs != 100*ms {
		t.Errorf("worker 2 %+v", w)
	}
	if c := res.Summary.Counters; c["requests_rerouted"] != 3 || c["workers_removed"] != 1 {
		t.Errorf("counters %v", c)
	}
}

// TestPickFewerReady: 2 workers ready and 2 starting (added at 10 ms with
// a 1 s startup); a pick of 3 at 20 ms finds only the 2 ready ones, takes
// them, and says so.
func TestPickFewerReady(t *testing.T) {
	_, res := runTraceSink(t, pickBody, pickLines[:2], "cluster.workers=2",
		"events=[{at: 10ms, add: 2, startup: 1s}, {at: 20ms, drain: {count: 3, pick: idlest}}]")
	if got := drained(t, res, 20*ms); !slices.Equal(got, []int32{0, 1}) {
		t.Errorf("drained %v, want [0 1]", got)
	}
	if !slices.ContainsFunc(res.Summary.Warnings, func(w string) bool {
		return strings.Contains(w, "events[1] picks 3 workers, but only 2 are ready at 20ms")
	}) {
		t.Errorf("warnings %q", res.Summary.Warnings)
	}
}

// TestPickRandomStable: a random pick draws a key a worker from the stream
// of its instant alone, so leaving out another random pick (a twin) changes
// nothing of it but the workers that pick took. With 3 workers, an event A
// at 100 ms drains one at random and an event B at 200 ms another. For every
// seed of 1-100, B picks the ready worker with the smallest key at 200 ms:
// with A, among the two A left; without A (A's twin), among all three,
// which is the same worker unless A took the one with the smallest key.
func TestPickRandomStable(t *testing.T) {
	both := "events=[{at: 100ms, drain: {count: 1, pick: random}}, {at: 200ms, drain: {count: 1, pick: random}}]"
	alone := "events=[{at: 200ms, drain: {count: 1, pick: random}}]"
	same := 0
	for seed := 1; seed <= 100; seed++ {
		s := fmt.Sprintf("seed=%d", seed)
		_, withA := runTraceSink(t, pickBody, pickLines[:1], s, both)
		_, withoutA := runTraceSink(t, pickBody, pickLines[:1], s, alone)
		a, b := withA.Summary.EventRows[0].Workers, withA.Summary.EventRows[1].Workers
		b0 := withoutA.Summary.EventRows[0].Workers
		if b != b0 {
			if a != b0 { // A did not take the smallest key at 200 ms, so B should have
				t.Errorf("seed %d: with A (drained %s) B drained %s, without A %s", seed, a, b, b0)
			}
			continue
		}
		same++
	}
	if same < 50 { // A takes B's worker about a third of the time
		t.Errorf("B kept its pick in %d of 100 seeds", same)
	}
}

// cacheLines: round robin, short requests only (1 output token), all done
// by 22 ms: R0 (blocks 1-10, trace ids as block hashes) and R3 (1-2, the
// same blocks) on worker 0; R1 (100-103) and R4 (100-105) on worker 1; R2
// (1-12, sharing 1-10 with R0) and R5 (300-301) on worker 2. Each worker
// keeps every prompt block in G1 and G2 (256 and 1024 blocks). Blocks held
// (a block in G1 and G2 counts once): worker 0 holds 1-10, 10 blocks;
// worker 1 100-105, 6; worker 2 1-12 and 300-301, 14. Unique (held by no
// other worker): worker 0 none (worker 2 holds 1-10 too); worker 1 all 6;
// worker 2 11, 12, 300, 301: 4.
var cacheLines = []traceLine{
	{0, 160, 1, ids(1, 10)}, {1, 64, 1, ids(100, 4)}, {2, 192, 1, ids(1, 12)},
	{3, 32, 1, ids(1, 2)}, {4, 96, 1, ids(100, 6)}, {5, 32, 1, ids(300, 2)},
}

// TestPickHighestIDAndCache: at 200 ms (cacheLines: held 10, 6, 14;
// unique 0, 6, 4) the three picks take three different workers.
// highest_id 1 takes worker 2, 2 takes 1 and 2. least_cached 1 takes
// worker 1 (6 blocks), 2 takes 1 and 0 (10). fewest_unique 1 takes worker
// 0, although it holds more blocks than worker 1: all 10 are on worker 2
// too, so a drain of worker 0 loses the cluster no block; 2 takes 0 and 2
// (4). most_cached 1, by true G2, takes worker 2 (14). No pick ties.
func TestPickHighestIDAndCache(t *testing.T) {
	for _, tc := range []struct {
		pick  string
		count int
		want  []int32
	}{
		{"highest_id", 1, []int32{2}}, {"highest_id", 2, []int32{1, 2}},
		{"least_cached", 1, []int32{1}}, {"least_cached", 2, []int32{0, 1}},
		{"fewest_unique", 1, []int32{0}}, {"fewest_unique", 2, []int32{0, 2}},
		{"most_cached", 1, []int32{2}},
	} {
		s, res := runTraceSink(t, pickBody, cacheLines, fmt.Sprintf("events=[{at: 200ms, drain: {count: %d, pick: %s}}]", tc.count, tc.pick))
		if got := drained(t, res, 200*ms); !slices.Equal(got, tc.want) {
			t.Errorf("%s %d drained %v, want %v", tc.pick, tc.count, got, tc.want)
		}
		for _, w := range res.Summary.Warnings {
			if strings.Contains(w, "share the top score") {
				t.Errorf("%s %d: %q", tc.pick, tc.count, w)
			}
		}
		// The hand count, from the time series at 100 ms (at 200 ms a
		// drained worker, idle, is gone): G2 holds every block G1 does, so
		// a worker's G2 is what it holds.
		wantG2(t, s, 100*ms, []int64{10, 6, 14}, tc.pick)
	}
}

// TestPickCacheEventDelay: cacheLines and R6 (blocks 600-604, 80 tokens)
// on worker 0 at 100 ms, stored at 110 ms: worker 0 then truly holds 15
// blocks, 5 of them its own. Without a delay, at 200 ms fewest_unique 1
// takes worker 2 (unique 5, 6, 4) and least_cached 2 workers 1 and 2 (15,
// 6, 14). With router.event_delay 150ms the router has seen at 200 ms only
// the events of 50 ms and before (R0-R5's, by 22 ms): not R6's, which
// reach it at 260 ms. It reads worker 0 as cacheLines leave it (10 held,
// 0 unique): fewest_unique 1 takes worker 0 and least_cached 2 workers 0
// and 1. At 300 ms, with the delay, it has seen R6's blocks and picks as
// without one.
func TestPickCacheEventDelay(t *testing.T) {
	lines := append(slices.Clone(cacheLines), traceLine{100, 80, 1, ids(600, 5)})
	for _, tc := range []struct {
		delay string
		at    int64 // ms
		pick  string
		count int
		want  []int32
	}{
		{"0s", 200, "fewest_unique", 1, []int32{2}},
		{"0s", 200, "least_cached", 2, []int32{1, 2}},
		{"150ms", 200, "fewest_unique", 1, []int32{0}},
		{"150ms", 200, "least_cached", 2, []int32{0, 1}},
		{"150ms", 300, "fewest_unique", 1, []int32{2}},
		{"150ms", 300, "least_cached", 2, []int32{1, 2}},
	} {
		s, res := runTraceSink(t, pickBody, lines, "router.event_delay="+tc.delay, "report.sample_interval=50ms",
			fmt.Sprintf("events=[{at: %dms, drain: {count: %d, pick: %s}}]", tc.at, tc.count, tc.pick))
		if got := drained(t, res, tc.at*ms); !slices.Equal(got, tc.want) {
			t.Errorf("delay %s, %s %d at %d ms drained %v, want %v", tc.delay, tc.pick, tc.count, tc.at, got, tc.want)
		}
		// The workers' true caches at 150 ms, the same with and without the
		// delay.
		wantG2(t, s, 150*ms, []int64{15, 6, 14}, "delay "+tc.delay)
	}
}

// TestPickCacheTies: at 0 ms, before any request, every worker holds
// nothing in the router's view: least_cached 1 and fewest_unique 1 find
// the 3 workers tied at 0, take worker 0 and say the ids chose.
func TestPickCacheTies(t *testing.T) {
	for _, pick := range []string{"least_cached", "fewest_unique"} {
		_, res := runTraceSink(t, pickBody, pickLines[:1], fmt.Sprintf("events=[{at: 0s, drain: {count: 1, pick: %s}}]", pick))
		if got := drained(t, res, 0); !slices.Equal(got, []int32{0}) {
			t.Errorf("%s drained %v, want [0]", pick, got)
		}
		want := fmt.Sprintf("events[0] picks 1 by %s at 0s, but 3 ready workers share the top score, 0: the lowest ids won, not the pick", pick)
		if !slices.Contains(res.Summary.Warnings, want) {
			t.Errorf("%s: warnings %q lack %q", pick, res.Summary.Warnings, want)
		}
	}
}

// TestFaultPickRandomStream: a fault's random pick draws its keys from the
// stream faults/pick/<at in ns> (DESIGN.md section 12: random choices
// inside a fault come from the family faults), a drain's from
// lifecycle/<at in ns>: one key a worker, in id order, the smallest ready
// one taken. pickBody (3 workers), one request, a pick of 1 at 200 ms.
//
//   - seed 1: faults/pick/200000000 draws 0x0d3ac83213565980,
//     0xcc5b8451e42a301b, 0x60498f3034183cb3 for workers 0-2: a slow
//     fault slows worker 0. lifecycle/200000000 draws 0xf9ac9c172efc0798,
//     0xed0e9a8a220ee124, 0x81b2a56435a1305e: a drain drains worker 2.
//   - seed 6: faults 0xa5acd786ecc9d517, 0x273c27cf785393b2,
//     0x56adfd29fdbafdf9: worker 1; lifecycle 0x19efba30336d0f0c,
//     0x20eee29daf70de85, 0x7834181e4755211c: worker 0.
//
// Over seeds 1-40 the fault's worker is the smallest of the faults keys
// and the drain's the smallest of the lifecycle keys, recomputed here. A
// link fault at 100 ms (50 ms) picking at random before it leaves the slow
// fault's pick as it is: its keys are its instant's, whatever drew before
// (the slow fault's twin of the link fault draws the same).
func TestFaultPickRandomStream(t *testing.T) {
	smallest := func(name string, seed uint64) string {
		r := des.NewRNG(seed).Stream(name)
		best, bestKey := 0, uint64(0)
		for w := range 3 {
			if k := r.Uint64(); w == 0 || k < bestKey {
				best, bestKey = w, k
			}
		}
		return fmt.Sprint(best)
	}
	hand := map[uint64][2]string{1: {"0", "2"}, 6: {"1", "0"}} // seed: the fault's worker, the drain's
	for seed := uint64(1); seed <= 40; seed++ {
		s := fmt.Sprintf("seed=%d", seed)
		_, slow := runTraceSink(t, pickBody, pickLines[:1], s, "events=[{at: 200ms, for: 100ms, slow: {workers: {count: 1, pick: random}, factor: 2}}]")
		_, drain := runTraceSink(t, pickBody, pickLines[:1], s, "events=[{at: 200ms, drain: {count: 1, pick: random}}]")
		got := [2]string{slow.Summary.EventRows[0].Workers, drain.Summary.EventRows[0].Workers}
		want := [2]string{smallest("faults/pick/200000000", seed), smallest("lifecycle/200000000", seed)}
		if h, ok := hand[seed]; ok && h != want {
			t.Errorf("seed %d: the streams' smallest keys are workers %v, worked by hand %v", seed, want, h)
		}
		if got != want {
			t.Errorf("seed %d: the slow fault took worker %s, the drain %s; want %s and %s", seed, got[0], got[1], want[0], want[1])
		}
		_, both := runTraceSink(t, pickBody, pickLines[:1], s, "events=[{at: 100ms, for: 50ms, link: {workers: {count: 1, pick: random}, factor: 0.5}}, "+
			"{at: 200ms, for: 100ms, slow: {workers: {count: 1, pick: random}, factor: 2}}]")
		if w := both.Summary.EventRows[1].Workers; w != want[0] {
			t.Errorf("seed %d: after a link fault's pick the slow fault took worker %s, want %s", seed, w, want[0])
		}
	}
}
