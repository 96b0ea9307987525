package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload/tracestest"
)

// otelSpanJSON is an llm_request span as vLLM writes it, starting at start
// ns, with the given attributes (already JSON).
func otelSpanJSON(name string, start int64, attrs ...string) string {
	return fmt.Sprintf(`{"traceId":"23010e4f","spanId":"66d6","name":%q,"kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[%s],"status":{}}`,
		name, start, start+1e9, strings.Join(attrs, ","))
}

// otelLineJSON is one line of the file: spans under one resource and scope.
func otelLineJSON(spans ...string) string {
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"vllm"}}]},` +
		`"scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[` + strings.Join(spans, ",") + `]}]}]}`
}

func intAttr(key string, v string) string {
	return fmt.Sprintf(`{"key":%q,"value":{"intValue":%s}}`, key, v)
}

func doubleAttr(key string, v string) string {
	return fmt.Sprintf(`{"key":%q,"value":{"doubleValue":%s}}`, key, v)
}

// tokens are the two required attributes.
func tokens(in, out int) []string {
	return []string{intAttr("gen_ai.usage.prompt_tokens", fmt.Sprintf("%q", fmt.Sprint(in))),
		intAttr("gen_ai.usage.completion_tokens", fmt.Sprintf("%q", fmt.Sprint(out)))}
}

// latencies are the five measured latencies, in seconds.
func latencies(ttft, e2e, queue, prefill, decode string) []string {
	return []string{doubleAttr("gen_ai.latency.time_to_first_token", ttft), doubleAttr("gen_ai.latency.e2e", e2e),
		doubleAttr("gen_ai.latency.time_in_queue", queue), doubleAttr("gen_ai.latency.time_in_model_prefill", prefill),
		doubleAttr("gen_ai.latency.time_in_model_decode", decode)}
}

const t0 = 1769021450278127360 // a startTimeUnixNano of the shared traces

// otelSample: four requests out of order, two of them on one line beside a
// span of another name; the third in arrival order lacks time_in_queue and
// gives its completion tokens as a JSON number.
var otelSample = strings.Join([]string{
	otelLineJSON(otelSpanJSON("llm_request", t0+2_500_000_000, append(tokens(40, 5), latencies("0.25", "1.5", "0.001", "0.2", "1.25")...)...)),
	"",
	otelLineJSON(
		otelSpanJSON("llm_request", t0, append(tokens(1527, 500), latencies("0.2739403247833252", "3.565915584564209", "0.00001897290349006653", "0.27202305011451244", "3.2923327800817788")...)...),
		otelSpanJSON("http_get", t0-5e9),
		otelSpanJSON("llm_request", t0+3_000_000_001,
			intAttr("gen_ai.usage.prompt_tokens", `"16"`), intAttr("gen_ai.usage.completion_tokens", `7`),
			doubleAttr("gen_ai.latency.time_to_first_token", "0.01"), doubleAttr("gen_ai.latency.e2e", "0.1"),
			doubleAttr("gen_ai.latency.time_in_model_prefill", "0.005"), doubleAttr("gen_ai.latency.time_in_model_decode", "0.09")),
	),
	otelLineJSON(otelSpanJSON("llm_request", t0+1_000_000_000, append(tokens(15, 1), latencies("1", "2", "0", "0.5", "1")...)...)),
}, "\n") + "\n"

func TestOtel(t *testing.T) {
	got := readAll(t, NewOtel(strings.NewReader(otelSample), opt))
	if len(got) != 4 {
		t.Fatalf("%d requests want 4", len(got))
	}
	want := []struct {
		arrival des.Time
		in, out int
	}{{0, 1527, 500}, {des.Second, 15, 1}, {2500 * des.Millisecond, 40, 5}, {3*des.Second + 1, 16, 7}}
	for i, r := range got {
		w := want[i]
		if r.ID != int64(i) || r.Arrival != w.arrival || r.InputTokens != w.in || r.OutputTokens != w.out || r.Blocks.Len() != w.in/16 {
			t.Errorf("request %d: %+v, want arrival %v, %d in, %d out", i, r, w.arrival, w.in, w.out)
		}
	}
	// Seconds to ns, rounded to the nearest; -1 for an absent attribute.
	if m := *got[0].Measured; m != (Measured{TTFT: 273940325, E2E: 3565915585, Queue: 18973, Prefill: 272023050, Decode: 3292332780}) {
		t.Errorf("measured %+v", m)
	}
	if m := *got[3].Measured; m != (Measured{TTFT: 10 * des.Millisecond, E2E: 100 * des.Millisecond, Queue: -1, Prefill: 5 * des.Millisecond, Decode: 90 * des.Millisecond}) {
		t.Errorf("measured without time_in_queue %+v", m)
	}
	// No prompt shares a block with another.
	seen := map[uint64]bool{}
	for _, r := range got {
		for _, h := range hashes(r) {
			if seen[h] {
				t.Fatalf("request %d shares block %x", r.ID, h)
			}
			seen[h] = true
		}
	}
	// time_scale and limit: the first requests in arrival order.
	o := opt
	o.TimeScale, o.Limit = 0.5, 3
	got = readAll(t, NewOtel(strings.NewReader(otelSample), o))
	if len(got) != 3 || got[1].Arrival != 500*des.Millisecond || got[2].Arrival != 1250*des.Millisecond || got[2].InputTokens != 40 {
		t.Errorf("time_scale 0.5, limit 3: %d requests, %+v", len(got), got)
	}
	// Equal start times stay in file order.
	same := otelLineJSON(otelSpanJSON("llm_request", 5, tokens(20, 1)...), otelSpanJSON("llm_request", 5, tokens(30, 1)...)) + "\n" +
		otelLineJSON(otelSpanJSON("llm_request", 4, tokens(10, 1)...))
	got = readAll(t, NewOtel(strings.NewReader(same), opt))
	if len(got) != 3 || got[0].InputTokens != 10 || got[1].InputTokens != 20 || got[2].InputTokens != 30 || got[2].Arrival != 1 {
		t.Errorf("ties: %+v %+v %+v", got[0], got[1], got[2])
	}
}

// TestOtelSharedPrefix: with shared_prefix N every prompt begins with the
// same N/block_size blocks and no more; a shorter prompt is all shared.
func TestOtelSharedPrefix(t *testing.T) {
	in := otelLineJSON(otelSpanJSON("llm_request", 0, tokens(200, 1)...), otelSpanJSON("llm_request", 1, tokens(100, 1)...),
		otelSpanJSON("llm_request", 2, tokens(40, 1)...))
	o := opt
	o.SharedPrefix = 72 // 4.5 blocks of 16: 4 shared, the fifth mixes shared and own tokens
	got := readAll(t, NewOtel(strings.NewReader(in), o))
	a, b, c := hashes(got[0]), hashes(got[1]), hashes(got[2])
	if len(a) != 12 || len(b) != 6 || len(c) != 2 {
		t.Fatalf("blocks %d %d %d", len(a), len(b), len(c))
	}
	if !slices.Equal(a[:4], b[:4]) || a[4] == b[4] || a[5] == b[5] || !slices.Equal(c, a[:2]) {
		t.Errorf("shared_prefix 72: a %x\nb %x\nc %x", a, b, c)
	}
	// Without a shared prefix, no first block is shared, nor equal to the
	// shared one.
	plain := readAll(t, NewOtel(strings.NewReader(in), opt))
	if p0 := hashes(plain[0])[0]; p0 == a[0] || p0 == hashes(plain[1])[0] {
		t.Error("without shared_prefix the first blocks are shared, or equal to the shared ones")
	}
}

func TestOtelErrors(t *testing.T) {
	good := otelLineJSON(otelSpanJSON("llm_request", t0, tokens(20, 2)...))
	span := func(attrs ...string) string { return otelLineJSON(otelSpanJSON("llm_request", t0, attrs...)) }
	prompt, completion := tokens(20, 2)[0], tokens(20, 2)[1]
	for _, c := range []struct{ in, want string }{
		{good + "\n" + good[:len(good)-20], "line 2: bad JSON"},
		{good + "\n\n" + span(completion), "line 3: gen_ai.usage.prompt_tokens: missing"},
		{span(prompt), "line 1: gen_ai.usage.completion_tokens: missing"},
		{span(intAttr("gen_ai.usage.prompt_tokens", `"many"`), completion), `line 1: gen_ai.usage.prompt_tokens: want an integer, got "many"`},
		{span(intAttr("gen_ai.usage.prompt_tokens", `12.5`), completion), `gen_ai.usage.prompt_tokens: want an integer, got 12.5`},
		{span(`{"key":"gen_ai.usage.prompt_tokens","value":{"stringValue":"20"}}`, completion), `gen_ai.usage.prompt_tokens: want an intValue, got stringValue "20"`},
		{span(prompt, intAttr("gen_ai.usage.completion_tokens", `"0"`)), "gen_ai.usage.completion_tokens: want an integer from 1 to 16777216, got 0"},
		{span(append(tokens(20, 2), doubleAttr("gen_ai.latency.e2e", `"fast"`))...), `line 1: gen_ai.latency.e2e: want seconds, a number, got "fast"`},
		{span(append(tokens(20, 2), doubleAttr("gen_ai.latency.time_in_queue", `-0.5`))...), `gen_ai.latency.time_in_queue: want seconds, at least 0`},
		{span(append(tokens(20, 2), `{"key":"gen_ai.latency.time_to_first_token","value":{"boolValue":true}}`)...), `gen_ai.latency.time_to_first_token: want a doubleValue, got boolValue true`},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","attributes":[]}]}]}]}`, "line 1: startTimeUnixNano: missing"},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"llm_request","startTimeUnixNano":"soon"}]}]}]}`, `line 1: startTimeUnixNano: want nanoseconds since 1970 (a string of digits), got "soon"`},
		// JSON of the wrong shape, in JSON's terms rather than Go's.
		{`{"resourceSpans":5}`, "line 1: resourceSpans: want a list, got a number"},
		{`{"resourceSpans":[{"scopeSpans":{"spans":[]}}]}`, "line 1: resourceSpans.scopeSpans: want a list, got an object"},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":7}]}]}]}`, "line 1: resourceSpans.scopeSpans.spans.name: want a string, got a number"},
		{`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"value":[]}]}]}]}]}`,
			"line 1: resourceSpans.scopeSpans.spans.attributes.value: want an object, got a list"},
		{`[]`, "line 1: want an object, got a list"},
		{"", "no span named llm_request"},
		{otelLineJSON(otelSpanJSON("http_get", t0)) + "\n", "no span named llm_request"},
	} {
		var err error
		src := NewOtel(strings.NewReader(c.in), opt)
		for err == nil {
			_, err = src.Next()
		}
		var pe *ParseError
		if err == io.EOF || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q...: got %v, want %q", c.in, err, c.want)
		}
		if msg := err.Error(); strings.Contains(msg, "Go ") || strings.Contains(msg, "otelLine") || strings.Contains(msg, "struct") {
			t.Errorf("%.60q...: %v speaks of Go, not of the trace", c.in, err)
		}
	}
	// A file without an llm_request span is an error of the whole file.
	_, err := NewOtel(strings.NewReader(""), opt).Next()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 0 || !errors.Is(err, ErrNoOtelRequests) {
		t.Errorf("empty file: %#v", err)
	}
	// A later arrival that time_scale pushes out of virtual time.
	far := good + "\n" + otelLineJSON(otelSpanJSON("llm_request", t0+1e18, tokens(20, 2)...))
	o := opt
	o.TimeScale = 100
	if _, err := NewOtel(strings.NewReader(far), o).Next(); err == nil || !strings.Contains(err.Error(), "line 2: startTimeUnixNano: arrival") {
		t.Errorf("arrival out of virtual time: %v", err)
	}
}

func TestDetectOtel(t *testing.T) {
	line := otelLineJSON(otelSpanJSON("llm_request", t0, tokens(20, 2)...))
	for _, c := range []struct{ name, head, want string }{
		{"traces.json", line, "otel"}, {"t.jsonl", "\ufeff  { \"resourceSpans\": []}", "otel"}, {"trace", line, "otel"},
		{"traces.json", `{"timestamp": 0}`, "mooncake"}, {"traces.json", "", "mooncake"},
	} {
		if got := DetectFormat(c.name, []byte(c.head)); string(got) != c.want {
			t.Errorf("DetectFormat(%q, %.30q) = %q, want %q", c.name, c.head, got, c.want)
		}
	}
}

// TestOtelSharedTraces reads the two measured vLLM runs. The request counts
// and the mean TTFT, E2E and ITL are those their README publishes; the
// prompt and output token totals and the last arrival (the latest span
// start less the earliest) are not in the README: they are the files' own,
// taken from an independent Python parse of the JSON, not from this
// reader.
func TestOtelSharedTraces(t *testing.T) {
	for _, c := range []struct {
		dir                  string
		requests             int
		ttftMs, e2eMs, itlMs float64
		prompt, output       int64
		last                 des.Time
	}{
		{"jan21-llama7b-train-1", 282, 88.1, 3450, 7.69, 534_472, 122_941, 651_647_194_880},
		{"jan20-codellama-train-1", 280, 1969, 22847, 28.80, 1_097_645, 202_737, 2_201_637_272_832},
	} {
		t.Run(c.dir, func(t *testing.T) {
			f := openFile(t, tracestest.VLLMPath(t, c.dir+"/traces.json"))
			got := readAll(t, NewOtel(f, opt))
			if len(got) != c.requests {
				t.Fatalf("%d requests want %d", len(got), c.requests)
			}
			var ttft, e2e, itl float64
			var prompt, output int64
			itlN := 0
			for i, r := range got {
				m := r.Measured
				if r.ID != int64(i) || (i > 0 && r.Arrival < got[i-1].Arrival) || m == nil || m.TTFT < 0 || m.E2E < 0 || m.Queue < 0 || m.Prefill < 0 || m.Decode < 0 {
					t.Fatalf("request %d: %+v %+v", i, r, m)
				}
				ttft += float64(m.TTFT)
				e2e += float64(m.E2E)
				if r.OutputTokens > 1 {
					itl += float64(m.Decode) / float64(r.OutputTokens-1)
					itlN++
				}
				prompt += int64(r.InputTokens)
				output += int64(r.OutputTokens)
			}
			n := float64(len(got))
			ttft, e2e, itl = ttft/n/1e6, e2e/n/1e6, itl/float64(itlN)/1e6
			near := func(x, want float64) bool { return math.Abs(x-want) <= 0.0005*want+0.05 }
			if got[0].Arrival != 0 || got[len(got)-1].Arrival != c.last || !near(ttft, c.ttftMs) || !near(e2e, c.e2eMs) ||
				math.Abs(itl-c.itlMs) > 0.005 || prompt != c.prompt || output != c.output {
				t.Errorf("first arrival %v, last %d ns; mean TTFT %.2f ms, E2E %.1f ms, ITL %.3f ms; tokens %d in, %d out",
					got[0].Arrival, got[len(got)-1].Arrival, ttft, e2e, itl, prompt, output)
			}
			t.Logf("%d requests over %v; mean TTFT %.2f ms, E2E %.1f ms, ITL %.3f ms", len(got), got[len(got)-1].Arrival, ttft, e2e, itl)
		})
	}
}

func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
