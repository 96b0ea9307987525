package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// benchTrace reads every request of a trace file held in memory, once per
// iteration, and reports requests per second.
func benchTrace(b *testing.B, name string, open func(io.Reader) Source) {
	data, err := os.ReadFile(tracestest.Path(b, name))
	if err != nil {
		b.Fatal(err)
	}
	benchData(b, data, open)
}

// benchData reads every request of a trace held in data, once per
// iteration, and reports requests per second.
func benchData(b *testing.B, data []byte, open func(io.Reader) Source) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := open(bytes.NewReader(data))
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkMooncake parses the Mooncake conversation trace (12,031 rows)
// into requests with 16-token engine-block chains.
func BenchmarkMooncake(b *testing.B) {
	opt := TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}
	benchTrace(b, "conversation_trace.jsonl", func(r io.Reader) Source {
		return NewMooncake(r, opt)
	})
}

// BenchmarkMooncakePrevTurns is BenchmarkMooncake with each request's
// previous turn found (PrevTurns), as a run reads the trace.
func BenchmarkMooncakePrevTurns(b *testing.B) {
	opt := TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}
	benchTrace(b, "conversation_trace.jsonl", func(r io.Reader) Source {
		return PrevTurns(NewMooncake(r, opt))
	})
}

// BenchmarkMooncakeInMemory parses a conversation-shaped Mooncake trace
// made in memory (conversationTrace), so it runs without the shared traces.
func BenchmarkMooncakeInMemory(b *testing.B) {
	opt := TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}
	benchData(b, conversationTrace(2000), func(r io.Reader) Source {
		return NewMooncake(r, opt)
	})
}

// BenchmarkRechunk turns the hash ids of a conversation-shaped trace
// (conversationTrace) into 16-token engine-block chains, without parsing.
func BenchmarkRechunk(b *testing.B) {
	reqs, err := readRecords(conversationTrace(2000))
	if err != nil {
		b.Fatal(err)
	}
	rc := newRechunker(512, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, r := range reqs {
			rc.chain(r.HashIDs, int(*r.InputLength))
		}
	}
}

// readRecords decodes every line of a Mooncake trace with encoding/json.
func readRecords(data []byte) ([]mooncakeRecord, error) {
	var recs []mooncakeRecord
	for line := range bytes.Lines(data) {
		var r mooncakeRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// conversationTrace is n Mooncake records shaped like the conversation
// trace, from a fixed seed: every prompt starts with the shared id 0; half
// the requests are a later turn of an earlier conversation, whose ids extend
// that conversation's last prompt by one to four new ids; prompts are 2 to
// 40 trace blocks, the last one partial.
func conversationTrace(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	var convs [][]uint64
	next := uint64(1)
	fresh := func(ids []uint64, k int) []uint64 {
		for range k {
			ids = append(ids, next)
			next++
		}
		return ids
	}
	for i := range n {
		var ids []uint64
		if c := len(convs); c > 0 && rng.IntN(2) == 0 {
			j := rng.IntN(c)
			ids = fresh(convs[j], 1+rng.IntN(4))
			if len(ids) > 40 {
				ids = fresh([]uint64{0}, 1+rng.IntN(39))
			}
			convs[j] = ids
		} else {
			ids = fresh([]uint64{0}, 1+rng.IntN(39))
			convs = append(convs, ids)
		}
		in := 512*(len(ids)-1) + 1 + rng.IntN(512)
		fmt.Fprintf(&buf, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [`, i*300, in, 1+rng.IntN(800))
		for k, id := range ids {
			if k > 0 {
				buf.WriteString(", ")
			}
			fmt.Fprint(&buf, id)
		}
		buf.WriteString("]}\n")
	}
	return buf.Bytes()
}

// BenchmarkAzure parses the Azure 2023 code trace.
func BenchmarkAzure(b *testing.B) {
	opt := TraceOptions{EngineBlockSize: 16, TimeScale: 1}
	benchTrace(b, "azure_code_2023.csv", func(r io.Reader) Source {
		return NewAzure(r, opt)
	})
}

// BenchmarkGenerator draws synthetic requests: 1024-token prompts (sigma
// 0.5) in 64 groups sharing 512 tokens, 128 output tokens.
func BenchmarkGenerator(b *testing.B) {
	g := NewGenerator(Synthetic{Requests: 1 << 62, Rate: 1000, InputMean: 1024, InputSigma: 0.5,
		OutputMean: 128, OutputSigma: 0.5, PrefixGroups: 64, SharedPrefix: 512, Turns: 1, Arrival: ArrivalPoisson, BlockSize: 16}, des.NewRNG(1))
	for i := 0; i < b.N; i++ {
		if _, err := g.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
