// Package workload defines requests and their engine-block hash chains, and
// produces them in arrival order from traces (Mooncake JSONL, Azure CSV,
// vLLM's OTLP JSON spans) or from a seeded synthetic generator.
package workload

import (
	"fmt"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

// Request is one inference request as the cluster sees it.
type Request struct {
	ID           int64    // ordinal in arrival (trace) order, from 0
	Arrival      des.Time // virtual arrival time
	InputTokens  int      // prompt tokens
	OutputTokens int      // tokens to generate; the router never reads it
	// Blocks is the chain of engine-block hashes of the prompt's full blocks:
	// Blocks[k] identifies block k and every block before it. Shared between
	// requests where their prefixes are equal; never modified.
	Blocks []uint64
	// Path is Blocks as a path in the run's chain store (block.Chains),
	// set by the simulation while the request is in the cluster; nil for
	// the engine alone.
	Path []block.Piece
	// Measured is what a real server measured for this request, from a
	// trace that carries measurements (otel); nil otherwise. The model
	// never reads it: it is reported beside the simulated values.
	Measured *Measured
}

// Measured is one request's latencies as a real vLLM server measured them,
// in nanoseconds, each -1 when the trace lacks it. vLLM's definitions: TTFT
// from arrival to the first token, E2E from arrival to the last, Queue from
// arrival to first scheduling, Prefill from first scheduling to the first
// token, Decode from the first token to the last.
type Measured struct {
	TTFT, E2E, Queue, Prefill, Decode des.Time
}

// MaxTokens bounds a request's prompt and output lengths (16,777,216
// tokens): far above any model's context, low enough that one request's
// block chain stays a few megabytes.
const MaxTokens = 1 << 24

// Source yields requests in arrival order. Next returns io.EOF after the
// last request.
type Source interface {
	Next() (*Request, error)
}

// ParseError is a bad record in a trace: the 1-based line and the field.
// Line 0 is the file as a whole (an otel file without a request).
type ParseError struct {
	Line int
	Key  string
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		if e.Key == "" {
			return e.Err.Error()
		}
		return fmt.Sprintf("%s: %v", e.Key, e.Err)
	}
	if e.Key == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %s: %v", e.Line, e.Key, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ChainHash derives the hash of a block from its parent's hash and the
// identity of its own content (content, sub). Zero is never returned, so
// callers can use it as "no hash".
func ChainHash(parent, content, sub uint64) uint64 {
	return chainStep(parent, contentKey(content), subKey(sub))
}

// contentKey and subKey are the mixed content and sub of ChainHash, which a
// chain whose blocks repeat them computes once.
func contentKey(content uint64) uint64 { return block.Mix(content ^ 0x9e3779b97f4a7c15) }
func subKey(sub uint64) uint64         { return block.Mix(sub + 0x632be59bd9b4e019) }

// chainStep is ChainHash given contentKey(content) and subKey(sub).
func chainStep(parent, content, sub uint64) uint64 {
	h := block.Mix(parent ^ content ^ sub)
	if h == 0 {
		h = 1
	}
	return h
}

// A rechunker turns trace block ids, each covering trace tokens, into the
// hash chain of the full engine blocks (engine tokens each) of a prompt.
// Engine block k hashes its parent, the ids of every trace block it
// overlaps and its offset in the first of them, so equal trace prefixes
// give equal engine chains whatever the two sizes are. It keeps the subKey
// of every offset an engine block can start at in a trace block when the
// engine block size divides the trace block size (Mooncake's 512 and 16).
type rechunker struct {
	trace, engine int
	subs          []uint64 // subKey(j*engine) for engine block j of a trace block; nil unless aligned
}

func newRechunker(traceBlock, engineBlock int) rechunker {
	r := rechunker{trace: traceBlock, engine: engineBlock}
	if traceBlock > 0 && engineBlock > 0 && traceBlock%engineBlock == 0 {
		r.subs = make([]uint64, traceBlock/engineBlock)
		for j := range r.subs {
			r.subs[j] = subKey(uint64(j * engineBlock))
		}
	}
	return r
}

// chain is the engine-block chain of a prompt of inputTokens tokens over
// trace block ids; the caller guarantees inputTokens <= r.trace*len(ids).
func (r rechunker) chain(ids []uint64, inputTokens int) []uint64 {
	n := inputTokens / r.engine
	out := make([]uint64, n)
	var h uint64
	if r.subs != nil { // each engine block lies in one trace block
		for i, k := 0, 0; k < n; i++ {
			c := contentKey(ids[i])
			for _, s := range r.subs[:min(len(r.subs), n-k)] {
				h = chainStep(h, c, s)
				out[k] = h
				k++
			}
		}
		return out
	}
	for k := range n {
		start, end := k*r.engine, (k+1)*r.engine-1
		i0, i1 := start/r.trace, end/r.trace
		s := subKey(uint64(start - i0*r.trace))
		for i := i0; i <= i1; i++ {
			h = chainStep(h, contentKey(ids[i]), s)
		}
		out[k] = h
	}
	return out
}
