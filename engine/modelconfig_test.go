package engine

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPresetsMatchConfigs: each preset's config.json figures
// (testdata/models, written from the published config.json) give the
// preset's layers, heads, kv heads, head_dim, dtype, max_model_len and
// experts exactly, and its parameters within 1 % of the published count.
// The counts the parser derives, worked by hand (h hidden, f intermediate,
// q = heads x head_dim, kv = kv heads x head_dim, V vocab, L layers; a
// layer is h·q + 2·h·kv + q·h + 3·h·f + 2·h, plus embeddings V·h, lm_head
// V·h and the final norm h):
//
//	llama-2-7b     L 32, h 4096, f 11008, q 4096, kv 4096, V 32000:    6,738,415,616 (published 6.74e9)
//	llama-3.1-8b   L 32, h 4096, f 14336, q 4096, kv 1024, V 128256:   8,030,261,248 (8.03e9)
//	llama-3.1-70b  L 80, h 8192, f 28672, q 8192, kv 1024, V 128256:  70,553,706,496 (70.6e9)
//	codellama-34b  L 48, h 8192, f 22016, q 8192, kv 1024, V 32000:   33,743,970,304 (33.7e9)
//	mistral-7b     L 32, h 4096, f 14336, q 4096, kv 1024, V 32768:    7,248,023,552 (7.25e9)
//	qwen2.5-7b     L 28, h 3584, f 18944, q 3584, kv 512, V 152064,
//	               + q, k, v biases 4608 a layer:                      7,615,616,512 (7.61e9)
//	qwen3-32b      L 64, h 5120, f 25600, q 8192, kv 1024, V 151936,
//	               + q, k norms 256 a layer:                          32,762,123,264 (32.8e9)
//	mixtral-8x7b   L 32, h 4096, f 14336, q 4096, kv 1024, V 32000,
//	               8 experts of 3·h·f = 176,160,768 and a router of
//	               h·8 = 32,768 a layer:                              46,702,792,704 (46.7e9)
//	               active, 6 experts a layer fewer:                   12,879,925,248 (12.9e9)
func TestPresetsMatchConfigs(t *testing.T) {
	exact := map[string][2]float64{
		"llama-2-7b": {6_738_415_616, 0}, "llama-3.1-8b": {8_030_261_248, 0}, "llama-3.1-70b": {70_553_706_496, 0},
		"codellama-34b": {33_743_970_304, 0}, "mistral-7b": {7_248_023_552, 0}, "qwen2.5-7b": {7_615_616_512, 0},
		"qwen3-32b": {32_762_123_264, 0}, "mixtral-8x7b": {46_702_792_704, 12_879_925_248},
	}
	for _, p := range Models {
		file := filepath.Join("testdata", "models", p.Name+".json")
		m, err := LoadModelConfig(file)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if want := exact[p.Name]; m.Params != want[0] || m.ActiveParams != want[1] {
			t.Errorf("%s: %.0f parameters, %.0f active; want %.0f, %.0f", p.Name, m.Params, m.ActiveParams, want[0], want[1])
		}
		if rel := math.Abs(m.Params/p.Params - 1); rel > 0.01 {
			t.Errorf("%s: %.4g parameters from config.json, published %.4g (%.2f %% off)", p.Name, m.Params, p.Params, 100*rel)
		}
		if rel := math.Abs(m.Active()/p.Active() - 1); rel > 0.01 {
			t.Errorf("%s: %.4g active parameters, published %.4g", p.Name, m.Active(), p.Active())
		}
		got, want := m, p
		got.Name, got.Params, got.ActiveParams = "", 0, 0
		want.Name, want.Params, want.ActiveParams = "", 0, 0
		if got != want {
			t.Errorf("%s: config.json gives %+v, the preset is %+v", p.Name, got, want)
		}
	}
}

// TestModelConfigDefaults: num_key_value_heads defaults to the heads,
// head_dim to hidden_size / heads, the dtype to 2 bytes; float32 is 4;
// tied embeddings count once; biases count where the config says so.
func TestModelConfigDefaults(t *testing.T) {
	// L 2, h 64, f 128, V 100, heads 4 (head_dim 16, q = kv = 64):
	// a layer 64·64 x 4 + 3·64·128 + 2·64 = 16384 + 24576 + 128 = 41088;
	// 2 layers 82176 + embeddings 6400 + final norm 64 = 88640 tied,
	// 95040 with lm_head. Biases: attention 64 x 4 = 256 a layer, MLP
	// 2·128 + 64 = 320 a layer: 95040 + 2 x 576 = 96192.
	base := `"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "intermediate_size": 128,
		"vocab_size": 100, "max_position_embeddings": 512`
	for _, c := range []struct {
		extra  string
		params float64
		bytes  int
	}{
		{`"tie_word_embeddings": true`, 88640, 2},
		{`"torch_dtype": "float32"`, 95040, 4},
		{`"dtype": "float16", "attention_bias": true, "mlp_bias": true`, 96192, 2},
		{`"model_type": "qwen2"`, 95040 + 2*192, 2}, // q, k, v biases
	} {
		m, err := ParseModelConfig("c.json", []byte("{"+base+", "+c.extra+"}"))
		if err != nil {
			t.Errorf("%s: %v", c.extra, err)
			continue
		}
		if m.Params != c.params || m.KVBytes != c.bytes || m.WeightBytes != float64(c.bytes) || m.KVHeads != 4 || m.HeadDim != 16 || m.MaxModelLen != 512 {
			t.Errorf("%s: %+v, want %g parameters, %d bytes", c.extra, m, c.params, c.bytes)
		}
	}
}

// TestModelConfigErrors: each error names the file and the key.
func TestModelConfigErrors(t *testing.T) {
	ok := `"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512`
	for _, c := range []struct{ json, want string }{
		{`[1]`, "c.json: not a JSON object"},
		{`null`, "c.json: not a JSON object"},
		{`{}`, "c.json: num_hidden_layers: missing"},
		{`{"text_config": {}}`, "c.json: text_config: not supported"},
		{`{` + ok + `, "num_hidden_layers": "32"}`, `c.json: num_hidden_layers: want an integer from 1 to 16384, got "32"`},
		{`{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "intermediate_size": 128, "vocab_size": 100}`, "c.json: max_position_embeddings: missing"},
		{`{` + ok + `, "num_key_value_heads": 3}`, "c.json: num_key_value_heads: 3 does not divide num_attention_heads (4)"},
		{`{` + ok + `, "hidden_size": 66}`, "c.json: head_dim: missing, and hidden_size (66) is not a multiple of num_attention_heads (4)"},
		{`{` + ok + `, "head_dim": 0}`, "c.json: head_dim: want an integer from 1"},
		{`{` + ok + `, "torch_dtype": "int8"}`, `c.json: torch_dtype: "int8" is not one of bfloat16, float16, float32`},
		{`{` + ok + `, "torch_dtype": 2}`, `c.json: torch_dtype: want a string, got 2`},
		{`{` + ok + `, "tie_word_embeddings": "yes"}`, `c.json: tie_word_embeddings: want true or false`},
		{`{` + ok + `, "num_local_experts": 8}`, "c.json: num_experts_per_tok: missing"},
		{`{` + ok + `, "num_local_experts": 8, "num_experts_per_tok": 9}`, "c.json: num_experts_per_tok: 9 is more than num_local_experts (8)"},
		{`{` + ok + `, "num_experts": 64}`, "c.json: num_experts: not supported"},
		{`{` + ok + `, "quantization_config": {"bits": 4}}`, "c.json: quantization_config: not supported: a quantized checkpoint"},
	} {
		_, err := ParseModelConfig("c.json", []byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.json, err, c.want)
		}
	}
	if _, err := LoadModelConfig("testdata/models/none.json"); err == nil || !strings.Contains(err.Error(), "testdata/models/none.json") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzModelConfig: no input makes the parser panic, and a model it accepts
// is one the roofline can time and size.
func FuzzModelConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "models", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"num_hidden_layers": 1, "num_attention_heads": 1, "hidden_size": 1, "intermediate_size": 1, "vocab_size": 1, "max_position_embeddings": 1, "num_local_experts": 1, "num_experts_per_tok": 1}`))
	f.Add([]byte(`{"num_hidden_layers": null, "head_dim": -1}`))
	f.Add([]byte(`{"num_hidden_layers": 1e3}`))
	f.Add([]byte(`"x"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseModelConfig("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if !(m.Params > 0) || !(m.Active() > 0) || m.Active() > m.Params || m.KVBytesPerToken() <= 0 || m.MaxModelLen < 1 ||
			m.KVHeads < 1 || m.Heads%m.KVHeads != 0 || m.WeightsRead(1) > m.Params || m.WeightsRead(1) < m.Active()*(1-1e-12) {
			t.Fatalf("accepted model %+v", m)
		}
	})
}
