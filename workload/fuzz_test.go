package workload

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// drain reads a source to its end; any error but io.EOF must be a
// *ParseError, and every request must be well formed.
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
		if r.ID != last+1 || r.InputTokens < 1 || r.OutputTokens < 1 || r.Arrival < 0 || len(r.Blocks) != r.InputTokens/16 {
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
	f.Fuzz(func(t *testing.T, in string) {
		drain(t, NewMooncake(strings.NewReader(in), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}))
	})
}

func FuzzAzure(f *testing.F) {
	f.Add("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,32,8\n")
	f.Add("GeneratedTokens,TIMESTAMP,ContextTokens\n3,2023-11-16 18:17:03,100\n")
	f.Add("TIMESTAMP\n\"unterminated\n")
	f.Fuzz(func(t *testing.T, in string) {
		drain(t, NewAzure(strings.NewReader(in), TraceOptions{TraceBlockSize: 512, EngineBlockSize: 16, TimeScale: 1}))
	})
}
