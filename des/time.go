package des

import (
	"fmt"
	"math"
	"time"
)

// Time is virtual time in integer nanoseconds since the start of a run. It is
// also used for durations.
type Time int64

// Units of virtual time.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
	Minute      Time = 60 * Second
)

// MaxTime is the largest representable virtual time.
const MaxTime Time = math.MaxInt64

// String formats t like a Go duration ("1.5s", "250ms").
func (t Time) String() string { return time.Duration(t).String() }

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// FromNanos rounds a floating-point nanosecond count to the nearest Time,
// halves away from zero. It is the one place where a float becomes a time.
// It reports false when ns is not finite or does not fit in a Time. It is
// kept cheap enough to inline into per-pass arithmetic.
func FromNanos(ns float64) (Time, bool) {
	r := math.Round(ns)
	if !(r >= math.MinInt64 && r < math.MaxInt64) { // NaN fails both
		return 0, false
	}
	return Time(r), true
}

// MustFromNanos is FromNanos for values the caller has bounded; it panics
// on overflow, which is a model bug rather than bad input.
func MustFromNanos(ns float64) Time {
	t, ok := FromNanos(ns)
	if !ok {
		panic(fmt.Sprintf("des: %g ns does not fit in virtual time", ns))
	}
	return t
}

// AddSat returns a+b, saturating at MaxTime instead of overflowing. Both
// must be non-negative.
func AddSat(a, b Time) Time {
	if a > MaxTime-b {
		return MaxTime
	}
	return a + b
}
