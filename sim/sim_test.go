package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/internal/leaktest"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload"
)

// rowSink keeps every row.
type rowSink struct {
	rows    []report.RequestRow
	pulls   []report.PullRow
	samples []report.SampleRow
}

func (s *rowSink) Request(r *report.RequestRow) error {
	s.rows = append(s.rows, *r)
	return nil
}

func (s *rowSink) Pull(r *report.PullRow) error {
	s.pulls = append(s.pulls, *r)
	return nil
}

func (s *rowSink) Sample(r *report.SampleRow) error {
	s.samples = append(s.samples, *r)
	return nil
}

// traceLine is one Mooncake record with 16-token trace blocks.
type traceLine struct {
	ms      int
	in, out int
	ids     []int
}

// runTrace writes the records as a Mooncake trace with block_size 16, runs
// the scenario body (YAML for cluster, router and the rest) on it with
// invariant checks on, and returns the rows in request_id order.
func runTrace(t *testing.T, body string, lines []traceLine, sets ...string) ([]report.RequestRow, *results.Summary) {
	t.Helper()
	sink, res := runTraceSink(t, body, lines, sets...)
	return sink.rows, res.Summary
}

// runTraceSink is runTrace returning every streamed row and the result.
func runTraceSink(t *testing.T, body string, lines []traceLine, sets ...string) (*rowSink, *Result) {
	t.Helper()
	return runSink(t, traceScenario(t, body, lines, sets...))
}

// traceScenario is the scenario runTrace runs.
func traceScenario(t *testing.T, body string, lines []traceLine, sets ...string) *scenarios.Scenario {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, l := range lines {
		ids := make([]string, len(l.ids))
		for i, id := range l.ids {
			ids[i] = fmt.Sprint(id)
		}
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
			l.ms, l.in, l.out, strings.Join(ids, ", "))
	}
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	y := "name: t\nworkload: {trace: {path: t.jsonl, block_size: 16}}\n" + body
	if !strings.Contains(body, "kvcr:") {
		y += "kvcr: {enabled: false}\n"
	}
	sc, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), []byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func run(t *testing.T, sc *scenarios.Scenario) ([]report.RequestRow, *results.Summary) {
	t.Helper()
	sink, res := runSink(t, sc)
	return sink.rows, res.Summary
}

// runSink runs a scenario with invariant checks and checks the rows come
// in id order.
func runSink(t *testing.T, sc *scenarios.Scenario) (*rowSink, *Result) {
	t.Helper()
	return runOpts(t, sc, Options{})
}

// runOpts is runSink with opt's other options (Twins, say).
func runOpts(t *testing.T, sc *scenarios.Scenario, opt Options) (*rowSink, *Result) {
	t.Helper()
	sink := &rowSink{}
	opt.Sink, opt.Check = sink, true
	res, err := Run(context.Background(), sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range sink.rows {
		if r.RequestID != int64(i) {
			t.Fatalf("row %d has request_id %d", i, r.RequestID)
		}
	}
	for i, p := range sink.pulls {
		if p.PullID != int64(i) {
			t.Fatalf("pull row %d has pull_id %d", i, p.PullID)
		}
	}
	return sink, res
}

const fixed10x5 = `cluster:
  workers: 1
  engine: {kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
`

func ids(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

const ms = int64(des.Millisecond)

// TestSingleRequest: one request, 100 prompt tokens (6 full blocks of 16,
// 7 trace ids), 3 output tokens, fixed timing 10 ms prefill, 5 ms decode,
// arriving at 2 ms: first token at 12 ms, then 17 and 22 ms.
func TestSingleRequest(t *testing.T) {
	rows, sum := runTrace(t, fixed10x5, []traceLine{{2, 100, 3, ids(0, 7)}})
	r := rows[0]
	if r.Worker != 0 || r.ArrivalNs != 2*ms || r.FirstTokenNs != 12*ms || r.FinishNs != 22*ms ||
		r.ComputedPromptTokens != 100 || r.G1HitTokens != 0 || r.Outcome != report.OutcomeCompleted || r.HintSource != -1 {
		t.Errorf("row %+v", r)
	}
	// TTFT 10 ms; TPOT (22 - 12) / 2 = 5 ms; two ITL gaps of 5 ms (the
	// histogram reports a bucket top within 1/128 above); E2E 20 ms.
	if sum.TTFT.P50 != 10 || sum.TPOT.P99 != 5 || sum.E2E.Max != 20 || sum.ITL.P50 < 5 || sum.ITL.P50 > 5*(1+1.0/128) {
		t.Errorf("summary ttft %+v tpot %+v e2e %+v itl %+v", sum.TTFT, sum.TPOT, sum.E2E, sum.ITL)
	}
}

// TestScheduledTime: one worker running one request at a time (fixed 10 ms
// prefill, 5 ms decode). R0 arrives at 0 and is scheduled at once: first
// token at 10 ms, its 3 tokens end at 20 ms. R1 arrives at 1 ms and waits
// for the slot: scheduled by the pass starting at 20 ms, first token at
// 30 ms, done at 40 ms. vLLM's measures then read queue 0 and 19 ms,
// prefill 10 and 10 ms.
func TestScheduledTime(t *testing.T) {
	rows, _ := runTrace(t, fixed10x5, []traceLine{{0, 100, 3, ids(0, 7)}, {1, 100, 3, ids(10, 7)}}, "cluster.engine.max_num_seqs=1")
	for i, want := range [][3]int64{{0, 10, 20}, {20, 30, 40}} {
		if r := rows[i]; r.ScheduledNs != want[0]*ms || r.FirstTokenNs != want[1]*ms || r.FinishNs != want[2]*ms {
			t.Errorf("R%d scheduled %d, first token %d, finish %d; want %v ms", i, r.ScheduledNs, r.FirstTokenNs, r.FinishNs, want)
		}
	}
}

// TestChunkedPrefill: budget 64 tokens; a 150-token prompt takes passes of
// 64, 64 and 22 tokens (10 ms each, fixed), so its first token comes at
// 30 ms and its second (a 5 ms decode pass) at 35 ms.
func TestChunkedPrefill(t *testing.T) {
	rows, _ := runTrace(t, fixed10x5, []traceLine{{0, 150, 2, ids(0, 10)}}, "cluster.engine.max_batched_tokens=64")
	if r := rows[0]; r.FirstTokenNs != 30*ms || r.FinishNs != 35*ms {
		t.Errorf("row %+v", r)
	}
}

// TestPrefixHitSkipsCompute: linear timing, 1 ms + 0.1 ms per prefill token.
// A (100 tokens, trace ids 0-6) runs alone: 1 + 10 = 11 ms. B shares ids
// 0-5 (96 tokens, 6 full blocks) and arrives at 20 ms: it hits 96 tokens
// and computes 4: 1.4 ms, finishing at 21.4 ms. C shares only id 0 (16
// tokens): 1 + 8.4 = 9.4 ms from 40 ms.
func TestPrefixHitSkipsCompute(t *testing.T) {
	body := `cluster:
  workers: 1
  engine: {kv_bytes_per_token: 1000, timing: {model: linear, base: 1ms, per_prefill_token: 100us}}
`
	rows, sum := runTrace(t, body, []traceLine{
		{0, 100, 1, ids(0, 7)},
		{20, 100, 1, append(ids(0, 6), 99)},
		{40, 100, 1, append([]int{0}, ids(50, 6)...)},
	})
	want := []struct{ finish, hit, computed int64 }{{11 * ms, 0, 100}, {21_400_000, 96, 4}, {49_400_000, 16, 84}}
	for i, w := range want {
		r := rows[i]
		if r.FinishNs != w.finish || r.G1HitTokens != w.hit || r.ComputedPromptTokens != w.computed {
			t.Errorf("request %d: finish %d hit %d computed %d; want %+v", i, r.FinishNs, r.G1HitTokens, r.ComputedPromptTokens, w)
		}
	}
	// (0 + 96 + 16) / 300 prompt tokens.
	if sum.HitRatio.G1 != 112.0/300 {
		t.Errorf("hit ratio %g", sum.HitRatio.G1)
	}
}

// TestPreemption: block size 4, G1 of 4 blocks; A and B have 4-token
// prompts and 6 output tokens and arrive together. Both prefill (0-10 ms)
// and decode (15, 20, 25, 30 ms), holding 2 blocks each from 15 ms. At
// 30 ms A needs a third block: B, admitted last, is preempted; A finishes
// alone at 35 ms. B then hits its cached prompt block (4 tokens) and
// recomputes its 5 generated tokens in a 10 ms prefill pass: done at 45 ms.
func TestPreemption(t *testing.T) {
	body := `cluster:
  workers: 1
  engine: {block_size: 4, gpu_blocks: 4, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
`
	rows, sum := runTrace(t, body, []traceLine{{0, 4, 6, []int{1}}, {0, 4, 6, []int{2}}})
	a, b := rows[0], rows[1]
	if a.FinishNs != 35*ms || a.Preemptions != 0 || b.FinishNs != 45*ms || b.Preemptions != 1 ||
		b.FirstTokenNs != 10*ms || b.ComputedPromptTokens != 4 {
		t.Errorf("A %+v\nB %+v", a, b)
	}
	if sum.Preempted != 1 {
		t.Errorf("preemptions %d", sum.Preempted)
	}
}

// TestRoundRobin: 2 workers, 4 requests at 0, 1, 2, 3 ms, each 32 tokens
// and 1 output token (one 10 ms prefill pass). They alternate workers 0, 1,
// 0, 1; the third waits for worker 0's pass (0-10 ms) and runs 10-20 ms,
// the fourth waits for worker 1 (1-11 ms) and runs 11-21 ms.
func TestRoundRobin(t *testing.T) {
	rows, _ := runTrace(t, fixed10x5, []traceLine{
		{0, 32, 1, []int{1, 2}}, {1, 32, 1, []int{3, 4}}, {2, 32, 1, []int{5, 6}}, {3, 32, 1, []int{7, 8}},
	}, "cluster.workers=2", "router.policy=round_robin")
	want := []struct {
		w      int32
		finish int64
	}{{0, 10 * ms}, {1, 11 * ms}, {0, 20 * ms}, {1, 21 * ms}}
	for i, w := range want {
		if rows[i].Worker != w.w || rows[i].FinishNs != w.finish {
			t.Errorf("request %d: worker %d finish %d, want %+v", i, rows[i].Worker, rows[i].FinishNs, w)
		}
	}
}

// TestKVAwarePlacement: 2 workers, kv_aware. A (64 tokens, 4 blocks, ids
// 1-4) at 0 ms: both cost 4, worker 0 (lowest id). B (ids 5-8) at 1 ms:
// worker 0 has 4 pending prefill blocks (cost 8), worker 1 costs 4: worker
// 1. Both finish by 11 ms (one 10 ms pass each). C at 20 ms repeats A's
// prompt: worker 0 caches all 4 of its blocks, so it costs 4 - 4 = 0
// against 4: worker 0. C hits 3 blocks, 48 tokens: the last token is always
// recomputed, so the last block is not a hit. D at 40 ms repeats B's
// prompt: worker 1.
func TestKVAwarePlacement(t *testing.T) {
	rows, _ := runTrace(t, fixed10x5, []traceLine{
		{0, 64, 1, []int{1, 2, 3, 4}}, {1, 64, 1, []int{5, 6, 7, 8}},
		{20, 64, 1, []int{1, 2, 3, 4}}, {40, 64, 1, []int{5, 6, 7, 8}},
	}, "cluster.workers=2")
	want := []struct {
		w   int32
		hit int64
	}{{0, 0}, {1, 0}, {0, 48}, {1, 48}}
	for i, w := range want {
		if rows[i].Worker != w.w || rows[i].G1HitTokens != w.hit {
			t.Errorf("request %d: worker %d hit %d, want %+v", i, rows[i].Worker, rows[i].G1HitTokens, w)
		}
	}
	// The same requests round-robin: C lands on worker 0 by turn, D on 1;
	// with least_loaded every request sees both idle and takes worker 0,
	// so C and D both go to 0 and D misses.
	rows, _ = runTrace(t, fixed10x5, []traceLine{
		{0, 64, 1, []int{1, 2, 3, 4}}, {20, 64, 1, []int{5, 6, 7, 8}},
		{40, 64, 1, []int{1, 2, 3, 4}}, {60, 64, 1, []int{5, 6, 7, 8}},
	}, "cluster.workers=2", "router.policy=least_loaded")
	for i, r := range rows {
		if r.Worker != 0 {
			t.Errorf("least_loaded request %d on worker %d", i, r.Worker)
		}
	}
	if rows[2].G1HitTokens != 48 || rows[3].G1HitTokens != 48 {
		t.Errorf("worker 0 caches both prompts: hits %d %d", rows[2].G1HitTokens, rows[3].G1HitTokens)
	}
}

// TestRejected: max_model_len 100: a request of 90 + 20 tokens is rejected
// at arrival, on no worker; the next one runs.
func TestRejected(t *testing.T) {
	rows, sum := runTrace(t, fixed10x5, []traceLine{{0, 90, 20, ids(0, 6)}, {0, 50, 1, ids(10, 4)}},
		"cluster.engine.max_model_len=100")
	if rows[0].Outcome != report.OutcomeRejected || rows[0].Worker != -1 || rows[0].FinishNs != 0 ||
		rows[1].Outcome != report.OutcomeCompleted || sum.Requests.Rejected != 1 {
		t.Errorf("rows %+v", rows)
	}
}

// TestFitsInG1: G1 of 10 blocks of 4 tokens. A request of 20 + 21 tokens
// holds KV for 40 of them at most (its last token is sampled, never
// computed): 10 blocks, so it runs, its prefill 0-10 ms and 20 decode
// passes of 5 ms to 110 ms. One of 20 + 22 would need 11 blocks: rejected
// at arrival.
func TestFitsInG1(t *testing.T) {
	body := `cluster:
  workers: 1
  engine: {block_size: 4, gpu_blocks: 10, kv_bytes_per_token: 1000, max_batched_tokens: 64, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
`
	rows, _ := runTrace(t, body, []traceLine{{0, 20, 21, ids(0, 5)}, {200, 20, 22, ids(10, 5)}})
	if r := rows[0]; r.Outcome != report.OutcomeCompleted || r.FirstTokenNs != 10*ms || r.FinishNs != 110*ms {
		t.Errorf("20 + 21 tokens: %+v", r)
	}
	if r := rows[1]; r.Outcome != report.OutcomeRejected || r.Worker != -1 {
		t.Errorf("20 + 22 tokens: %+v", r)
	}
}

// TestDeterminism: the default scenario twice gives identical rows.
func TestDeterminism(t *testing.T) {
	sc, err := scenarios.LoadDefault([]string{"workload.synthetic.requests=600"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := run(t, sc)
	b, _ := run(t, sc)
	if !slices.Equal(a, b) {
		t.Error("same scenario, different rows")
	}
	sc2, _ := scenarios.LoadDefault([]string{"workload.synthetic.requests=600", "seed=7"})
	if c, _ := run(t, sc2); slices.Equal(a, c) {
		t.Error("different seed, same rows")
	}
}

func TestTraceErrorNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}`+"\n"+
		`{"timestamp": 1, "input_length": 10, "output_length": 1, "hash_ids": []}`+"\n"), 0o644)
	sc, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), []byte("workload: {trace: {path: bad.jsonl}}\n"+fixed10x5), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), sc, Options{})
	if err == nil || err.Error() != trace+":2: hash_ids: empty" {
		t.Errorf("got %v", err)
	}
	sc.Workload.Trace.Path = filepath.Join(dir, "missing.jsonl")
	if _, err = Run(context.Background(), sc, Options{}); err == nil || !strings.Contains(err.Error(), "workload.trace.path: cannot open trace") {
		t.Errorf("got %v", err)
	}
}

// TestRunEndingEarlyLeavesNoGoroutine: the workload's read-ahead goroutine
// (workload.Prefetch) is gone when a run returns early, whether the
// workload went on (a cancelled run of 100,000 synthetic requests, stopped
// before its first event) or failed (a trace whose line 600, past the
// first two read-ahead batches of 256, is bad: the error names that line,
// as without read-ahead).
func TestRunEndingEarlyLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	sc, err := scenarios.LoadDefault([]string{"workload.synthetic.requests=100000"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, sc, Options{}); err != context.Canceled {
		t.Errorf("cancelled run: %v, want %v", err, context.Canceled)
	}
	if n := leaktest.Settled(before); n > before {
		t.Errorf("cancelled run: %d goroutines after, %d before", n, before)
	}

	dir := t.TempDir()
	trace := filepath.Join(dir, "bad.jsonl")
	var b strings.Builder
	for i := range 599 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 10, "output_length": 1, "hash_ids": [1]}`+"\n", i)
	}
	b.WriteString(`{"timestamp": 599, "input_length": 10, "output_length": 1, "hash_ids": []}` + "\n")
	os.WriteFile(trace, []byte(b.String()), 0o644)
	sc, err = scenarios.Parse(filepath.Join(dir, "s.yaml"), []byte("workload: {trace: {path: bad.jsonl}}\n"+fixed10x5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = Run(context.Background(), sc, Options{}); err == nil || err.Error() != trace+":600: hash_ids: empty" {
		t.Errorf("bad line 600: %v", err)
	}
	if n := leaktest.Settled(before); n > before {
		t.Errorf("bad trace: %d goroutines after, %d before", n, before)
	}
}

// cancelSink cancels the run at its first time-series row.
type cancelSink struct {
	rowSink
	cancel context.CancelFunc
}

func (s *cancelSink) Sample(r *report.SampleRow) error {
	s.cancel()
	return s.rowSink.Sample(r)
}

// TestCancelStopsWithinAnEvent: a cancel stops the run before the next
// event, however large the cluster: cancelled at the first time-series
// row (the sampler at 0 ns, one row a worker), the default scenario on
// 5,000 workers returns context.Canceled with that one sample's 5,000
// rows written and no request ended (none can end at 0 ns). The loop polls the context after every event, not every
// ProgressEvery of them: at 1,000,000 workers one sample is a second's
// work.
func TestCancelStopsWithinAnEvent(t *testing.T) {
	sc, err := scenarios.LoadDefault([]string{"cluster.workers=5000"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := &cancelSink{cancel: cancel}
	if _, err := Run(ctx, sc, Options{Sink: sink}); err != context.Canceled {
		t.Fatalf("cancelled run: %v, want %v", err, context.Canceled)
	}
	if len(sink.samples) != 5000 || len(sink.rows) != 0 {
		t.Errorf("after the cancel: %d time-series rows, %d requests ended; want 5000 and 0", len(sink.samples), len(sink.rows))
	}
}

// oneRequest is a workload.Source of one request.
type oneRequest struct{ r *workload.Request }

func (s *oneRequest) Next() (*workload.Request, error) { return s.r, nil }

// TestIDsFitInt32: the files hold ids as int32 (DESIGN.md section 8), so a
// request id or a pull id past report.MaxID ends the run with an error
// naming the column, rather than writing a wrapped id.
func TestIDsFitInt32(t *testing.T) {
	sc, err := scenarios.LoadDefault(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{sc: sc, source: &oneRequest{&workload.Request{ID: report.MaxID + 1}}}
	c.readNext()
	if c.err == nil || !strings.Contains(c.err.Error(), "workload: more than 2147483648 requests: request_id is an int32 in requests.parquet") {
		t.Errorf("request id 2^31: %v", c.err)
	}
	c = &Cluster{sc: sc, source: &oneRequest{&workload.Request{ID: report.MaxID}}}
	if c.readNext(); c.err != nil || c.next == nil {
		t.Errorf("request id 2^31 - 1: %v", c.err)
	}
	if err := c.releasePull(&report.PullRow{PullID: report.MaxID + 1}); err == nil || !strings.Contains(err.Error(), "pull_id is an int32") {
		t.Errorf("pull id 2^31: %v", err)
	}
}
