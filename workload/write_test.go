package workload

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

func TestFormatMillis(t *testing.T) {
	for _, c := range []struct {
		t    des.Time
		want string
	}{
		{0, "0"}, {1, "0.000001"}, {1500 * des.Millisecond, "1500"}, {27482123456, "27482.123456"},
		{100 * des.Millisecond / 3, "33.333333"}, {des.Time(1) << 50, "1125899906.842624"},
	} {
		got, err := FormatMillis(c.t)
		if err != nil || got != c.want {
			t.Errorf("FormatMillis(%d) = %q, %v; want %q", c.t, got, err, c.want)
		}
	}
	if _, err := FormatMillis(-1); err == nil {
		t.Error("negative arrival accepted")
	}
	// Every arrival reads back exactly through the Mooncake reader's
	// arithmetic; below 2^51 ns as the exact decimal, above as a nearby
	// float, or it is refused.
	rng := rand.New(rand.NewPCG(1, 2))
	refused := 0
	for i := range 200000 {
		bits := 1 + i%62
		at := des.Time(rng.Int64N(int64(1) << bits))
		s, err := FormatMillis(at)
		if err != nil {
			if bits <= 52 {
				t.Fatalf("%d ns refused: %v", at, err)
			}
			refused++
			continue
		}
		x, perr := strconv.ParseFloat(s, 64)
		if perr != nil || !readsBack(x, at) {
			t.Fatalf("%d ns written as %q does not read back", at, s)
		}
		if _, frac, _ := strings.Cut(s, "."); bits <= 51 && len(frac) > 6 {
			t.Fatalf("%d ns written as %q, not as the exact decimal", at, s)
		}
	}
	t.Logf("%d of 200000 arrivals (all above 2^52 ns) refused", refused)
}

// isomorphic reports whether two request streams are the same workload:
// equal arrivals and lengths, and chains whose hashes map one to one, so
// that two blocks are equal in one exactly when they are in the other.
func isomorphic(t *testing.T, a, b []*Request) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d requests, then %d", len(a), len(b))
	}
	ab, ba := map[uint64]uint64{}, map[uint64]uint64{}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Arrival != y.Arrival || x.InputTokens != y.InputTokens || x.OutputTokens != y.OutputTokens || x.Blocks.Len() != y.Blocks.Len() {
			t.Fatalf("request %d: %d %v %d %d %d blocks, then %d %v %d %d %d blocks", i,
				x.ID, x.Arrival, x.InputTokens, x.OutputTokens, x.Blocks.Len(), y.ID, y.Arrival, y.InputTokens, y.OutputTokens, y.Blocks.Len())
		}
		xh, yh := hashes(x), hashes(y)
		for k := range xh {
			h, g := xh[k], yh[k]
			if m, ok := ab[h]; ok && m != g {
				t.Fatalf("request %d block %d: equal blocks before, different after", i, k)
			}
			if m, ok := ba[g]; ok && m != h {
				t.Fatalf("request %d block %d: different blocks before, equal after", i, k)
			}
			ab[h], ba[g] = g, h
		}
	}
}

func writeMooncake(t *testing.T, reqs []*Request, block int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewMooncakeWriter(&buf, block)
	for _, r := range reqs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMooncakeWriterSynthetic: a synthetic workload with shared prefixes
// and multi-turn sessions, written as a Mooncake trace of engine-block-size
// hash ids, reads back as the same workload, with the same prefix hits.
func TestMooncakeWriterSynthetic(t *testing.T) {
	cfg := synth
	cfg.Requests = 1500
	cfg.Rate = 5000 // sub-millisecond gaps: arrivals need the nanoseconds
	orig := readAll(t, NewGenerator(cfg, des.NewRNG(3)))
	data := writeMooncake(t, orig, 16)
	back := readAll(t, NewMooncake(bytes.NewReader(data), TraceOptions{TraceBlockSize: 16, EngineBlockSize: 16, TimeScale: 1}))
	isomorphic(t, orig, back)
	sub := 0
	for _, r := range orig {
		if r.Arrival%des.Millisecond != 0 {
			sub++
		}
	}
	if sub < len(orig)/2 {
		t.Errorf("only %d arrivals off the millisecond: the test does not exercise nanoseconds", sub)
	}
	a, b := NewStatsBuilder(16), NewStatsBuilder(16)
	for i := range orig {
		a.Add(orig[i])
		b.Add(back[i])
	}
	sa, sb := a.Stats(0), b.Stats(0)
	if sa.HitBlocks != sb.HitBlocks || sa.HitBlocks == 0 || sa.Blocks != sb.Blocks {
		t.Errorf("hits %d/%d, then %d/%d", sa.HitBlocks, sa.Blocks, sb.HitBlocks, sb.Blocks)
	}
	// Ids are dense from 0, and a prompt with a partial last block has
	// one id more than full blocks.
	first := strings.SplitN(string(data), "\n", 2)[0]
	if !strings.HasPrefix(first, `{"timestamp": 0, "input_length": `) || !strings.Contains(first, `"hash_ids": [0, 1, 2, `) {
		t.Errorf("first line %s", first)
	}
	// Written at the engine block size, the trace also replays at another
	// engine block size: 32-token blocks pair the 16-token ids.
	back32 := readAll(t, NewMooncake(bytes.NewReader(data), TraceOptions{TraceBlockSize: 16, EngineBlockSize: 32, TimeScale: 1}))
	cfg.BlockSize = 32
	orig32 := readAll(t, NewGenerator(cfg, des.NewRNG(3)))
	for i := range orig32 {
		if orig32[i].Blocks.Len() != back32[i].Blocks.Len() {
			t.Fatalf("request %d: %d blocks at 32, %d replayed", i, orig32[i].Blocks.Len(), back32[i].Blocks.Len())
		}
	}
}

func TestMooncakeWriterRefuses(t *testing.T) {
	var buf bytes.Buffer
	w := NewMooncakeWriter(&buf, 16)
	if err := w.Write(&Request{InputTokens: 40, OutputTokens: 1, Blocks: block.Hashed([]uint64{1})}); err == nil || !strings.Contains(err.Error(), "want 2 at block size 16") {
		t.Errorf("wrong chain length: %v", err)
	}
	if err := w.Write(&Request{Arrival: 5, InputTokens: 4, OutputTokens: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Request{Arrival: 4, InputTokens: 4, OutputTokens: 1}); err == nil || !strings.Contains(err.Error(), "before the previous") {
		t.Errorf("backwards: %v", err)
	}
	w.Flush()
	if got := buf.String(); got != `{"timestamp": 0.000005, "input_length": 4, "output_length": 1, "hash_ids": [0]}`+"\n" {
		t.Errorf("wrote %q", got)
	}
}

const azureSample = "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
	"2023-11-16 18:17:03.9799600,4808,10\n" +
	"2023-11-16 18:17:04.0319600,32,8\n" +
	"2023-11-16 18:17:04.0319601,7,1\n" +
	"2023-11-16 18:17:04.5,1025,300\n"

// TestAzureMooncakeRoundTrip: Azure to Mooncake keeps every request and its
// unshared prompt; back to Azure, nothing is lost and the rows read the
// same.
func TestAzureMooncakeRoundTrip(t *testing.T) {
	az := readAll(t, NewAzure(strings.NewReader(azureSample), TraceOptions{EngineBlockSize: 512, TimeScale: 1}))
	mc := writeMooncake(t, az, 512)
	for _, eng := range []int{1, 16, 512} {
		a := readAll(t, NewAzure(strings.NewReader(azureSample), TraceOptions{EngineBlockSize: eng, TimeScale: 1}))
		m := readAll(t, NewMooncake(bytes.NewReader(mc), TraceOptions{TraceBlockSize: 512, EngineBlockSize: eng, TimeScale: 1}))
		isomorphic(t, a, m)
	}
	loss := NewAzureLoss()
	var csv bytes.Buffer
	w := NewAzureWriter(&csv)
	for _, r := range readAll(t, NewMooncake(bytes.NewReader(mc), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 1, TimeScale: 1})) {
		loss.Add(r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := loss.Err(); err != nil {
		t.Fatalf("Azure-born trace is lossy: %v", err)
	}
	again := readAll(t, NewAzure(bytes.NewReader(csv.Bytes()), TraceOptions{EngineBlockSize: 16, TimeScale: 1}))
	isomorphic(t, readAll(t, NewAzure(strings.NewReader(azureSample), TraceOptions{EngineBlockSize: 16, TimeScale: 1})), again)
	if !strings.HasPrefix(csv.String(), "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:00.0000000,4808,10\n2023-11-16 00:00:00.0520000,32,8\n2023-11-16 00:00:00.0520001,7,1\n") {
		t.Errorf("csv:\n%s", csv.String())
	}
}

func TestAzureLoss(t *testing.T) {
	loss := func(in string) error {
		l := NewAzureLoss()
		for _, r := range readAll(t, NewMooncake(strings.NewReader(in), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 1, TimeScale: 1})) {
			l.Add(r)
		}
		return l.Err()
	}
	line := func(ts string, ids string) string {
		return `{"timestamp": ` + ts + `, "input_length": 600, "output_length": 1, "hash_ids": [` + ids + `]}` + "\n"
	}
	if err := loss(line("0", "1, 2") + line("1.5", "3, 1") + line("2", "2, 1")); err != nil {
		t.Errorf("unshared prompts: %v", err)
	}
	err := loss(line("7", "1, 2") + line("8", "3, 4") + line("9", "1, 5") + line("9.00005", "6, 7"))
	for _, want := range []string{"prefix sharing: 1 of 4 requests", "first: request 2", "the first request arrives at 7ms",
		"exact arrivals: 1 arrivals are not a whole number of 100 ns after the first (first: request 3)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lossy trace: %v; want %q", err, want)
		}
	}
}

func TestStats(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 40, "output_length": 5, "hash_ids": [1, 2, 3]}
{"timestamp": 500, "input_length": 20, "output_length": 1, "hash_ids": [1, 9]}
{"timestamp": 2500, "input_length": 48, "output_length": 2, "hash_ids": [1, 2, 3]}
{"timestamp": 2600, "input_length": 16, "output_length": 7, "hash_ids": [4]}
`
	b := NewStatsBuilder(16)
	for _, r := range readAll(t, NewMooncake(strings.NewReader(in), TraceOptions{TraceBlockSize: 16, EngineBlockSize: 16, TimeScale: 1})) {
		b.Add(r)
	}
	s := b.Stats(des.Second)
	// Blocks: 2 + 1 + 3 + 1 = 7; hits: request 1's first, request 2's
	// first two.
	if s.Requests != 4 || s.Blocks != 7 || s.HitBlocks != 3 || s.HitTokenRatio != 48.0/124 {
		t.Errorf("%+v", s)
	}
	if s.Input != (Lengths{P50: 20, P90: 48, P99: 48, Max: 48, Mean: 31, Total: 124}) || s.Output.P50 != 2 || s.Output.Max != 7 {
		t.Errorf("lengths %+v %+v", s.Input, s.Output)
	}
	if s.SpanS != 2.6 || s.MeanRate != 4/s.SpanS || len(s.Arrivals) != 3 || s.Arrivals[0].Requests != 2 || s.Arrivals[1].Requests != 0 ||
		s.Arrivals[2] != (Bucket{StartS: 2, Requests: 2, Rate: 2}) {
		t.Errorf("arrivals %+v", s)
	}
	// Buckets 0s and 2s tie for the peak, 2 requests each.
	if p := s.Peak; p.Requests != 2 || p.Rate != 2 || !slices.Equal(p.StartsS, []float64{0, 2}) {
		t.Errorf("peak %+v", p)
	}
	if s := NewStatsBuilder(16).Stats(0); s.Requests != 0 || s.Arrivals != nil {
		t.Errorf("empty %+v", s)
	}
	for _, c := range []struct{ last, want des.Time }{
		{0, des.Second}, {59 * des.Second, des.Second}, {75 * des.Second, 2 * des.Second},
		{3537 * des.Second, des.Minute}, {100 * 24 * 60 * des.Minute, 2 * 24 * 60 * des.Minute},
	} {
		if got := AutoBucket(c.last); got != c.want {
			t.Errorf("AutoBucket(%v) = %v, want %v", c.last, got, c.want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	for _, c := range []struct {
		name, head, want string
	}{
		{"a.jsonl", "", "mooncake"}, {"a.JSON", "x", "mooncake"}, {"a.csv", "{", "azure"},
		{"trace", "\n  {\"timestamp\": 1", "mooncake"}, {"trace", "\ufeffTIMESTAMP,ContextTokens\n", "azure"},
		{"trace", "x,GeneratedTokens\n", "azure"}, {"s.yaml", "name: x\n", ""}, {"trace", "", ""},
	} {
		if got := DetectFormat(c.name, []byte(c.head)); string(got) != c.want {
			t.Errorf("DetectFormat(%q, %q) = %q, want %q", c.name, c.head, got, c.want)
		}
	}
}
