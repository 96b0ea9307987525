package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/workload"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// digestOf runs a scenario ("" for the default) in process, with invariant
// checks, and returns its digest.
func digestOf(t *testing.T, path string, sets ...string) string {
	t.Helper()
	sc, err := study.LoadScenario(path, sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary.Digest
}

// traceWorkload is the --set that replaces a scenario's workload by a
// trace.
func traceWorkload(path string, block int) string {
	return fmt.Sprintf("workload={trace: {path: %q, block_size: %d}}", path, block)
}

// TestTraceGenSameDigest is the acceptance test of trace gen: for the
// default scenario (3,000 requests in 1,000 three-turn sessions sharing 16
// system prompts) and every other synthetic scenario shipped, the generated
// trace, replayed in place of the synthetic workload, gives the same digest.
// Two controls show the comparison can fail: one arrival moved by 1 ns, and
// the trace replayed at the Mooncake default of 512 tokens per hash id.
func TestTraceGenSameDigest(t *testing.T) {
	dir := t.TempDir()
	golden, _ := filepath.Glob("../../scenarios/golden/*.yaml")
	files := append([]string{"", "../../scenarios/chunked-prefill-off.yaml"}, golden...)
	for _, sc := range files {
		name := strings.TrimSuffix(filepath.Base(sc), ".yaml")
		if sc == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name+".jsonl")
			args := []string{"trace", "gen", "-o", out}
			if sc != "" {
				args = append(args, sc)
			}
			code, _, stderr := kvsim(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := traceWorkload(out, 16)
			if !strings.Contains(stderr, "block_size: 16}") || !strings.Contains(stderr, "kvsim replay") {
				t.Errorf("stderr lacks the replay snippet:\n%s", stderr)
			}
			syn, tr := digestOf(t, sc), digestOf(t, sc, want)
			if syn != tr {
				t.Errorf("synthetic digest %s, trace replay %s", syn, tr)
			}
			t.Logf("%s: digest %s both ways", name, syn)
			if name != "default" {
				return
			}
			if d := digestOf(t, sc, fmt.Sprintf("workload={trace: {path: %q}}", out)); d == syn {
				t.Error("replayed at 512 tokens per hash id, the digest is still the same")
			}
			moved := filepath.Join(dir, "moved.jsonl")
			moveOneArrival(t, out, moved)
			if d := digestOf(t, sc, traceWorkload(moved, 16)); d == syn {
				t.Error("an arrival moved by 1 ns, the digest is still the same")
			}
		})
	}
}

// moveOneArrival copies a 16-token-block trace, delaying request 1000 by
// 1 ns.
func moveOneArrival(t *testing.T, in, out string) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	src := workload.NewMooncake(f, workload.TraceOptions{TraceBlockSize: 16, EngineBlockSize: 16, TimeScale: 1})
	w := workload.NewMooncakeWriter(&buf, 16)
	var prev *workload.Request
	for {
		r, err := src.Next()
		if prev != nil {
			if prev.ID == 1000 {
				if r == nil || r.Arrival <= prev.Arrival+1 {
					t.Fatal("request 1001 does not leave room")
				}
				prev.Arrival++
			}
			if err := w.Write(prev); err != nil {
				t.Fatal(err)
			}
		}
		if err != nil {
			break
		}
		prev = r
	}
	w.Flush()
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTraceGenErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.jsonl")
	if code, _, stderr := kvsim(t, "trace", "gen", "--set", "workload.synthetic.requests=50", "-o", out); code != exitOK {
		t.Fatal(stderr)
	}
	before, _ := os.ReadFile(out)
	trace := filepath.Join(dir, "trace.yaml")
	os.WriteFile(trace, []byte("workload: {trace: {path: t.jsonl}}\n"), 0o644)
	synth := filepath.Join(dir, "synth.yaml")
	os.WriteFile(synth, []byte("workload: {synthetic: {requests: 5}}\n"), 0o644)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"trace", "gen", "-o", out}, exitBadInput, out + " exists: --force replaces it"},
		{[]string{"trace", "gen"}, exitBadInput, "-o FILE is required"},
		{[]string{"trace", "gen", trace, "-o", filepath.Join(dir, "x.jsonl")}, exitBadInput, trace + ": workload: is a trace, not synthetic"},
		{[]string{"trace", "gen", synth, "-o", synth, "--force"}, exitBadInput, synth + " is the input " + synth + ": -o must name another file"},
		// An output that cannot be written (a path through a file) is a failure, exit 1.
		{[]string{"trace", "gen", "-o", filepath.Join(out, "x.jsonl")}, exitFailed, out + " is a file, not a folder"},
		{[]string{"trace", "gen", "--set", "cluster.workers=0", "-o", filepath.Join(dir, "y.jsonl")}, exitBadInput, "--set: cluster.workers"},
		{[]string{"trace"}, exitBadInput, "name a subcommand"},
		{[]string{"trace", "bogus"}, exitBadInput, `unknown command "bogus" for "kvsim trace"`},
	} {
		code, _, stderr := kvsim(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, stderr, c.code, c.stderr)
		}
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Error("a refused gen changed the existing file")
	}
	if code, _, stderr := kvsim(t, "trace", "gen", "--set", "workload.synthetic.requests=60", "-o", out, "--force"); code != exitOK {
		t.Fatal(stderr)
	}
	if after, _ := os.ReadFile(out); bytes.Count(after, []byte("\n")) != 60 {
		t.Error("--force did not replace the file")
	}
	if got, _ := os.ReadFile(synth); string(got) != "workload: {synthetic: {requests: 5}}\n" {
		t.Errorf("the scenario became %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("files left: %v", entries)
	}
}

const statsTrace = `{"timestamp": 0, "input_length": 40, "output_length": 5, "hash_ids": [1, 2, 3]}
{"timestamp": 500, "input_length": 20, "output_length": 1, "hash_ids": [1, 9]}
{"timestamp": 2500, "input_length": 48, "output_length": 2, "hash_ids": [1, 2, 3]}
{"timestamp": 2600, "input_length": 16, "output_length": 7, "hash_ids": [4]}
`

func statsJSONOf(t *testing.T, args ...string) statsJSON {
	t.Helper()
	code, out, stderr := kvsim(t, append([]string{"trace", "stats", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var s statsJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return s
}

func TestTraceStats(t *testing.T) {
	dir := t.TempDir()
	mc := filepath.Join(dir, "t.trace") // no extension: detected from the contents
	os.WriteFile(mc, []byte(statsTrace), 0o644)
	code, out, stderr := kvsim(t, "trace", "stats", mc, "--trace-block-size", "16", "--bucket", "1s")
	if code != exitOK {
		t.Fatal(stderr)
	}
	for _, want := range []string{
		"source       " + mc + " (mooncake, 16 tokens per hash id)",
		"requests     4\n", "time span    2.6s (first arrival 0s, last 2.6s)", "mean rate    1.538 requests/s",
		"peak         2.00 requests/s: 2 in each 1s from 0s and 2s (tied)\n",
		"sessions     n/a (the mooncake format has no session id)",
		"prefix hits  0.4286 of 16-token blocks (3 of 7), 0.3871 of prompt tokens",
		"input        20   48   48   48   31.0  124", "output       2    7    7    7    3.8   15",
		"arrivals per 1s", "     0s         2   2.00 ########################################\n     1s         0   0.00 \n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	s := statsJSONOf(t, mc, "--trace-block-size", "16", "--block-size", "8", "--format", "mooncake")
	if s.Format != "mooncake" || s.TraceBlockSize != 16 || s.BlockSize != 8 || s.Requests != 4 || s.Blocks != 15 || s.HitBlocks != 7 || s.Sessions != nil {
		t.Errorf("json %+v", s)
	}
	// The default scenario: sessions, and its engine block size or
	// --block-size.
	s = statsJSONOf(t)
	if s.Format != "synthetic" || s.Scenario != "default" || s.Requests != 3000 || s.Sessions == nil || *s.Sessions != 1000 ||
		s.BlockSize != 16 || s.HitRatio < 0.5 {
		t.Errorf("default scenario %+v", s)
	}
	if s = statsJSONOf(t, "../../scenarios/default.yaml", "--block-size", "32"); s.BlockSize != 32 || s.Requests != 3000 {
		t.Errorf("--block-size 32: %+v", s)
	}
	// A scenario's trace, as the scenario reads it.
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte("workload: {trace: {path: t.trace, block_size: 16, time_scale: 0.5, limit: 3}}\n"), 0o644)
	if s = statsJSONOf(t, sc); s.Source != mc || s.Requests != 3 || s.LastArrivalS != 1.25 || s.Scenario != "s" {
		t.Errorf("scenario trace %+v", s)
	}
	// Its envelope too: 0, 250 ms and 1.25 s after time_scale; the first
	// segment plays source [0, 0.5 s) over 1 s, the second from 0.5 s at
	// twice the rate: 1.25 s plays at 1 s + 0.75 s / 2 = 1.375 s.
	env := "workload.envelope=[{for: 1s, rate: 0.5}, {for: 1s, rate: 2}]"
	if s = statsJSONOf(t, sc, "--set", env); s.Requests != 3 || s.LastArrivalS != 1.375 {
		t.Errorf("scenario trace under an envelope %+v", s)
	}
	if _, out, _ := kvsim(t, "trace", "stats", sc, "--set", env); !strings.Contains(out, "time_scale 0.5, limit 3, envelope of 2 segments over 2s)") {
		t.Errorf("stats does not name the envelope:\n%s", out)
	}
	// A synthetic workload under an envelope still counts its sessions.
	if s = statsJSONOf(t, "--set", "workload.envelope=[{for: 1m, rate: 2}]"); s.Requests != 3000 || s.Sessions == nil || *s.Sessions != 1000 {
		t.Errorf("default scenario under an envelope %+v", s)
	}
}

// TestTraceStatsShared: the figures of the shared traces agree with their
// README, the conversation trace's busiest minutes are those from 36:00 and
// 51:00 (247 requests each), and the conversation trace's infinite-cache token hit ratio is
// the bound TestConversationTrace (package sim) holds the G1 ratio under.
func TestTraceStatsShared(t *testing.T) {
	for _, c := range []struct {
		file                string
		requests, out, span int64
		hits                [2]float64
	}{
		{"conversation_trace.jsonl", 12031, 4_122_048, 3537, [2]float64{0.3735, 0.374}},
		{"synthetic_trace.jsonl", 3993, 595_432, 1022, [2]float64{0.65, 0.66}},
		{"azure_code_2023.csv", 8819, 245_896, 3436, [2]float64{0, 0}},
	} {
		s := statsJSONOf(t, tracestest.Path(t, c.file))
		if want := []float64{2160, 3060}; c.file == "conversation_trace.jsonl" && (s.Peak.Requests != 247 || !slices.Equal(s.Peak.StartsS, want)) {
			t.Errorf("%s: peak %+v, want 247 requests in the minutes from 36m0s and 51m0s", c.file, s.Peak)
		}
		if s.Requests != c.requests || s.Output.Total != c.out || int64(math.Round(s.SpanS)) != c.span ||
			s.HitTokenRatio < c.hits[0] || s.HitTokenRatio > c.hits[1] || s.Sessions != nil {
			t.Errorf("%s: %d requests, %d output tokens, span %.0f s, token hit ratio %.4f", c.file,
				s.Requests, s.Output.Total, s.SpanS, s.HitTokenRatio)
		}
	}
}

// TestPeak: the peak names its bucket, every bucket that ties for it, and
// past five tied buckets the first five and how many more.
func TestPeak(t *testing.T) {
	stats := func(starts ...float64) *workload.Stats {
		return &workload.Stats{BucketS: 60, Peak: workload.Peak{Requests: 247, Rate: 247.0 / 60, StartsS: starts}}
	}
	for _, c := range []struct {
		s    *workload.Stats
		want string
	}{
		{stats(780), "4.12 requests/s: 247 in the 1m0s from 13m0s"},
		{stats(2160, 3060), "4.12 requests/s: 247 in each 1m0s from 36m0s and 51m0s (tied)"},
		{stats(0, 60, 120, 180, 240), "4.12 requests/s: 247 in each 1m0s from 0s, 1m0s, 2m0s, 3m0s and 4m0s (tied)"},
		{stats(0, 60, 120, 180, 240, 300, 360), "4.12 requests/s: 247 in each 1m0s from 0s, 1m0s, 2m0s, 3m0s, 4m0s and 2 more (tied)"},
	} {
		if got := peak(c.s); got != c.want {
			t.Errorf("%v: %q, want %q", c.s.Peak.StartsS, got, c.want)
		}
	}
}

const azureTrace = "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
	"2023-11-16 18:17:03.9799600,4808,10\n" +
	"2023-11-16 18:17:04.0319600,3180,8\n" +
	"2023-11-16 18:17:04.0319601,7,100\n" +
	"2023-11-16 18:17:05.5,1025,300\n" +
	"2023-11-16 18:17:05.7,2000,30\n"

// TestTraceConvert: Azure to Mooncake and back replay to the same digest;
// a Mooncake trace with shared prefixes is refused, naming the loss, and
// leaves nothing behind; so is an output that is the input, or a folder,
// even with --force (the input is left as it was).
func TestTraceConvert(t *testing.T) {
	dir := t.TempDir()
	az := filepath.Join(dir, "a.csv")
	os.WriteFile(az, []byte(azureTrace), 0o644)
	mc, back := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.csv")
	if code, _, stderr := kvsim(t, "trace", "convert", az, "-o", mc, "--to", "mooncake"); code != exitOK || !strings.Contains(stderr, "block_size: 512") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, "trace", "convert", mc, "-o", back, "--to", "azure"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	small := []string{"cluster.workers=2"}
	want := digestOf(t, "", append(small, fmt.Sprintf("workload={trace: {path: %q}}", az))...)
	for _, f := range []string{mc, back} {
		if got := digestOf(t, "", append(small, fmt.Sprintf("workload={trace: {path: %q}}", f))...); got != want {
			t.Errorf("%s replays to %s, the Azure original to %s", filepath.Base(f), got, want)
		}
	}
	shared := filepath.Join(dir, "shared.jsonl")
	os.WriteFile(shared, []byte(statsTrace), 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(statsTrace+`{"timestamp": 3000, "input_length": 16, "output_length": 0, "hash_ids": [5]}`+"\n"), 0o644)
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{shared, "-o", filepath.Join(dir, "x.csv"), "--to", "azure"},
			shared + ": cannot convert to azure: an Azure CSV would lose prefix sharing: 2 of 4 requests start with the same block as an earlier one (first: request 1)"},
		{[]string{bad, "-o", filepath.Join(dir, "x.csv"), "--to", "azure"}, bad + ":5: output_length: must be at least 1, got 0"},
		{[]string{az, "-o", mc, "--to", "mooncake"}, mc + " exists: --force replaces it"},
		{[]string{mc, "-o", filepath.Join(dir, ".", "a.jsonl"), "--to", "azure", "--force"}, "is the input " + mc + ": -o must name another file"},
		{[]string{az, "-o", dir, "--to", "mooncake", "--force"}, dir + " is a folder: -o names the file to write"},
		{[]string{az, "-o", filepath.Join(dir, "x.csv"), "--to", "azure"}, "is already in the azure format"},
		{[]string{az, "-o", filepath.Join(dir, "x.csv"), "--to", "parquet"}, `--to "parquet": want mooncake or azure`},
		{[]string{az, "-o", filepath.Join(dir, "x.csv"), "--to", "mooncake", "--from", "csv"}, `--from "csv": want mooncake, azure or otel`},
		{[]string{filepath.Join(dir, "none.csv"), "-o", filepath.Join(dir, "x.jsonl"), "--to", "mooncake"}, "none.csv: cannot open trace"},
		{[]string{"../../scenarios/default.yaml", "-o", filepath.Join(dir, "x.jsonl"), "--to", "mooncake"}, "is a scenario: trace gen"},
	} {
		code, _, stderr := kvsim(t, append([]string{"trace", "convert"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr, c.stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 {
		t.Errorf("files left: %v", entries)
	}
}

func TestTraceStatsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1,1\n2023-11-16 18:17:04,x,1\n"), 0o644)
	odd := filepath.Join(dir, "odd.txt")
	os.WriteFile(odd, []byte("hello\n"), 0o644)
	span := filepath.Join(dir, "span.jsonl") // arrivals at 0 and 10 s
	os.WriteFile(span, []byte(`{"timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [1]}`+"\n"+
		`{"timestamp": 10000, "input_length": 16, "output_length": 1, "hash_ids": [2]}`+"\n"), 0o644)
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{bad}, bad + `:3: ContextTokens: want an integer from 1 to 16777216, got "x"`},
		{[]string{odd}, "odd.txt: cannot tell its format"},
		{[]string{odd, "--format", "mooncake"}, odd + ":1: bad JSON"},
		{[]string{filepath.Join(dir, "none.jsonl")}, "none.jsonl: cannot open trace"},
		{[]string{"--trace-block-size", "16"}, "--trace-block-size is for trace files"},
		{[]string{bad, "--set", "seed=1"}, "--set is for scenarios"},
		{[]string{bad, "--block-size", "0"}, "must be at least 1"},
		{[]string{"--set", "workload.synthetic.requests=0"}, "--set: workload.synthetic.requests: must be at least 1"},
		// 10 s in 1 µs buckets: 10,000,001 lines; 1.000001 ms makes 10,000
		{[]string{span, "--bucket", "1us"}, "--bucket 1µs: 10000001 buckets to the last arrival at 10s, more than the 10000 stats prints; give at least 1.000001ms"},
	} {
		code, _, stderr := kvsim(t, append([]string{"trace", "stats"}, c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr, c.stderr)
		}
	}
}

// TestTraceRecordErrors: a trace record with a key no record has, a value
// of the wrong kind or a value under no column is bad input (exit 2), named
// by file, line and key in the trace's terms, in stats and in a run, which
// writes nothing. (A run names the scenario key workload.trace where the
// error is the line's rather than a field's.)
func TestTraceRecordErrors(t *testing.T) {
	dir := t.TempDir()
	good := `{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}` + "\n"
	for _, c := range []struct{ name, body, line, want string }{
		{"typo.jsonl", good + `{"timestamp": 1, "input_lenght": 100, "output_length": 10, "hash_ids": [1]}` + "\n",
			":2: ", "input_lenght: unknown key; a record has timestamp, input_length, output_length and hash_ids"},
		{"negative.jsonl", good + good + `{"timestamp": 2, "input_length": 100, "output_length": 10, "hash_ids": [-1]}` + "\n",
			":3: ", "hash_ids[0]: -1 is not a non-negative integer"},
		{"extra.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,100,3\n2023-11-16 18:17:04,100,3,7\n",
			":3: ", "4 fields, but the header has 3 columns"},
	} {
		path := filepath.Join(dir, c.name)
		os.WriteFile(path, []byte(c.body), 0o644)
		out := filepath.Join(dir, "out-"+c.name)
		for _, args := range [][]string{{"trace", "stats", path}, {"replay", "-q", "-o", out, "--set", traceWorkload(path, 512)}} {
			code, stdout, stderr := kvsim(t, args...)
			if code != exitBadInput || !strings.Contains(stderr, path+c.line) || !strings.HasSuffix(stderr, c.want+"\n") || stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q", args, code, stdout, stderr, exitBadInput, path+c.line+c.want)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the failed run left %s", c.name, out)
		}
	}
}

// otelTrace is three llm_request spans as vLLM writes them, out of order,
// two on one line; the last line also holds a span of another name.
const otelTrace = `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
	`{"name":"llm_request","startTimeUnixNano":"1769021452278127360","attributes":[{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"48"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"3"}},{"key":"gen_ai.latency.time_to_first_token","value":{"doubleValue":0.05}}]},` +
	`{"name":"llm_request","startTimeUnixNano":"1769021450278127360","attributes":[{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"20"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"5"}}]}]}]}]}
{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","startTimeUnixNano":"1769021450778127360","attributes":[{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"16"}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"1"}}]},{"name":"http","startTimeUnixNano":"1"}]}]}]}
`

// TestTraceOtel: stats tells an otel file by its contents (its name says
// .json, as a Mooncake trace's may), a scenario reads it the same, convert
// writes it as a Mooncake trace that replays to the same digest, and its
// errors name the file, the line and the attribute (exit 2).
func TestTraceOtel(t *testing.T) {
	dir := t.TempDir()
	ot := filepath.Join(dir, "traces.json")
	os.WriteFile(ot, []byte(otelTrace), 0o644)
	code, out, stderr := kvsim(t, "trace", "stats", ot)
	if code != exitOK {
		t.Fatal(stderr)
	}
	for _, want := range []string{"source       " + ot + " (otel)", "requests     3\n", "time span    2s (first arrival 0s, last 2s)",
		"sessions     n/a (the otel format has no session id)", "input        20   48   48   48   28.0  84"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte("workload: {trace: {path: traces.json, shared_prefix: 16}}\ncluster: {workers: 2}\n"), 0o644)
	if s := statsJSONOf(t, sc); s.Format != "otel" || s.Requests != 3 || s.HitBlocks != 2 || s.LastArrivalS != 2 {
		t.Errorf("scenario of an otel trace: %+v", s)
	}
	if p, err := study.Prepare(sc, nil, 1, false); err != nil {
		t.Fatal(err)
	} else if n, err := p.ReadWorkload(); n != 3 || err != nil {
		t.Errorf("progress total %d, want 3", n)
	}
	mc := filepath.Join(dir, "t.jsonl")
	if code, _, stderr := kvsim(t, "trace", "convert", ot, "-o", mc, "--to", "mooncake", "--trace-block-size", "16"); code != exitOK ||
		!strings.Contains(stderr, "wrote "+mc+": 3 requests") || !strings.Contains(stderr, "measured latencies are not carried over") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	small := []string{"cluster.workers=2"}
	want := digestOf(t, "", append(small, fmt.Sprintf("workload={trace: {path: %q, format: otel}}", ot))...)
	if got := digestOf(t, "", append(small, traceWorkload(mc, 16))...); got != want {
		t.Errorf("converted trace replays to %s, the otel original to %s", got, want)
	}
	bad := filepath.Join(dir, "bad.json")
	lines := strings.Split(otelTrace, "\n")
	os.WriteFile(bad, []byte(lines[0]+"\n\n"+strings.Replace(lines[1], `"gen_ai.usage.prompt_tokens"`, `"prompt"`, 1)+"\n"), 0o644)
	short := filepath.Join(dir, "short.json")
	os.WriteFile(short, []byte(otelTrace[:len(otelTrace)-30]), 0o644)
	empty := filepath.Join(dir, "empty.otel")
	os.WriteFile(empty, []byte(`{"resourceSpans":[]}`+"\n"), 0o644)
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"trace", "stats", bad}, bad + ":3: gen_ai.usage.prompt_tokens: missing"},
		{[]string{"trace", "stats", short}, short + ":2: bad JSON"},
		{[]string{"trace", "stats", empty}, empty + ": no span named llm_request"},
		{[]string{"replay", "-o", filepath.Join(dir, "out"), "--set", fmt.Sprintf("workload={trace: {path: %q}}", bad)}, bad + ":3: gen_ai.usage.prompt_tokens: missing"},
		{[]string{"replay", "-o", filepath.Join(dir, "out"), "--set", fmt.Sprintf("workload={trace: {path: %q, format: otel}}", empty)}, empty + ": workload.trace: no span named llm_request"},
		{[]string{"replay", "-o", filepath.Join(dir, "out"), "--set", fmt.Sprintf("workload={trace: {path: %q, shared_prefix: 16}}", mc)},
			"--set: workload.trace.shared_prefix: applies only to format otel"},
	} {
		code, _, stderr := kvsim(t, c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr, c.stderr)
		}
	}
}

// TestTraceStatsVLLM: stats on the two measured vLLM runs, told otel by
// their contents.
func TestTraceStatsVLLM(t *testing.T) {
	for _, c := range []struct {
		run            string
		requests, span int64
		in, out        int64
	}{
		{"jan21-llama7b-train-1", 282, 652, 534_472, 122_941},
		{"jan20-codellama-train-1", 280, 2202, 1_097_645, 202_737},
	} {
		s := statsJSONOf(t, tracestest.VLLMPath(t, c.run+"/traces.json"))
		if s.Format != "otel" || s.Requests != c.requests || int64(math.Round(s.SpanS)) != c.span || s.FirstArrivalS != 0 ||
			s.Input.Total != c.in || s.Output.Total != c.out || s.HitBlocks != 0 {
			t.Errorf("%s: %+v", c.run, s)
		}
	}
}
