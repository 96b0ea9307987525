package kvcr

import (
	"maps"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// Link faults (DESIGN.md section 12, docs/faults.md#link): for a window a
// worker's link runs at a factor of its bandwidth, egress, ingress or
// both; 0 is down. The transfers on it go on at the new rate: at 0 they
// make no progress and keep their pins, their reserved slots and their
// place; deadlines run as always, and a write that has begun is not
// recalled. Where link faults overlap on one side of one worker, the
// lowest factor in force applies.

// linkFault is a link fault in force: scenario event key on workers.
type linkFault struct {
	key             int
	workers         []int32
	factor          float64
	egress, ingress bool
	until           des.Time // its window's end, exclusive: a transfer starting then (before the end's event, at the same instant) is not its
	pulls           int64    // transfers that ran on its links in its window
}

// on reports whether the fault acts on the link p's transfer runs over.
func (f *linkFault) on(p *Pull) bool {
	return f.egress && slices.Contains(f.workers, p.Source) || f.ingress && slices.Contains(f.workers, p.Target)
}

// StartLinkFault starts link fault key at now: workers' egress links (with
// egress) and ingress links (with ingress) run at factor (0 <= factor <= 1)
// times their bandwidth until EndLinkFault, at until (des.MaxTime: none).
// An ingress fault needs Config.FairNet (or IngressGbps).
func (k *KVCR) StartLinkFault(now, until des.Time, key int, workers []int32, factor float64, egress, ingress bool) {
	f := &linkFault{key: key, workers: slices.Clone(workers), factor: factor, egress: egress, ingress: ingress, until: until}
	for _, p := range k.live {
		if p.t.Active() && f.on(p) { // the count alone: map order does not matter
			f.pulls++
		}
	}
	k.linkFaults = append(k.linkFaults, f)
	k.applyLinkFactors(now, f)
}

// EndLinkFault ends link fault key at now and returns the number of
// transfers that ran on its links in its window: those on them when it
// started and those that started on them since. A fault not in force
// returns 0.
func (k *KVCR) EndLinkFault(now des.Time, key int) int64 {
	i := k.linkFaultIndex(key)
	if i < 0 {
		return 0
	}
	f := k.linkFaults[i]
	k.linkFaults = slices.Delete(k.linkFaults, i, i+1)
	k.applyLinkFactors(now, f)
	return f.pulls
}

// LinkFaultPulls is the number of transfers that have run on the links of
// link fault key, in force, in its window so far (0 when it is not).
func (k *KVCR) LinkFaultPulls(key int) int64 {
	if i := k.linkFaultIndex(key); i >= 0 {
		return k.linkFaults[i].pulls
	}
	return 0
}

// linkFaultIndex is the index in linkFaults of link fault key, -1 when it
// is not in force.
func (k *KVCR) linkFaultIndex(key int) int {
	return slices.IndexFunc(k.linkFaults, func(f *linkFault) bool { return f.key == key })
}

// linkFactor is the factor worker w's egress (or ingress) link runs at:
// the lowest of the link faults in force on it, 1 without any.
func (k *KVCR) linkFactor(w int32, ingress bool) float64 {
	x := 1.0
	for _, f := range k.linkFaults {
		if (ingress && f.ingress || !ingress && f.egress) && slices.Contains(f.workers, w) {
			x = min(x, f.factor)
		}
	}
	return x
}

// applyLinkFactors sets the factor of every link fault f acts on to the
// one in force now, in worker order, egress before ingress.
func (k *KVCR) applyLinkFactors(now des.Time, f *linkFault) {
	ws := slices.Clone(f.workers)
	slices.Sort(ws)
	for _, w := range slices.Compact(ws) {
		if f.egress {
			k.net.setFactor(now, w, false, k.linkFactor(w, false))
		}
		if f.ingress {
			k.net.setFactor(now, w, true, k.linkFactor(w, true))
		}
	}
}

// linkStarted counts p's transfer, starting now, for every link fault in
// force on its links: not one whose window ends now, whose end's event
// comes after transfers in the instant's order.
func (k *KVCR) linkStarted(now des.Time, p *Pull) {
	for _, f := range k.linkFaults {
		if f.on(p) && now < f.until {
			f.pulls++
		}
	}
}

// EndStalled ends, in id order, the pulls still live when nothing else is
// left to happen in the run: each has its answer (its target's deadline,
// or the news of its source giving up) and waits only for a write that a
// link left down to the run's end never lets finish. The run cuts the
// write off now, as its source's removal would (its write_end_ns now, its
// source's pins and its target's slots freed), and the pull ends as
// answered. It returns how many it ended; a pull in any other state stays
// live, for CheckEnd to report.
func (k *KVCR) EndStalled(now des.Time) int {
	n := 0
	for _, id := range slices.Sorted(maps.Keys(k.live)) { // map order must not reach the model
		switch p := k.live[id]; p.state {
		case abandonedRequested, abandonedFlowing, discarding:
			k.cutOff(now, p)
			n++
		}
	}
	return n
}
