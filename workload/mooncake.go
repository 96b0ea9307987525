package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/kvsim/kvsim/des"
)

// TraceOptions say how to turn a trace into requests.
type TraceOptions struct {
	TraceBlockSize  int     // tokens per trace hash id (512 for Mooncake)
	EngineBlockSize int     // tokens per engine block
	TimeScale       float64 // arrival times are multiplied by it (0.5 = twice as fast)
	Limit           int     // stop after this many requests; 0 = all
	Unsorted        bool    // accept timestamps that go backwards (the caller sorts)
	SharedPrefix    int     // tokens every prompt begins with (otel, whose prompts are unknown); 0 = none
}

// Format names a trace format: the value of the scenario key
// workload.trace.format.
type Format string

// The trace formats.
const (
	FormatMooncake Format = "mooncake" // Mooncake FAST'25 JSONL
	FormatAzure    Format = "azure"    // Azure LLM inference CSV
	FormatOtel     Format = "otel"     // vLLM's OTLP JSON spans
)

// Formats lists the trace formats, in the order errors name them.
var Formats = []Format{FormatMooncake, FormatAzure, FormatOtel}

// Open returns the reader of a trace in format over r.
func Open(format Format, r io.Reader, opt TraceOptions) Source {
	switch format {
	case FormatAzure:
		return NewAzure(r, opt)
	case FormatOtel:
		return NewOtel(r, opt) // reads the whole file, in arrival order
	}
	return NewMooncake(r, opt)
}

func (o TraceOptions) arrival(ms float64) (des.Time, error) {
	t, ok := des.FromNanos(float64(ms*1e6) * o.TimeScale)
	if !ok || t < 0 || t > MaxArrival {
		return 0, outsideTime(fmt.Sprintf("arrival %g ms x time_scale %g", ms, o.TimeScale))
	}
	return t, nil
}

// MaxArrival is the latest arrival a trace may give: half of virtual time,
// about 146 years, so that no time the run adds to it overflows.
const MaxArrival = des.MaxTime / 2

// outsideTime is the error of an arrival past MaxArrival, what it is.
func outsideTime(what string) error {
	return fmt.Errorf("%s is outside virtual time (0 to about 146 years: an arrival leaves room for the run after it)", what)
}

// mooncakeRecord is a line of a Mooncake trace; a nil field is a missing key.
type mooncakeRecord struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	HashIDs      []uint64 `json:"hash_ids"`
}

// Mooncake reads the Mooncake FAST'25 JSONL trace format one line at a time:
// {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}.
// Each request carries its trace blocks as prefix keys (TraceBlocks), from
// which PrevTurns finds its previous turn.
type Mooncake struct {
	sc     *bufio.Scanner
	opt    TraceOptions
	line   int
	nextID int64
	last   des.Time
	dec    mooncakeDecoder
	chunk  rechunker
}

// NewMooncake returns a streaming reader over r.
func NewMooncake(r io.Reader, opt TraceOptions) *Mooncake {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<28)
	return &Mooncake{sc: sc, opt: opt, chunk: newRechunker(opt.TraceBlockSize, opt.EngineBlockSize)}
}

// Next returns the next request, io.EOF at the end, or a *ParseError.
func (m *Mooncake) Next() (*Request, error) {
	if m.opt.Limit > 0 && m.nextID >= int64(m.opt.Limit) {
		return nil, io.EOF
	}
	for m.sc.Scan() {
		m.line++
		b := m.sc.Bytes()
		if m.line == 1 { // a byte order mark, as a Windows editor writes one (the CSV and otel readers take it too)
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		var rec mooncakeRecord
		if !m.dec.decode(b, &rec) {
			var key string
			var err error
			if rec, key, err = decodeRecord(b); err != nil {
				return nil, &ParseError{Line: m.line, Key: key, Err: err}
			}
		}
		return m.request(&rec)
	}
	if err := m.sc.Err(); err != nil {
		return nil, &ParseError{Line: m.line + 1, Err: err}
	}
	return nil, io.EOF
}

func (m *Mooncake) request(rec *mooncakeRecord) (*Request, error) {
	bad := func(key, format string, a ...any) error {
		return &ParseError{Line: m.line, Key: key, Err: fmt.Errorf(format, a...)}
	}
	switch {
	case rec.Timestamp == nil:
		return nil, bad("timestamp", "missing")
	case rec.InputLength == nil:
		return nil, bad("input_length", "missing")
	case rec.OutputLength == nil:
		return nil, bad("output_length", "missing")
	case rec.HashIDs == nil:
		return nil, bad("hash_ids", "missing")
	case *rec.Timestamp < 0:
		return nil, bad("timestamp", "negative (%g)", *rec.Timestamp)
	case *rec.InputLength < 1:
		return nil, bad("input_length", "must be at least 1, got %d", *rec.InputLength)
	case *rec.OutputLength < 1:
		return nil, bad("output_length", "must be at least 1, got %d", *rec.OutputLength)
	case len(rec.HashIDs) == 0:
		return nil, bad("hash_ids", "empty")
	case *rec.InputLength > MaxTokens:
		return nil, bad("input_length", "%d exceeds the %d-token limit", *rec.InputLength, MaxTokens)
	case *rec.InputLength > int64(m.opt.TraceBlockSize)*int64(len(rec.HashIDs)):
		return nil, bad("input_length", "%d exceeds block_size %d x %d hash_ids",
			*rec.InputLength, m.opt.TraceBlockSize, len(rec.HashIDs))
	case *rec.OutputLength > MaxTokens:
		return nil, bad("output_length", "%d exceeds the %d-token limit", *rec.OutputLength, MaxTokens)
	}
	at, err := m.opt.arrival(*rec.Timestamp)
	if err != nil {
		return nil, bad("timestamp", "%v", err)
	}
	if at < m.last && !m.opt.Unsorted {
		return nil, bad("timestamp", "goes backwards (%v after %v); set workload.trace.sort: true to sort the trace", at, m.last)
	}
	m.last = at
	in := int(*rec.InputLength)
	req := &Request{
		ID:           m.nextID,
		Arrival:      at,
		InputTokens:  in,
		OutputTokens: int(*rec.OutputLength),
		Blocks:       m.chunk.chain(rec.HashIDs, in),
		Prev:         -1,
		TraceBlocks:  traceKeys(rec.HashIDs, m.opt.TraceBlockSize, in),
	}
	m.nextID++
	return req, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
