package sim

import (
	"context"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/scheduler"
)

// costLines, on kvBody with 2 workers (round robin: R0, R2 to worker 0;
// R1, R3 to worker 1): R0 (ids 1-12, 192 tokens) runs 0-10 ms on worker 0
// and stores its 12 blocks in worker 0's G2. R1 (the same chain) reaches
// the idle worker 1 at 20 ms: worker 0's G2 holds a run of 12 past its
// empty prefix. R2 (ids 21-24, 64 tokens) runs 40-50 ms on worker 0 and
// stores 4 blocks; R3 (the same chain) reaches the idle worker 1 at 60 ms:
// a run of 4.
var costLines = []traceLine{{0, 192, 1, ids(1, 12)}, {20, 192, 1, ids(1, 12)}, {40, 64, 1, ids(21, 4)}, {60, 64, 1, ids(21, 4)}}

// costLinear is TestCostPolicyHintsLess's linear timing: 78.125 us a
// prefill token, 1.25 ms a 16-token block.
const costLinear = "cluster.engine.timing={model: linear, per_prefill_token: 78125ns}"

// runCost runs kvBody on 2 workers over costLines with invariant checks on
// and returns the request rows, the pulls and the router.
func runCost(t *testing.T, sets ...string) (*rowSink, *Result, *scheduler.Router) {
	t.Helper()
	p, err := Prepare(traceScenario(t, kvBody, costLines, append([]string{"cluster.workers=2"}, sets...)...))
	if err != nil {
		t.Fatal(err)
	}
	sink := &rowSink{}
	c, err := build(p, Options{Sink: sink, Check: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sink, res, c.router
}

// TestCostPolicyHintsLess: with min_blocks both R1 and R3 are hinted:
// R1's pull is 11 blocks (191 tokens: 11 full blocks reusable), 21-32 ms,
// then 16 tokens 32-42 ms; R3's 3 blocks, 61-64 ms, then 64-74 ms. Under
// the fixed 10 ms prefill a pull saves nothing (the 16 tokens after it
// take the 10 ms the whole prompt would), so cost withholds both: R1
// recomputes 20-30 ms, R3 60-70 ms, each sooner than pulled.
//
// Linear timing of 78.125 us a prefill token (1.25 ms a 16-token block)
// against pulls of 1 ms + 1 ms a 1 MB block at 1 GB/s: a pull of m blocks
// pays for 1 + m < 1.25 m, m > 4. R1's 11 blocks pull in 12 ms, saving
// 13.75 ms: hinted, 21-32 ms, then 16 tokens in 1.25 ms: first token 33.25
// ms (recomputed, 20-35 ms). R3's 3 blocks would pull in 4 ms to save 3.75:
// withheld, 64 tokens 60-65 ms (pulled, 65.25 ms). With a descriptor cost
// of 1.125 ms a block the egress serves 1 MB / 1.125 ms: R1's pull is
// predicted at 1 + 12.375 = 13.375 ms, still hinted, and lasts 12.375 ms,
// 21-33.375 ms; at 1.25 ms a block, 1 + 13.75 = 14.75 ms: withheld too.
func TestCostPolicyHintsLess(t *testing.T) {
	sink, res, r := runCost(t)
	if a, b := sink.rows[1], sink.rows[3]; a.HintSource != 0 || a.FirstTokenNs != 42*ms || b.HintSource != 0 || b.FirstTokenNs != 74*ms ||
		res.Summary.Counters["hints_attached"] != 2 || r.Withheld() != 0 {
		t.Errorf("min_blocks: R1 %+v, R3 %+v, %d hints, %d withheld", a, b, res.Summary.Counters["hints_attached"], r.Withheld())
	}
	sink, res, r = runCost(t, "router.hints.policy=cost")
	if a, b := sink.rows[1], sink.rows[3]; a.HintSource != -1 || a.FirstTokenNs != 30*ms || a.ComputedPromptTokens != 192 ||
		b.HintSource != -1 || b.FirstTokenNs != 70*ms || len(sink.pulls) != 0 || res.Summary.Counters["hints_attached"] != 0 || r.Withheld() != 2 {
		t.Errorf("cost, fixed: R1 %+v, R3 %+v, %d pulls, %d hints, %d withheld", a, b, len(sink.pulls), res.Summary.Counters["hints_attached"], r.Withheld())
	}
	sink, res, r = runCost(t, "router.hints.policy=cost", costLinear)
	if a, b := sink.rows[1], sink.rows[3]; a.HintSource != 0 || a.FirstTokenNs != 33_250_000 || b.HintSource != -1 || b.FirstTokenNs != 65*ms ||
		res.Summary.Counters["hints_attached"] != 1 || r.Withheld() != 1 {
		t.Errorf("cost, linear: R1 %+v, R3 %+v, %d hints, %d withheld", a, b, res.Summary.Counters["hints_attached"], r.Withheld())
	}
	if len(sink.pulls) != 1 || sink.pulls[0].RequestID != 1 || sink.pulls[0].EndNs != 32*ms {
		t.Errorf("cost, linear: pulls %+v", sink.pulls)
	}
	sink, _, r = runCost(t, "router.hints.policy=cost", costLinear, "kvcr.descriptor_cost=1125us")
	if len(sink.pulls) != 1 || sink.pulls[0].FirstByteNs != 21*ms || sink.pulls[0].EndNs != 33_375_000 || r.Withheld() != 1 {
		t.Errorf("descriptor cost 1.125ms: pulls %+v, %d withheld", sink.pulls, r.Withheld())
	}
	if sink, _, r = runCost(t, "router.hints.policy=cost", costLinear, "kvcr.descriptor_cost=1250us"); len(sink.pulls) != 0 || r.Withheld() != 2 {
		t.Errorf("descriptor cost 1.25ms: pulls %+v, %d withheld", sink.pulls, r.Withheld())
	}
}

// TestEgressRateIsKVCRs: the rate the router prices pulls at is the one
// KVCR serves them at: a lone pull's bytes over the rate are its first
// byte to its end. At 1 GB/s, 2 us a descriptor (500 GB/s) leaves the
// bandwidth binding: R3's 3 MB take 3 ms; 2 ms a descriptor binds: 0.5
// GB/s, 6 ms; 4 descriptors a block of 0.5 ms each bind the same.
func TestEgressRateIsKVCRs(t *testing.T) {
	for _, c := range []struct {
		sets []string
		rate float64 // bytes per ns
	}{
		{nil, 1},
		{[]string{"kvcr.descriptor_cost=2ms"}, 0.5},
		{[]string{"kvcr.descriptor_cost=500us", "kvcr.descriptors_per_block=4"}, 0.5},
	} {
		p, err := Prepare(traceScenario(t, kvBody, costLines, append([]string{"cluster.workers=2"}, c.sets...)...))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.KVCR.EgressGbps(); got != c.rate || p.Router.HintCosts.EgressRate != c.rate {
			t.Errorf("%v: rate %g (router's %g), want %g", c.sets, got, p.Router.HintCosts.EgressRate, c.rate)
		}
		sink, _, _ := runCost(t, c.sets...)
		pl := sink.pulls[len(sink.pulls)-1] // R3's, alone on worker 0's egress
		if d := des.Time(pl.EndNs - pl.FirstByteNs); d != des.MustFromNanos(float64(pl.Bytes)/c.rate) {
			t.Errorf("%v: %d bytes in %v, not at %g bytes a ns", c.sets, pl.Bytes, d, c.rate)
		}
	}
}

// batchOf is a timing model that records the last batch it priced and
// takes 1 ns.
type batchOf struct{ b engine.Batch }

func (r *batchOf) PassTime(b *engine.Batch) des.Time { r.b = *b; return 1 }

// TestPassTimer: the router's pass of 2 decoding requests with 64 tokens
// of context in all, plus 32 prefill tokens after a 16-token prefix, with
// 16-token blocks and G1 of 100 blocks, is the batch the worker would
// count: 32 prefill and 2 decode tokens, 3 sequences, 64 + 16 = 80 prior
// tokens, attention pairs (64 + 2) for the decode tokens (each attends to
// its context and itself) and 32 x 16 + 32 x 33 / 2 = 1,040 for the prefill
// ones, 4 + 3 = 7 blocks in use. With linear timing (1,000 ns + 100 a
// prefill token + 10 a decode token + 1 a context token) it takes 1,000 +
// 3,200 + 20 + (80 + 34) = 4,334 ns. G1 of 5 blocks caps the blocks in use
// at 5.
func TestPassTimer(t *testing.T) {
	pass := scheduler.Pass{DecodeSeqs: 2, DecodeContext: 64, Prefill: 32, Prior: 16}
	rec := &batchOf{}
	passTimer(rec, engine.Config{BlockSize: 16, GPUBlocks: 100})(pass)
	want := engine.Batch{PrefillTokens: 32, DecodeTokens: 2, Seqs: 3, PriorContext: 80, AttnPairs: 66 + 1040, UsedBlocks: 7, TotalBlocks: 100}
	if rec.b != want {
		t.Errorf("batch %+v, want %+v", rec.b, want)
	}
	passTimer(rec, engine.Config{BlockSize: 16, GPUBlocks: 5})(pass)
	if rec.b.UsedBlocks != 5 {
		t.Errorf("%d blocks in use of 5", rec.b.UsedBlocks)
	}
	lin := engine.Linear{Base: 1000, PerPrefillToken: 100, PerDecodeToken: 10, PerContextToken: 1}
	if got := passTimer(lin, engine.Config{BlockSize: 16, GPUBlocks: 100})(pass); got != 4334 {
		t.Errorf("linear: %d ns, want 4334", got)
	}
}
