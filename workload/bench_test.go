package workload

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/kvsim/kvsim/sim/des"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// benchTrace reads every request of a trace file held in memory, once per
// iteration, and reports requests per second.
func benchTrace(b *testing.B, name string, open func(io.Reader) Source) {
	data, err := os.ReadFile(tracestest.Path(b, name))
	if err != nil {
		b.Fatal(err)
	}
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
		OutputMean: 128, OutputSigma: 0.5, PrefixGroups: 64, SharedPrefix: 512, Turns: 1, Arrival: "poisson", BlockSize: 16}, des.NewRNG(1))
	for i := 0; i < b.N; i++ {
		if _, err := g.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
