package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
)

// Bound is the shortest time the hardware can run a pass in: max(FLOPs /
// (peak x tp), bytes / (bandwidth x tp)), FLOPs and bytes as Model.Work
// counts them (attention over each sequence's context and the KV it reads
// included). It is the roofline at mfu = mbu = 1 with no overhead, so a
// Roofline with mfu, mbu <= 1 never predicts less.
func Bound(gpu GPU, m Model, tp int, b *Batch) des.Time {
	r := Roofline{GPU: gpu, Model: m, TP: tp, MFU: 1, MBU: 1}
	return r.PassTime(b)
}

// Limits are the engine settings that bound the passes a worker can run.
type Limits struct {
	MaxNumSeqs       int // sequences a pass
	MaxBatchedTokens int // new tokens a pass
	MaxModelLen      int // tokens a sequence
	BlockSize        int // tokens a G1 block
	GPUBlocks        int // G1 blocks
}

// Probe is one pass CheckPhysics times: Seqs sequences each with Context
// tokens of prior context and Tokens new tokens (1 for a decode pass).
type Probe struct {
	Decode          bool
	Seqs            int
	Context, Tokens int
}

func (p Probe) String() string {
	if p.Decode {
		s := "s"
		if p.Seqs == 1 {
			s = ""
		}
		return fmt.Sprintf("a decode pass of %d sequence%s at %d tokens of context", p.Seqs, s, p.Context)
	}
	what := fmt.Sprintf("a prefill pass of %d tokens", p.Tokens)
	if p.Seqs > 1 {
		what = fmt.Sprintf("a prefill pass of %d sequences of %d tokens", p.Seqs, p.Tokens)
	}
	if p.Context == 0 {
		return what + " with no context"
	}
	return fmt.Sprintf("%s after %d tokens of context", what, p.Context)
}

// Batch is the probe as a timing model sees it.
func (p Probe) Batch(blockSize, gpuBlocks int) Batch {
	n, c, k := int64(p.Seqs), int64(p.Context), int64(p.Tokens)
	b := Batch{Seqs: p.Seqs, PriorContext: n * c, AttnPairs: n * (k*c + k*(k+1)/2),
		UsedBlocks: p.Seqs * blocksFor(p.Context+p.Tokens, blockSize), TotalBlocks: gpuBlocks}
	if p.Decode {
		b.DecodeTokens = p.Seqs
	} else {
		b.PrefillTokens = p.Seqs * p.Tokens
	}
	return b
}

func blocksFor(tokens, blockSize int) int { return (tokens + blockSize - 1) / blockSize }

// Probes lists the passes CheckPhysics times, those the limits allow:
// decode passes of 1 to min(max_num_seqs, max_batched_tokens) sequences at
// 1, 2, 4, ... and max_model_len - 1 tokens of context each, and prefill
// passes of one sequence's chunk of 1, 2, 4, ... and max_batched_tokens
// new tokens after 0, 1, 2, 4, ... tokens of context, every sequence
// within max_model_len and every pass within G1.
func (l Limits) Probes() []Probe {
	maxLen := l.MaxModelLen
	var ctx []int // 1, 2, 4, ..., maxLen - 1
	for c := 1; c < maxLen-1; c *= 2 {
		ctx = append(ctx, c)
	}
	if maxLen > 1 {
		ctx = append(ctx, maxLen-1)
	}
	fits := func(p Probe) bool {
		return p.Context+p.Tokens <= maxLen &&
			int64(p.Seqs)*int64(blocksFor(p.Context+p.Tokens, l.BlockSize)) <= int64(l.GPUBlocks)
	}
	var out []Probe
	for n := 1; n <= min(l.MaxNumSeqs, l.MaxBatchedTokens); n++ {
		for _, c := range ctx {
			p := Probe{Decode: true, Seqs: n, Context: c, Tokens: 1}
			if !fits(p) {
				break
			}
			out = append(out, p)
		}
	}
	var chunks []int // 1, 2, 4, ..., max_batched_tokens
	for k := 1; k < l.MaxBatchedTokens; k *= 2 {
		chunks = append(chunks, k)
	}
	chunks = append(chunks, l.MaxBatchedTokens)
	for _, k := range chunks {
		for _, c := range append([]int{0}, ctx...) {
			p := Probe{Seqs: 1, Context: c, Tokens: k}
			if !fits(p) {
				break
			}
			out = append(out, p)
		}
	}
	// The budget shared by several sequences' chunks: attention over each
	// one's context adds up, so a full pass of short chunks after long
	// contexts can cost more than one sequence's.
	for n := 2; n <= min(l.MaxNumSeqs, l.MaxBatchedTokens); n *= 2 {
		for _, c := range append([]int{0}, ctx...) {
			p := Probe{Seqs: n, Context: c, Tokens: l.MaxBatchedTokens / n}
			if !fits(p) {
				break
			}
			out = append(out, p)
		}
	}
	return out
}

// PhysicsError is a timing model that predicts passes faster than the
// hardware can run them: Probe is the pass furthest below its bound.
type PhysicsError struct {
	Probe        Probe
	Time, Bound  des.Time
	Below, Of    int    // probes below their bound, probes timed
	Hardware     string // "1 x h100 running llama-2-7b"
	Limit        string // "memory: 13.5 GB of weights and 58.0 GB of KV at 3.35 TB/s"
	PanicMessage string // the timing model panicked on Probe
}

func (e *PhysicsError) Error() string {
	if e.PanicMessage != "" {
		return fmt.Sprintf("the timing model fails on %s: %s", e.Probe, e.PanicMessage)
	}
	return fmt.Sprintf("faster than the hardware (%s): %s takes %v, the physical bound is %v (%s); %d of %d probe passes are below their bound",
		e.Hardware, e.Probe, e.Time, e.Bound, e.Limit, e.Below, e.Of)
}

// CheckPhysics times every probe pass the limits allow (Limits.Probes) with
// t and with Bound, and returns a *PhysicsError naming the pass furthest
// below its bound (the smallest ratio of time to bound) if any pass is
// predicted faster than the hardware can run it.
func CheckPhysics(t Timing, gpu GPU, m Model, tp int, lim Limits) (err error) {
	probes := lim.Probes()
	var cur Probe
	defer func() {
		if r := recover(); r != nil {
			err = &PhysicsError{Probe: cur, PanicMessage: fmt.Sprint(r)}
		}
	}()
	var worst Probe
	var worstTime, worstBound des.Time
	ratio, below := 1.0, 0
	for _, p := range probes {
		cur = p
		b := p.Batch(lim.BlockSize, lim.GPUBlocks)
		got, bound := t.PassTime(&b), Bound(gpu, m, tp, &b)
		if got >= bound {
			continue
		}
		below++
		if r := float64(got) / float64(bound); r < ratio {
			ratio, worst, worstTime, worstBound = r, p, got, bound
		}
	}
	if below == 0 {
		return nil
	}
	b := worst.Batch(lim.BlockSize, lim.GPUBlocks)
	return &PhysicsError{Probe: worst, Time: worstTime, Bound: worstBound, Below: below, Of: len(probes),
		Hardware: fmt.Sprintf("%d x %s running %s", tp, gpu.Name, m.Name), Limit: limitOf(gpu, m, tp, &b)}
}

// limitOf says which roof bounds the pass and what it moves.
func limitOf(gpu GPU, m Model, tp int, b *Batch) string {
	flops, bytes := m.Work(b)
	n := float64(tp)
	if flops/float64(gpu.PeakFLOPS*n) >= bytes/float64(gpu.Bandwidth*n) {
		return fmt.Sprintf("compute: %.4g TFLOP at %g TFLOP/s", flops/1e12, gpu.PeakFLOPS*n/1e12)
	}
	weights := float64(m.WeightsRead(b.PrefillTokens+b.DecodeTokens) * m.WeightBytes)
	return fmt.Sprintf("memory: %.4g GB of weights and %.4g GB of KV at %g TB/s", weights/1e9, (bytes-weights)/1e9, gpu.Bandwidth*n/1e12)
}
