package engine

import (
	"math"
	"slices"
)

// GPU is an accelerator preset. Figures are NVIDIA's datasheet values for
// dense BF16 tensor throughput, HBM bandwidth and HBM capacity (decimal
// units); docs/model.md cites each.
type GPU struct {
	Name        string
	PeakFLOPS   float64 // dense BF16, FLOP/s
	Bandwidth   float64 // HBM, B/s
	MemoryBytes float64 // HBM capacity, B
}

// Model is a transformer preset, from the model's Hugging Face config.json.
type Model struct {
	Name        string
	Params      float64 // parameter count: the weights held in HBM
	WeightBytes float64 // bytes per parameter (2: BF16)
	Layers      int
	Heads       int // query heads
	KVHeads     int
	HeadDim     int
	KVBytes     int // bytes per KV element (2: BF16)
	MaxModelLen int // max_position_embeddings
	// ActiveParams are the parameters one token computes with: a
	// mixture-of-experts model's shared weights plus ExpertsPerToken of its
	// Experts experts a layer. 0 means Params (a dense model).
	ActiveParams    float64
	Experts         int // experts a layer; 0: dense
	ExpertsPerToken int
	// KVPerToken, when not 0, replaces the KV bytes a token computed from
	// the architecture: the scenario's kv_bytes_per_token (an FP8 cache,
	// say), so that the passes read what the cache holds.
	KVPerToken int64
}

// Active is the parameters a token computes with: ActiveParams, or Params
// for a dense model.
func (m Model) Active() float64 {
	if m.ActiveParams == 0 {
		return m.Params
	}
	return m.ActiveParams
}

// WeightsRead is the parameters a pass of n new tokens reads from HBM. A
// dense model reads all of them. A mixture-of-experts model reads its
// shared weights and, in each layer, the experts its tokens are routed to:
// E x (1 - (1 - k/E)^n) distinct experts expected when each token picks k
// of E uniformly. That is k (the active parameters) for one token and all E
// as n grows (99 % of Mixtral's 8 at n = 16). See docs/model.md.
func (m Model) WeightsRead(n int) float64 {
	if m.readsAll() {
		return m.Params
	}
	e, k := float64(m.Experts), float64(m.ExpertsPerToken)
	experts := float64((m.Params-m.ActiveParams)*e) / (e - k) // all experts' parameters
	touched := float64(e * (1 - math.Pow(1-k/e, float64(n))))
	return m.Params - float64(experts*(e-touched))/e
}

// readsAll reports whether every pass reads all of m's weights, whatever
// its tokens: a dense model, or experts that every token routes to.
func (m Model) readsAll() bool {
	return m.Experts == 0 || m.ActiveParams == 0 || m.ExpertsPerToken >= m.Experts
}

// KVBytesPerToken is 2 (K and V) x layers x kv_heads x head_dim x dtype
// bytes, or KVPerToken when set.
func (m Model) KVBytesPerToken() int64 {
	if m.KVPerToken > 0 {
		return m.KVPerToken
	}
	return int64(2 * m.Layers * m.KVHeads * m.HeadDim * m.KVBytes)
}

// GPUMemoryUtilization is vLLM's default share of GPU memory for weights and
// KV cache.
const GPUMemoryUtilization = 0.9

// Roofline defaults: achieved fractions of peak compute and bandwidth, and a
// fixed per-pass overhead (scheduling, launch, sampling), fitted jointly to
// two measured vLLM 0.11 runs on one H100 (Llama-2-7B and CodeLlama-34B:
// MFU 0.658, MBU 0.830, 1.55 ms; benchmarks/fidelity, docs/fidelity.md).
const (
	DefaultMFU      = 0.66
	DefaultMBU      = 0.83
	DefaultOverhead = 1_500_000 // ns
)

// GPUs lists the GPU presets by name.
var GPUs = []GPU{
	{Name: "a100", PeakFLOPS: 312e12, Bandwidth: 2.039e12, MemoryBytes: 80e9},
	{Name: "h100", PeakFLOPS: 989e12, Bandwidth: 3.35e12, MemoryBytes: 80e9},
	{Name: "h200", PeakFLOPS: 989e12, Bandwidth: 4.8e12, MemoryBytes: 141e9},
	{Name: "b200", PeakFLOPS: 2250e12, Bandwidth: 8e12, MemoryBytes: 180e9},
	{Name: "l40s", PeakFLOPS: 362.05e12, Bandwidth: 864e9, MemoryBytes: 48e9},
}

// Models lists the model presets by name. Parameters are the published
// counts (model cards, rounded as published); the rest is config.json.
// engine/testdata/models holds each one's config.json figures, and
// TestPresetsMatchConfigs derives the same model from them.
var Models = []Model{
	{Name: "llama-2-7b", Params: 6.74e9, WeightBytes: 2, Layers: 32, Heads: 32, KVHeads: 32, HeadDim: 128, KVBytes: 2, MaxModelLen: 4096},
	{Name: "llama-3.1-8b", Params: 8.03e9, WeightBytes: 2, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 131072},
	{Name: "llama-3.1-70b", Params: 70.6e9, WeightBytes: 2, Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 131072},
	{Name: "codellama-34b", Params: 33.7e9, WeightBytes: 2, Layers: 48, Heads: 64, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 16384},
	{Name: "mistral-7b", Params: 7.25e9, WeightBytes: 2, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 32768}, // v0.3
	{Name: "qwen2.5-7b", Params: 7.61e9, WeightBytes: 2, Layers: 28, Heads: 28, KVHeads: 4, HeadDim: 128, KVBytes: 2, MaxModelLen: 32768},
	{Name: "qwen3-32b", Params: 32.8e9, WeightBytes: 2, Layers: 64, Heads: 64, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 40960},
	{Name: "mixtral-8x7b", Params: 46.7e9, ActiveParams: 12.9e9, Experts: 8, ExpertsPerToken: 2, WeightBytes: 2,
		Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 32768},
}

// FindGPU returns the named GPU preset.
func FindGPU(name string) (GPU, bool) {
	i := slices.IndexFunc(GPUs, func(g GPU) bool { return g.Name == name })
	if i < 0 {
		return GPU{}, false
	}
	return GPUs[i], true
}

// FindModel returns the named model preset.
func FindModel(name string) (Model, bool) {
	i := slices.IndexFunc(Models, func(m Model) bool { return m.Name == name })
	if i < 0 {
		return Model{}, false
	}
	return Models[i], true
}

// GPUNames and ModelNames list the preset names, for error messages.
func GPUNames() []string {
	var n []string
	for _, g := range GPUs {
		n = append(n, g.Name)
	}
	return n
}

// ModelNames lists the model preset names.
func ModelNames() []string {
	var n []string
	for _, m := range Models {
		n = append(n, m.Name)
	}
	return n
}
