package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
)

// Batch describes one pass to a timing model.
type Batch struct {
	PrefillTokens int   // tokens of requests still in their prompt (or recomputing)
	DecodeTokens  int   // one per decoding request
	Seqs          int   // requests in the pass
	PriorContext  int64 // KV tokens already in G1 that the batch reads
	AttnPairs     int64 // sum over requests of new tokens x tokens each attends to
	UsedBlocks    int   // G1 blocks in use after the pass's allocations
	TotalBlocks   int
}

// ContextTokens is the KV tokens the batch attends to: prior context plus
// the new tokens.
func (b *Batch) ContextTokens() int64 {
	return b.PriorContext + int64(b.PrefillTokens) + int64(b.DecodeTokens)
}

// Timing turns a pass into its duration.
type Timing interface {
	PassTime(b *Batch) des.Time
}

// Fixed takes Prefill when the pass has prefill tokens, plus Decode when it
// has decode tokens.
type Fixed struct {
	Prefill, Decode des.Time
}

// PassTime implements Timing.
func (f Fixed) PassTime(b *Batch) des.Time {
	var d des.Time
	if b.PrefillTokens > 0 {
		d += f.Prefill
	}
	if b.DecodeTokens > 0 {
		d += f.Decode
	}
	return d
}

// Linear is base + per_prefill_token*P + per_decode_token*D +
// per_context_token*C, all in nanoseconds (fractions allowed).
type Linear struct {
	Base, PerPrefillToken, PerDecodeToken, PerContextToken float64
}

// PassTime implements Timing.
func (l Linear) PassTime(b *Batch) des.Time {
	ns := l.Base + float64(l.PerPrefillToken*float64(b.PrefillTokens)) +
		float64(l.PerDecodeToken*float64(b.DecodeTokens)) +
		float64(l.PerContextToken*float64(b.ContextTokens()))
	return des.MustFromNanos(ns)
}

// Polynomial is the Dynamo mocker's fit (components/backends/mocker,
// perf_model): prefill ms = 4.209989e-07*T^2 + 1.518344e-02*T + 16.50142
// for T new prefill tokens, decode ms = max(1, -25.74*u^2 + 54.01*u + 5.74)
// for u = used/total KV blocks, both divided by SpeedupRatio. A pass with
// both pays both.
type Polynomial struct {
	SpeedupRatio float64
}

// PassTime implements Timing.
func (p Polynomial) PassTime(b *Batch) des.Time {
	var ms float64
	if b.PrefillTokens > 0 {
		t := float64(b.PrefillTokens)
		ms += float64(4.209989e-07*float64(t*t)) + float64(1.518344e-02*t) + 16.50142
	}
	if b.DecodeTokens > 0 {
		u := float64(b.UsedBlocks) / float64(b.TotalBlocks)
		ms += max(1, float64(-25.74*float64(u*u))+float64(54.01*u)+5.74)
	}
	return des.MustFromNanos(float64(ms*1e6) / p.SpeedupRatio)
}

// Roofline bounds a pass by compute or memory: overhead + max(FLOPs /
// (peak * tp * mfu), bytes / (bandwidth * tp * mbu)), FLOPs and bytes as
// Model.Work counts them.
type Roofline struct {
	GPU      GPU
	Model    Model
	TP       int
	MFU, MBU float64
	Overhead des.Time
}

// Work is a pass's FLOPs and HBM bytes as the roofline counts them: 2 x
// active parameters per new token plus attention (4 x layers x heads x
// head_dim per (query, key) pair); the weights the pass reads
// (WeightsRead) plus the KV of its prior context.
func (m Model) Work(b *Batch) (flops, bytes float64) {
	n := b.PrefillTokens + b.DecodeTokens
	tokens := float64(n)
	flops = float64(2*m.Active()*tokens) +
		float64(float64(4*m.Layers*m.Heads*m.HeadDim)*float64(b.AttnPairs))
	bytes = float64(m.WeightsRead(n)*m.WeightBytes) + float64(float64(m.KVBytesPerToken())*float64(b.PriorContext))
	return flops, bytes
}

// PassTime implements Timing.
func (r *Roofline) PassTime(b *Batch) des.Time { return r.Overhead + des.MustFromNanos(r.nanos(b)) }

// nanos is the pass time without the overhead, in nanoseconds.
func (r *Roofline) nanos(b *Batch) float64 {
	flops, bytes := r.Model.Work(b)
	tp := float64(r.TP)
	compute := flops / float64(r.GPU.PeakFLOPS*tp*r.MFU)
	memory := bytes / float64(r.GPU.Bandwidth*tp*r.MBU)
	return max(compute, memory) * 1e9
}

// rooflinePass is a dense model's Roofline with the factors of its pass
// time that do not depend on the batch computed once: the same operations
// in the same order as Roofline.PassTime, so the same times bit for bit,
// at a third of the cost (the pass time is computed once a pass).
type rooflinePass struct {
	twoActive float64 // 2 x active parameters
	attn      float64 // 4 x layers x heads x head_dim
	weights   float64 // the weights a pass reads, bytes
	kv        float64 // KV bytes a token
	flopRate  float64 // peak x tp x mfu
	byteRate  float64 // bandwidth x tp x mbu
	overhead  des.Time
}

// PassTime implements Timing, as Roofline.PassTime.
func (r *rooflinePass) PassTime(b *Batch) des.Time { return r.overhead + des.MustFromNanos(r.nanos(b)) }

// nanos is Roofline.nanos.
func (r *rooflinePass) nanos(b *Batch) float64 { return max(r.compute(b), r.memory(b)) * 1e9 }

// compute is the pass's compute time in seconds: Roofline.nanos's first
// term.
func (r *rooflinePass) compute(b *Batch) float64 {
	tokens := float64(b.PrefillTokens + b.DecodeTokens)
	flops := float64(r.twoActive*tokens) + float64(r.attn*float64(b.AttnPairs))
	return flops / r.flopRate
}

// memory is the pass's memory time in seconds: Roofline.nanos's second
// term.
func (r *rooflinePass) memory(b *Batch) float64 {
	bytes := r.weights + float64(r.kv*float64(b.PriorContext))
	return bytes / r.byteRate
}

// compiled is t, or for a Roofline of a dense model (whose weights read do
// not depend on the batch) the same timing as a rooflinePass.
func compiled(t Timing) Timing {
	r, ok := t.(*Roofline)
	if !ok {
		return t
	}
	m := r.Model
	if !m.readsAll() {
		return t // mixture of experts: WeightsRead depends on the batch's tokens
	}
	tp := float64(r.TP)
	return &rooflinePass{
		twoActive: 2 * m.Active(),
		attn:      float64(4 * m.Layers * m.Heads * m.HeadDim),
		weights:   float64(m.WeightsRead(0) * m.WeightBytes),
		kv:        float64(m.KVBytesPerToken()),
		flopRate:  float64(r.GPU.PeakFLOPS * tp * r.MFU),
		byteRate:  float64(r.GPU.Bandwidth * tp * r.MBU),
		overhead:  r.Overhead,
	}
}

// GPUBlocks is the G1 capacity vLLM would allocate: gpu_memory_utilization
// (0.9) of the TP group's memory, less the weights, in blocks of blockSize
// tokens. It is an error when the weights do not fit.
func (r Roofline) GPUBlocks(blockSize int, kvBytesPerToken int64) (int, error) {
	mem := float64(r.GPU.MemoryBytes*float64(r.TP)) * GPUMemoryUtilization
	free := mem - float64(r.Model.Params*r.Model.WeightBytes)
	blocks := int(free / float64(float64(blockSize)*float64(kvBytesPerToken)))
	if blocks < 1 {
		return 0, fmt.Errorf("%s weights (%.1f GB) leave no KV cache on %d x %s (%.0f GB usable)",
			r.Model.Name, r.Model.Params*r.Model.WeightBytes/1e9, r.TP, r.GPU.Name, mem/1e9)
	}
	return blocks, nil
}
