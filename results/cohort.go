package results

import (
	"slices"

	"github.com/kvsim/kvsim/report"
)

// The displaced cohort of an event (DESIGN.md section 11): of the completed
// requests arriving in its window after, those it acts on. For a drain or a
// remove, those whose previous turn (requests.parquet's prev_request_id)
// ended on a worker it names: the requests whose cache it took away, what
// evacuation and prewarm are for. For an add, those that ended on a new
// worker. The cohort is the run's; its twin is measured on the same
// requests.

// recordWorker records that request id ended on worker w (-1: none).
func (l *EventLog) recordWorker(id int64, w int32) {
	l.endedOn = grown(l.endedOn, int(id), -1)
	l.endedOn[id] = w
}

// cohort is the set of the run's requests in event e's cohort: of the
// workers it names, not those an earlier event drained or removed already
// (e.again), on which it does nothing.
func (l *EventLog) cohort(e *eventRec) map[int64]bool {
	ids := map[int64]bool{}
	acted := e.acted()
	for _, sg := range e.after.segs {
		for _, m := range sg.arrived {
			w := m.worker
			if e.kind != kindAdd {
				w = -1
				if m.prev >= 0 && m.prev < int64(len(l.endedOn)) {
					w = l.endedOn[m.prev]
				}
			}
			if w >= 0 && slices.Contains(acted, w) {
				ids[m.id] = true
			}
		}
	}
	return ids
}

// acted is the workers event e acted on: those it names but the ones an
// earlier event drained or removed already.
func (e *eventRec) acted() []int32 {
	var ids []int32
	for _, w := range e.named {
		if !slices.Contains(e.again, w) {
			ids = append(ids, w)
		}
	}
	return ids
}

// cohortOf is what the requests in ids that arrived in a window (its
// segments) measured: their count, TTFT p50 and p99, and prompt tokens by
// source.
func cohortOf(segs []segment, ids map[int64]bool) report.EventCohort {
	var ttft report.Dist
	var m arrival
	n := int64(0)
	for _, sg := range segs {
		for _, x := range sg.arrived {
			if !ids[x.id] {
				continue
			}
			n++
			ttft.Add(x.ttft)
			m.input, m.g1, m.g2, m.pulled, m.computed = m.input+x.input, m.g1+x.g1, m.g2+x.g2, m.pulled+x.pulled, m.computed+x.computed
		}
	}
	p := ttft.Percentiles()
	c := report.EventCohort{Requests: n, TTFTP50Ms: p.P50, TTFTP99Ms: p.P99, HitG1: ratio(m.g1, m.input),
		HitG2: ratio(m.g2, m.input), HitPulled: ratio(m.pulled, m.input), HitComputed: ratio(m.computed, m.input)}
	return c // NaN TTFTs for none (report.NoPercentiles)
}
