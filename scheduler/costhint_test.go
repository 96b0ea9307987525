package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// linearPass is engine.Linear's formula over a Pass, with no context
// term: base + prefill x per prefill token + decode sequences x per decode
// token, in ns.
func linearPass(base, perPrefill, perDecode float64) PassTimer {
	return func(p Pass) des.Time {
		return des.Time(base + float64(perPrefill*float64(p.Prefill)) + float64(perDecode*float64(p.DecodeSeqs)))
	}
}

// costCosts: pulls wait 10,000 ns for their first byte and move 1 byte a
// ns, blocks of 1,000 bytes: a run of n blocks pulls in 10,000 + 1,000 n
// ns with no backlog. Passes take 1,000 ns + 100 ns a prefill token + 50
// ns a decoding request: n blocks of 16 tokens recompute in 1,000 +
// 1,600 n ns on an idle target, in 1,600 n ns (the marginal time) on a
// decoding one.
func costCosts(rng *rand.Rand) HintCosts {
	return HintCosts{Latency: 10_000, EgressRate: 1, BlockBytes: 1000, PassTime: linearPass(1000, 100, 50), RNG: rng}
}

// newCostRouter is a round-robin router over n ready workers with hints of
// policy cost (costCosts) and min_blocks minBlocks, drawing from rng (nil:
// a stream of seed 1).
func newCostRouter(t *testing.T, n, minBlocks int, rng *rand.Rand) *Router {
	t.Helper()
	if rng == nil {
		rng = des.NewRNG(1).Stream("hints")
	}
	r, tab, err := newWithLife(Config{Policy: RoundRobin, BlockSize: 16, Hints: true, HintMinBlocks: minBlocks,
		HintPolicy: HintsCost, HintCosts: costCosts(rng), Chains: &block.Chains{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		tab.Add(lifecycle.Ready)
	}
	return r
}

// chainOf is the chain 1, 2, ..., n.
func chainOf(n int) []uint64 {
	c := make([]uint64, n)
	for i := range c {
		c[i] = uint64(i + 1)
	}
	return c
}

// TestCostCrossover: round robin sends an n-block request (16 n tokens) to
// worker 0, which holds none of it; worker 1's G2 holds all n blocks: the
// one candidate, a run of n. Pull 10,000 + 1,000 n ns (costCosts).
// Recompute on the idle worker 0: 1,000 + 1,600 n ns. The pull pays when
// 10,000 + 1,000 n < 1,000 + 1,600 n, n > 9,000 / 600 = 15: r* = 15, where
// both are 34,000 ns and the pull does not pay (it must be strictly
// faster). With worker 0 decoding 2 requests of 4 prompt blocks each, the
// pass it already runs pays the 1,000 ns base and the 100 ns of decoding:
// recompute is the marginal 1,600 n, and the pull pays when 600 n > 10,000,
// n > 16.7: r* moves to 17. With min_blocks 18 the run of 17 is no
// candidate at all: no hint, none withheld.
func TestCostCrossover(t *testing.T) {
	for _, c := range []struct {
		n, minBlocks int
		decoding     bool
		hinted       bool
		withheld     int64
	}{
		{14, 1, false, false, 1}, // pull 24,000 ns, recompute 23,400 ns
		{15, 1, false, false, 1}, // 25,000 and 25,000: a tie does not pay
		{16, 1, false, true, 0},  // 26,000 against 26,600
		{20, 1, false, true, 0},
		{16, 1, true, false, 1}, // 26,000 against the marginal 25,600
		{17, 1, true, true, 0},  // 27,000 against 27,200
		{17, 18, true, false, 0},
	} {
		r := newCostRouter(t, 2, c.minBlocks, nil)
		chain := chainOf(c.n)
		r.Stored(0, 1, G2, blocks(r, chain, 0, c.n))
		if c.decoding {
			r.loads[0] = load{outstanding: 2, decodeBlocks: 8, decoding: 2}
		}
		rt := pick(t, r, rq(16*c.n, chain...))
		if hinted := rt.HintSource == 1 && rt.HintBlocks == c.n && rt.HintBytes == int64(1000*c.n); rt.Worker != 0 || hinted != c.hinted || (!c.hinted && rt.HintSource != -1) {
			t.Errorf("n %d, decoding %v: route %+v, want hinted %v", c.n, c.decoding, rt, c.hinted)
		}
		if r.Withheld() != c.withheld {
			t.Errorf("n %d, decoding %v: %d withheld, want %d", c.n, c.decoding, r.Withheld(), c.withheld)
		}
	}
}

// TestCostBacklog: 4 workers, round robin; worker 3's G2 holds a 20-block
// chain. R0 goes to worker 0: pull 10,000 + 20,000 = 30,000 ns against
// recompute 1,000 + 32,000 = 33,000: hinted, 20,000 bytes on worker 3's
// backlog. R1 goes to worker 1: its pull queues behind R0's bytes, 10,000 +
// 40,000 = 50,000 ns: withheld (without the backlog it would pay, as R0's
// did). R0's first token takes its bytes off: R2, to worker 2, is hinted
// at 30,000 ns again. R2 ending before its first token (rerouted, dropped)
// takes its bytes off too.
func TestCostBacklog(t *testing.T) {
	r := newCostRouter(t, 4, 1, nil)
	chain := chainOf(20)
	r.Stored(0, 3, G2, blocks(r, chain, 0, 20))
	r0 := pick(t, r, rq(320, chain...))
	if r0.Worker != 0 || r0.HintSource != 3 || r0.HintBytes != 20_000 || r.loads[3].backlog != 20_000 {
		t.Fatalf("R0 %+v, backlog %d", r0, r.loads[3].backlog)
	}
	if r1 := pick(t, r, rq(320, chain...)); r1.Worker != 1 || r1.HintSource != -1 || r.Withheld() != 1 {
		t.Errorf("R1 %+v, %d withheld", r1, r.Withheld())
	}
	r.FirstToken(r0)
	if r.loads[3].backlog != 0 {
		t.Errorf("after R0's first token: backlog %d", r.loads[3].backlog)
	}
	r2 := pick(t, r, rq(320, chain...))
	if r2.Worker != 2 || r2.HintSource != 3 || r.loads[3].backlog != 20_000 {
		t.Errorf("R2 %+v, backlog %d", r2, r.loads[3].backlog)
	}
	r.Finished(r2, false)
	r.Finished(r0, true)
	if r.loads[3].backlog != 0 {
		t.Errorf("after R2 ended: backlog %d", r.loads[3].backlog)
	}
}

// TestDrawSaving: savings 3 and 1 (sum 4) split [0, 1) at 0.75; 1, 2, 1 at
// 0.25 and 0.75. u x sum exactly on a boundary goes to the next index.
func TestDrawSaving(t *testing.T) {
	for _, c := range []struct {
		savings []float64
		u       float64
		want    int
	}{
		{[]float64{3, 1}, 0, 0},
		{[]float64{3, 1}, 0.7499, 0},
		{[]float64{3, 1}, 0.75, 1},
		{[]float64{3, 1}, 0.9999, 1},
		{[]float64{1, 2, 1}, 0.2499, 0},
		{[]float64{1, 2, 1}, 0.25, 1},
		{[]float64{1, 2, 1}, 0.7499, 1},
		{[]float64{1, 2, 1}, 0.75, 2},
	} {
		if got := drawSaving(c.savings, c.u); got != c.want {
			t.Errorf("savings %v, u %g: %d, want %d", c.savings, c.u, got, c.want)
		}
	}
}

// TestCostSampling: 3 workers; the request goes to worker 0; workers 1 and
// 2 hold its 20 blocks in G2. Both pull in 30,000 ns against a 33,000 ns
// recompute, but worker 2 already has 2,000 bytes of backlog: 32,000 ns.
// Savings 3,000 and 1,000: worker 1 is drawn with probability 3/4. Over
// the hints streams of seeds 0-999 (as sim draws them) it is drawn 746 times (pinned: the
// stream's draws are fixed for a seed); the count's standard deviation is
// sqrt(1,000 x 3/4 x 1/4) = 13.7, and 746 is within 3 of them (±41) of 750.
// Each pick draws once: the stream's next value is its second.
func TestCostSampling(t *testing.T) {
	chain := chainOf(20)
	ones := 0
	for seed := range uint64(1000) {
		r := newCostRouter(t, 3, 1, des.NewRNG(seed).Stream("hints"))
		r.Stored(0, 1, G2, blocks(r, chain, 0, 20))
		r.Stored(0, 2, G2, blocks(r, chain, 0, 20))
		r.loads[2].backlog = 2000
		rt := pick(t, r, rq(320, chain...))
		if rt.Worker != 0 || (rt.HintSource != 1 && rt.HintSource != 2) {
			t.Fatalf("seed %d: route %+v", seed, rt)
		}
		if rt.HintSource == 1 {
			ones++
		}
		same := des.NewRNG(seed).Stream("hints")
		same.Float64()
		if next, want := r.cfg.HintCosts.RNG.Float64(), same.Float64(); next != want {
			t.Fatalf("seed %d: the stream's next draw is %g, want its second, %g", seed, next, want)
		}
	}
	if ones != 746 || math.Abs(float64(ones)-750) > 41 {
		t.Errorf("worker 1 drawn %d times of 1,000, want 746 (750 ± 41)", ones)
	}
}

// TestCostOnePayingNoDraw: as TestCostSampling, but worker 2's backlog of
// 5,000 bytes makes its pull 35,000 ns, above the 33,000 ns recompute:
// worker 1 is the one paying candidate, named without a draw, so the
// stream's next value is its first. A withheld hint draws nothing either.
func TestCostOnePayingNoDraw(t *testing.T) {
	chain := chainOf(20)
	r := newCostRouter(t, 3, 1, rand.New(rand.NewPCG(5, 6)))
	r.Stored(0, 1, G2, blocks(r, chain, 0, 20))
	r.Stored(0, 2, G2, blocks(r, chain, 0, 20))
	r.loads[2].backlog = 5000
	if rt := pick(t, r, rq(320, chain...)); rt.HintSource != 1 {
		t.Fatalf("route %+v", rt)
	}
	r.loads[1].backlog = 5000 // both now pull in 35,000 ns: withheld
	r.next = 0
	if rt := pick(t, r, rq(320, chain...)); rt.HintSource != -1 || r.Withheld() != 1 {
		t.Fatalf("route %+v, %d withheld", rt, r.Withheld())
	}
	if next, want := r.cfg.HintCosts.RNG.Float64(), rand.New(rand.NewPCG(5, 6)).Float64(); next != want {
		t.Errorf("the stream's next draw is %g, want its first, %g", next, want)
	}
}

// TestHintPolicyConfig: an unknown hint policy is refused, and cost with
// hints on needs its pass timer, stream and a positive egress rate; ""
// is min_blocks.
func TestHintPolicyConfig(t *testing.T) {
	base := Config{Policy: RoundRobin, BlockSize: 16, Hints: true, HintMinBlocks: 1, Chains: &block.Chains{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		policy HintPolicy
		costs  HintCosts
		ok     bool
	}{
		{"", HintCosts{}, true},
		{HintsMinBlocks, HintCosts{}, true},
		{"longest", HintCosts{}, false},
		{HintsCost, costCosts(rng), true},
		{HintsCost, HintCosts{EgressRate: 1, RNG: rng}, false},
		{HintsCost, HintCosts{EgressRate: 1, PassTime: linearPass(0, 1, 0)}, false},
		{HintsCost, HintCosts{RNG: rng, PassTime: linearPass(0, 1, 0)}, false},
	} {
		cfg := base
		cfg.HintPolicy, cfg.HintCosts = c.policy, c.costs
		if _, _, err := newWithLife(cfg, nil); (err == nil) != c.ok {
			t.Errorf("policy %q, costs %+v: error %v, want ok %v", c.policy, c.costs, err, c.ok)
		}
	}
}
