package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// LoadModelConfig reads a Hugging Face config.json and derives a Model from
// it (ParseModelConfig). Errors name the file and, where one is at fault,
// the JSON key.
func LoadModelConfig(path string) (Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Model{}, fmt.Errorf("cannot read model config: %w", err)
	}
	return ParseModelConfig(path, data)
}

// ParseModelConfig derives a Model from the text of a Hugging Face
// config.json of a Llama-style decoder (RMSNorm, gated MLP), file naming it
// in errors:
//
//   - layers, heads: num_hidden_layers, num_attention_heads
//   - kv heads: num_key_value_heads (default: heads)
//   - head_dim: head_dim (default: hidden_size / heads)
//   - max_model_len: max_position_embeddings
//   - bytes a weight and a KV element: torch_dtype (or dtype): bfloat16 and
//     float16 2, float32 4; absent: 2
//   - parameters, counted from the architecture: the embeddings (vocab_size
//     x hidden_size); a layer's attention q, k, v, o projections (with
//     their biases when attention_bias is true, or q, k, v biases for
//     model_type qwen2), Qwen3's q and k norms, its MLP gate, up and down
//     projections (hidden_size x intermediate_size each, biases when
//     mlp_bias) or, for a mixture of experts (num_local_experts, Mixtral's
//     layout), num_local_experts such MLPs and the router, and its two
//     norms; the final norm; and lm_head unless tie_word_embeddings. Active
//     parameters leave out all but num_experts_per_tok experts a layer.
//
// Quantized checkpoints (quantization_config) and other MoE layouts
// (num_experts, n_routed_experts) are refused: their bytes or parameters
// would be miscounted.
func ParseModelConfig(file string, data []byte) (Model, error) {
	c := &hfConfig{file: file}
	if err := json.Unmarshal(data, &c.raw); err != nil {
		return Model{}, fmt.Errorf("%s: not a JSON object: %v", file, err)
	}
	if c.raw == nil {
		return Model{}, fmt.Errorf("%s: not a JSON object", file)
	}
	for _, key := range []string{"quantization_config", "num_experts", "n_routed_experts"} {
		if c.has(key) {
			what := "a quantized checkpoint: its weights are not torch_dtype bytes a parameter"
			if key != "quantization_config" {
				what = "a mixture-of-experts layout other than Mixtral's (num_local_experts)"
			}
			return Model{}, c.fail(key, "not supported: %s", what)
		}
	}
	if !c.has("num_hidden_layers") && c.has("text_config") {
		return Model{}, c.fail("text_config", "not supported: the language model's figures are nested (a multimodal config); write its text_config as a config.json of its own")
	}
	layers := c.int("num_hidden_layers", 0, 1<<14)
	heads := c.int("num_attention_heads", 0, 1<<16)
	hidden := c.int("hidden_size", 0, 1<<20)
	inter := c.int("intermediate_size", 0, 1<<22)
	vocab := c.int("vocab_size", 0, 1<<24)
	maxLen := c.int("max_position_embeddings", 0, 1<<30)
	kvHeads := c.int("num_key_value_heads", heads, 1<<16)
	if c.err != nil {
		return Model{}, c.err
	}
	if kvHeads > heads || heads%kvHeads != 0 {
		return Model{}, c.fail("num_key_value_heads", "%d does not divide num_attention_heads (%d)", kvHeads, heads)
	}
	headDim := 0
	if c.has("head_dim") {
		headDim = c.int("head_dim", 0, 1<<16)
	} else if hidden%heads != 0 {
		return Model{}, c.fail("head_dim", "missing, and hidden_size (%d) is not a multiple of num_attention_heads (%d)", hidden, heads)
	} else {
		headDim = hidden / heads
	}
	experts := 0
	perToken := 0
	if c.has("num_local_experts") {
		experts = c.int("num_local_experts", 0, 1<<12)
		perToken = c.int("num_experts_per_tok", 0, 1<<12)
		if c.err == nil && perToken > experts {
			return Model{}, c.fail("num_experts_per_tok", "%d is more than num_local_experts (%d)", perToken, experts)
		}
	}
	dtype := 2
	dkey := "torch_dtype"
	if !c.has(dkey) && c.has("dtype") {
		dkey = "dtype"
	}
	if c.has(dkey) {
		switch s := c.string(dkey); s {
		case "bfloat16", "float16":
		case "float32":
			dtype = 4
		default:
			if c.err == nil {
				c.fail(dkey, "%q is not one of bfloat16, float16, float32", s)
			}
		}
	}
	tied := c.bool("tie_word_embeddings", false)
	modelType := ""
	if c.has("model_type") {
		modelType = c.string("model_type")
	}
	attnBias := c.bool("attention_bias", modelType == "qwen2")
	qkvBiasOnly := !c.has("attention_bias") && modelType == "qwen2"
	mlpBias := c.bool("mlp_bias", false)
	if c.err != nil {
		return Model{}, c.err
	}

	h, q, kv, f := float64(hidden), float64(heads*headDim), float64(kvHeads*headDim), float64(inter)
	attn := h*q + 2*h*kv + q*h
	if attnBias {
		attn += q + 2*kv
		if !qkvBiasOnly {
			attn += h
		}
	}
	if modelType == "qwen3" || modelType == "qwen3_moe" {
		attn += 2 * float64(headDim) // q_norm, k_norm
	}
	mlp := 3 * h * f
	if mlpBias {
		mlp += 2*f + h
	}
	layer := attn + 2*h // input and post-attention norms
	moe := experts > 0
	if moe {
		layer += float64(experts)*mlp + h*float64(experts) // experts and router
	} else {
		layer += mlp
	}
	embed := float64(vocab) * h
	params := embed + float64(layers)*layer + h
	if !tied {
		params += embed
	}
	m := Model{
		Name: file, Params: params, WeightBytes: float64(dtype),
		Layers: layers, Heads: heads, KVHeads: kvHeads, HeadDim: headDim, KVBytes: dtype, MaxModelLen: maxLen,
	}
	if moe {
		m.Experts, m.ExpertsPerToken = experts, perToken
		m.ActiveParams = params - float64(layers)*float64(experts-perToken)*mlp
	}
	return m, nil
}

// hfConfig reads keys of a config.json, keeping the first error.
type hfConfig struct {
	file string
	raw  map[string]json.RawMessage
	err  error
}

func (c *hfConfig) fail(key, format string, a ...any) error {
	err := fmt.Errorf("%s: %s: %s", c.file, key, fmt.Sprintf(format, a...))
	if c.err == nil {
		c.err = err
	}
	return err
}

// has reports whether key is present and not null.
func (c *hfConfig) has(key string) bool {
	v, ok := c.raw[key]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// int reads an integer from 1 to most; absent (or null) it is def, or an
// error when def is 0.
func (c *hfConfig) int(key string, def, most int) int {
	if !c.has(key) {
		if def == 0 {
			c.fail(key, "missing")
		}
		return def
	}
	text := string(bytes.TrimSpace(c.raw[key]))
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 1 || n > int64(most) {
		c.fail(key, "want an integer from 1 to %d, got %s", most, clip(text))
		return 1
	}
	return int(n)
}

func (c *hfConfig) string(key string) string {
	var s string
	if err := json.Unmarshal(c.raw[key], &s); err != nil {
		c.fail(key, "want a string, got %s", clip(string(c.raw[key])))
	}
	return s
}

func (c *hfConfig) bool(key string, def bool) bool {
	if !c.has(key) {
		return def
	}
	var b bool
	if err := json.Unmarshal(c.raw[key], &b); err != nil {
		c.fail(key, "want true or false, got %s", clip(string(c.raw[key])))
	}
	return b
}

// clip shortens a JSON value quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
