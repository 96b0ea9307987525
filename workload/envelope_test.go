package workload

import (
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestEnvelopeReal: the envelope [{for: 4s, rate: 0.25}, {for: 2s, rate:
// 3}, {for: 1s, rate: 1}]. Segments start at simulated 0, 4 s, 6 s (the
// last ends at 7 s) and play source time from 0, 0.25 x 4 s = 1 s and
// 1 s + 3 x 2 s = 7 s. Source time t in the first plays at t / 0.25:
// 500 ms at 2 s, 999,999,999 ns at 3,999,999,996 ns. In the second, at
// 4 s + (t - 1 s) / 3: 1 s at 4 s, 1 s + 1 ns at 4 s + round(1/3) = 4 s
// (it meets 1 s), 1 s + 2 ns at 4 s + round(2/3) = 4 s + 1 ns, 2 s at
// 4 s + 333,333,333.3 ns = 4,333,333,333 ns, 4 s at 5 s. In the third,
// at 6 s + (t - 7 s): 7 s at 6 s, and 9 s, past the last segment's end
// (source 8 s), at 8 s: its rate holds.
func TestEnvelopeReal(t *testing.T) {
	e, err := NewEnvelope([]Segment{{4 * des.Second, 0.25}, {2 * des.Second, 3}, {des.Second, 1}})
	if err != nil {
		t.Fatal(err)
	}
	const s = des.Second
	for _, c := range []struct{ src, want des.Time }{
		{0, 0},
		{500 * des.Millisecond, 2 * s},
		{999_999_999, 3_999_999_996},
		{s, 4 * s},
		{s + 1, 4 * s},
		{s + 2, 4*s + 1},
		{2 * s, 4_333_333_333},
		{4 * s, 5 * s},
		{7 * s, 6 * s},
		{9 * s, 8 * s},
	} {
		if got, ok := e.Real(c.src); !ok || got != c.want {
			t.Errorf("source %d ns: %d ns (%v), want %d ns", c.src, got, ok, c.want)
		}
	}
	var none *Envelope
	if got, ok := none.Real(12345); !ok || got != 12345 {
		t.Errorf("no envelope: %d, %v", got, ok)
	}
	var l listSource
	if Enveloped(&l, none) != Source(&l) {
		t.Error("no envelope: Enveloped wraps its source")
	}
}

// TestEnvelopeBrief: arrivals at 0, 1, 2, 3 and 4 s under [{for: 2s,
// rate: 0.5}, {for: 1s, rate: 2}]: the first segment plays source [0,
// 1 s) over 2 s, the second source [1 s, 3 s) over [2 s, 3 s) and its
// rate holds after: 0, 2 s, 2.5 s, 3 s and 3.5 s. Through Enveloped, the
// ids stay.
func TestEnvelopeBrief(t *testing.T) {
	e, err := NewEnvelope([]Segment{{2 * des.Second, 0.5}, {des.Second, 2}})
	if err != nil {
		t.Fatal(err)
	}
	var l listSource
	for i := range 5 {
		l = append(l, &Request{ID: int64(i), Arrival: des.Time(i) * des.Second})
	}
	src := Enveloped(&l, e)
	want := []des.Time{0, 2 * des.Second, 2500 * des.Millisecond, 3 * des.Second, 3500 * des.Millisecond}
	for i, w := range want {
		r, err := src.Next()
		if err != nil || r.ID != int64(i) || r.Arrival != w {
			t.Fatalf("request %d: %+v, %v; want arrival %v", i, r, err, w)
		}
	}
	if _, err := src.Next(); err != io.EOF {
		t.Errorf("after the last: %v", err)
	}
}

// TestEnvelopeErrors: a segment of no length or of a rate that is not
// above 0 and finite is refused by name; an arrival the envelope would play
// past virtual time is an *EnvelopeError (source 1,000 s at rate 1e-10:
// 1e22 ns, past 9.2e18).
func TestEnvelopeErrors(t *testing.T) {
	for _, c := range []struct {
		segs []Segment
		want string
	}{
		{nil, "no segment"},
		{[]Segment{{des.Second, 1}, {0, 1}}, "segment 1: for must be above 0, got 0s"},
		{[]Segment{{des.Second, 0}}, "segment 0: rate must be above 0 and finite, got 0"},
		{[]Segment{{des.Second, -2}}, "rate must be above 0 and finite, got -2"},
		{[]Segment{{des.Second, math.Inf(1)}}, "got +Inf"},
		{[]Segment{{des.Second, math.NaN()}}, "got NaN"},
	} {
		if _, err := NewEnvelope(c.segs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.segs, err, c.want)
		}
	}
	e, _ := NewEnvelope([]Segment{{des.Second, 1e-10}})
	l := listSource{{ID: 4, Arrival: 1000 * des.Second}}
	_, err := Enveloped(&l, e).Next()
	if ee, ok := err.(*EnvelopeError); !ok || ee.ID != 4 || !strings.Contains(err.Error(), "past the end of virtual time") {
		t.Errorf("overflow: %v", err)
	}
}

// TestEnvelopeProperties: random envelopes over random arrivals. Real is
// monotone non-decreasing; plays each segment's first source time at its
// start and the rest of it within the segment; is the identity when every
// rate is 1; and its inverse (simulated time x in segment i back to
// S_i + round((x - R_i) x Rate_i)) gives each arrival back to within half
// a rate and a nanosecond of rounding.
func TestEnvelopeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		ones := trial%4 == 0
		segs := make([]Segment, 1+rng.IntN(8))
		for i := range segs {
			segs[i] = Segment{For: des.Time(math.Exp(rng.Float64() * math.Log(3.6e12))), Rate: 1}
			if !ones {
				segs[i].Rate = math.Exp((rng.Float64()*2 - 1) * math.Log(100)) // 0.01 to 100
			}
		}
		e, err := NewEnvelope(segs)
		if err != nil {
			t.Fatal(err)
		}
		last := e.src[len(e.src)-1]
		span := 2*last + des.Time(rng.Int64N(int64(60*des.Minute)))
		arr := make([]des.Time, 200)
		for i := range arr {
			arr[i] = des.Time(rng.Int64N(int64(span) + 1))
		}
		arr = append(arr, e.src...) // every segment's first source time
		slices.Sort(arr)
		prev := des.Time(-1)
		for _, a := range arr {
			x, ok := e.Real(a)
			if !ok {
				t.Fatalf("trial %d %v: source %d ns not placed", trial, segs, a)
			}
			if x < prev {
				t.Fatalf("trial %d %v: source %d ns plays at %d ns, before an earlier arrival's %d ns", trial, segs, a, x, prev)
			}
			prev = x
			if ones && x != a {
				t.Fatalf("trial %d %v: every rate 1, source %d ns plays at %d ns", trial, segs, a, x)
			}
			i := segmentOf(e.src, a)
			if a == e.src[i] && x != e.real[i] {
				t.Errorf("trial %d %v: segment %d's first source time %d ns plays at %d ns, not its start %d ns", trial, segs, i, a, x, e.real[i])
			}
			if x < e.real[i] || (i+1 < len(segs) && x > e.real[i+1]) {
				t.Errorf("trial %d %v: source %d ns of segment %d plays at %d ns, outside [%d, %d]", trial, segs, a, i, x, e.real[i], e.real[i+1])
			}
			j := segmentOf(e.real[:len(segs)], x)
			back := e.src[j] + des.MustFromNanos(float64(x-e.real[j])*e.rate[j])
			if d := math.Abs(float64(back - a)); d > e.rate[j]/2+1 && d > e.rate[i]/2+1 {
				t.Errorf("trial %d %v: source %d ns plays at %d ns, which maps back to %d ns", trial, segs, a, x, back)
			}
		}
	}
}

// segmentOf is the last i with starts[i] <= t.
func segmentOf(starts []des.Time, t des.Time) int {
	i := 0
	for i+1 < len(starts) && starts[i+1] <= t {
		i++
	}
	return i
}
