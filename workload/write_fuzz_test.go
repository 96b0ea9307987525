package workload

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// valid reads s to its end or its first bad record and returns the
// requests before it.
func valid(s Source) []*Request {
	var out []*Request
	for {
		r, err := s.Next()
		if err != nil {
			var pe *ParseError
			if err != io.EOF && !errors.As(err, &pe) {
				panic(err)
			}
			return out
		}
		out = append(out, r)
	}
}

// exactBelow is where FormatMillis promises to write any arrival.
const exactBelow = des.Time(1) << 52

// FuzzMooncakeRoundTrip: whatever the Mooncake reader accepts, written back
// by MooncakeWriter at its block size, reads as the same workload.
func FuzzMooncakeRoundTrip(f *testing.F) {
	f.Add(`{"timestamp": 0, "input_length": 9, "output_length": 5, "hash_ids": [1, 2, 3]}` + "\n" +
		`{"timestamp": 0.0000015, "input_length": 4, "output_length": 1, "hash_ids": [1]}` + "\n" +
		`{"timestamp": 1e3, "input_length": 12, "output_length": 2, "hash_ids": [1, 2, 7]}`)
	f.Add(`{"timestamp": 33.3333333, "input_length": 3, "output_length": 1, "hash_ids": [18446744073709551615]}`)
	f.Add(`{"timestamp": 4503599627.370497, "input_length": 8, "output_length": 1, "hash_ids": [5, 5]}`)
	opt := TraceOptions{TraceBlockSize: 4, EngineBlockSize: 4, TimeScale: 1}
	f.Fuzz(func(t *testing.T, in string) {
		reqs := valid(NewMooncake(strings.NewReader(in), opt))
		var buf bytes.Buffer
		w := NewMooncakeWriter(&buf, 4)
		for _, r := range reqs {
			if err := w.Write(r); err != nil {
				if r.Arrival < exactBelow {
					t.Fatal(err)
				}
				return
			}
		}
		w.Flush()
		back := valid(NewMooncake(&buf, opt))
		isomorphic(t, reqs, back)
	})
}

// FuzzAzureRoundTrip: whatever the Azure reader accepts, written back as
// Azure, and as Mooncake, reads as the same workload.
func FuzzAzureRoundTrip(f *testing.F) {
	f.Add(azureSample)
	f.Add("GeneratedTokens,TIMESTAMP,ContextTokens\n3,2023-11-16 18:17:03,100\n4,2023-11-17 00:00:00.0000001,1\n")
	opt := TraceOptions{EngineBlockSize: 4, TimeScale: 1}
	f.Fuzz(func(t *testing.T, in string) {
		reqs := valid(NewAzure(strings.NewReader(in), opt))
		for _, r := range reqs {
			if r.InputTokens > 1<<16 {
				return // millions of blocks: slow, and no other path
			}
		}
		var az, mc bytes.Buffer
		aw, mw := NewAzureWriter(&az), NewMooncakeWriter(&mc, 4)
		loss := NewAzureLoss()
		for _, r := range reqs {
			loss.Add(r)
			if err := aw.Write(r); err != nil {
				if r.Arrival < exactBelow {
					t.Fatal(err)
				}
				return // the Azure reader's own float arithmetic is inexact this far
			}
			if err := mw.Write(r); err != nil {
				if r.Arrival < exactBelow {
					t.Fatal(err)
				}
				return
			}
		}
		aw.Flush()
		mw.Flush()
		if err := loss.Err(); err != nil && reqs[len(reqs)-1].Arrival < exactBelow {
			t.Fatalf("an Azure trace is lossy as Azure: %v", err)
		}
		isomorphic(t, reqs, valid(NewAzure(&az, opt)))
		isomorphic(t, reqs, valid(NewMooncake(&mc, TraceOptions{TraceBlockSize: 4, EngineBlockSize: 4, TimeScale: 1})))
	})
}

// FuzzFormatMillis: a timestamp FormatMillis writes reads back exactly;
// it refuses none below 2^52 ns.
func FuzzFormatMillis(f *testing.F) {
	for _, v := range []int64{0, 1, 999999, 1500000000, 1 << 51, 1<<52 - 1, 1 << 53, 1<<63 - 1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		s, err := FormatMillis(des.Time(v))
		switch {
		case v < 0:
			if err == nil {
				t.Fatal("negative accepted")
			}
		case err != nil:
			if des.Time(v) < exactBelow {
				t.Fatal(err)
			}
		default:
			x, perr := strconv.ParseFloat(s, 64)
			if perr != nil || !readsBack(x, des.Time(v)) {
				t.Fatalf("%d written as %q", v, s)
			}
		}
	})
}
