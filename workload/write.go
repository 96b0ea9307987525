package workload

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/kvsim/kvsim/des"
)

// FormatMillis writes an arrival as a Mooncake timestamp, in milliseconds,
// that the Mooncake reader (at time_scale 1) turns back into exactly t. The
// reader parses the timestamp as a float64 and rounds its value times 1e6 to
// the nearest nanosecond, so the exact decimal t/1e6 ("1500.000123") is
// written when it reads back as t, which holds below 2^51 ns (26 days);
// past that, the float64 nearest it that does. An arrival that no float64
// timestamp reads back as is an error.
func FormatMillis(t des.Time) (string, error) {
	if t < 0 {
		return "", fmt.Errorf("arrival %d ns is negative", t)
	}
	s := strconv.FormatInt(int64(t/des.Millisecond), 10)
	if frac := t % des.Millisecond; frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", err
	}
	if readsBack(x, t) {
		return s, nil
	}
	up, down := x, x
	for range 16 {
		up, down = math.Nextafter(up, math.Inf(1)), math.Nextafter(down, 0)
		for _, c := range []float64{down, up} {
			if readsBack(c, t) {
				return strconv.FormatFloat(c, 'f', -1, 64), nil
			}
		}
	}
	return "", fmt.Errorf("arrival %d ns has no millisecond timestamp that reads back exactly", t)
}

// readsBack reports whether the Mooncake reader turns timestamp ms into t.
func readsBack(ms float64, t des.Time) bool {
	got, err := TraceOptions{TimeScale: 1}.arrival(ms)
	return err == nil && got == t
}

// MooncakeWriter writes requests as a Mooncake JSONL trace whose hash ids
// each cover BlockSize tokens. A request's chain (Blocks) must be at that
// block size. Each distinct chain hash gets the next id from 0, in order of
// first appearance, so two requests' ids are equal at a position exactly
// when their chains are equal up to that block: the Mooncake reader, at
// block_size BlockSize, gives back chains that are equal exactly where the
// written ones were. A partial last block gets an id of its own. The id
// table holds every distinct block hash written (16 bytes or so each).
type MooncakeWriter struct {
	w     *bufio.Writer
	block int
	ids   map[uint64]uint64
	next  uint64
	last  des.Time
	buf   []byte
	n     int64
	hs    []uint64 // the request's block hashes, reused
}

// NewMooncakeWriter returns a writer of blockSize-token hash ids.
func NewMooncakeWriter(w io.Writer, blockSize int) *MooncakeWriter {
	return &MooncakeWriter{w: bufio.NewWriterSize(w, 1<<16), block: blockSize, ids: map[uint64]uint64{}}
}

// Write appends r as one line. Arrivals must not go backwards.
func (m *MooncakeWriter) Write(r *Request) error {
	if r.InputTokens < 1 || r.OutputTokens < 1 {
		return fmt.Errorf("request %d: %d input and %d output tokens: a trace needs at least 1 of each", r.ID, r.InputTokens, r.OutputTokens)
	}
	if want := r.InputTokens / m.block; r.Blocks.Len() != want {
		return fmt.Errorf("request %d: %d blocks for %d tokens, want %d at block size %d", r.ID, r.Blocks.Len(), r.InputTokens, want, m.block)
	}
	if r.Arrival < m.last {
		return fmt.Errorf("request %d: arrival %v before the previous one (%v)", r.ID, r.Arrival, m.last)
	}
	ts, err := FormatMillis(r.Arrival)
	if err != nil {
		return fmt.Errorf("request %d: %w", r.ID, err)
	}
	m.last = r.Arrival
	b := append(m.buf[:0], `{"timestamp": `...)
	b = append(b, ts...)
	b = append(b, `, "input_length": `...)
	b = strconv.AppendInt(b, int64(r.InputTokens), 10)
	b = append(b, `, "output_length": `...)
	b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
	b = append(b, `, "hash_ids": [`...)
	m.hs = r.Blocks.AppendHashes(m.hs[:0])
	for k, h := range m.hs {
		id, ok := m.ids[h]
		if !ok {
			id = m.next
			m.ids[h] = id
			m.next++
		}
		if k > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(b, id, 10)
	}
	if r.InputTokens%m.block != 0 {
		if r.Blocks.Len() > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(b, m.next, 10)
		m.next++
	}
	b = append(b, "]}\n"...)
	m.buf = b
	m.n++
	_, err = m.w.Write(b)
	return err
}

// Flush writes out buffered lines.
func (m *MooncakeWriter) Flush() error { return m.w.Flush() }

// Written is the number of requests written.
func (m *MooncakeWriter) Written() int64 { return m.n }

// AzureEpoch is the TIMESTAMP AzureWriter writes for arrival 0: the Azure
// reader replays arrivals relative to the first row, so any date would do.
var AzureEpoch = time.Date(2023, 11, 16, 0, 0, 0, 0, time.UTC)

// azureWriteLayout is azureTimeLayout with every fractional digit written.
const azureWriteLayout = "2006-01-02 15:04:05.0000000"

// AzureWriter writes requests as an Azure LLM inference trace CSV
// (TIMESTAMP, ContextTokens, GeneratedTokens). It writes what the format
// holds and nothing else: the blocks are dropped. AzureLoss tells whether
// that loses anything.
type AzureWriter struct {
	w      *bufio.Writer
	header bool
	buf    []byte
	n      int64
}

// NewAzureWriter returns a writer over w.
func NewAzureWriter(w io.Writer) *AzureWriter {
	return &AzureWriter{w: bufio.NewWriterSize(w, 1<<16)}
}

// Write appends r as one row, at AzureEpoch plus its arrival. The arrival
// must be a whole number of 100 ns, the format's resolution.
func (a *AzureWriter) Write(r *Request) error {
	if r.Arrival < 0 || r.Arrival%100 != 0 {
		return fmt.Errorf("request %d: arrival %d ns is not a whole number of 100 ns, the resolution of an Azure TIMESTAMP", r.ID, r.Arrival)
	}
	b := a.buf[:0]
	if !a.header {
		b = append(b, "TIMESTAMP,ContextTokens,GeneratedTokens\n"...)
		a.header = true
	}
	b = AzureEpoch.Add(time.Duration(r.Arrival)).AppendFormat(b, azureWriteLayout)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.InputTokens), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
	b = append(b, '\n')
	a.buf = b
	a.n++
	_, err := a.w.Write(b)
	return err
}

// Flush writes out buffered rows; a writer given no request writes the
// header alone.
func (a *AzureWriter) Flush() error {
	if !a.header {
		a.header = true
		if _, err := a.w.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n"); err != nil {
			return err
		}
	}
	return a.w.Flush()
}

// Written is the number of requests written.
func (a *AzureWriter) Written() int64 { return a.n }

// AzureLoss accumulates, request by request, what an Azure CSV cannot
// express of a workload, which the Azure reader would replay differently:
// prompts that share a prefix (Azure prompts share none), a first arrival
// other than 0 (Azure arrivals are relative to the first row), and arrivals
// the TIMESTAMP cannot hold exactly. Requests must come with their chains
// at engine block size 1, so that sharing at any block size shows as equal
// first blocks.
type AzureLoss struct {
	Requests     int64
	Shared       int64 // requests whose prompt starts like an earlier one's
	FirstShared  int64 // id of the first of them; -1 none
	Offset       des.Time
	Inexact      int64 // arrivals not a whole number of 100 ns, or out of range
	FirstInexact int64 // -1 none
	firsts       map[uint64]struct{}
}

// NewAzureLoss returns an empty account.
func NewAzureLoss() *AzureLoss {
	return &AzureLoss{FirstShared: -1, FirstInexact: -1, firsts: map[uint64]struct{}{}}
}

// Add accounts for r.
func (l *AzureLoss) Add(r *Request) {
	if l.Requests == 0 {
		l.Offset = r.Arrival
	}
	l.Requests++
	if r.Blocks.Len() > 0 {
		first := r.Blocks.Prefix(1).AppendHashes(nil)[0]
		if _, ok := l.firsts[first]; ok {
			l.Shared++
			if l.FirstShared < 0 {
				l.FirstShared = r.ID
			}
		}
		l.firsts[first] = struct{}{}
	}
	if !azureExact(r.Arrival - l.Offset) {
		l.Inexact++
		if l.FirstInexact < 0 {
			l.FirstInexact = r.ID
		}
	}
}

// azureExact reports whether the Azure reader gives back arrival d from a
// TIMESTAMP d after the first row's.
func azureExact(d des.Time) bool {
	if d < 0 || d%100 != 0 {
		return false
	}
	return readsBack(float64(d)/1e6, d)
}

// Lossless reports whether nothing would be lost so far.
func (l *AzureLoss) Lossless() bool { return l.Shared == 0 && l.Offset == 0 && l.Inexact == 0 }

// Err describes what would be lost, or is nil when nothing would be.
func (l *AzureLoss) Err() error {
	var what []string
	if l.Shared > 0 {
		what = append(what, fmt.Sprintf("prefix sharing: %d of %d requests start with the same block as an earlier one (first: request %d), and Azure prompts share no prefix",
			l.Shared, l.Requests, l.FirstShared))
	}
	if l.Offset != 0 {
		what = append(what, fmt.Sprintf("the start offset: the first request arrives at %v, and Azure arrivals are relative to the first row", l.Offset))
	}
	if l.Inexact > 0 {
		what = append(what, fmt.Sprintf("exact arrivals: %d arrivals are not a whole number of 100 ns after the first (first: request %d), the resolution of an Azure TIMESTAMP",
			l.Inexact, l.FirstInexact))
	}
	if len(what) == 0 {
		return nil
	}
	msg := "an Azure CSV would lose " + what[0]
	for _, w := range what[1:] {
		msg += "; and " + w
	}
	return fmt.Errorf("%s", msg)
}
