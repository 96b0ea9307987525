// Command transfer prints docs/fidelity.md's "KV transfer" table: for each
// published KV-transfer figure, kvsim's prediction with the knobs that
// stand for that stack, and with kvsim's defaults. Each prediction is a
// kvsim run: two requests with one prompt on two workers, round robin, so
// the second is hinted to pull the first's blocks; the table reads that
// pull's row (its rate from first byte to landing, or its time from
// staging to landing).
//
//	go run ./benchmarks/transfer
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/workload"
)

// stack is the knobs that stand for one published setup.
type stack struct {
	name       string
	kvPerToken int64  // bytes of KV a token: block bytes are 16 x this
	knobs      string // the kvcr: keys, as YAML flow entries
}

// figure is one published figure and the pull that reproduces it.
type figure struct {
	source   string
	what     string
	st       stack
	tokens   int     // the prefix pulled (16-token blocks)
	measured float64 // GB/s when rate, else ms
	rate     bool    // compare the transfer's rate, not the pull's time
}

func main() {
	worst, err := table(os.Stdout)
	if err == nil && worst > 0.2 {
		err = errors.New("a figure is off by more than 20 %")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "transfer:", err)
		os.Exit(1)
	}
}

// Most knobs below are fitted to the very figures the table then
// reproduces; each says where it comes from. Only the rows marked held out
// test a prediction: a figure no knob was fitted to.
var (
	// descriptor_cost: the time a descriptor NIXL's benchmark reports,
	// about 3.1 µs flat from 4 KB to 256 KB; at 4 KB it is that row's
	// rate, 4,096 B / 1.3 GB/s = 3.15 µs, so the row is a fit, and the
	// 256 KB row tests only that posting overlaps the bytes.
	// bandwidth_gbps: high enough not to bind (above the 84.56 GB/s the
	// 256 KB row gets), not a fit.
	nixl = stack{"NIXL intra-node, 1 descriptor a block", 0, "descriptor_cost: 3100ns, bandwidth_gbps: 400"}
	// descriptor_cost: 1,024 B / 0.715 GB/s = 1,432 ns, the 1 KiB figure;
	// bandwidth_gbps: the 256 KiB figure itself (posting 256 KiB in 1.43
	// µs would give 183 GB/s, so the link binds).
	lmcache = stack{"LMCache", 0, "descriptor_cost: 1430ns, bandwidth_gbps: 12.2"}
	// descriptor_cost: 16,384 B / 9 GB/s = 1,820 ns, the figure itself;
	// the default 50 GB/s does not bind.
	vllm = stack{"vLLM NIXL, 400 Gb/s", 1024, "descriptor_cost: 1820ns"}
	// gpt-oss-120b: 36 layers, 8 KV heads of 64, bf16: 73,728 bytes a
	// token; vLLM's layout has a region per layer and K/V, 72 descriptors
	// a 16-token block of 16 KiB each. descriptor_cost and latency are the
	// line through the 2,048- and 16,384-token points (128 and 1,024
	// blocks): (196 - 49) ms / 896 blocks = 164.1 µs a block, / 72 =
	// 2.28 µs a descriptor; 49 ms - 128 x 164.1 µs = 28.0 ms.
	gptoss = stack{"llm-d P2P, gpt-oss-120b on H200", 73728, "descriptor_cost: 2300ns, descriptors_per_block: 72, latency: 28ms"}
	// GLM-5.2-FP8's pulls are nearly flat in length: a per-pull cost
	// (latency) dominates; its bytes are left free here, as the guide
	// gives no layout to price them. latency: the shortest pull measured,
	// 1.7 s; session_setup: the ~6 s measured for a new pod pair. The
	// timeouts only keep the pulls from expiring.
	glm      = stack{"llm-d P2P, GLM-5.2-FP8", 73728, "descriptor_cost: 0s, bandwidth_gbps: 1000000, latency: 1700ms, operation_timeout: 20s, abandon_timeout: 40s"}
	glmFirst = stack{"llm-d P2P, GLM-5.2-FP8, a new pod pair", 73728, "descriptor_cost: 0s, bandwidth_gbps: 1000000, latency: 1700ms, session_setup: 6s, operation_timeout: 20s, abandon_timeout: 40s"}
)

// figures: the comment on each says fit (a knob was fitted to it) or held
// out (predicted by knobs fitted to other figures).
var figures = []figure{
	{"NIXL PR #115", "4 KB descriptors, batch 64: GB/s", with(nixl, 256), 64 * 16, 1.3, true},                      // fit
	{"NIXL PR #115", "256 KB descriptors, batch 64: GB/s", with(nixl, 16384), 64 * 16, 84, true},                   // held out
	{"LMCache PR #4161", "1 KiB descriptors: GB/s", with(lmcache, 64), 256 * 16, 0.715, true},                      // fit
	{"LMCache PR #4161", "256 KiB descriptors: GB/s", with(lmcache, 16384), 256 * 16, 12.2, true},                  // fit
	{"vLLM #53825", "32k descriptors of 16 KB a rank: GB/s", vllm, 32768 * 16, 9, true},                            // fit
	{"llm-d P2P guide", "gpt-oss-120b, 2,048-token prefix: ms", gptoss, 2048, 49.0, false},                         // fit
	{"llm-d P2P guide", "gpt-oss-120b, 16,384-token prefix: ms", gptoss, 16384, 196, false},                        // fit
	{"llm-d P2P guide", "gpt-oss-120b, 49,152-token prefix: ms", gptoss, 49152, 551, false},                        // held out
	{"llm-d P2P guide", "GLM-5.2-FP8, a pull (1.7-2.3 s, nearly flat): ms", glm, 2048, 1700, false},                // fit
	{"llm-d P2P guide", "GLM-5.2-FP8, first pull of a new pod pair (~6 s extra): ms", glmFirst, 2048, 7700, false}, // fit
}

// with is st with kvPerToken bytes a token.
func with(st stack, kvPerToken int64) stack {
	st.kvPerToken = kvPerToken
	return st
}

// table writes the table to w and returns the largest relative error of
// a prediction with its stack's knobs.
func table(w io.Writer) (float64, error) {
	dir, err := os.MkdirTemp("", "kvsim-transfer")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(w, "| source | figure | knobs | measured | kvsim | error | kvsim defaults |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	worst := 0.0
	for i, f := range figures {
		got, err := predict(dir, i, f, f.st.knobs)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", f.source, f.what, err)
		}
		def, err := predict(dir, i, f, "")
		if err != nil {
			return 0, fmt.Errorf("%s %s, defaults: %w", f.source, f.what, err)
		}
		e := got/f.measured - 1
		worst = max(worst, math.Abs(e))
		fmt.Fprintf(w, "| %s | %s | `%s` | %.4g | %.4g | %+.1f %% | %.4g |\n", f.source, f.what, f.st.knobs, f.measured, got, 100*e, def)
	}
	fmt.Fprintf(w, "\nworst error %.1f %%\n", 100*worst)
	return worst, nil
}

// predict runs f's pull with the kvcr knobs given (none: the defaults) and
// returns its rate in GB/s or its time in ms.
func predict(dir string, i int, f figure, knobs string) (float64, error) {
	tr := filepath.Join(dir, fmt.Sprintf("trace-%d.jsonl", i))
	if err := writeTrace(tr, f.tokens+1); err != nil { // one token past the prefix: it is always computed
		return 0, err
	}
	kv := f.st.kvPerToken
	gpu := f.tokens/16 + 64
	text := fmt.Sprintf(`name: transfer-%d
seed: 1
workload: {trace: {path: %s, format: mooncake, block_size: 512}}
cluster:
  workers: 2
  engine: {block_size: 16, gpu_blocks: %d, kv_bytes_per_token: %d, max_model_len: %d, timing: {model: fixed, prefill: 1ms, decode: 1ms}}
  g2: {capacity_blocks: %d, d2h_gbps: 0, h2d_gbps: 0}
router: {policy: round_robin, hints: {enabled: true, mode: copy}}
kvcr: {%s}
`, i, tr, gpu, kv, f.tokens+16, 2*gpu, strings.TrimSpace(knobs))
	sc, err := scenarios.Parse(filepath.Join(dir, fmt.Sprintf("transfer-%d.yaml", i)), []byte(text), nil)
	if err != nil {
		return 0, err
	}
	var rows pulls
	if _, err := sim.Run(context.Background(), sc, sim.Options{Sink: &rows, Check: true}); err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("%d pulls, want 1", len(rows))
	}
	p := rows[0]
	if p.Outcome != kvcr.Success.String() {
		return 0, fmt.Errorf("pull %+v did not succeed", p)
	}
	if f.rate {
		return float64(p.Bytes) / float64(p.WriteEndNs-p.FirstByteNs), nil // bytes per ns = GB/s
	}
	return float64(p.WriteEndNs-p.StagedNs) / 1e6, nil
}

// writeTrace writes two requests of one prompt of the given tokens, a
// minute apart, each with one output token: the first computes the prompt
// on worker 0, the second, on worker 1, pulls it.
func writeTrace(path string, tokens int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	prompt := make([]uint64, tokens/512) // one chain of 512-token trace blocks
	for k := range prompt {
		prompt[k] = uint64(k + 1)
	}
	w := workload.NewMooncakeWriter(f, 512)
	for r := range int64(2) {
		if err := w.Write(&workload.Request{ID: r, Arrival: des.Time(r) * des.Minute, InputTokens: tokens, OutputTokens: 1, Blocks: block.Hashed(prompt)}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// pulls keeps a run's pull rows.
type pulls []report.PullRow

func (p *pulls) Request(*report.RequestRow) error { return nil }
func (p *pulls) Pull(r *report.PullRow) error     { *p = append(*p, *r); return nil }
func (p *pulls) Sample(*report.SampleRow) error   { return nil }
