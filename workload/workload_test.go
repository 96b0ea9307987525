package workload

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

func TestRechunkSharesEqualPrefixes(t *testing.T) {
	// Trace blocks of 512 tokens, engine blocks of 16: 32 engine blocks per
	// trace block. Prompts of 1000 tokens have 62 full engine blocks.
	a := rechunk([]uint64{7, 8}, 512, 16, 1000)
	b := rechunk([]uint64{7, 9}, 512, 16, 1000)
	if len(a) != 62 || len(b) != 62 {
		t.Fatalf("len %d,%d want 62", len(a), len(b))
	}
	if !slices.Equal(a[:32], b[:32]) {
		t.Error("equal first trace block gave different first 32 engine blocks")
	}
	if a[32] == b[32] {
		t.Error("different second trace block gave the same engine block 32")
	}
	if slices.Contains(a, 0) {
		t.Error("zero hash")
	}
	// A shorter prompt over the same ids is a prefix of the longer chain.
	if c := rechunk([]uint64{7, 8}, 512, 16, 600); !slices.Equal(c, a[:37]) {
		t.Error("600-token prompt is not a prefix of the 1000-token chain")
	}
}

func TestRechunkStraddling(t *testing.T) {
	// Trace blocks of 10 tokens, engine blocks of 4: engine block 2 covers
	// tokens 8..11, which straddle trace blocks 0 and 1, so it must differ
	// when only trace block 1 differs, while blocks 0 and 1 stay equal.
	a := rechunk([]uint64{1, 2, 3}, 10, 4, 30)
	b := rechunk([]uint64{1, 5, 3}, 10, 4, 30)
	if len(a) != 7 {
		t.Fatalf("len %d want 7", len(a))
	}
	if a[0] != b[0] || a[1] != b[1] || a[2] == b[2] {
		t.Errorf("straddling block: a=%x b=%x", a[:3], b[:3])
	}
}

func readAll(t *testing.T, s Source) []*Request {
	t.Helper()
	var out []*Request
	for {
		r, err := s.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

var opt = TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}

func TestMooncake(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}

{"timestamp": 1500, "input_length": 16, "output_length": 1, "hash_ids": [1]}
`
	got := readAll(t, NewMooncake(strings.NewReader(in), opt))
	if len(got) != 2 {
		t.Fatalf("%d requests want 2", len(got))
	}
	r := got[1]
	if r.ID != 1 || r.Arrival != 1500*des.Millisecond || r.InputTokens != 16 || r.OutputTokens != 1 || r.Blocks.Len() != 1 {
		t.Errorf("second request %+v", r)
	}
	if hashes(got[0])[0] != hashes(r)[0] {
		t.Error("equal first hash id, different first block")
	}
	half := opt
	half.TimeScale, half.Limit = 0.5, 1
	got = readAll(t, NewMooncake(strings.NewReader(in), half))
	if len(got) != 1 {
		t.Errorf("limit 1 gave %d", len(got))
	}
	got = readAll(t, NewMooncake(strings.NewReader(in), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 0.5}))
	if got[1].Arrival != 750*des.Millisecond {
		t.Errorf("time_scale 0.5: arrival %v want 750ms", got[1].Arrival)
	}
}

func TestMooncakeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"timestamp": 0, "input_length": 1`, "line 1: bad JSON"},
		{"\n" + `{"input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 2: timestamp: missing"},
		{`{"timestamp": 0, "output_length": 1, "hash_ids": [1]}`, "input_length: missing"},
		{`{"timestamp": 0, "input_length": 1, "hash_ids": [1]}`, "output_length: missing"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1}`, "hash_ids: missing"},
		{`{"timestamp": 0, "input_length": -3, "output_length": 1, "hash_ids": [1]}`, "input_length: must be at least 1"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 0, "hash_ids": [1]}`, "output_length: must be at least 1"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": []}`, "hash_ids: empty"},
		{`{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1]}`, "input_length: 513 exceeds block_size 512 x 1 hash_ids"},
		{`{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp: negative"},
		{`{"timestamp": 1e20, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp: arrival 1e+20 ms"},
		// In int64 nanoseconds, but no room left for the run after it.
		{`{"timestamp": 9223372036854, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 1: timestamp: arrival 9.223372036854e+12 ms x time_scale 1 is outside virtual time (0 to about 146 years: an arrival leaves room for the run after it)"},
		{`{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [1]}
{"timestamp": 4, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 2: timestamp: goes backwards"},
		// Keys a record does not have, in any spelling, and keys given twice.
		{`{"timestamp": 0, "input_lenght": 1, "output_length": 1, "hash_ids": [1]}`,
			"line 1: input_lenght: unknown key; a record has timestamp, input_length, output_length and hash_ids"},
		{`{"Timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 1: Timestamp: unknown key"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "session": {"id": 3}}`, "line 1: session: unknown key"},
		{`{"timestamp": 0, "timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 1: timestamp: key given twice"},
		// Values of the wrong kind, in the trace's terms.
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [-1]}`, "line 1: hash_ids[0]: -1 is not a non-negative integer"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, 2.5]}`, "line 1: hash_ids[1]: 2.5 is not a non-negative integer"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551616]}`,
			"line 1: hash_ids[0]: 18446744073709551616 is out of range: a hash id is a 64-bit unsigned integer"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, null]}`, "line 1: hash_ids[1]: want a non-negative integer, got null"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": "1 2"}`, `line 1: hash_ids: want a list of non-negative integers, got "1 2"`},
		{`{"timestamp": "0", "input_length": 1, "output_length": 1, "hash_ids": [1]}`, `line 1: timestamp: want a number of milliseconds, got "0"`},
		{`{"timestamp": null, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 1: timestamp: want a number of milliseconds, got null"},
		{`{"timestamp": 1e400, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "line 1: timestamp: 1e400 is out of range"},
		{`{"timestamp": 0, "input_length": 1.5, "output_length": 1, "hash_ids": [1]}`, "line 1: input_length: want an integer, got 1.5"},
		{`{"timestamp": 0, "input_length": 1, "output_length": [1], "hash_ids": [1]}`, "line 1: output_length: want an integer, got a list"},
		{`{"timestamp": 0, "input_length": 9223372036854775808, "output_length": 1, "hash_ids": [1]}`,
			"line 1: input_length: 9223372036854775808 is out of range"},
		{`[{"timestamp": 0}]`, "line 1: want a JSON object of timestamp, input_length, output_length and hash_ids, got a list"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]} {}`, "line 1: bad JSON: more after the record's closing brace"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1`, "line 1: hash_ids[1]: bad JSON: the line ends inside the record"},
	} {
		m := NewMooncake(strings.NewReader(c.in), opt)
		var err error
		for err == nil {
			_, err = m.Next()
		}
		var pe *ParseError
		if err == io.EOF || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
		if msg := fmt.Sprint(err); strings.Contains(msg, "Go ") || strings.Contains(msg, "int64") || strings.Contains(msg, "mooncakeRecord") {
			t.Errorf("%q: %v speaks of Go, not of the trace", c.in, err)
		}
		sameReads(t, NewMooncake(strings.NewReader(c.in), opt), mooncakeOracle{NewMooncake(strings.NewReader(c.in), opt)})
	}
}

func TestAzure(t *testing.T) {
	in := "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2023-11-16 18:17:03.9799600,4808,10\n" +
		"2023-11-16 18:17:04.0319600,32,8\n"
	got := readAll(t, NewAzure(strings.NewReader(in), opt))
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	if got[1].Arrival != 52*des.Millisecond || got[1].InputTokens != 32 || got[1].OutputTokens != 8 || got[1].Blocks.Len() != 2 {
		t.Errorf("second request %+v", got[1])
	}
	if got[0].Blocks.Len() != 300 || hashes(got[0])[0] == hashes(got[1])[0] {
		t.Error("azure prompts must not share blocks")
	}
	// Columns of other names are ignored.
	if got := readAll(t, NewAzure(strings.NewReader("Note,GeneratedTokens,TIMESTAMP,ContextTokens\nx,3,2023-11-16 18:17:03,100\n"), opt)); len(got) != 1 || got[0].InputTokens != 100 {
		t.Errorf("with a column of another name: %+v", got)
	}
	for _, c := range []struct{ in, want string }{
		{"", "line 1: empty file"},
		{"TIMESTAMP,Context\n", "line 1: ContextTokens: column missing"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16,1,1\n", "line 2: TIMESTAMP: want"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,x,1\n", "line 2: ContextTokens"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1,0\n", "line 2: GeneratedTokens"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1,1\n2023-11-16 18:17:03.8,1,1\n", "line 3: TIMESTAMP: goes backwards"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1\n", "line 2: GeneratedTokens: missing"},
		// A misspelt column is a missing one, the header shown; a column
		// given twice and a row with a value under no column are refused.
		{"TIMESTAMP,ContextToken,GeneratedTokens\n", "line 1: ContextTokens: column missing from header TIMESTAMP,ContextToken,GeneratedTokens"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n", "line 1: ContextTokens: column given twice (columns 2 and 4)"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1,1\n2023-11-16 18:17:04,1,1,7\n", "line 3: 4 fields, but the header has 3 columns"},
	} {
		a := NewAzure(strings.NewReader(c.in), opt)
		var err error
		for err == nil {
			_, err = a.Next()
		}
		if err == io.EOF || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

var synth = Synthetic{
	Requests: 3000, Rate: 50, Arrival: ArrivalPoisson, InputMean: 1024, InputSigma: 0.5,
	OutputMean: 128, OutputSigma: 0.5, PrefixGroups: 4, SharedPrefix: 512, Turns: 3,
	ThinkTime: 5 * des.Second, BlockSize: 16,
}

func TestSyntheticShape(t *testing.T) {
	got := readAll(t, NewGenerator(synth, des.NewRNG(7)))
	if len(got) != 3000 {
		t.Fatalf("%d requests want 3000", len(got))
	}
	var inSum float64
	for i, r := range got {
		if r.ID != int64(i) || (i > 0 && r.Arrival < got[i-1].Arrival) {
			t.Fatalf("request %d: id %d arrival %v after %v", i, r.ID, r.Arrival, got[i-1].Arrival)
		}
		if r.Blocks.Len() != r.InputTokens/16 {
			t.Fatalf("request %d: %d blocks for %d tokens", i, r.Blocks.Len(), r.InputTokens)
		}
		inSum += float64(r.InputTokens)
	}
	// 1000 sessions of 3 turns: prompts average about 1024, 2176 and 3328
	// tokens (each turn adds the last answer, 128, and a new message, 1024).
	if mean := inSum / 3000; mean < 2000 || mean > 2350 {
		t.Errorf("mean prompt %.0f, want about 2176", mean)
	}
	// Sessions start at 50/3 per second; a session's turns come 5 s and 10 s
	// (mean) after its start, so by time T about 50*T - (50/3)*(5+10) = 50*T -
	// 250 requests have arrived: request 1500 at about 35 s.
	if mid := got[1499].Arrival; mid < 30*des.Second || mid > 40*des.Second {
		t.Errorf("request 1500 arrived at %v, want about 35s", mid)
	}
	// Some request's chain extends an earlier one (a follow-up turn), and
	// requests of one group share their first 32 blocks (512 tokens).
	extends, shares := false, false
	hs := make([][]uint64, 200)
	for i, r := range got[:200] {
		hs[i] = hashes(r)
	}
	for i, r := range hs[1:200] {
		for _, p := range hs[:i+1] {
			n := min(len(p), len(r))
			if n > 32 && len(p) < len(r) && slices.Equal(p, r[:len(p)]) {
				extends = true
			}
			if n >= 32 && slices.Equal(p[:32], r[:32]) {
				shares = true
			}
		}
	}
	if !extends || !shares {
		t.Errorf("follow-up turn extends a prompt: %v; group prefix shared: %v", extends, shares)
	}
}

// TestSyntheticChainRule: with one turn a session, request i is session
// i's only turn. Its prompt's first min(64, prompt)/16 blocks are the
// prefix of one of the 4 groups, g: block k has the parent's hash, the
// content Mix(g ^ 0x5bd1e9955bd1e995) and the sub k (block.ChainHash);
// the blocks after are its own: content Mix(i<<20 ^ 0x27d4eb2f165667c5)
// (turn 0), sub k.
func TestSyntheticChainRule(t *testing.T) {
	cfg := synth
	cfg.Requests, cfg.Turns, cfg.SharedPrefix, cfg.InputMean = 200, 1, 64, 100
	groups := 0
	for i, r := range readAll(t, NewGenerator(cfg, des.NewRNG(3))) {
		got := hashes(r)
		shared := min(64, r.InputTokens) / 16
		var want []uint64
		for g := range uint64(4) {
			var h uint64
			want = want[:0]
			for k := range len(got) {
				content := block.Mix(uint64(i)<<20 ^ 0x27d4eb2f165667c5)
				if k < shared {
					content = block.Mix(g ^ 0x5bd1e9955bd1e995)
				}
				h = block.ChainHash(h, content, uint64(k))
				want = append(want, h)
			}
			if slices.Equal(got, want) {
				groups |= 1 << g
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("request %d (%d tokens): %x, no group's prefix then its own blocks", i, r.InputTokens, got)
		}
	}
	if groups != 0b1111 {
		t.Errorf("groups met %04b, want all four", groups)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	a := readAll(t, NewGenerator(synth, des.NewRNG(7)))
	b := readAll(t, NewGenerator(synth, des.NewRNG(7)))
	c := readAll(t, NewGenerator(synth, des.NewRNG(8)))
	same := func(x, y []*Request) bool {
		for i := range x {
			if x[i].Arrival != y[i].Arrival || x[i].InputTokens != y[i].InputTokens ||
				x[i].OutputTokens != y[i].OutputTokens || !slices.Equal(hashes(x[i]), hashes(y[i])) {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("same seed, different requests")
	}
	if same(a, c) {
		t.Error("different seed, same requests")
	}
}

func TestSyntheticConstantSingleTurn(t *testing.T) {
	cfg := Synthetic{Requests: 4, Rate: 10, Arrival: ArrivalConstant, InputMean: 100, OutputMean: 10,
		Turns: 1, BlockSize: 16}
	got := readAll(t, NewGenerator(cfg, des.NewRNG(1)))
	for i, r := range got {
		// sigma 0: every length equals its mean; one request every 100 ms.
		if r.Arrival != des.Time(i)*100*des.Millisecond || r.InputTokens != 100 || r.OutputTokens != 10 {
			t.Errorf("request %d: %v %d %d", i, r.Arrival, r.InputTokens, r.OutputTokens)
		}
	}
}

// TestSorted: with Unsorted, a trace whose timestamps go backwards reads,
// and Sorted serves it by arrival, ties in trace order, renumbered; an
// Azure trace whose first row is not the earliest is shifted to start at 0.
func TestSorted(t *testing.T) {
	in := `{"timestamp": 30, "input_length": 16, "output_length": 1, "hash_ids": [1]}
{"timestamp": 10, "input_length": 16, "output_length": 2, "hash_ids": [2]}
{"timestamp": 30, "input_length": 16, "output_length": 3, "hash_ids": [3]}
`
	o := opt
	o.Unsorted = true
	src, err := Sorted(NewMooncake(strings.NewReader(in), o))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, src)
	var outs []int
	for i, r := range got {
		if r.ID != int64(i) {
			t.Errorf("request %d has id %d", i, r.ID)
		}
		outs = append(outs, r.OutputTokens)
	}
	if !slices.Equal(outs, []int{2, 1, 3}) || got[0].Arrival != 10*des.Millisecond {
		t.Errorf("order %v, first at %v", outs, got[0].Arrival)
	}
	az := "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:05.0,32,1\n2023-11-16 18:17:03.5,32,2\n"
	src, err = Sorted(NewAzure(strings.NewReader(az), o))
	if err != nil {
		t.Fatal(err)
	}
	got = readAll(t, src)
	if got[0].OutputTokens != 2 || got[0].Arrival != 0 || got[1].Arrival != 1500*des.Millisecond {
		t.Errorf("azure sorted: %+v %+v", got[0], got[1])
	}
}

// rechunk is the engine-block chain of a prompt of inputTokens tokens over
// trace block ids of traceBlock tokens, engine blocks of engineBlock.
func rechunk(ids []uint64, traceBlock, engineBlock, inputTokens int) []uint64 {
	return newRechunker(traceBlock, engineBlock).chain(ids, inputTokens).AppendHashes(nil)
}

// hashes is the hashes of r's blocks.
func hashes(r *Request) []uint64 { return r.Blocks.AppendHashes(nil) }

// TestSyntheticPastVirtualTime: at 4e-10 requests a second, constant
// arrivals of one turn, request 0 arrives at 0 and request 1 at 1/rate =
// 2.5e18 ns (79 years); request 2 would come at 5e18 ns, past MaxArrival
// (about 4.6e18): Next refuses it naming the synthetic workload, where
// before the time wrapped in the run.
// At 1e-11 the gap (1e20 ns) is past virtual time itself: it saturates,
// and the second request is refused.
func TestSyntheticPastVirtualTime(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		fails int64 // the id of the request refused
	}{{4e-10, 2}, {1e-11, 1}} {
		g := NewGenerator(Synthetic{Requests: 4, Rate: c.rate, Arrival: ArrivalConstant, Turns: 1, InputMean: 64, InputSigma: 0,
			OutputMean: 2, OutputSigma: 0, BlockSize: 16}, des.NewRNG(1))
		var err error
		n := int64(0)
		for ; err == nil; n++ {
			_, err = g.Next()
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Key != "workload.synthetic" || n-1 != c.fails ||
			!strings.Contains(pe.Err.Error(), fmt.Sprintf("request %d would arrive past about 146 years", c.fails)) {
			t.Errorf("rate %g: after %d requests, %v; want request %d refused", c.rate, n-1, err, c.fails)
		}
	}
}
