package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// roofPass is a roofline-like pass timer: 1,000 ns + max(100 ns a token
// computed (prefill and decode), 5,000 ns a decoding request's memory
// reads): a decode batch of d requests is memory-bound until its tokens
// pass 50 d, so prompt tokens added to it are free up to there.
func roofPass(p Pass) des.Time {
	return des.Time(1000 + max(100*(p.Prefill+p.DecodeSeqs), 5000*p.DecodeSeqs))
}

// costCosts: pulls wait 10,000 ns for their first byte and move 1 byte a
// ns, blocks of 1,000 bytes: a pull of m blocks takes 10,000 + 1,000 m ns
// with no backlog. Passes are roofPass: on an idle target, not computing m
// blocks of 16 tokens saves 1,600 m ns (the pass of the tokens after them,
// base included, is paid either way).
func costCosts(rng *rand.Rand) HintCosts {
	return HintCosts{Latency: 10_000, EgressRate: 1, BlockBytes: 1000, PassTime: roofPass, RNG: rng}
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

// TestCostCrossover: round robin sends a request for an n-block chain
// to worker 0, whose G2 holds its first `held` blocks; worker 1's G2 holds
// all n: the one candidate. A prompt of 16 n + 1 tokens lets a pull carry
// every block past the target's: m = n - held. Pull 10,000 + 1,000 m ns
// (plus any backlog); saved, on the idle worker 0, 1,600 m ns (costCosts):
// the pull pays when 600 m > 10,000, m > 16.7: m* = 17 (the tie at 17 is
// made with a 200-byte backlog: 27,200 against 27,200, which does not
// pay). With worker 0 decoding 4 requests the batch is memory-bound at
// 20,000 ns of reads: the request's tokens with the run cost max(100 (16 m
// + 5), 20,000), the 1 token after it rides free, so the saving is 1,600 m
// - 19,500 and the pull pays when 600 m > 29,500, m > 49.2: m* = 50. A
// prompt of 16 n tokens ends in block n - 1, which the target always
// computes: the pull carries n - 1 blocks, and a target holding n - 1 has
// nothing a pull could carry: worker 1 offers min(1, 0) = 0 blocks, below
// min_blocks, so it is no candidate: no hint, none withheld (nothing was
// withheld for cost). With min_blocks above the run there is no candidate
// either.
func TestCostCrossover(t *testing.T) {
	for _, c := range []struct {
		n, tokens, held, minBlocks int
		decoding                   bool
		backlog                    int64
		bytes                      int64 // the hint's, 0: none
		withheld                   int64
	}{
		{16, 257, 0, 1, false, 0, 0, 1},      // pull 26,000 ns, saved 25,600 ns
		{17, 273, 0, 1, false, 0, 17_000, 0}, // 27,000 against 27,200
		{17, 273, 0, 1, false, 200, 0, 1},    // 27,200 and 27,200: a tie does not pay
		{20, 321, 0, 1, false, 0, 20_000, 0}, // 30,000 against 32,000
		{20, 321, 3, 1, false, 0, 17_000, 0}, // t = 3, m = 17: 27,000 against 28,300 - 1,100
		{17, 273, 0, 1, true, 0, 0, 1},       // 27,000 against 27,700 - 20,000 = 7,700
		{49, 785, 0, 1, true, 0, 0, 1},       // 59,000 against 58,900
		{50, 801, 0, 1, true, 0, 50_000, 0},  // 60,000 against 60,500
		{18, 288, 0, 1, false, 0, 17_000, 0}, // m = 17: 27,000 against 29,800 - 2,600
		{18, 288, 17, 1, false, 0, 0, 0},     // m = 0: nothing a pull could carry, no candidate
		{17, 273, 0, 18, false, 0, 0, 0},
	} {
		r := newCostRouter(t, 2, c.minBlocks, nil)
		chain := chainOf(c.n)
		r.Stored(0, 1, G2, blocks(r, chain, 0, c.n))
		if c.held > 0 {
			r.Stored(0, 0, G2, blocks(r, chain, 0, c.held))
		}
		r.loads[1].backlog = c.backlog
		if c.decoding {
			r.loads[0] = load{outstanding: 4, decodeBlocks: 16, decoding: 4}
		}
		rt := pick(t, r, rq(c.tokens, chain...))
		want := Route{Worker: 0, HostOverlap: c.held, HintSource: -1}
		if c.bytes > 0 {
			want.HintSource, want.HintBlocks, want.HintBytes = 1, c.n, c.bytes
		}
		if rt.Worker != want.Worker || rt.HostOverlap != want.HostOverlap || rt.HintSource != want.HintSource ||
			rt.HintBlocks != want.HintBlocks || rt.HintBytes != want.HintBytes {
			t.Errorf("%+v: route %+v, want %+v", c, rt, want)
		}
		if r.Withheld() != c.withheld {
			t.Errorf("%+v: %d withheld, want %d", c, r.Withheld(), c.withheld)
		}
	}
}

// TestCostBacklog: 4 workers, round robin; worker 3's G2 holds a 20-block
// chain, the prompt 321 tokens. R0 goes to worker 0: pull 10,000 + 20,000
// = 30,000 ns against a saving of 32,000: hinted, 20,000 bytes on worker 3's
// backlog. R1 goes to worker 1: its pull queues behind R0's bytes, 10,000 +
// 40,000 = 50,000 ns: withheld (without the backlog it would pay, as R0's
// did). R0's first token takes its bytes off: R2, to worker 2, is hinted
// at 30,000 ns again. R2 ending before its first token (rerouted, dropped)
// takes its bytes off too.
func TestCostBacklog(t *testing.T) {
	r := newCostRouter(t, 4, 1, nil)
	chain := chainOf(20)
	r.Stored(0, 3, G2, blocks(r, chain, 0, 20))
	r0 := pick(t, r, rq(321, chain...))
	if r0.Worker != 0 || r0.HintSource != 3 || r0.HintBytes != 20_000 || r.loads[3].backlog != 20_000 {
		t.Fatalf("R0 %+v, backlog %d", r0, r.loads[3].backlog)
	}
	if r1 := pick(t, r, rq(321, chain...)); r1.Worker != 1 || r1.HintSource != -1 || r.Withheld() != 1 {
		t.Errorf("R1 %+v, %d withheld", r1, r.Withheld())
	}
	r.FirstToken(r0)
	if r.loads[3].backlog != 0 {
		t.Errorf("after R0's first token: backlog %d", r.loads[3].backlog)
	}
	r2 := pick(t, r, rq(321, chain...))
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

// TestCostSampling: 3 workers; the request (321 tokens) goes to worker 0;
// workers 1 and 2 hold its 20 blocks in G2. Both pull in 30,000 ns against
// a 32,000 ns saving, but worker 2 already has 1,000 bytes of backlog:
// 31,000 ns. Savings 2,000 and 1,000: worker 1 is drawn with probability
// 2/3. Over the hints streams of seeds 0-999 (as sim draws them) it is
// drawn 669 times (pinned: the stream's draws are fixed for a seed); the
// count's standard deviation is sqrt(1,000 x 2/3 x 1/3) = 14.9, and 669 is
// within 3 of them (±45) of 667. Each pick draws once: the stream's next value is its second.
func TestCostSampling(t *testing.T) {
	chain := chainOf(20)
	ones := 0
	for seed := range uint64(1000) {
		r := newCostRouter(t, 3, 1, des.NewRNG(seed).Stream("hints"))
		r.Stored(0, 1, G2, blocks(r, chain, 0, 20))
		r.Stored(0, 2, G2, blocks(r, chain, 0, 20))
		r.loads[2].backlog = 1000
		rt := pick(t, r, rq(321, chain...))
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
	if ones != 669 || math.Abs(float64(ones)-2000.0/3) > 45 {
		t.Errorf("worker 1 drawn %d times of 1,000, want 669 (667 ± 45)", ones)
	}
}

// TestCostOnePayingNoDraw: as TestCostSampling, but worker 2's backlog of
// 5,000 bytes makes its pull 35,000 ns, above the 32,000 ns saving:
// worker 1 is the one paying candidate, named without a draw, so the
// stream's next value is its first. A withheld hint draws nothing either.
func TestCostOnePayingNoDraw(t *testing.T) {
	chain := chainOf(20)
	r := newCostRouter(t, 3, 1, rand.New(rand.NewPCG(5, 6)))
	r.Stored(0, 1, G2, blocks(r, chain, 0, 20))
	r.Stored(0, 2, G2, blocks(r, chain, 0, 20))
	r.loads[2].backlog = 5000
	if rt := pick(t, r, rq(321, chain...)); rt.HintSource != 1 {
		t.Fatalf("route %+v", rt)
	}
	r.loads[1].backlog = 5000 // both now pull in 35,000 ns: withheld
	r.next = 0
	if rt := pick(t, r, rq(321, chain...)); rt.HintSource != -1 || r.Withheld() != 1 {
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
		{HintsCost, HintCosts{EgressRate: 1, PassTime: roofPass}, false},
		{HintsCost, HintCosts{RNG: rng, PassTime: roofPass}, false},
	} {
		cfg := base
		cfg.HintPolicy, cfg.HintCosts = c.policy, c.costs
		if _, _, err := newWithLife(cfg, nil); (err == nil) != c.ok {
			t.Errorf("policy %q, costs %+v: error %v, want ok %v", c.policy, c.costs, err, c.ok)
		}
	}
}
