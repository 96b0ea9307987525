package engine

import (
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
	Params      float64 // parameter count
	WeightBytes float64 // bytes per parameter (2: BF16)
	Layers      int
	Heads       int // query heads
	KVHeads     int
	HeadDim     int
	KVBytes     int // bytes per KV element (2: BF16)
	MaxModelLen int // max_position_embeddings
}

// KVBytesPerToken is 2 (K and V) x layers x kv_heads x head_dim x dtype bytes.
func (m Model) KVBytesPerToken() int64 {
	return int64(2 * m.Layers * m.KVHeads * m.HeadDim * m.KVBytes)
}

// GPUMemoryUtilization is vLLM's default share of GPU memory for weights and
// KV cache.
const GPUMemoryUtilization = 0.9

// Roofline defaults: achieved fractions of peak compute and bandwidth, and a
// fixed per-pass overhead (scheduling, launch, sampling). See docs/model.md.
const (
	DefaultMFU      = 0.5
	DefaultMBU      = 0.7
	DefaultOverhead = 1_000_000 // ns
)

// GPUs lists the GPU presets by name.
var GPUs = []GPU{
	{Name: "a100", PeakFLOPS: 312e12, Bandwidth: 2.039e12, MemoryBytes: 80e9},
	{Name: "h100", PeakFLOPS: 989e12, Bandwidth: 3.35e12, MemoryBytes: 80e9},
	{Name: "h200", PeakFLOPS: 989e12, Bandwidth: 4.8e12, MemoryBytes: 141e9},
	{Name: "b200", PeakFLOPS: 2250e12, Bandwidth: 8e12, MemoryBytes: 180e9},
}

// Models lists the model presets by name.
var Models = []Model{
	{Name: "llama-3.1-8b", Params: 8.03e9, WeightBytes: 2, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 131072},
	{Name: "llama-3.1-70b", Params: 70.6e9, WeightBytes: 2, Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 131072},
	{Name: "qwen3-32b", Params: 32.8e9, WeightBytes: 2, Layers: 64, Heads: 64, KVHeads: 8, HeadDim: 128, KVBytes: 2, MaxModelLen: 40960},
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
