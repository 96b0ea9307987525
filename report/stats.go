package report

import (
	"encoding/json"
	"math"
	"math/bits"
	"slices"
)

// Percentiles summarises a latency distribution in milliseconds, for
// summary.json. An empty distribution has none: NoPercentiles, NaN, null
// in JSON.
type Percentiles struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// NoPercentiles are the percentiles of no value: NaN, null in JSON.
func NoPercentiles() Percentiles {
	n := math.NaN()
	return Percentiles{P50: n, P90: n, P95: n, P99: n, Max: n}
}

// percentilesJSON is Percentiles as JSON holds them: null for NaN.
type percentilesJSON struct {
	P50 *float64 `json:"p50_ms"`
	P90 *float64 `json:"p90_ms"`
	P95 *float64 `json:"p95_ms"`
	P99 *float64 `json:"p99_ms"`
	Max *float64 `json:"max_ms"`
}

// MarshalJSON writes p with null for NaN (JSON has no NaN).
func (p Percentiles) MarshalJSON() ([]byte, error) {
	return json.Marshal(percentilesJSON{OrNull(p.P50), OrNull(p.P90), OrNull(p.P95), OrNull(p.P99), OrNull(p.Max)})
}

// OrNull is x for a JSON field that writes NaN, no value, as null.
func OrNull(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

// UnmarshalJSON reads what MarshalJSON writes: null, which leaves a field
// as it was, is NaN.
func (p *Percentiles) UnmarshalJSON(b []byte) error {
	type plain Percentiles // without this method
	q := plain(NoPercentiles())
	err := json.Unmarshal(b, &q)
	*p = Percentiles(q)
	return err
}

// percentilesPerMille are the ranks Percentiles reports, ascending, in
// thousandths.
var percentilesPerMille = [4]int64{500, 900, 950, 990}

// NearestRank returns the 1-based rank of the perMille/1000 quantile of n
// samples by the nearest-rank rule: ceil(p*n), at least 1. Integer math,
// so exact; it agrees with gonum's stat.Quantile with stat.Empirical.
func NearestRank(perMille, n int64) int64 {
	return max(1, (perMille*n+999)/1000)
}

// percentilesMs converts quantiles q (ns, in percentilesPerMille order) and
// the maximum (ns) to Percentiles.
func percentilesMs(q [4]int64, maxNs int64) Percentiles {
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return Percentiles{P50: ms(q[0]), P90: ms(q[1]), P95: ms(q[2]), P99: ms(q[3]), Max: ms(maxNs)}
}

// Dist collects nanosecond samples exactly (8 bytes each) and reports their
// percentiles by the nearest-rank rule: the p quantile is the smallest
// sample that at least a fraction p of the samples are at or below, the
// sample of rank ceil(p*n) in ascending order. This equals gonum's
// stat.Quantile(p, stat.Empirical, ...); it never interpolates, so every
// percentile is a sample. Past DistExactLimit samples it moves them into a
// Histogram and goes on there, so its memory stays bounded on long runs;
// its percentiles are then within 1/128 above the exact ones.
type Dist struct {
	s []int64
	h *Histogram // non-nil past DistExactLimit samples
}

// DistExactLimit is how many samples a Dist keeps exactly.
const DistExactLimit = 1 << 20

// Add records one sample, in nanoseconds.
func (d *Dist) Add(ns int64) {
	if d.h != nil {
		d.h.Add(ns)
		return
	}
	d.s = append(d.s, ns)
	if len(d.s) > DistExactLimit {
		d.h, d.s = histogramOf(d.s), nil
	}
}

// histogramOf is the histogram of samples s.
func histogramOf(s []int64) *Histogram {
	h := &Histogram{}
	for _, v := range s {
		h.Add(v)
	}
	return h
}

// DistOf is the Dist of the samples s, in any order: the same as adding
// them one by one, its percentiles too. It keeps s.
func DistOf(s []int64) Dist {
	if len(s) <= DistExactLimit {
		return Dist{s: s}
	}
	return Dist{h: histogramOf(s)}
}

// Count is how many samples it holds.
func (d *Dist) Count() int {
	if d.h != nil {
		return int(d.h.Count())
	}
	return len(d.s)
}

// Percentiles returns p50, p90, p95, p99 and the maximum. It reorders the
// exact samples in place: each rank is selected from the samples above the
// one before (nth), in time linear in their number rather than a sort's.
func (d *Dist) Percentiles() Percentiles {
	if d.h != nil {
		return d.h.Percentiles()
	}
	n := int64(len(d.s))
	if n == 0 {
		return NoPercentiles()
	}
	var q [4]int64
	lo := 0 // d.s[lo] is the last rank selected: every sample from it on is at least as large
	for i, pm := range percentilesPerMille {
		k := int(NearestRank(pm, n) - 1)
		nth(d.s[lo:], k-lo)
		q[i], lo = d.s[k], k
	}
	return percentilesMs(q, slices.Max(d.s[lo:]))
}

// nth reorders s so that s[k] is the value a sort would put there, with no
// larger value before it and no smaller one after it (quickselect, pivot
// the median of three). A range still wide after twice log2(len(s))
// partitions is sorted, which bounds the worst case as a sort does.
func nth(s []int64, k int) { nthWithin(s, k, 2*bits.Len(uint(len(s)))) }

// nthWithin is nth sorting what is left after rounds partitions.
func nthWithin(s []int64, k, rounds int) {
	lo, hi := 0, len(s) // s[k] is to be found in s[lo:hi]
	for ; hi-lo > 16; rounds-- {
		if rounds == 0 {
			slices.Sort(s[lo:hi])
			return
		}
		// The median of the first, middle and last values is the pivot;
		// Hoare's partition leaves s[lo:j+1] <= p <= s[j+1:hi].
		m := lo + (hi-lo)/2
		a, b, c := s[lo], s[m], s[hi-1]
		p := max(min(a, b), min(max(a, b), c))
		i, j := lo-1, hi
		for {
			for i++; s[i] < p; i++ {
			}
			for j--; s[j] > p; j-- {
			}
			if i >= j {
				break
			}
			s[i], s[j] = s[j], s[i]
		}
		if k <= j {
			hi = j + 1
		} else {
			lo = j + 1
		}
	}
	slices.Sort(s[lo:hi])
}

// subBits is log2 of the number of linear sub-buckets a power of two.
const subBits = 7

// Histogram counts non-negative nanosecond samples in log-linear (HDR
// style) buckets: values below 128 have a bucket each; each range
// [2^e, 2^(e+1)) above is split into 128 equal buckets. Add is O(1) and
// memory is bounded (at most 7296 counters, 57 KiB, for all of int64; 28
// KiB up to 17 s). A quantile, by the nearest-rank rule of Dist, is the
// highest value of the bucket holding that rank, capped at the exact
// maximum: it is never below the true sample, and above it by a relative
// error under 1/128. Count and maximum are exact. Use it for inter-token
// latencies, up to about 1e8 samples a run.
type Histogram struct {
	counts []uint64 // by bucket index, grown on demand
	n      uint64
	max    int64
}

// bucket returns the bucket index of v >= 0.
func bucket(v int64) int {
	if v < 1<<subBits {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 1 - subBits // bucket width is 1<<shift
	return (shift+1)<<subBits + int(v>>shift) - 1<<subBits
}

// bucketHigh returns the highest value in bucket i.
func bucketHigh(i int) int64 {
	if i < 1<<subBits {
		return int64(i)
	}
	shift := i>>subBits - 1
	sub := int64(i&(1<<subBits-1) + 1<<subBits) // in [128, 256)
	return (sub+1)<<shift - 1
}

// Add records one sample, in nanoseconds. It panics if ns < 0.
func (h *Histogram) Add(ns int64) { h.AddN(ns, 1) }

// AddN records n samples of ns nanoseconds: the same as n calls of Add.
func (h *Histogram) AddN(ns int64, n int) {
	if ns < 0 || n < 0 {
		panic("report: Histogram sample of a negative value or count")
	}
	if n == 0 {
		return
	}
	h.addCount(bucket(ns), uint64(n))
	h.n += uint64(n)
	h.max = max(h.max, ns)
}

// AddSteps records n samples of each step ts[j]-ts[j-1] (j >= 1) of
// non-decreasing times ts: the same as AddN of each step, in one pass that
// touches a bucket once a run of steps falling in it, as consecutive pass
// lengths mostly do. It panics, recording nothing, when n < 0 or a step is
// negative.
func AddSteps[T ~int64](h *Histogram, ts []T, n int) {
	for j := 1; j < len(ts); j++ {
		if ts[j] < ts[j-1] || n < 0 {
			panic("report: Histogram sample of a negative value or count")
		}
	}
	if len(ts) < 2 || n == 0 {
		return
	}
	run, count, most := bucket(int64(ts[1]-ts[0])), uint64(0), h.max
	for j := 1; j < len(ts); j++ {
		step := int64(ts[j] - ts[j-1])
		if i := bucket(step); i != run {
			h.addCount(run, count*uint64(n))
			run, count = i, 0
		}
		count++
		most = max(most, step)
	}
	h.addCount(run, count*uint64(n))
	h.n += uint64(len(ts)-1) * uint64(n)
	h.max = most
}

// addCount adds c samples to bucket i.
func (h *Histogram) addCount(i int, c uint64) {
	if i >= len(h.counts) {
		h.counts = append(h.counts, make([]uint64, i+1-len(h.counts))...)
	}
	h.counts[i] += c
}

// Count returns the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Bucket is the index of the bucket of a sample v >= 0 (AddBucket).
func Bucket(v int64) int { return bucket(v) }

// AddBucket records n samples in bucket i, as AddN does of n samples of a
// value of that bucket, but for the maximum, which it leaves: a caller
// that keeps samples by bucket keeps their maximum itself (Since).
func (h *Histogram) AddBucket(i int, n uint64) {
	h.addCount(i, n)
	h.n += n
}

// Since is the histogram of the samples h gained after then, a copy of h
// taken earlier (Clone), whose largest sample is max (which the two
// cannot tell).
func (h *Histogram) Since(then *Histogram, max int64) Histogram {
	d := Histogram{counts: slices.Clone(h.counts), n: h.n - then.n, max: max}
	for i, c := range then.counts {
		d.counts[i] -= c
	}
	return d
}

// Clone is a copy of h.
func (h *Histogram) Clone() Histogram {
	return Histogram{counts: slices.Clone(h.counts), n: h.n, max: h.max}
}

// Percentiles returns p50, p90, p95, p99 (bucket values, see Histogram)
// and the exact maximum.
func (h *Histogram) Percentiles() Percentiles {
	if h.n == 0 {
		return NoPercentiles()
	}
	var q [4]int64
	k, cum := 0, uint64(0)
	for i, c := range h.counts {
		cum += c
		for k < len(q) && cum >= uint64(NearestRank(percentilesPerMille[k], int64(h.n))) {
			q[k] = min(bucketHigh(i), h.max)
			k++
		}
	}
	return percentilesMs(q, h.max)
}
