package workload

import (
	"slices"

	"github.com/kvsim/kvsim/des"
)

// Stats describes a workload as a run would see it: its requests in
// arrival order, their lengths and how much of their prompts an infinite
// prefix cache would hold.
type Stats struct {
	Requests      int64   `json:"requests"`
	FirstArrivalS float64 `json:"first_arrival_s"`
	LastArrivalS  float64 `json:"last_arrival_s"`
	// SpanS is the time from the first arrival to the last.
	SpanS float64 `json:"span_s"`
	// MeanRate is Requests / SpanS, 0 when the span is 0.
	MeanRate float64 `json:"mean_rate_per_s"`
	// Arrivals counts requests in buckets of BucketS seconds of virtual
	// time from 0 to the last arrival; the last bucket may be partial.
	BucketS  float64  `json:"bucket_s"`
	Arrivals []Bucket `json:"arrivals"`
	// Peak is the busiest of the Arrivals buckets.
	Peak   Peak    `json:"peak"`
	Input  Lengths `json:"input_tokens"`
	Output Lengths `json:"output_tokens"`
	// Sessions is the number of sessions, nil where the workload does not
	// say (trace formats carry no session id).
	Sessions *int64 `json:"sessions"`
	// The prefix hits an infinite cache would reach: a block is a full
	// BlockSize-token block of a prompt, identified by its chain hash, and
	// it hits when an earlier request (in arrival order) had the same
	// chain hash. HitTokenRatio is the hit blocks' tokens over all prompt
	// tokens, partial last blocks included.
	BlockSize     int     `json:"block_size"`
	Blocks        int64   `json:"blocks"`
	HitBlocks     int64   `json:"hit_blocks"`
	HitRatio      float64 `json:"hit_ratio"`
	HitTokenRatio float64 `json:"hit_token_ratio"`
}

// Bucket is the arrivals of one time bucket.
type Bucket struct {
	StartS   float64 `json:"start_s"`
	Requests int64   `json:"requests"`
	Rate     float64 `json:"rate_per_s"`
}

// Peak is the most requests an arrival bucket holds, and the start of
// every bucket that holds as many, in time order: more than one when
// buckets tie.
type Peak struct {
	Requests int64     `json:"requests"`
	Rate     float64   `json:"rate_per_s"`
	StartsS  []float64 `json:"starts_s"`
}

// Lengths summarises token counts; percentiles by the nearest-rank rule
// (the smallest length at least a fraction p of the requests are at or
// below), so each is a length some request has.
type Lengths struct {
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	Max   int64   `json:"max"`
	Mean  float64 `json:"mean"`
	Total int64   `json:"total"`
}

// StatsBuilder accumulates Stats request by request. It keeps each
// request's arrival and lengths (16 bytes) and every distinct block hash.
type StatsBuilder struct {
	block    int
	arrivals []des.Time
	in, out  []int32
	seen     map[uint64]struct{}
	blocks   int64
	hits     int64
	hashes   []uint64 // the request's block hashes, reused
}

// NewStatsBuilder measures prefix hits at blockSize, which must be the
// block size of the requests' chains.
func NewStatsBuilder(blockSize int) *StatsBuilder {
	return &StatsBuilder{block: blockSize, seen: map[uint64]struct{}{}}
}

// Add accounts for the next request in arrival order.
func (b *StatsBuilder) Add(r *Request) {
	b.arrivals = append(b.arrivals, r.Arrival)
	b.in = append(b.in, int32(r.InputTokens))
	b.out = append(b.out, int32(r.OutputTokens))
	b.hashes = r.Blocks.AppendHashes(b.hashes[:0])
	for _, h := range b.hashes {
		b.blocks++
		if _, ok := b.seen[h]; ok {
			b.hits++
		} else {
			b.seen[h] = struct{}{}
		}
	}
}

// LastArrival is the latest arrival added so far; 0 with none.
func (b *StatsBuilder) LastArrival() des.Time {
	if len(b.arrivals) == 0 {
		return 0
	}
	return b.arrivals[len(b.arrivals)-1]
}

// Stats returns the figures, with arrival buckets of the given width, or
// of AutoBucket's when bucket is 0. It sorts the kept lengths in place.
func (b *StatsBuilder) Stats(bucket des.Time) *Stats {
	n := int64(len(b.arrivals))
	s := &Stats{Requests: n, BlockSize: b.block, Blocks: b.blocks, HitBlocks: b.hits}
	s.Input, s.Output = lengths(b.in), lengths(b.out)
	if b.blocks > 0 {
		s.HitRatio = float64(b.hits) / float64(b.blocks)
	}
	if s.Input.Total > 0 {
		s.HitTokenRatio = float64(b.hits*int64(b.block)) / float64(s.Input.Total)
	}
	if n == 0 {
		return s
	}
	first, last := b.arrivals[0], b.arrivals[n-1]
	s.FirstArrivalS, s.LastArrivalS = first.Seconds(), last.Seconds()
	s.SpanS = (last - first).Seconds()
	if last > first {
		s.MeanRate = float64(n) / s.SpanS
	}
	if bucket <= 0 {
		bucket = AutoBucket(last)
	}
	s.BucketS = bucket.Seconds()
	counts := make([]int64, last/bucket+1)
	for _, t := range b.arrivals {
		counts[t/bucket]++
	}
	s.Arrivals = make([]Bucket, len(counts))
	for i, c := range counts {
		s.Arrivals[i] = Bucket{StartS: (des.Time(i) * bucket).Seconds(), Requests: c, Rate: float64(c) / s.BucketS}
	}
	for _, a := range s.Arrivals {
		if a.Requests > s.Peak.Requests {
			s.Peak = Peak{Requests: a.Requests, Rate: a.Rate}
		}
		if a.Requests == s.Peak.Requests {
			s.Peak.StartsS = append(s.Peak.StartsS, a.StartS)
		}
	}
	return s
}

// bucketLadder are the bucket widths AutoBucket picks from.
var bucketLadder = []des.Time{
	des.Second, 2 * des.Second, 5 * des.Second, 10 * des.Second, 15 * des.Second, 30 * des.Second,
	des.Minute, 2 * des.Minute, 5 * des.Minute, 10 * des.Minute, 15 * des.Minute, 30 * des.Minute,
	60 * des.Minute, 120 * des.Minute, 360 * des.Minute, 720 * des.Minute, 1440 * des.Minute,
}

// AutoBucket is the arrival bucket width for arrivals up to last: the
// smallest of 1s, 2s, 5s, 10s, 15s, 30s, 1m, 2m, 5m, 10m, 15m, 30m, 1h,
// 2h, 6h, 12h, 24h that gives at most 60 buckets (one minute for an hour
// of trace), else the smallest whole number of days that does.
func AutoBucket(last des.Time) des.Time {
	for _, w := range bucketLadder {
		if last/w < 60 {
			return w
		}
	}
	day := 1440 * des.Minute
	return (last/60/day + 1) * day
}

// lengths sorts v and summarises it.
func lengths(v []int32) Lengths {
	n := int64(len(v))
	if n == 0 {
		return Lengths{}
	}
	slices.Sort(v)
	var l Lengths
	for _, x := range v {
		l.Total += int64(x)
	}
	rank := func(perMille int64) int64 { return int64(v[max(1, (perMille*n+999)/1000)-1]) }
	l.P50, l.P90, l.P99, l.Max = rank(500), rank(900), rank(990), int64(v[n-1])
	l.Mean = float64(l.Total) / float64(n)
	return l
}

// Sessions is the number of sessions the generator has started: after the
// last request, the workload's sessions.
func (g *Generator) Sessions() int64 { return int64(g.sessions) }
