package workload

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/kvsim/kvsim/des"
)

// The span the otel reader takes, and the attributes it reads.
const (
	OtelSpanName        = "llm_request"
	otelStart           = "startTimeUnixNano"
	otelPromptTokens    = "gen_ai.usage.prompt_tokens"
	otelCompletionToks  = "gen_ai.usage.completion_tokens"
	otelTTFT            = "gen_ai.latency.time_to_first_token"
	otelE2E             = "gen_ai.latency.e2e"
	otelQueue           = "gen_ai.latency.time_in_queue"
	otelPrefill         = "gen_ai.latency.time_in_model_prefill"
	otelDecode          = "gen_ai.latency.time_in_model_decode"
	otelMaxShownValue   = 40 // bytes of a bad value quoted in an error
	otelSharedChainSeed = ^uint64(0)
)

// otelLine is one line of an OTLP JSON file: spans grouped by resource and
// instrumentation scope.
type otelLine struct {
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []otelSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type otelSpan struct {
	Name       string          `json:"name"`
	Start      json.RawMessage `json:"startTimeUnixNano"`
	Attributes []struct {
		Key   string                     `json:"key"`
		Value map[string]json.RawMessage `json:"value"` // {"intValue": ...}, {"doubleValue": ...}, ...
	} `json:"attributes"`
}

// otelRequest is an llm_request span read, before arrivals and ids are
// known.
type otelRequest struct {
	line     int
	start    int64 // ns since the Unix epoch
	in, out  int
	measured Measured
}

// Otel reads the OTLP JSON lines vLLM writes with --otlp-traces-endpoint
// (through an OpenTelemetry collector's file exporter): one JSON object a
// line, {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}, a line
// holding one span or several. Every span named llm_request is a request;
// other spans are ignored. Spans are not in arrival order, so the first
// call to Next reads the whole file: the requests are sorted by
// startTimeUnixNano (ties in file order), numbered from 0 in that order,
// and arrive relative to the earliest (the first at 0), times the time
// scale; Limit keeps the first requests in that order. Prompt and output
// tokens come from gen_ai.usage.prompt_tokens and
// gen_ai.usage.completion_tokens; the latencies vLLM measured, from the
// gen_ai.latency attributes, fill Request.Measured. Prompt contents are not
// recorded: every prompt starts with the same SharedPrefix tokens (0: none)
// and the rest is its own. TraceBlockSize and Unsorted are unused.
type Otel struct {
	r    io.Reader
	opt  TraceOptions
	read bool
	err  error
	reqs sorted // the requests in arrival order, served as Sorted serves its
}

// NewOtel returns a reader over r; it reads r to its end on the first Next.
func NewOtel(r io.Reader, opt TraceOptions) *Otel {
	return &Otel{r: r, opt: opt}
}

// Next returns the next request in arrival order, io.EOF at the end, or a
// *ParseError: a bad line, a bad attribute, or (with Line 0) a file without
// an llm_request span.
func (o *Otel) Next() (*Request, error) {
	if !o.read {
		o.read = true
		o.reqs.reqs, o.err = readOtel(o.r, o.opt)
	}
	if o.err != nil {
		return nil, o.err
	}
	return o.reqs.Next()
}

// ErrNoOtelRequests is the error of a file without an llm_request span.
var ErrNoOtelRequests = errors.New("no span named " + OtelSpanName + ": not the OTLP JSON of a vLLM server run with --otlp-traces-endpoint")

func readOtel(r io.Reader, opt TraceOptions) ([]*Request, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<28)
	var spans []otelRequest
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		var l otelLine
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, otelJSONError(line, err)
		}
		for _, rs := range l.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for i := range ss.Spans {
					if ss.Spans[i].Name != OtelSpanName {
						continue
					}
					s, err := otelRead(&ss.Spans[i], line)
					if err != nil {
						return nil, err
					}
					spans = append(spans, s)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{Line: line + 1, Err: err}
	}
	if len(spans) == 0 {
		return nil, &ParseError{Err: ErrNoOtelRequests}
	}
	slices.SortStableFunc(spans, func(a, b otelRequest) int { return cmp.Compare(a.start, b.start) })
	if opt.Limit > 0 && len(spans) > opt.Limit {
		spans = spans[:opt.Limit]
	}
	first := spans[0].start
	prefix := max(opt.SharedPrefix, 0)
	shared := uniqueChain(otelSharedChainSeed, prefix/opt.EngineBlockSize)
	reqs := make([]*Request, len(spans))
	for i := range spans {
		s := &spans[i]
		d := s.start - first // both in [0, MaxInt64]: no overflow
		at, ok := des.Time(d), true
		if opt.TimeScale != 1 { // else exact, in integer ns
			at, ok = des.FromNanos(float64(d) * opt.TimeScale)
		}
		if !ok || at < 0 || at > MaxArrival {
			return nil, &ParseError{Line: s.line, Key: otelStart, Err: outsideTime(fmt.Sprintf("arrival %d ns x time_scale %g", d, opt.TimeScale))}
		}
		m := s.measured
		reqs[i] = &Request{
			ID:           int64(i),
			Arrival:      at,
			InputTokens:  s.in,
			OutputTokens: s.out,
			Blocks:       extendUnique(shared.Prefix(min(prefix, s.in)/opt.EngineBlockSize), uint64(i), s.in/opt.EngineBlockSize),
			Measured:     &m,
			Prev:         -1, // prompt contents are not recorded
		}
	}
	return reqs, nil
}

// otelJSONError is a line encoding/json could not read into an otelLine,
// in JSON's terms: a value of the wrong kind under its dotted key
// ("resourceSpans.scopeSpans: want a list, got an object"), or broken JSON.
func otelJSONError(line int, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return &ParseError{Line: line, Err: fmt.Errorf("bad JSON: %w", err)}
	}
	want := "a number"
	switch te.Type.Kind() {
	case reflect.Slice:
		want = "a list"
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	}
	got, ok := map[string]string{"array": "a list", "object": "an object", "number": "a number", "string": "a string", "bool": "true or false"}[te.Value]
	if !ok {
		got = te.Value
	}
	return &ParseError{Line: line, Key: te.Field, Err: fmt.Errorf("want %s, got %s", want, got)}
}

// otelRead reads an llm_request span of the given line.
func otelRead(s *otelSpan, line int) (otelRequest, error) {
	out := otelRequest{line: line}
	bad := func(key, format string, a ...any) error {
		return &ParseError{Line: line, Key: key, Err: fmt.Errorf(format, a...)}
	}
	if s.Start == nil {
		return out, bad(otelStart, "missing")
	}
	start, ok := otelInt(s.Start)
	if !ok || start < 0 {
		return out, bad(otelStart, "want nanoseconds since 1970 (a string of digits), got %s", shown(s.Start))
	}
	out.start = start
	attrs := make(map[string]map[string]json.RawMessage, len(s.Attributes))
	for _, a := range s.Attributes {
		attrs[a.Key] = a.Value
	}
	for _, f := range []struct {
		key string
		n   *int
	}{{otelPromptTokens, &out.in}, {otelCompletionToks, &out.out}} {
		v, ok := attrs[f.key]
		if !ok {
			return out, bad(f.key, "missing")
		}
		raw, ok := v["intValue"]
		if !ok {
			return out, bad(f.key, "want an intValue, got %s", shownValue(v))
		}
		n, ok := otelInt(raw)
		if !ok {
			return out, bad(f.key, "want an integer, got %s", shown(raw))
		}
		if n < 1 || n > MaxTokens {
			return out, bad(f.key, "want an integer from 1 to %d, got %d", MaxTokens, n)
		}
		*f.n = int(n)
	}
	for _, f := range []struct {
		key string
		t   *des.Time
	}{
		{otelTTFT, &out.measured.TTFT}, {otelE2E, &out.measured.E2E}, {otelQueue, &out.measured.Queue},
		{otelPrefill, &out.measured.Prefill}, {otelDecode, &out.measured.Decode},
	} {
		*f.t = -1
		v, ok := attrs[f.key]
		if !ok {
			continue
		}
		raw, ok := v["doubleValue"]
		if !ok {
			raw, ok = v["intValue"]
		}
		if !ok {
			return out, bad(f.key, "want a doubleValue, got %s", shownValue(v))
		}
		sec, ok := otelFloat(raw)
		if !ok {
			return out, bad(f.key, "want seconds, a number, got %s", shown(raw))
		}
		t, ok := des.FromNanos(sec * 1e9)
		if !ok || sec < 0 {
			return out, bad(f.key, "want seconds, at least 0 and within virtual time, got %g", sec)
		}
		*f.t = t
	}
	return out, nil
}

// otelInt reads an OTLP JSON 64-bit integer: a string of decimal digits,
// or a JSON number without fraction or exponent.
func otelInt(raw json.RawMessage) (int64, bool) {
	s, ok := unquote(raw)
	n, err := strconv.ParseInt(s, 10, 64)
	return n, ok && err == nil
}

// otelFloat reads an OTLP JSON double: a JSON number, or a string holding
// one; finite only.
func otelFloat(raw json.RawMessage) (float64, bool) {
	s, ok := unquote(raw)
	f, err := strconv.ParseFloat(s, 64)
	return f, ok && err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// unquote is a JSON string's contents, or the text of any other JSON value
// (false for a string that does not decode).
func unquote(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil
	}
	return string(raw), true
}

// shown quotes a bad value for an error, cut short.
func shown(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > otelMaxShownValue {
		s = s[:otelMaxShownValue] + "..."
	}
	return s
}

// shownValue writes an attribute value's kind and contents for an error.
func shownValue(v map[string]json.RawMessage) string {
	if len(v) == 0 {
		return "no value"
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Sprintf("%s %s", keys[0], shown(v[keys[0]]))
}
