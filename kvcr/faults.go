package kvcr

import (
	"math/rand/v2"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// The faults KVCR takes part in (DESIGN.md section 12, docs/faults.md):
// injected pull errors and late or lost completion notices. The caller
// starts each when its window opens and ends it when the window closes;
// a fault in force also checks its window's end itself, so that an event
// of the closing instant that runs before the caller's (a transfer's, in
// an earlier phase) is already past it. Each fault has the caller's key
// (its scenario event); a pull a fault acted on carries the key
// (Pull.Fault).

// PullErrors is a pull_errors fault: every write posted (its first byte)
// while it is in force fails with probability Rate, one draw of RNG per
// write, before its first byte (AtStart) or at its last.
type PullErrors struct {
	Key     int
	End     des.Time // the window's end: a write posted at or after it is not drawn
	Rate    float64
	AtStart bool
	RNG     *rand.Rand // its own stream: one draw per write posted in the window
}

// Notices is a notices fault: the completion notice of every write into
// Targets (every worker when All) whose last byte lands while it is in
// force reaches its target Delay late, or never (Lost).
type Notices struct {
	Key     int
	End     des.Time // the window's end: a write landing at or after it has its notice on time
	Targets []int32
	All     bool
	Delay   des.Time
	Lost    bool
}

// injection is what an injected error does to a pull's write.
type injection uint8

const (
	notInjected injection = iota
	injectStart           // the write could not be posted
	injectEnd             // the write runs, its completion reports an error
)

// StartPullErrors puts f in force.
func (k *KVCR) StartPullErrors(f PullErrors) {
	i, _ := slices.BinarySearchFunc(k.errFaults, f.Key, func(g *PullErrors, key int) int { return g.Key - key })
	k.errFaults = slices.Insert(k.errFaults, i, &f)
}

// EndPullErrors ends the pull_errors fault key. A write it struck at its
// first byte still fails at its last.
func (k *KVCR) EndPullErrors(key int) {
	k.errFaults = slices.DeleteFunc(k.errFaults, func(f *PullErrors) bool { return f.Key == key })
}

// StartNotices puts f in force.
func (k *KVCR) StartNotices(f Notices) {
	i, _ := slices.BinarySearchFunc(k.noticeFaults, f.Key, func(g *Notices, key int) int { return g.Key - key })
	k.noticeFaults = slices.Insert(k.noticeFaults, i, &f)
}

// EndNotices ends the notices fault key. A notice it delayed still comes
// late.
func (k *KVCR) EndNotices(key int) {
	k.noticeFaults = slices.DeleteFunc(k.noticeFaults, func(f *Notices) bool { return f.Key == key })
}

// drawErrors draws, for a write posted now, one number from each
// pull_errors fault in force, in the order of their keys, and marks the
// pull with the error that strikes it, if any: one at the start before
// one at the end, the first fault's of each.
func (k *KVCR) drawErrors(now des.Time, p *Pull) {
	for _, f := range k.errFaults {
		if now >= f.End || f.RNG.Float64() >= f.Rate {
			continue
		}
		switch {
		case f.AtStart && p.inject != injectStart:
			p.inject, p.injectBy = injectStart, f.Key
		case !f.AtStart && p.inject == notInjected:
			p.inject, p.injectBy = injectEnd, f.Key
		}
	}
}

// struck records that fault key acted on p.
func (p *Pull) struck(key int) { p.fault = int32(key) + 1 }

// noticeFault is the notices fault in force that acts on the notice of a
// write into p's target landing now: one that loses it, or else the one
// that delays it most, the first in key order of either; nil when none.
func (k *KVCR) noticeFault(now des.Time, p *Pull) *Notices {
	var got *Notices
	for _, f := range k.noticeFaults {
		if now >= f.End || !(f.All || slices.Contains(f.Targets, p.Target)) {
			continue
		}
		switch {
		case got == nil, f.Lost && !got.Lost, !got.Lost && f.Delay > got.Delay:
			got = f
		}
	}
	return got
}

// failPost: a pull_errors fault at the start struck p's write as it was
// to be posted, now. Nothing moves and the source's pins go at once; a
// target still waiting hears it one latency later, and keeps its slots
// until then.
func (k *KVCR) failPost(now des.Time, p *Pull) {
	k.C.Faults.PullsFailedInjected++
	p.struck(p.injectBy)
	k.stopWrite(now, p)
	if p.state == abandonedRequested {
		k.releaseTarget(p)
		k.finish(now, p)
		return
	}
	k.notify(now, p, cancelled, k.cfg.Latency)
}

// failCompletion: a pull_errors fault at the end struck p's write, whose
// last byte arrived now: the bytes crossed the link, the completion
// reports an error, nothing lands. The source's pins go without a
// refresh and a move keeps its copy; the target frees its slots and, if
// it still waited, fails now.
func (k *KVCR) failCompletion(now des.Time, p *Pull) {
	k.C.Faults.PullsFailedInjected++
	p.struck(p.injectBy)
	k.writeLanded(now, p, false)
	k.releaseTarget(p)
	if p.state == flowing {
		k.answer(now, p, Failed)
	}
	k.finish(now, p)
}

// lateNotice: p's write landed now, its target still waiting, and notices
// fault f delays or loses its completion notice. The source acts as on
// any completed write (a move removes its copy); the target waits for the
// notice with its slots reserved.
func (k *KVCR) lateNotice(now des.Time, p *Pull, f *Notices) {
	p.struck(f.Key)
	p.moved = k.writeSucceeded(now, p)
	p.state = awaitingNotice
	if f.Lost {
		k.C.Faults.NoticesLost++
		return
	}
	k.C.Faults.NoticesDelayed++
	k.q.Schedule(des.AddSat(now, f.Delay), des.PhaseDeadline, uint64(p.ID), (*deadline)(k), evWriteDone)
}

// writeDone: the late completion notice of p's write reaches its target.
// Before the target's deadline the blocks land and the pull ends now.
func (k *KVCR) writeDone(now des.Time, p *Pull) {
	if p.state != awaitingNotice {
		illegal(p, "write done")
	}
	if now >= p.targetDeadline {
		k.targetDeadline(now, p) // a notice at the deadline is too late
		return
	}
	k.accept(p)
	out := Partial
	if p.whole {
		out = Success
	}
	k.answer(now, p, out)
	k.finish(now, p)
}

// loseMoved counts as lost the blocks p's move removed at its source when
// its write ended, which its target, awaiting the notice, never counted.
func (k *KVCR) loseMoved(p *Pull) {
	k.C.MoveLostBlocks += int64(p.moved)
	p.faultLost = p.moved
}

// Fault is the scenario event (the caller's key) of the fault that acted
// on the pull, and the blocks it lost there: a move's blocks its source
// removed while the target never counted them. ok is false when no fault
// acted on it.
func (p *Pull) Fault() (key int, lost int, ok bool) {
	if p.fault == 0 {
		return 0, 0, false
	}
	return int(p.fault) - 1, p.faultLost, true
}
