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
	// Blocks is the hash chain of the prompt's full engine blocks: block
	// k's hash identifies it and every block before it. It is kept as
	// rules where the reader or generator has them (a trace block, a
	// group's prefix), its hashes derived on demand (AppendHashes); shared
	// between requests where their prefixes are equal; never modified.
	Blocks block.Chain
	// Path is Blocks as a path in the run's chain store (block.Chains),
	// set by the simulation while the request is in the cluster; nil for
	// the engine alone.
	Path []block.Piece
	// Measured is what a real server measured for this request, from a
	// trace that carries measurements (otel); nil otherwise. The model
	// never reads it: it is reported beside the simulated values.
	Measured *Measured
	// Prev is the id of its previous turn, -1 none: the latest request
	// before it whose cache it would reuse (DESIGN.md section 11). The
	// generator sets it from the session; PrevTurns sets a trace's from
	// its TraceBlocks; a trace without hashes gives -1.
	Prev int64
	// TraceBlocks is the trace's own blocks as prefix keys, one a trace
	// block of the prompt (the full ones and a partial last): key j
	// identifies trace blocks 0 to j, so equal keys mean equal prefixes.
	// The Mooncake reader sets it for PrevTurns, which drops it; nil
	// otherwise.
	TraceBlocks []uint64
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

// A rechunker turns trace block ids, each covering trace tokens, into the
// hash chain of the full engine blocks (engine tokens each) of a prompt.
// Engine block k hashes its parent, the ids of every trace block it
// overlaps and its offset in the first of them (block.ChainHash), so equal
// trace prefixes give equal engine chains whatever the two sizes are. When
// the engine block size divides the trace block size into at least
// minRuleBlocks (Mooncake's 512 and 16: 32), each trace block is a rule of
// the chain (block.Chain): trace block i gives engine block k its id as
// the content and k*engine - i*trace, the block's offset in it, as the
// sub. Otherwise the chain is its hashes; when the size divides it into
// fewer, the rechunker keeps the SubKey of every offset an engine block
// can start at in a trace block.
type rechunker struct {
	trace, engine int
	rules         bool     // each trace block a rule of the chain (it divides into minRuleBlocks or more)
	subs          []uint64 // block.SubKey(j*engine) for engine block j of a trace block; nil unless aligned without rules
}

// minRuleBlocks is the fewest engine blocks a trace block covers for the
// rechunker to make it a rule: a rule takes the room of four hashes in
// the chain store.
const minRuleBlocks = 4

func newRechunker(traceBlock, engineBlock int) rechunker {
	r := rechunker{trace: traceBlock, engine: engineBlock}
	if traceBlock > 0 && engineBlock > 0 && traceBlock%engineBlock == 0 {
		if r.rules = traceBlock/engineBlock >= minRuleBlocks; !r.rules {
			r.subs = make([]uint64, traceBlock/engineBlock)
			for j := range r.subs {
				r.subs[j] = block.SubKey(uint64(j * engineBlock))
			}
		}
	}
	return r
}

// chain is the engine-block chain of a prompt of inputTokens tokens over
// trace block ids; the caller guarantees inputTokens <= r.trace*len(ids).
func (r rechunker) chain(ids []uint64, inputTokens int) block.Chain {
	n := inputTokens / r.engine
	if r.rules {
		var c block.Chain
		per := r.trace / r.engine
		c.Grow((n + per - 1) / per)
		for i, k := 0, 0; k < n; i, k = i+1, k+per {
			c.AppendRule(ids[i], -uint64(i*r.trace), uint32(r.engine), min(per, n-k))
		}
		return c
	}
	out := make([]uint64, n)
	var h uint64
	if r.subs != nil { // each engine block lies in one trace block
		for i, k := 0, 0; k < n; i++ {
			c := block.ContentKey(ids[i])
			for _, s := range r.subs[:min(len(r.subs), n-k)] {
				h = block.StepHash(h, c^s)
				out[k] = h
				k++
			}
		}
		return block.Hashed(out)
	}
	for k := range n {
		start, end := k*r.engine, (k+1)*r.engine-1
		i0, i1 := start/r.trace, end/r.trace
		s := block.SubKey(uint64(start - i0*r.trace))
		for i := i0; i <= i1; i++ {
			h = block.StepHash(h, block.ContentKey(ids[i])^s)
		}
		out[k] = h
	}
	return block.Hashed(out)
}
