package workload

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/kvsim/kvsim/des"
)

// Segment is one piece of a rate envelope: for For of simulated time the
// source's own clock runs Rate times as fast, so the source's arrival rate
// is multiplied by Rate ({For: 10 min, Rate: 2} plays 20 minutes of a
// trace in 10).
type Segment struct {
	For  des.Time // simulated length, above 0
	Rate float64  // above 0 and finite
}

// Envelope is a piecewise-constant rate envelope: it maps a source's
// arrival times (source time: a trace's timestamps after time_scale, a
// generator's draws) to simulated time. Segment i starts at simulated
// time R_i (R_0 = 0, R_i+1 = R_i + For_i) and plays the source time from
// S_i (S_0 = 0, S_i+1 = S_i + round(Rate_i x For_i)), so source time t in
// [S_i, S_i+1) plays at R_i + round((t - S_i) / Rate_i), which is at most
// R_i+1. The last segment's rate holds after its end: it plays every
// source time from its S_i on. The map is monotone non-decreasing, so a
// source's order is kept; equal times stay equal and distinct ones may
// meet (a rate above 1 packs source nanoseconds closer than one apart).
// Sums that would pass des.MaxTime saturate there.
type Envelope struct {
	rate []float64
	src  []des.Time // S_i, segment i's first source time
	real []des.Time // R_i, and after them R_n, the last segment's end
}

// NewEnvelope returns the envelope of segs, or an error naming the first
// segment whose length or rate is not above 0 and finite. An envelope of
// no segment is an error too: no envelope is a nil *Envelope.
func NewEnvelope(segs []Segment) (*Envelope, error) {
	if len(segs) == 0 {
		return nil, errors.New("no segment")
	}
	e := &Envelope{rate: make([]float64, len(segs)), src: make([]des.Time, len(segs)), real: make([]des.Time, len(segs)+1)}
	for i, s := range segs {
		if s.For <= 0 {
			return nil, fmt.Errorf("segment %d: for must be above 0, got %v", i, s.For)
		}
		if !(s.Rate > 0) || math.IsInf(s.Rate, 1) {
			return nil, fmt.Errorf("segment %d: rate must be above 0 and finite, got %g", i, s.Rate)
		}
		e.rate[i] = s.Rate
		e.real[i+1] = des.AddSat(e.real[i], s.For)
		if i+1 < len(segs) {
			// One product, rounded once: no sum to fuse it with.
			played, ok := des.FromNanos(s.Rate * float64(s.For))
			if !ok {
				played = des.MaxTime
			}
			e.src[i+1] = des.AddSat(e.src[i], played)
		}
	}
	return e, nil
}

// Real returns the simulated time at which source time t >= 0 plays, and
// false when it would pass des.MaxTime. A nil envelope is the identity.
//
// The offset into segment i, (t - S_i) / Rate_i, is one float64 division
// of an integer converted to float64, rounded once to the nanosecond
// (des.FromNanos): IEEE 754 rounds each of these exactly, so the result is
// the same on every platform (there is no product to fuse). The division
// is exact while t - S_i is below 2^53 ns (104 days); past it the
// conversion rounds, monotonically. A rate of exactly 1 skips the
// division: the offset is t - S_i, exact at any size.
//
// Monotone: within a segment, conversion, division by a positive rate
// and rounding are each non-decreasing; an offset is capped at the
// segment's length For_i (rounding could otherwise carry the last source
// nanoseconds of a segment past R_i+1), so segment i plays within
// [R_i, R_i+1] and every later segment at R_i+1 or after.
func (e *Envelope) Real(t des.Time) (des.Time, bool) {
	if e == nil {
		return t, true
	}
	i := max(sort.Search(len(e.src), func(i int) bool { return e.src[i] > t })-1, 0)
	x := t - e.src[i]
	off := x
	if r := e.rate[i]; r != 1 {
		var ok bool
		if off, ok = des.FromNanos(float64(x) / r); !ok {
			if i+1 == len(e.rate) {
				return 0, false
			}
			off = des.MaxTime // capped below at the segment's length
		}
	}
	if i+1 < len(e.rate) {
		off = min(off, e.real[i+1]-e.real[i])
	}
	if off > des.MaxTime-e.real[i] {
		return 0, false
	}
	return e.real[i] + off, true
}

// EnvelopeError is an arrival that an envelope would play past the end of
// virtual time (a small last rate under a long source).
type EnvelopeError struct {
	ID      int64    // the request's id
	Arrival des.Time // its arrival in source time
}

func (e *EnvelopeError) Error() string {
	return fmt.Sprintf("request %d (source time %v) would arrive past the end of virtual time (about 292 years)", e.ID, e.Arrival)
}

// Enveloped returns src with each request's arrival t moved to e.Real(t),
// its id and everything else kept; Next returns an *EnvelopeError for an
// arrival e cannot place. The order of src is kept (Real is monotone).
// Without an envelope (e nil) it is src itself.
func Enveloped(src Source, e *Envelope) Source {
	if e == nil {
		return src
	}
	return &enveloped{src: src, env: e}
}

type enveloped struct {
	src Source
	env *Envelope
}

// Next implements Source.
func (v *enveloped) Next() (*Request, error) {
	r, err := v.src.Next()
	if err != nil {
		return nil, err
	}
	at, ok := v.env.Real(r.Arrival)
	if !ok {
		return nil, &EnvelopeError{ID: r.ID, Arrival: r.Arrival}
	}
	r.Arrival = at
	return r, nil
}

// Unwrap returns the source the envelope moves the arrivals of (a
// *Generator of a synthetic workload, whose sessions a caller counts).
func (v *enveloped) Unwrap() Source { return v.src }
