package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestBound on h100 (989e12 FLOP/s, 3.35e12 B/s) + llama-2-7b (6.74e9
// parameters, 524,288 KV bytes a token).
//
// A decode pass of 1 sequence at 1000 tokens of context reads 13.48e9 B of
// weights and 524,288 x 1000 = 0.524288e9 B of KV: 14.004288e9 B / 3.35e12
// B/s = 4.180384478 ms. Its FLOPs, 2 x 6.74e9 + 4 x 32 x 32 x 128 x 1001 =
// 1.4004812288e10, take 0.014161 ms: memory-bound, 4,180,384 ns.
//
// A prefill pass of 4096 tokens with no context: 4096 x 4097 / 2 =
// 8,390,656 attention pairs; FLOPs 2 x 6.74e9 x 4096 + 524,288 x 8,390,656
// = 5.9613200252928e13 / 989e12 = 60.276238881 ms (its 13.48e9 B take 4.02
// ms): compute-bound, 60,276,239 ns; on tp 2, half: 30,138,119 ns.
func TestBound(t *testing.T) {
	gpu, _ := FindGPU("h100")
	m, _ := FindModel("llama-2-7b")
	if got := Bound(gpu, m, 1, &Batch{DecodeTokens: 1, Seqs: 1, PriorContext: 1000, AttnPairs: 1001}); got != 4_180_384 {
		t.Errorf("decode bound %d ns", got)
	}
	prefill := Batch{PrefillTokens: 4096, Seqs: 1, AttnPairs: 8_390_656}
	if got := Bound(gpu, m, 1, &prefill); got != 60_276_239 {
		t.Errorf("prefill bound %d ns", got)
	}
	if got := Bound(gpu, m, 2, &prefill); got != 30_138_119 {
		t.Errorf("prefill bound on tp 2: %d ns", got)
	}
	// The probe builds the same batches.
	p := Probe{Decode: true, Seqs: 1, Context: 1000, Tokens: 1}.Batch(16, 100)
	if p != (Batch{DecodeTokens: 1, Seqs: 1, PriorContext: 1000, AttnPairs: 1001, UsedBlocks: 63, TotalBlocks: 100}) {
		t.Errorf("decode probe %+v", p)
	}
	if p := (Probe{Seqs: 1, Tokens: 4096}).Batch(16, 300); p != (Batch{PrefillTokens: 4096, Seqs: 1, AttnPairs: 8_390_656, UsedBlocks: 256, TotalBlocks: 300}) {
		t.Errorf("prefill probe %+v", p)
	}
}

// TestRooflineNeverBelowBound: with mfu, mbu in (0, 1] and overhead >= 0
// the roofline predicts no pass faster than the bound, for every preset,
// GPU and tp, on random passes.
func TestRooflineNeverBelowBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range Models {
		for _, g := range GPUs {
			for range 200 {
				r := Roofline{GPU: g, Model: m, TP: 1 + rng.IntN(8), MFU: 1 - rng.Float64(), MBU: 1 - rng.Float64(),
					Overhead: des.Time(rng.IntN(2_000_000))}
				if rng.IntN(4) == 0 {
					r.MFU, r.MBU = 1, 1
				}
				b := Batch{PrefillTokens: rng.IntN(9000), DecodeTokens: rng.IntN(300), PriorContext: rng.Int64N(4_000_000)}
				b.AttnPairs = rng.Int64N(1 + b.PriorContext*int64(b.PrefillTokens+b.DecodeTokens+1))
				if got, bound := r.PassTime(&b), Bound(g, m, r.TP, &b); got < bound {
					t.Fatalf("%s on %d x %s, mfu %g mbu %g: %+v takes %v, below the bound %v", m.Name, r.TP, g.Name, r.MFU, r.MBU, b, got, bound)
				}
			}
		}
	}
}

// TestProbes: with max_model_len 8, 2 sequences, 4 batched tokens, 2-token
// blocks and 5 G1 blocks: decode passes at contexts 1, 2, 4 and 7 (within
// max_model_len) of 1 sequence (7 + 1 tokens are 4 blocks) and of 2 (2 x 3
// blocks at context 4 exceed G1); prefill chunks of 1, 2 and 4 tokens after
// 0, 1, 2, 4 and 7 tokens of context (each within 8 tokens).
func TestProbes(t *testing.T) {
	var got []string
	for _, p := range (Limits{MaxNumSeqs: 2, MaxBatchedTokens: 4, MaxModelLen: 8, BlockSize: 2, GPUBlocks: 5}).Probes() {
		kind := "p"
		if p.Decode {
			kind = "d"
		}
		got = append(got, fmt.Sprintf("%s,%d,%d,%d", kind, p.Seqs, p.Context, p.Tokens))
	}
	want := "d,1,1,1 d,1,2,1 d,1,4,1 d,1,7,1 d,2,1,1 d,2,2,1 " +
		"p,1,0,1 p,1,1,1 p,1,2,1 p,1,4,1 p,1,7,1 p,1,0,2 p,1,1,2 p,1,2,2 p,1,4,2 p,1,0,4 p,1,1,4 p,1,2,4 p,1,4,4 " +
		"p,2,0,2 p,2,1,2 p,2,2,2"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("probes\n got %s\nwant %s", s, want)
	}
}

// TestCheckPhysics on h100 + llama-2-7b, tp 1, with vLLM's defaults:
// max_num_seqs 256, max_batched_tokens 8192, max_model_len 4096, 16-token
// blocks and the G1 the presets give, (0.9 x 80e9 - 13.48e9) / (16 x
// 524,288) = 6976 blocks.
//
// The fixed model (10 ms a prefill, 5 ms a decode) is faster than the
// hardware: the furthest below is a full budget of 8192 tokens split into
// 4 chunks of 2048 after 2048 tokens of context each: FLOPs 2 x 6.74e9 x
// 8192 = 1.1042816e14 plus attention 524,288 x 4 x (2048 x 2048 + 2048 x
// 2049 / 2) = 524,288 x 25,169,920 = 1.3196e13, together 1.23624e14 at
// 989e12 FLOP/s: 124.999441 ms, against 10 ms a ratio of 0.08.
// The slowest decode probe, 54 sequences at 2048 tokens of context (54 x
// 129 = 6966 blocks), reads 13.48e9 + 524,288 x 110,592 = 71.462e9 B:
// 21.331958 ms against 5 ms, a ratio of 0.234. A fixed 1 s pass, the
// roofline and a linear model above the bound pass.
func TestCheckPhysics(t *testing.T) {
	gpu, _ := FindGPU("h100")
	m, _ := FindModel("llama-2-7b")
	lim := Limits{MaxNumSeqs: 256, MaxBatchedTokens: 8192, MaxModelLen: 4096, BlockSize: 16, GPUBlocks: 6976}
	err := CheckPhysics(Fixed{Prefill: 10 * des.Millisecond, Decode: 5 * des.Millisecond}, gpu, m, 1, lim)
	var pe *PhysicsError
	if !errors.As(err, &pe) || pe.Probe != (Probe{Seqs: 4, Context: 2048, Tokens: 2048}) || pe.Time != 10*des.Millisecond || pe.Bound != 124_999_441 {
		t.Fatalf("fixed: %v", err)
	}
	want := "faster than the hardware (1 x h100 running llama-2-7b): a prefill pass of 4 sequences of 2048 tokens after 2048 tokens of context takes 10ms, " +
		"the physical bound is 124.999441ms (compute: 123.6 TFLOP at 989 TFLOP/s); "
	if !strings.HasPrefix(err.Error(), want) || pe.Below < 1 || pe.Below > pe.Of {
		t.Errorf("message\n got %s\nwant %s...", err, want)
	}
	decode := Probe{Decode: true, Seqs: 54, Context: 2048, Tokens: 1}.Batch(16, 6976)
	if got := Bound(gpu, m, 1, &decode); got != 21_331_958 {
		t.Errorf("decode bound %d", got)
	}
	err = CheckPhysics(Fixed{Prefill: des.Second, Decode: 5 * des.Millisecond}, gpu, m, 1, lim)
	if !errors.As(err, &pe) || pe.Probe != (Probe{Decode: true, Seqs: 54, Context: 2048, Tokens: 1}) ||
		!strings.Contains(err.Error(), "a decode pass of 54 sequences at 2048 tokens of context takes 5ms, the physical bound is 21.331958ms (memory: 13.48 GB of weights and 57.98 GB of KV at 3.35 TB/s)") {
		t.Errorf("fixed decode: %v", err)
	}
	for _, ok := range []Timing{
		Fixed{Prefill: des.Second, Decode: des.Second},
		&Roofline{GPU: gpu, Model: m, TP: 1, MFU: 0.5, MBU: 0.7, Overhead: des.Millisecond},
		&Roofline{GPU: gpu, Model: m, TP: 1, MFU: 1, MBU: 1},
		// 5 ms + 15 us a prefill token + 160 ns a context token: above both
		// roofs at every probe. Memory: 4.024 ms of weights + 156.5 ns of
		// KV a context token. Compute: 13.63 us a new token + 0.53 ns an
		// attention pair, at most 4.45 ms of attention for the 4096-token
		// prefill (67.1 ms against 60.3) and 1.95 ms for 1024 tokens after
		// 3072 (21.0 ms against 15.9).
		Linear{Base: 5e6, PerPrefillToken: 15e3, PerContextToken: 160},
	} {
		if err := CheckPhysics(ok, gpu, m, 1, lim); err != nil {
			t.Errorf("%T: %v", ok, err)
		}
	}
	if err := CheckPhysics(Linear{Base: 1e30}, gpu, m, 1, lim); err == nil || !strings.Contains(err.Error(), "the timing model fails on a decode pass of 1 sequence at 1 tokens of context") {
		t.Errorf("overflow: %v", err)
	}
}
