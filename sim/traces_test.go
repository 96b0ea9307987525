package sim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// TestContractScenarios replays every scenario of the shared contract, its
// first 300 requests, with invariant checks.
func TestContractScenarios(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(tracestest.Contract(t), "*.yaml"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenarios.Load(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			limit := "workload.trace.limit=300"
			if sc.Workload.Synthetic != nil {
				limit = "workload.synthetic.requests=300"
			}
			if sc, err = scenarios.Load(f, []string{limit}); err != nil {
				t.Fatal(err)
			}
			sink := &rowSink{}
			res, err := Run(context.Background(), sc, Options{Sink: sink, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			if sum.Requests.Total != 300 || sum.Requests.Completed+sum.Requests.Rejected != 300 || len(sink.rows) != 300 {
				t.Errorf("requests %+v, %d rows", sum.Requests, len(sink.rows))
			}
		})
	}
}

// TestConversationTrace is the acceptance run of the core replay: the
// Mooncake conversation trace on 16 kv_aware workers with default engine
// settings. Every one of its 12,031 requests completes, their output tokens
// sum to 4,122,048 (the trace's README), and the G1 prefix hit ratio is
// well above zero and below 0.374, the ratio of an infinite cache.
func TestConversationTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("long: replays 12,031 requests")
	}
	path := tracestest.Path(t, "conversation_trace.jsonl")
	sc, err := scenarios.Parse("conv.yaml", []byte("workload: {trace: {path: "+path+"}}\ncluster: {workers: 16}\nkvcr: {enabled: false}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	if sum.Requests.Completed != 12031 || sum.Tokens.Output != 4_122_048 {
		t.Errorf("completed %d, output tokens %d", sum.Requests.Completed, sum.Tokens.Output)
	}
	if g1 := sum.HitRatio.G1; g1 < 0.1 || g1 >= 0.374 {
		t.Errorf("G1 hit ratio %.3f", g1)
	}
	t.Logf("G1 hit ratio %.4f, TTFT p50 %.1f ms p99 %.1f ms, %d events", sum.HitRatio.G1, sum.TTFT.P50, sum.TTFT.P99, sum.Events)
}

// TestVLLMTraceReplay replays the measured vLLM run of Llama-2-7B (an otel
// trace, 282 requests) on one worker configured as that server was
// (max_num_batched_tokens 4096, max_model_len 4096, chunked prefill and
// prefix caching), with roofline timing for H100 and the Llama-2-7B
// preset: every request completes with the trace's
// tokens, and no prompt hits the cache, since the workload shares no
// prefix. With shared_prefix 1024 the prompts' first 64 blocks hit.
func TestVLLMTraceReplay(t *testing.T) {
	path := tracestest.VLLMPath(t, "jan21-llama7b-train-1/traces.json")
	y := "workload: {trace: {path: " + path + ", format: otel}}\n" +
		"cluster: {workers: 1, engine: {max_batched_tokens: 4096, max_model_len: 4096, timing: {model: roofline, gpu: h100, model_preset: llama-2-7b}}}\n" +
		"kvcr: {enabled: false}\nrouter: {hints: {enabled: false}}\n"
	for _, c := range []struct {
		sets   []string
		g1Hits [2]float64
	}{
		{nil, [2]float64{0, 0}},
		// 281 later prompts of 2..3500 tokens hit min(1024, prompt) tokens
		// of whole blocks: about 0.5 of the 534,472 prompt tokens.
		{[]string{"workload.trace.shared_prefix=1024"}, [2]float64{0.4, 0.6}},
	} {
		sc, err := scenarios.Parse("vllm.yaml", []byte(y), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sc, Options{Check: true})
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		if sum.Requests.Completed != 282 || sum.Tokens.Input != 534_472 || sum.Tokens.Output != 122_941 ||
			sum.HitRatio.G1 < c.g1Hits[0] || sum.HitRatio.G1 > c.g1Hits[1] {
			t.Errorf("%v: requests %+v, tokens %+v, G1 hit ratio %.4f", c.sets, sum.Requests, sum.Tokens, sum.HitRatio.G1)
		}
		t.Logf("%v: TTFT p50 %.1f ms p90 %.1f ms (measured mean 88.1 ms), G1 hit ratio %.4f, digest %s",
			c.sets, sum.TTFT.P50, sum.TTFT.P90, sum.HitRatio.G1, sum.Digest)
	}
}
