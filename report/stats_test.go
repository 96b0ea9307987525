package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/kvsim/kvsim/des"
)

const ms = 1_000_000 // ns

func TestDistPercentiles(t *testing.T) {
	seq := func(n int64) []int64 { // 1..n ms
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(i+1) * ms
		}
		return s
	}
	for _, c := range []struct {
		name    string
		samples []int64
		want    Percentiles
	}{
		{"empty", nil, NoPercentiles()}, // none: NaN, null in JSON
		// n=1: every rank is 1.
		{"one", []int64{1_500_000}, Percentiles{1.5, 1.5, 1.5, 1.5, 1.5}},
		// n=3 sorted 10,20,30: ranks ceil(1.5)=2, ceil(2.7)=3, ceil(2.85)=3,
		// ceil(2.97)=3.
		{"three", []int64{30 * ms, 10 * ms, 20 * ms}, Percentiles{20, 30, 30, 30, 30}},
		// n=10, 1..10 ms shuffled: ranks 5, 9, ceil(9.5)=10, ceil(9.9)=10.
		{"ten", []int64{7 * ms, 1 * ms, 3 * ms, 10 * ms, 2 * ms, 9 * ms, 4 * ms, 8 * ms, 6 * ms, 5 * ms},
			Percentiles{5, 9, 10, 10, 10}},
		// n=200, 1..200 ms: ranks 100, 180, 190, 198.
		{"two hundred", seq(200), Percentiles{100, 180, 190, 198, 200}},
		// n=1001, 1..1001 ms: ranks ceil(500.5)=501, ceil(900.9)=901,
		// ceil(950.95)=951, ceil(990.99)=991.
		{"thousand and one", seq(1001), Percentiles{501, 901, 951, 991, 1001}},
		// Nanosecond precision survives: 1 ns = 1e-6 ms.
		{"ns", []int64{1, 2}, Percentiles{1e-6, 2e-6, 2e-6, 2e-6, 2e-6}},
	} {
		var d Dist
		for _, v := range c.samples {
			d.Add(v)
		}
		if got := d.Percentiles(); !samePercentiles(got, c.want) || d.Count() != len(c.samples) {
			t.Errorf("%s: got %+v (count %d), want %+v (count %d)", c.name, got, d.Count(), c.want, len(c.samples))
		}
	}
}

// TestDistMatchesGonum checks the documented equivalence with gonum's
// empirical quantile on seeded random samples of many sizes.
func TestDistMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 300; n++ {
		var d Dist
		xs := make([]float64, n)
		for i := range xs {
			v := rng.Int64N(1_000 * ms)
			d.Add(v)
			xs[i] = float64(v)
		}
		slices.Sort(xs)
		got := d.Percentiles()
		for i, p := range []float64{0.5, 0.9, 0.95, 0.99} {
			want := stat.Quantile(p, stat.Empirical, xs, nil) / 1e6
			if g := []float64{got.P50, got.P90, got.P95, got.P99}[i]; g != want {
				t.Fatalf("n=%d p=%v: got %v ms, gonum %v ms", n, p, g, want)
			}
		}
	}
}

// TestNth checks quickselect against a sort: for inputs of every shape
// that troubles a partition (few distinct values, sorted, reversed, all
// equal, organ pipe, random) and sizes around the small-range cut-off and
// well past it, s[k] is the sorted slice's s[k], nothing before it is
// larger, nothing after it smaller, and the values are the same multiset;
// half the cases sort what is left after a few partitions, as nth does
// when a range stays wide.
func TestNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := map[string]func(i, n int) int64{
		"random":    func(int, int) int64 { return rng.Int64N(1 << 40) },
		"few":       func(int, int) int64 { return rng.Int64N(3) },
		"sorted":    func(i, _ int) int64 { return int64(i) },
		"reversed":  func(i, n int) int64 { return int64(n - i) },
		"equal":     func(int, int) int64 { return 7 },
		"organ":     func(i, n int) int64 { return int64(min(i, n-i)) },
		"sawtooth":  func(i, _ int) int64 { return int64(i % 17) },
		"negatives": func(int, int) int64 { return rng.Int64N(1000) - 500 },
	}
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		for _, n := range []int{1, 2, 15, 16, 17, 18, 33, 100, 1000, 4099} {
			in := make([]int64, n)
			for i := range in {
				in[i] = shapes[name](i, n)
			}
			sorted := slices.Sorted(slices.Values(in))
			ks := []int{0, n / 2, n - 1, rng.IntN(n), rng.IntN(n)}
			if n <= 40 {
				ks = ks[:0]
				for k := range n {
					ks = append(ks, k)
				}
			}
			for i, k := range ks {
				s := slices.Clone(in)
				if i%2 == 0 {
					nth(s, k)
				} else { // the fallback: sort what is left after i/2 partitions
					nthWithin(s, k, i/2)
				}
				if s[k] != sorted[k] {
					t.Fatalf("%s n=%d k=%d: s[k] = %d, sorted %d", name, n, k, s[k], sorted[k])
				}
				if slices.Max(s[:k+1]) != s[k] || slices.Min(s[k:]) != s[k] {
					t.Fatalf("%s n=%d k=%d: not partitioned around s[k] = %d", name, n, k, s[k])
				}
				if !slices.Equal(slices.Sorted(slices.Values(s)), sorted) {
					t.Fatalf("%s n=%d k=%d: values changed", name, n, k)
				}
			}
		}
	}
}

// TestHistogramBuckets checks, for every value below 2^20 and around every
// power of two above, that buckets tile the values in order and that a
// bucket's highest value is at most 1/128 above any value in it.
func TestHistogramBuckets(t *testing.T) {
	check := func(v int64) {
		i := bucket(v)
		hi := bucketHigh(i)
		if hi < v || (v >= 128 && hi-v >= v>>7) || (v < 256 && hi != v) {
			t.Fatalf("v=%d: bucket %d high %d, outside [v, v*(1+1/128))", v, i, hi)
		}
		if hi < math.MaxInt64 && bucket(hi+1) != i+1 {
			t.Fatalf("v=%d: next value after bucket %d (high %d) is in bucket %d", v, i, hi, bucket(hi+1))
		}
	}
	for v := range int64(1 << 20) {
		check(v)
	}
	for e := 20; e < 63; e++ {
		for _, d := range []int64{-1, 0, 1} {
			check(int64(1)<<e + d)
		}
	}
	check(math.MaxInt64)
	if got := bucket(math.MaxInt64); got != 7295 {
		t.Errorf("last bucket %d, want 7295 (7296 counters)", got)
	}
}

func TestHistogramPercentiles(t *testing.T) {
	// 1 ms = 1,000,000 ns lies in [2^19, 2^20), bucket width 2^(19-7) = 4096:
	// 244*4096 = 999,424 <= 1e6 < 245*4096, so its bucket's high value is
	// 1,003,519 ns.
	for _, c := range []struct {
		name string
		add  [][2]int64 // {value ns, count}
		want Percentiles
	}{
		{"empty", nil, NoPercentiles()}, // none: NaN, null in JSON
		// Capped at the exact maximum.
		{"one", [][2]int64{{ms, 1}}, Percentiles{1, 1, 1, 1, 1}},
		// Ranks 50, 90, 95, 99 of 100 are all 1 ms samples.
		{"1ms x99, 2ms", [][2]int64{{ms, 99}, {2 * ms, 1}}, Percentiles{1.003519, 1.003519, 1.003519, 1.003519, 2}},
		// Below 256 ns buckets are exact.
		{"small", [][2]int64{{200, 50}, {100, 50}}, Percentiles{1e-4, 2e-4, 2e-4, 2e-4, 2e-4}},
	} {
		var h Histogram
		n := 0
		for _, a := range c.add {
			for range a[1] {
				h.Add(a[0])
				n++
			}
		}
		if got := h.Percentiles(); !samePercentiles(got, c.want) || h.Count() != uint64(n) {
			t.Errorf("%s: got %+v (count %d), want %+v (count %d)", c.name, got, h.Count(), c.want, n)
		}
	}
}

// TestHistogramVsDist: on one million log-uniform samples from 1 µs to
// 10 s, each histogram percentile q satisfies exact <= q < exact*(1+1/128);
// count and max are exact.
func TestHistogramVsDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h Histogram
	var d Dist
	const n = 1_000_000
	for range n {
		v := int64(math.Exp(math.Log(1e3) + rng.Float64()*math.Log(1e7)))
		h.Add(v)
		d.Add(v)
	}
	hp, dp := h.Percentiles(), d.Percentiles()
	if h.Count() != n || hp.Max != dp.Max {
		t.Errorf("count %d max %v ms, want %d, %v ms", h.Count(), hp.Max, n, dp.Max)
	}
	for i, q := range []float64{hp.P50, hp.P90, hp.P95, hp.P99} {
		exact := []float64{dp.P50, dp.P90, dp.P95, dp.P99}[i]
		if q < exact || q >= exact*(1+1.0/128) {
			t.Errorf("percentile %d: histogram %v ms, exact %v ms", i, q, exact)
		}
	}
	if len(h.counts) > 3584 { // 10 s < 2^34 ns: buckets below 27*128
		t.Errorf("%d counters, want <= 3584", len(h.counts))
	}
}

// TestHistogramAddN: AddN(ns, n) is n calls of Add(ns). Samples 3 ms x 5,
// 9 ms x 2 and 1 ms x 0 in one histogram by AddN and in another by Add
// give equal histograms: 7 samples, maximum 9 ms, p50 3 ms (rank 4) and
// p90 9 ms (rank 7), each within its bucket's 1/128.
func TestHistogramAddN(t *testing.T) {
	var bulk, one Histogram
	for _, c := range []struct {
		ns int64
		n  int
	}{{3e6, 5}, {9e6, 2}, {1e6, 0}} {
		bulk.AddN(c.ns, c.n)
		for range c.n {
			one.Add(c.ns)
		}
	}
	if !reflect.DeepEqual(bulk, one) {
		t.Errorf("AddN %+v, Add %+v", bulk, one)
	}
	p := bulk.Percentiles()
	if bulk.Count() != 7 || p.Max != 9 || p.P50 < 3 || p.P50 >= 3*(1+1.0/128) || p.P90 != 9 {
		t.Errorf("count %d, percentiles %+v", bulk.Count(), p)
	}
}

// TestHistogramAddSteps: AddSteps(ts, n) is AddN(ts[j]-ts[j-1], n) for
// each j >= 1. Steps 5, 5, 5, 300, 301 ns at n = 2 (times 0, 5, 10, 15,
// 315, 616) count 6 samples in bucket 5 and 2 in each of 300's and 301's
// buckets (the same one: it is 2 wide there), 10 in all, maximum 301 ns;
// and random series of times, with runs of equal steps as a stretch's
// passes have, added after other samples, give the histogram the AddN
// loop gives, whatever the n.
func TestHistogramAddSteps(t *testing.T) {
	var h Histogram
	AddSteps(&h, []int64{0, 5, 10, 15, 315, 616}, 2)
	if h.n != 10 || h.max != 301 || h.counts[5] != 6 || h.counts[bucket(300)] != 4 || bucket(300) != bucket(301) {
		t.Errorf("count %d max %d, bucket 5: %d, bucket of 300: %d", h.n, h.max, h.counts[5], h.counts[bucket(300)])
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		var steps, loop Histogram
		for range rng.IntN(4) {
			ns := rng.Int64N(1e9)
			steps.Add(ns)
			loop.Add(ns)
		}
		ts := []des.Time{des.Time(rng.Int64N(1e12))}
		for range rng.IntN(300) {
			step := des.Time(rng.Int64N(1 << rng.IntN(40)))
			for range 1 + rng.IntN(8) {
				ts = append(ts, ts[len(ts)-1]+step+des.Time(rng.Int64N(3)))
			}
		}
		n := rng.IntN(200)
		AddSteps(&steps, ts, n)
		for j := 1; j < len(ts); j++ {
			loop.AddN(int64(ts[j]-ts[j-1]), n)
		}
		if !reflect.DeepEqual(steps, loop) {
			t.Fatalf("steps of %v (n %d): AddSteps %+v, AddN %+v", ts, n, steps, loop)
		}
	}
}

// TestHistogramAddStepsPanics: a negative step or count panics before
// anything is recorded, as AddN of each step would before its own, n = 0
// included.
func TestHistogramAddStepsPanics(t *testing.T) {
	for _, c := range []struct {
		ts []int64
		n  int
	}{{[]int64{0, 5, 3}, 1}, {[]int64{0, 5, 3}, 0}, {[]int64{0, 5, 9}, -1}} {
		var h Histogram
		h.Add(7)
		before := h
		before.counts = slices.Clone(h.counts)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddSteps(%v, %d) did not panic", c.ts, c.n)
				}
			}()
			AddSteps(&h, c.ts, c.n)
		}()
		if !reflect.DeepEqual(h, before) {
			t.Errorf("AddSteps(%v, %d) recorded %+v before panicking", c.ts, c.n, h)
		}
	}
}

func TestHistogramAddNegativePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Add(-1) did not panic")
		}
	}()
	var h Histogram
	h.Add(-1)
}

func BenchmarkHistogramAdd(b *testing.B) {
	var h Histogram
	for i := 0; b.Loop(); i++ {
		h.Add(int64(i&0xffff) * 1000)
	}
}

// TestDistBounded: past DistExactLimit samples a Dist keeps a histogram:
// the count stays exact, percentiles stay within 1/128 above the exact
// ones. Samples 1..N ms: p50 is N/2 ms.
func TestDistBounded(t *testing.T) {
	var d Dist
	n := DistExactLimit + 1000
	for i := 1; i <= n; i++ {
		d.Add(int64(i) * 1_000_000)
	}
	if d.h == nil || d.s != nil || d.Count() != n {
		t.Fatalf("histogram %v, exact samples %d, count %d", d.h != nil, len(d.s), d.Count())
	}
	want := float64((n+1)/2) * 1.0 // ms, nearest rank of 0.5
	if p := d.Percentiles(); p.P50 < want || p.P50 > want*(1+1.0/128) || p.Max != float64(n) {
		t.Errorf("p50 %.3f (exact %.0f), max %.0f", p.P50, want, p.Max)
	}
}

// BenchmarkDistPercentiles measures the percentiles of 12,031 samples, a
// run's TTFTs on the conversation trace (a sort took 0.68 ms of it).
func BenchmarkDistPercentiles(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	in := make([]int64, 12031)
	for i := range in {
		in[i] = rng.Int64N(1 << 34)
	}
	s := make([]int64, len(in))
	for b.Loop() {
		copy(s, in)
		d := Dist{s: s}
		d.Percentiles()
	}
}

// TestPercentilesJSON: percentiles of no value are null in JSON and read
// back as NaN; values are written as encoding/json writes a float64.
func TestPercentilesJSON(t *testing.T) {
	b, err := json.Marshal(NoPercentiles())
	if want := `{"p50_ms":null,"p90_ms":null,"p95_ms":null,"p99_ms":null,"max_ms":null}`; err != nil || string(b) != want {
		t.Errorf("no value: %s, %v; want %s", b, err, want)
	}
	var p Percentiles
	if err := json.Unmarshal(b, &p); err != nil || !math.IsNaN(p.P50) || !math.IsNaN(p.Max) {
		t.Errorf("read back %+v, %v", p, err)
	}
	b, err = json.Marshal(Percentiles{P50: 1.5, P90: 2, P95: 3, P99: 1e21, Max: 0})
	if want := `{"p50_ms":1.5,"p90_ms":2,"p95_ms":3,"p99_ms":1e+21,"max_ms":0}`; err != nil || string(b) != want {
		t.Errorf("values: %s, %v; want %s", b, err, want)
	}
	if err := json.Unmarshal(b, &p); err != nil || p != (Percentiles{P50: 1.5, P90: 2, P95: 3, P99: 1e21}) {
		t.Errorf("read back %+v, %v", p, err)
	}
}

// samePercentiles is a == b, with NaN (none) equal to NaN.
func samePercentiles(a, b Percentiles) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
