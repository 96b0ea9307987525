package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// rechunkOracle is the rechunker as its doc comment reads, one ChainHash per
// trace block an engine block overlaps: the reference the faster
// rechunker is checked against.
func rechunkOracle(ids []uint64, traceBlock, engineBlock, inputTokens int) []uint64 {
	n := inputTokens / engineBlock
	out := make([]uint64, n)
	var parent uint64
	for k := range n {
		start, end := k*engineBlock, (k+1)*engineBlock-1
		i0, i1 := start/traceBlock, end/traceBlock
		h := parent
		for i := i0; i <= i1; i++ {
			h = block.ChainHash(h, ids[i], uint64(start-i0*traceBlock))
		}
		out[k] = h
		parent = h
	}
	return out
}

// TestRechunkOracle: the rechunker equals rechunkOracle for block sizes
// that divide each other (a rule a trace block where it holds at least
// minRuleBlocks = 4 engine blocks: 512/16, 512/1 and 512/128 at the bound;
// given hashes below: 512/256, 16/16), straddle, or exceed one another,
// and prompts that end anywhere in their last trace block.
func TestRechunkOracle(t *testing.T) {
	if !newRechunker(512, 128).rules || newRechunker(512, 256).rules {
		t.Fatal("512/128 no longer makes rules or 512/256 no longer hashes: the cases below miss the bound")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range [][2]int{{512, 16}, {512, 128}, {512, 256}, {512, 1}, {16, 16}, {10, 4}, {512, 48}, {4, 10}, {3, 7}, {1, 1}} {
		for range 50 {
			ids := make([]uint64, 1+rng.IntN(12))
			for i := range ids {
				ids[i] = rng.Uint64N(8) // small ids: repeats within and across chains
			}
			in := rng.IntN(c[0]*len(ids)) + 1
			if got, want := rechunk(ids, c[0], c[1], in), rechunkOracle(ids, c[0], c[1], in); !slices.Equal(got, want) {
				t.Fatalf("trace %d engine %d, %d tokens over %v: got %x, want %x", c[0], c[1], in, ids, got, want)
			}
		}
	}
}

// FuzzRechunk: the rechunker equals rechunkOracle on any ids and sizes.
func FuzzRechunk(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint16(512), uint16(16), uint32(600))
	f.Add([]byte{1, 2, 3}, uint16(10), uint16(4), uint32(30))
	f.Add([]byte{0}, uint16(4), uint16(10), uint32(4))
	f.Fuzz(func(t *testing.T, raw []byte, traceBlock, engineBlock uint16, in uint32) {
		if traceBlock == 0 || engineBlock == 0 || len(raw) == 0 {
			return
		}
		ids := make([]uint64, len(raw))
		for i, b := range raw {
			ids[i] = uint64(b) * 0x9e3779b97f4a7c15
		}
		n := int(in)%(int(traceBlock)*len(ids)) + 1
		if got, want := rechunk(ids, int(traceBlock), int(engineBlock), n), rechunkOracle(ids, int(traceBlock), int(engineBlock), n); !slices.Equal(got, want) {
			t.Fatalf("got %x, want %x", got, want)
		}
	})
}

// mooncakeOracle reads a Mooncake trace the simple way: every line through
// decodeRecord (which FuzzMooncakeDecoder holds to encoding/json) and every
// chain through rechunkOracle, with Mooncake's own checks.
type mooncakeOracle struct{ m *Mooncake }

func (o mooncakeOracle) Next() (*Request, error) {
	m := o.m
	if m.opt.Limit > 0 && m.nextID >= int64(m.opt.Limit) {
		return nil, io.EOF
	}
	for m.sc.Scan() {
		m.line++
		b := m.sc.Bytes()
		if m.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		rec, key, err := decodeRecord(b)
		if err != nil {
			return nil, &ParseError{Line: m.line, Key: key, Err: err}
		}
		req, err := m.request(&rec)
		if err != nil {
			return nil, err
		}
		req.Blocks = block.Hashed(rechunkOracle(rec.HashIDs, m.opt.TraceBlockSize, m.opt.EngineBlockSize, req.InputTokens))
		return req, nil
	}
	if err := m.sc.Err(); err != nil {
		return nil, &ParseError{Line: m.line + 1, Err: err}
	}
	return nil, io.EOF
}

// sameReads reads a and b to their ends and fails unless they give the
// same requests and end with the same error (or both io.EOF). It returns
// how many requests they gave.
func sameReads(t *testing.T, a, b Source) int {
	t.Helper()
	for n := 0; ; n++ {
		ra, ea := a.Next()
		rb, eb := b.Next()
		if ea != nil || eb != nil {
			if (ea == io.EOF) != (eb == io.EOF) || ea == nil || eb == nil || ea.Error() != eb.Error() {
				t.Fatalf("after %d requests: error %v, oracle %v", n, ea, eb)
			}
			return n
		}
		if ra.ID != rb.ID || ra.Arrival != rb.Arrival || ra.InputTokens != rb.InputTokens ||
			ra.OutputTokens != rb.OutputTokens || !slices.Equal(hashes(ra), hashes(rb)) || ra.Measured != nil {
			t.Fatalf("request %d: %+v, oracle %+v", n, ra, rb)
		}
	}
}

// mooncakeTaken are Mooncake lines mooncakeDecoder reads itself: other
// spacing and key orders, missing keys, and numbers of every JSON form
// that json reads into the field.
var mooncakeTaken = []string{
	`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 2353]}`,
	`{"hash_ids":[1,2],"output_length":1,"input_length":600,"timestamp":0}`,
	" \t{ \"timestamp\" :1 , \"input_length\"\t:\r1,\"output_length\": 1 ,\"hash_ids\": [ 1 , 2 ] } \r",
	`{}`, `{ }`, `{"timestamp": 1}`, `{"hash_ids": []}`, `{"hash_ids": [ ]}`,
	`{"timestamp": 1.5e3, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": -0, "input_length": -0, "output_length": 1, "hash_ids": [0]}`,
	`{"timestamp": -0.0e-0, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 9007199254740993, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 0, "input_length": 999999999999999999, "output_length": 1, "hash_ids": [999999999999999999]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551615, 1, 18446744073709551609]}`,
}

// mooncakeDeclined are Mooncake lines mooncakeDecoder leaves to
// decodeRecord: repeated, unknown and case-folded keys, escapes, null,
// numbers json refuses or the decoder finds too long, and broken syntax.
var mooncakeDeclined = []string{
	`{"timestamp": 1, "timestamp": 2, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1], "hash_ids": [2, 3]}`,
	`{"Timestamp": 1, "INPUT_LENGTH": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"time\u0073tamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": null, "input_length": 1, "output_length": 1, "hash_ids": null}`,
	`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1], "extra": {"a": [true, "x"]}}`,
	`{"timestamp": 1, "input_lenght": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1, null, 2]}`,
	`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [[1]]}`,
	`{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": "1"}`,
	`{"timestamp": [1], "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`[{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}]`,
	`{"timestamp": 1e400, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 0, "input_length": 9223372036854775807, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 0, "input_length": 9223372036854775808, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551616]}`,
	`{"timestamp": 0, "input_length": 1.0, "output_length": 1e0, "hash_ids": [1.0]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [-1]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [-0]}`,
	`{"timestamp": 01, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 1., "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": .5, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 1e, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": +1, "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": "1", "input_length": 1, "output_length": 1, "hash_ids": [1]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1,]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1 2]}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]} x`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}{}`,
	`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1],}`,
	`{"timestamp" 0}`, `{"timestamp": 0 "input_length": 1}`, `{"timestamp`, `{timestamp: 0}`, `{`,
	`null`, `[]`, `0`, `"x"`, "\ufeff{}", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\f",
	"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1], \"\xff\": 1}",
}

// mooncakeSeeds adds mooncakeTaken and mooncakeDeclined to a fuzz target's
// seed corpus, one seed a line and one of all of them.
func mooncakeSeeds(f *testing.F) {
	lines := slices.Concat(mooncakeTaken, mooncakeDeclined)
	for _, l := range lines {
		f.Add(l)
	}
	f.Add(strings.Join(lines, "\n"))
	f.Add("\ufeff" + mooncakeTaken[0] + "\n" + mooncakeTaken[1])
}

// FuzzMooncakeDecoder: on any input, Mooncake gives the requests and the
// error mooncakeOracle gives; whenever mooncakeDecoder takes a line rather
// than declining it, decodeRecord decodes it without error to the same
// record; and whenever decodeRecord does, so does encoding/json (a line the
// strict decoder reads means what it meant to the reader before it).
func FuzzMooncakeDecoder(f *testing.F) {
	mooncakeSeeds(f)
	f.Fuzz(func(t *testing.T, in string) {
		o := TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1, Unsorted: true}
		sameReads(t, NewMooncake(strings.NewReader(in), o), mooncakeOracle{NewMooncake(strings.NewReader(in), o)})
		var d mooncakeDecoder
		for line := range strings.Lines(in) {
			line = strings.TrimSuffix(line, "\n")
			strict, _, err := decodeRecord([]byte(line))
			var got mooncakeRecord
			if d.decode([]byte(line), &got) && (err != nil || !sameRecord(got, strict)) {
				t.Fatalf("%q: decoded %s, decodeRecord %s, %v", line, recordString(got), recordString(strict), err)
			}
			if err != nil {
				continue
			}
			var want mooncakeRecord
			if err := json.Unmarshal([]byte(line), &want); err != nil {
				t.Fatalf("%q: decodeRecord took it, but json says %v", line, err)
			}
			if !sameRecord(strict, want) {
				t.Fatalf("%q: decodeRecord %s, json %s", line, recordString(strict), recordString(want))
			}
		}
	})
}

// sameRecord: equal fields, both missing or both present (an empty
// hash_ids is present), timestamps equal to the bit.
func sameRecord(a, b mooncakeRecord) bool {
	same := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return (a.Timestamp == nil) == (b.Timestamp == nil) &&
		(a.Timestamp == nil || math.Float64bits(*a.Timestamp) == math.Float64bits(*b.Timestamp)) &&
		same(a.InputLength, b.InputLength) && same(a.OutputLength, b.OutputLength) &&
		(a.HashIDs == nil) == (b.HashIDs == nil) && slices.Equal(a.HashIDs, b.HashIDs)
}

func recordString(r mooncakeRecord) string {
	var s []string
	if r.Timestamp != nil {
		s = append(s, fmt.Sprintf("timestamp %g", *r.Timestamp))
	}
	if r.InputLength != nil {
		s = append(s, fmt.Sprintf("input_length %d", *r.InputLength))
	}
	if r.OutputLength != nil {
		s = append(s, fmt.Sprintf("output_length %d", *r.OutputLength))
	}
	if r.HashIDs != nil {
		s = append(s, fmt.Sprintf("hash_ids %v", r.HashIDs))
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// TestMooncakeBOM: a trace that starts with a byte order mark (a Windows
// editor's) reads as without it, as a CSV or otel trace does; the mark
// anywhere else is an error. A fuzz seed, too.
func TestMooncakeBOM(t *testing.T) {
	line := `{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [1]}`
	o := TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}
	r, err := NewMooncake(strings.NewReader("\ufeff"+line+"\n"), o).Next()
	if err != nil || r.Arrival != 5*des.Millisecond {
		t.Errorf("with a byte order mark: %+v, %v", r, err)
	}
	m := NewMooncake(strings.NewReader(line+"\n\ufeff"+line+"\n"), o)
	m.Next()
	if _, err := m.Next(); err == nil {
		t.Error("a byte order mark on line 2 was taken")
	}
}

// TestMooncakeDecoderTakes: the decoder reads the lines of mooncakeTaken
// itself and leaves those of mooncakeDeclined to decodeRecord.
func TestMooncakeDecoderTakes(t *testing.T) {
	var d mooncakeDecoder
	for _, c := range []struct {
		lines []string
		want  bool
	}{{mooncakeTaken, true}, {mooncakeDeclined, false}} {
		for _, l := range c.lines {
			if took := d.decode([]byte(l), new(mooncakeRecord)); took != c.want {
				t.Errorf("%q: took it %v, want %v", l, took, c.want)
			}
		}
	}
}

// TestMooncakeConversationOracle: the conversation trace reads to the same
// requests as through mooncakeOracle, and the decoder takes every line.
func TestMooncakeConversationOracle(t *testing.T) {
	data, err := os.ReadFile(tracestest.Path(t, "conversation_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := sameReads(t, NewMooncake(bytes.NewReader(data), opt), mooncakeOracle{NewMooncake(bytes.NewReader(data), opt)})
	if n != 12031 {
		t.Errorf("%d requests, want 12031", n)
	}
	var d mooncakeDecoder
	for line := range bytes.Lines(data) {
		if !d.decode(line, new(mooncakeRecord)) {
			t.Fatalf("declined %q", line)
		}
	}
}
