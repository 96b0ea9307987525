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
