package workload

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// drain reads a source to its end; any error but io.EOF must be a
// *ParseError, and every request must be well formed, its previous turn
// (if any) an earlier request.
func drain(t *testing.T, s Source) {
	var last int64 = -1
	for {
		r, err := s.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		if r.ID != last+1 || r.InputTokens < 1 || r.OutputTokens < 1 || r.Arrival < 0 || r.Blocks.Len() != r.InputTokens/16 ||
			r.Prev < -1 || r.Prev >= r.ID {
			t.Fatalf("bad request %+v", r)
		}
		last = r.ID
	}
}

func FuzzMooncake(f *testing.F) {
	f.Add(`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}` + "\n" +
		`{"timestamp": 10, "input_length": 16, "output_length": 1, "hash_ids": [1]}`)
	f.Add(`{"timestamp": 1e3, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551615]}`)
	f.Add(`{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1]}`)
	f.Add("\n\n{}")
	mooncakeSeeds(f)
	f.Fuzz(func(t *testing.T, in string) {
		drain(t, PrevTurns(NewMooncake(strings.NewReader(in), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1})))
	})
}

func FuzzAzure(f *testing.F) {
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,32,8\n")
	f.Add("GeneratedTokens,TIMESTAMP,ContextTokens\n3,2023-11-16 18:17:03,100\n")
	f.Add("TIMESTAMP\n\"unterminated\n")
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens,TIMESTAMP\n2023-11-16 18:17:03,100,3,x\n")
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,100,3,7\n")
	f.Add("TIMESTAMP,ContextToken,GeneratedTokens\n2023-11-16 18:17:03,100,3\n")
	f.Fuzz(func(t *testing.T, in string) {
		drain(t, NewAzure(strings.NewReader(in), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}))
	})
}

// FuzzOtel: whatever the bytes, the otel reader returns requests in arrival
// order from 0, numbered from 0, each measured latency a time or -1, chains
// at the block size that share exactly the shared prefix's blocks; or a
// *ParseError naming a line, or the file as a whole when it has no request.
func FuzzOtel(f *testing.F) {
	f.Add(otelSample)
	f.Add(otelLineJSON(otelSpanJSON("llm_request", 7, tokens(100, 3)...), otelSpanJSON("llm_request", 3, tokens(33, 1)...)))
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","startTimeUnixNano":9223372036854775807,` +
		`"attributes":[{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":16777216}},{"key":"gen_ai.usage.completion_tokens","value":{"intValue":"1"}},` +
		`{"key":"gen_ai.latency.e2e","value":{"doubleValue":"1e-9"}}]}]}]}]}`)
	f.Add(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","startTimeUnixNano":"0"}]}]}]}`)
	f.Add("\ufeff" + otelLineJSON() + "\n\n")
	f.Add(`{"resourceSpans":5}` + "\n" + `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":7,"attributes":[{"value":[]}]}]}]}]}` + "\n[]")
	f.Fuzz(func(t *testing.T, in string) {
		o := TraceOptions{EngineBlockSize: 16, TimeScale: 1, SharedPrefix: 40}
		src := NewOtel(strings.NewReader(in), o)
		var shared []uint64
		for i := int64(0); ; i++ {
			r, err := src.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || (pe.Line < 1 && !errors.Is(err, ErrNoOtelRequests)) || i > 0 {
					t.Fatalf("error %v after %d requests", err, i)
				}
				return
			}
			m := r.Measured
			if r.ID != i || r.InputTokens < 1 || r.OutputTokens < 1 || r.Arrival < 0 || (i == 0 && r.Arrival != 0) ||
				r.Blocks.Len() != r.InputTokens/16 || m == nil {
				t.Fatalf("bad request %+v", r)
			}
			for _, d := range []des.Time{m.TTFT, m.E2E, m.Queue, m.Prefill, m.Decode} {
				if d < -1 {
					t.Fatalf("request %d measured %+v", i, *m)
				}
			}
			hs := r.Blocks.AppendHashes(nil)
			n := min(len(hs), 2) // 40 tokens: 2 whole blocks
			if shared == nil && n == 2 {
				shared = hs[:2]
			}
			if shared != nil && !slices.Equal(hs[:n], shared[:n]) {
				t.Fatalf("request %d does not begin with the shared blocks", i)
			}
			if shared != nil && len(hs) > 2 && hs[2] == shared[1] {
				t.Fatalf("request %d: block 2 repeats", i)
			}
		}
	})
}
