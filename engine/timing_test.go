package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/des"
)

func TestFixedAndLinear(t *testing.T) {
	f := Fixed{Prefill: 10 * des.Millisecond, Decode: 5 * des.Millisecond}
	for _, c := range []struct {
		b    Batch
		want des.Time
	}{
		{Batch{PrefillTokens: 100}, 10 * des.Millisecond},
		{Batch{DecodeTokens: 3}, 5 * des.Millisecond},
		{Batch{PrefillTokens: 10, DecodeTokens: 3}, 15 * des.Millisecond},
	} {
		if got := f.PassTime(&c.b); got != c.want {
			t.Errorf("fixed %+v: %v want %v", c.b, got, c.want)
		}
	}
	// 5 ms + 60 us x 100 + 50 us x 4 + 20 ns x (1000 + 104) = 5 + 6 + 0.2 +
	// 0.02208 ms = 11.22208 ms.
	l := Linear{Base: 5e6, PerPrefillToken: 60e3, PerDecodeToken: 50e3, PerContextToken: 20}
	if got := l.PassTime(&Batch{PrefillTokens: 100, DecodeTokens: 4, PriorContext: 1000}); got != 11_222_080 {
		t.Errorf("linear: %d ns want 11222080", got)
	}
}

// TestPolynomial: T = 1000 gives 4.209989e-07*1e6 + 15.18344 + 16.50142 =
// 32.1058589 ms; u = 0.5 gives -6.435 + 27.005 + 5.74 = 26.31 ms. With
// speedup 2 a mixed pass is (32.1058589 + 26.31) / 2 = 29.20792945 ms. At
// u = 0 decode is 5.74 ms; the floor of 1 ms never binds for u in [0, 1].
func TestPolynomial(t *testing.T) {
	p := Polynomial{SpeedupRatio: 1}
	if got := p.PassTime(&Batch{PrefillTokens: 1000}); got != 32_105_859 {
		t.Errorf("prefill: %d", got)
	}
	if got := p.PassTime(&Batch{DecodeTokens: 1, UsedBlocks: 50, TotalBlocks: 100}); got != 26_310_000 {
		t.Errorf("decode: %d", got)
	}
	p.SpeedupRatio = 2
	if got := p.PassTime(&Batch{PrefillTokens: 1000, DecodeTokens: 1, UsedBlocks: 50, TotalBlocks: 100}); got != 29_207_929 {
		t.Errorf("mixed: %d", got)
	}
}

// TestRoofline on h100 + llama-3.1-8b, tp 1, mfu 0.5, mbu 0.7, overhead 1 ms.
//
// One decode token over 1000 cached tokens: bytes = 8.03e9 x 2 + 131072 x
// 1000 = 1.6191072e10 over 3.35e12 x 0.7 B/s = 6.904508 ms; FLOPs = 2 x
// 8.03e9 + 4 x 32 x 32 x 128 x 1001 = 1.6585e10 over 494.5 TFLOP/s =
// 0.0335 ms. Memory-bound: 1 + 6.904508 = 7.904508 ms.
//
// A prefill of 8192 new tokens: attention pairs 8192 x 8193 / 2 =
// 33,558,528; FLOPs = 2 x 8.03e9 x 8192 + 524288 x 33558528 =
// 1.49157853528064e14 over 494.5 TFLOP/s = 301.633678 ms. Compute-bound.
func TestRoofline(t *testing.T) {
	gpu, _ := FindGPU("h100")
	m, _ := FindModel("llama-3.1-8b")
	r := Roofline{GPU: gpu, Model: m, TP: 1, MFU: 0.5, MBU: 0.7, Overhead: des.Millisecond}
	if got := r.PassTime(&Batch{DecodeTokens: 1, PriorContext: 1000, AttnPairs: 1001}); got != 7_904_508 {
		t.Errorf("decode: %d ns", got)
	}
	if got := r.PassTime(&Batch{PrefillTokens: 8192, AttnPairs: 33_558_528}); got != 302_633_678 {
		t.Errorf("prefill: %d ns", got)
	}
	if m.KVBytesPerToken() != 131072 {
		t.Errorf("kv bytes per token %d", m.KVBytesPerToken())
	}
	// (80e9 x 0.9 - 16.06e9) / (16 x 131072) = 26674.3: 26674 blocks.
	if n, err := r.GPUBlocks(16, m.KVBytesPerToken()); n != 26674 || err != nil {
		t.Errorf("gpu blocks %d, %v", n, err)
	}
	big, _ := FindModel("llama-3.1-70b")
	small, _ := FindGPU("a100")
	r = Roofline{GPU: small, Model: big, TP: 1, MFU: 0.5, MBU: 0.7}
	if _, err := r.GPUBlocks(16, big.KVBytesPerToken()); err == nil {
		t.Error("70b on one a100: weights fit?")
	}
}

// TestPresetKVBytes: 2 x layers x kv heads x head_dim x 2 bytes, e.g.
// llama-2-7b 2 x 32 x 32 x 128 x 2 = 524288, qwen2.5-7b 2 x 28 x 4 x 128 x
// 2 = 57344.
func TestPresetKVBytes(t *testing.T) {
	for name, want := range map[string]int64{
		"llama-2-7b": 524288, "llama-3.1-8b": 131072, "llama-3.1-70b": 327680, "codellama-34b": 196608,
		"mistral-7b": 131072, "qwen2.5-7b": 57344, "qwen3-32b": 262144, "mixtral-8x7b": 131072,
	} {
		m, ok := FindModel(name)
		if !ok || m.KVBytesPerToken() != want {
			t.Errorf("%s: %d want %d", name, m.KVBytesPerToken(), want)
		}
	}
	if len(Models) != 8 {
		t.Errorf("%d presets, the test knows 8", len(Models))
	}
}

// TestMoEWeightsRead: Mixtral-8x7B has 46.7e9 parameters, 12.9e9 active
// (8 experts a layer, 2 a token). Its experts hold (46.7 - 12.9) x 8 / 6 =
// 45.0667e9 parameters, the rest (1.6333e9) is shared. One token reads the
// shared weights and 2 experts: 12.9e9, the active parameters. 16 tokens
// touch 8 x (1 - 0.75^16) = 7.91981 experts a layer, expected: 1.6333e9 +
// 45.0667e9 x 7.91981 / 8 = 46.2483e9. 256 tokens touch all 8 (to 1e-31).
// FLOPs always use the active parameters; a dense model reads all its
// weights whatever the batch.
func TestMoEWeightsRead(t *testing.T) {
	m, _ := FindModel("mixtral-8x7b")
	for _, c := range []struct {
		n    int
		want float64
	}{{1, 12.9e9}, {16, 46.2483e9}, {256, 46.7e9}} {
		if got := m.WeightsRead(c.n); math.Abs(got-c.want) > 1e5 {
			t.Errorf("%d tokens read %g parameters, want %g", c.n, got, c.want)
		}
	}
	if m.Active() != 12.9e9 {
		t.Errorf("active %g", m.Active())
	}
	// One decode token, no context: 2 x 12.9e9 FLOPs, 2 x 12.9e9 bytes.
	if f, b := m.Work(&Batch{DecodeTokens: 1, AttnPairs: 1}); math.Abs(f-(2*12.9e9+524288)) > 1e3 || math.Abs(b-25.8e9) > 1e3 {
		t.Errorf("work %g FLOPs %g bytes", f, b)
	}
	d, _ := FindModel("llama-3.1-8b")
	if d.WeightsRead(1) != d.Params || d.WeightsRead(1000) != d.Params || d.Active() != d.Params {
		t.Error("a dense model reads all its weights")
	}
}

// TestCompiledRooflineExact: the worker's compiled roofline (the per-model
// factors computed once) gives Roofline.PassTime's pass time, and the same
// float nanoseconds before rounding bit for bit,
// for every dense preset and GPU, random tp, mfu, mbu, overhead and KV
// bytes a token, on random passes; a mixture-of-experts model keeps its
// Roofline, whose weights read depend on the batch.
func TestCompiledRooflineExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range Models {
		for _, g := range GPUs {
			for range 300 {
				r := &Roofline{GPU: g, Model: m, TP: 1 + rng.IntN(8), MFU: 1 - rng.Float64(), MBU: 1 - rng.Float64(),
					Overhead: des.Time(rng.IntN(2_000_000))}
				if rng.IntN(3) == 0 {
					r.Model.KVPerToken = 1 + rng.Int64N(1<<20)
				}
				c := compiled(r)
				if _, kept := c.(*Roofline); kept != (m.Experts > 0) {
					t.Fatalf("%s: compiled to %T", m.Name, c)
				}
				b := Batch{PrefillTokens: rng.IntN(9000), DecodeTokens: rng.IntN(300), PriorContext: rng.Int64N(4_000_000)}
				b.AttnPairs = rng.Int64N(1 + b.PriorContext*int64(b.PrefillTokens+b.DecodeTokens+1))
				if got, want := c.PassTime(&b), r.PassTime(&b); got != want {
					t.Fatalf("%s on %d x %s: %+v takes %v compiled, %v as Roofline", m.Name, r.TP, g.Name, b, got, want)
				}
				if p, ok := c.(*rooflinePass); ok && math.Float64bits(p.nanos(&b)) != math.Float64bits(r.nanos(&b)) {
					t.Fatalf("%s on %d x %s: %+v takes %v ns compiled, %v ns as Roofline", m.Name, r.TP, g.Name, b, p.nanos(&b), r.nanos(&b))
				}
			}
		}
	}
	if f := (Fixed{Decode: 1}); compiled(f) != f {
		t.Fatal("compiled changed a Fixed timing")
	}
}
