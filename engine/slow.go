package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
)

// A slow fault (DESIGN.md section 12, docs/faults.md#slow) makes a worker
// a straggler: every pass that starts while it is in force takes factor
// times as long as the timing model says, rounded to the nearest
// nanosecond (half a nanosecond away from zero), and at least 1 ns. A pass
// in progress when the factor changes keeps its duration: the factor is
// read when a pass starts, and a stretch's passes (Stretch) all start
// under the factor in force when it began, so whatever changes the factor
// settles the stretch first.

// SetSlow makes every pass that starts from now on take factor (>= 1)
// times as long; 1 ends the slowdown. It panics during a stretch: the
// caller settles it first.
func (w *Worker) SetSlow(factor float64) {
	w.notStretching("SetSlow")
	if !(factor >= 1) {
		panic(fmt.Sprintf("worker %d: slow factor %g below 1", w.cfg.ID, factor))
	}
	w.slow = factor
}

// slowed is a pass of d (at least 1 ns, as every pass is) as the
// worker's slow factor makes it: d x factor to the nearest nanosecond,
// never shorter than d, since the factor is at least 1.
func (w *Worker) slowed(d des.Time) des.Time {
	if w.slow <= 1 {
		return d
	}
	if t, ok := des.FromNanos(float64(d) * w.slow); ok && t <= maxSlowed {
		return t
	}
	return max(d, maxSlowed) // a long pass a million-fold slower: longer than any run
}

// maxSlowed is the longest a slow fault makes a pass: a quarter of
// virtual time, about 73 years, so that a pass's end stays in virtual
// time's range from any arrival (at most half of it, MaxArrival).
const maxSlowed = des.MaxTime / 4
