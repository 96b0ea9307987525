package workload

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

// azureTimeLayout is the TIMESTAMP format of the Azure LLM inference traces.
const azureTimeLayout = "2006-01-02 15:04:05.9999999"

// Azure reads the Azure LLM inference trace CSV (TIMESTAMP, ContextTokens,
// GeneratedTokens), columns located by header name. Arrival times are
// relative to the first row. The trace has no prefix information, so every
// prompt gets a chain of its own.
type Azure struct {
	r        *csv.Reader
	opt      TraceOptions
	col      [3]int // indexes of TIMESTAMP, ContextTokens, GeneratedTokens
	fields   int    // columns of the header, which every row has
	line     int
	nextID   int64
	first    time.Time
	last     des.Time
	started  bool
	headerOK bool
}

var azureColumns = [3]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

// NewAzure returns a streaming reader over r. TraceBlockSize is unused.
func NewAzure(r io.Reader, opt TraceOptions) *Azure {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	return &Azure{r: cr, opt: opt}
}

func (a *Azure) header() error {
	rec, err := a.r.Read()
	a.line++
	if err == io.EOF {
		return &ParseError{Line: 1, Err: errors.New("empty file: want a header TIMESTAMP,ContextTokens,GeneratedTokens")}
	}
	if err != nil {
		return &ParseError{Line: 1, Err: err}
	}
	for i, name := range azureColumns {
		a.col[i] = -1
		for j, h := range rec {
			if h != name && (j > 0 || h != "\ufeff"+name) {
				continue
			}
			if a.col[i] >= 0 {
				return &ParseError{Line: 1, Key: name, Err: fmt.Errorf("column given twice (columns %d and %d)", a.col[i]+1, j+1)}
			}
			a.col[i] = j
		}
		if a.col[i] < 0 {
			return &ParseError{Line: 1, Key: name, Err: fmt.Errorf("column missing from header %s", strings.Join(rec, ","))}
		}
	}
	a.fields = len(rec)
	a.headerOK = true
	return nil
}

// Next returns the next request, io.EOF at the end, or a *ParseError.
func (a *Azure) Next() (*Request, error) {
	if !a.headerOK {
		if err := a.header(); err != nil {
			return nil, err
		}
	}
	if a.opt.Limit > 0 && a.nextID >= int64(a.opt.Limit) {
		return nil, io.EOF
	}
	rec, err := a.r.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, &ParseError{Line: pe.Line, Err: pe.Err}
		}
		return nil, &ParseError{Line: a.line + 1, Err: err}
	}
	a.line, _ = a.r.FieldPos(0)
	bad := func(key, format string, args ...any) error {
		return &ParseError{Line: a.line, Key: key, Err: fmt.Errorf(format, args...)}
	}
	for i, name := range azureColumns {
		if a.col[i] >= len(rec) {
			return nil, bad(name, "missing")
		}
	}
	if len(rec) != a.fields {
		return nil, &ParseError{Line: a.line, Err: fmt.Errorf("%d fields, but the header has %d columns", len(rec), a.fields)}
	}
	ts, err := time.Parse(azureTimeLayout, rec[a.col[0]])
	if err != nil {
		return nil, bad("TIMESTAMP", "want %q, got %q", azureTimeLayout, rec[a.col[0]])
	}
	in, err := strconv.Atoi(rec[a.col[1]])
	if err != nil || in < 1 || in > MaxTokens {
		return nil, bad("ContextTokens", "want an integer from 1 to %d, got %q", MaxTokens, rec[a.col[1]])
	}
	out, err := strconv.Atoi(rec[a.col[2]])
	if err != nil || out < 1 || out > MaxTokens {
		return nil, bad("GeneratedTokens", "want an integer from 1 to %d, got %q", MaxTokens, rec[a.col[2]])
	}
	if !a.started {
		a.first, a.started = ts, true
	}
	since := ts.Sub(a.first)
	if since < 0 && !a.opt.Unsorted {
		return nil, bad("TIMESTAMP", "goes backwards (before the first row); set workload.trace.sort: true to sort the trace")
	}
	at, err := a.opt.arrival(float64(abs(since).Nanoseconds()) / 1e6)
	if err != nil {
		return nil, bad("TIMESTAMP", "%v", err)
	}
	if since < 0 {
		at = -at // before the first row: Sorted shifts every arrival
	}
	if at < a.last && !a.opt.Unsorted {
		return nil, bad("TIMESTAMP", "goes backwards (%v after %v); set workload.trace.sort: true to sort the trace", at, a.last)
	}
	a.last = at
	req := &Request{
		ID:           a.nextID,
		Arrival:      at,
		InputTokens:  in,
		OutputTokens: out,
		Blocks:       uniqueChain(uint64(a.nextID), in/a.opt.EngineBlockSize),
		Prev:         -1, // no prefix information
	}
	a.nextID++
	return req, nil
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// uniqueChain is the hash chain of n blocks of content no other request
// shares, keyed by owner.
func uniqueChain(owner uint64, n int) block.Chain { return extendUnique(block.Chain{}, owner, n) }

// extendUnique is the chain of n blocks that begins with prefix (a chain
// of at most n blocks) and goes on with content no other request shares,
// keyed by owner: block k has the block.ChainHash content Mix(owner ^ ...)
// and the sub k. With an empty prefix it is uniqueChain.
func extendUnique(prefix block.Chain, owner uint64, n int) block.Chain {
	c := prefix.Prefix(n)
	c.AppendRule(block.Mix(owner^0xa2f1b6c3d4e5f607), 0, 1, n-c.Len())
	return c
}
