package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// rows collects a run's request rows.
type rows []report.RequestRow

func (r *rows) Request(row *report.RequestRow) error { *r = append(*r, *row); return nil }
func (r *rows) Pull(*report.PullRow) error           { return nil }
func (r *rows) Sample(*report.SampleRow) error       { return nil }

// writeOtel writes completed requests as the OTLP JSON lines vLLM's tracing
// writes: one llm_request span a request, two spans a line, the lines in
// reverse order (the reader must sort), with the run's own latencies as the
// measurements.
func writeOtel(t *testing.T, path string, rs rows) {
	t.Helper()
	const epoch = int64(1_769_000_000_000_000_000)
	sec := func(ns int64) string { return fmt.Sprintf(`{"doubleValue":%.9f}`, float64(ns)/1e9) }
	var spans []string
	for _, r := range rs {
		if r.Outcome != report.OutcomeCompleted {
			t.Fatalf("request %d %s: the truth run must complete every request", r.RequestID, r.Outcome)
		}
		attr := func(k, v string) string { return fmt.Sprintf(`{"key":%q,"value":%s}`, k, v) }
		spans = append(spans, fmt.Sprintf(`{"name":"llm_request","startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[%s]}`,
			epoch+r.ArrivalNs, epoch+r.FinishNs, strings.Join([]string{
				attr("gen_ai.usage.prompt_tokens", fmt.Sprintf(`{"intValue":"%d"}`, r.InputTokens)),
				attr("gen_ai.usage.completion_tokens", fmt.Sprintf(`{"intValue":"%d"}`, r.OutputTokens)),
				attr("gen_ai.latency.time_to_first_token", sec(r.FirstTokenNs-r.ArrivalNs)),
				attr("gen_ai.latency.e2e", sec(r.FinishNs-r.ArrivalNs)),
				attr("gen_ai.latency.time_in_queue", sec(r.ScheduledNs-r.ArrivalNs)),
				attr("gen_ai.latency.time_in_model_prefill", sec(r.FirstTokenNs-r.ScheduledNs)),
				attr("gen_ai.latency.time_in_model_decode", sec(r.FinishNs-r.FirstTokenNs)),
			}, ",")))
	}
	var b strings.Builder
	for i := len(spans); i > 0; i -= 2 {
		b.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Join(spans[max(i-2, 0):i], ",") + `]}]}]}` + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cluster is one H100 serving Llama-3.1-8B, one request at a time: each
// pass's time is then a smooth function of the parameters. (With batching,
// which requests share a pass depends on the times themselves, so a small
// change of a parameter can reshuffle the schedule and the loss is rugged;
// docs/fidelity.md discusses it.)
const cluster = `cluster:
  workers: 1
  engine: {max_num_seqs: 1, max_batched_tokens: 2048, timing: {model: roofline, gpu: h100, model_preset: llama-3.1-8b}}
kvcr: {enabled: false}
`

// TestFitRecoversKnownParameters: a trace kvsim made with MFU 0.3, MBU 0.45
// and 4 ms overhead, fitted from the defaults (0.66, 0.83, 1.5 ms), gives back
// each parameter within 2 %; the loss at the truth is 0. Prompts of 3,000
// tokens on average (lognormal, sigma 0.8) make prefill compute-bound (MFU
// and the overhead: slope and intercept over prompt length); decode is
// memory-bound, its KV read growing with the context (MBU against the
// overhead).
func TestFitRecoversKnownParameters(t *testing.T) {
	dir := t.TempDir()
	truth := []string{"cluster.engine.timing.mfu=0.3", "cluster.engine.timing.mbu=0.45", "cluster.engine.timing.overhead=4ms"}
	synth := "name: truth\nseed: 7\nworkload: {synthetic: {requests: 120, rate: 0.2, input: {mean: 3000, sigma: 0.8}, output: {mean: 100, sigma: 0.6}}}\n" + cluster
	sc, err := scenarios.Parse(filepath.Join(dir, "truth.yaml"), []byte(synth), truth)
	if err != nil {
		t.Fatal(err)
	}
	var rs rows
	if _, err := sim.Run(context.Background(), sc, sim.Options{Sink: &rs, Check: true}); err != nil {
		t.Fatal(err)
	}
	writeOtel(t, filepath.Join(dir, "measured.json"), rs)
	train := "name: train\nworkload: {trace: {path: measured.json, format: otel}}\n" + cluster
	sc, err = scenarios.Parse(filepath.Join(dir, "train.yaml"), []byte(train), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"mfu": 0.3, "mbu": 0.45, "overhead": 4e6}
	for _, p := range res.Params {
		if e := math.Abs(p.After-want[p.Key]) / want[p.Key]; e > 0.02 {
			t.Errorf("%s fitted %g, truth %g (%.1f %% off)", p.Key, p.After, want[p.Key], 100*e)
		}
	}
	if res.LossAfter >= res.LossBefore || res.After[0].TTFT.MAPE > 0.02 || res.After[0].E2E.MAPE > 0.02 {
		t.Errorf("loss %g -> %g; after: TTFT MAPE %g, E2E MAPE %g", res.LossBefore, res.LossAfter, res.After[0].TTFT.MAPE, res.After[0].E2E.MAPE)
	}
	// At the truth the replay is the measured run itself.
	sc2, _ := scenarios.Parse(filepath.Join(dir, "train.yaml"), []byte(train), truth)
	var c collector
	if _, err := sim.Run(context.Background(), sc2, sim.Options{Sink: &c}); err != nil || c.loss() != 0 {
		t.Errorf("loss at the truth %g (%v), want 0", c.loss(), err)
	}
	t.Logf("fitted %+v in %d replays; loss %.4f -> %.6f", res.Params, res.Evaluations, res.LossBefore, res.LossAfter)
}

// TestParamCoordinates: every parameter's value survives the trip to the
// optimizer's coordinate and back; fractions stay in (0, 1).
func TestParamCoordinates(t *testing.T) {
	for _, model := range scenarios.TimingModels {
		for _, p := range Params(model) {
			for _, v := range []float64{0.01, 0.3, 0.9, 5, 1e6} {
				if p.Fraction && v >= 1 {
					continue
				}
				if got := p.value(p.coord(v)); math.Abs(got-v) > 1e-9*v {
					t.Errorf("%s %s: %g -> %g", model, p.Key, v, got)
				}
			}
			if p.Fraction && (p.value(-50) <= 0 || p.value(50) > 1) {
				t.Errorf("%s: fraction out of (0, 1]", p.Key)
			}
		}
	}
	if Params("nope") != nil {
		t.Error("an unknown model has parameters")
	}
}

// TestFitRespectsPhysics: a trace made with a fixed model far faster than
// an H100 can serve Llama-2-7B (every pass 1 ms) is fitted with a fixed
// model naming that hardware. The unconstrained optimum (1 ms, 1 ms) is
// below the physical bound (a 2,048-token prefill pass alone needs 29 ms of
// compute at peak), so the fit must stop short of it and its timing must
// pass the physics check.
func TestFitRespectsPhysics(t *testing.T) {
	dir := t.TempDir()
	body := `cluster:
  workers: 1
  engine: {max_num_seqs: 8, max_batched_tokens: 2048, max_model_len: 4096, kv_bytes_per_token: 524288, timing: {model: fixed, prefill: 1ms, decode: 1ms}}
kvcr: {enabled: false}
`
	synth := "name: fast\nworkload: {synthetic: {requests: 40, rate: 5, input: {mean: 500}, output: {mean: 20}}}\n" + body
	sc, err := scenarios.Parse(filepath.Join(dir, "fast.yaml"), []byte(synth), nil)
	if err != nil {
		t.Fatal(err)
	}
	var rs rows
	if _, err := sim.Run(context.Background(), sc, sim.Options{Sink: &rs}); err != nil {
		t.Fatal(err)
	}
	writeOtel(t, filepath.Join(dir, "measured.json"), rs)
	train := "name: train\nworkload: {trace: {path: measured.json, format: otel}}\n" + body
	sc, err = scenarios.Parse(filepath.Join(dir, "train.yaml"), []byte(train),
		[]string{"cluster.engine.timing={model: fixed, prefill: 200ms, decode: 50ms, gpu: h100, model_preset: llama-2-7b}", "cluster.engine.kv_bytes_per_token=0"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(context.Background(), sc, Options{Evaluations: 80})
	if err != nil {
		t.Fatal(err)
	}
	fitted := *sc
	fitted.Cluster.Engine.Timing = res.Timing[0]
	if _, err := sim.Prepare(&fitted); err != nil {
		t.Errorf("the fit is faster than the hardware: %v", err)
	}
	if p := res.Params[0]; p.After < 29e6 || p.After >= p.Before {
		t.Errorf("prefill fitted %g ns: want below the 200 ms start and above the 29 ms bound", p.After)
	}
}

// TestNegativeEvaluations: a negative replay budget is an error, not a fit
// that never ran.
func TestNegativeEvaluations(t *testing.T) {
	sc, err := scenarios.LoadDefault(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(context.Background(), sc, Options{Evaluations: -5}); err == nil || !strings.Contains(err.Error(), "-5 evaluations") {
		t.Errorf("Fit with -5 evaluations: %v", err)
	}
}
