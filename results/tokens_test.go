package results

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
)

// TestTokenSegments checks the windows' tokens and gaps, and the requests
// that arrived in them, against the obvious rule, each token or request
// added to every window holding it when it is recorded (the oracle, as the
// log did before it kept segments): random
// logs of scenario records, a twin's records left out and records decided
// during the run (no window before, at the current instant), windows from
// 1 ns to the end of time, tokens at instants up to the current one and
// out of order (a stretch's passes settled late), each open when at most
// the last arrival.
func TestTokenSegments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 3000 {
		window := des.Time(1 + rng.Int64N(40))
		switch round % 10 {
		case 0:
			window = math.MaxInt64
		case 1:
			window = math.MaxInt64 / 3
		}
		l := &EventLog{window: window, lo: math.MaxInt64}
		type naive struct {
			before, after  report.Histogram
			nBefore, nAfte int64
			arrived        [2]struct {
				ttft, e2e, tpot, queue report.Dist
				requests, input, g1    int64
			}
		}
		var recs []*naive
		var order []int // each record's creation index, by its index in l.evs
		addRec := func(e eventRec) {
			i := len(l.evs) - l.leftOut
			l.add(e)
			order = append(order[:i], append([]int{len(recs)}, order[i:]...)...)
			recs = append(recs, &naive{})
		}
		leftOut := rng.IntN(3)
		for range leftOut {
			addRec(eventRec{at: des.Time(rng.Int64N(100))})
		}
		l.leftOut = leftOut
		for range rng.IntN(6) {
			addRec(eventRec{at: des.Time(rng.Int64N(100))})
		}
		last := des.Time(rng.Int64N(120)) // the last arrival: a token after it is not open
		now := des.Time(0)
		id := int64(0)
		for range rng.IntN(60) {
			if rng.IntN(8) == 0 { // a record decided now
				addRec(eventRec{at: now, late: true})
				continue
			}
			if rng.IntN(4) == 0 { // a request ends now
				arrival := max(0, now-des.Time(rng.Int64N(30)))
				row := report.RequestRow{RequestID: id, Worker: -1, Outcome: report.OutcomeCompleted, ArrivalNs: int64(arrival),
					ScheduledNs: int64(arrival) + rng.Int64N(3), FinishNs: int64(now), OutputTokens: rng.Int64N(3),
					InputTokens: rng.Int64N(100), G1HitTokens: rng.Int64N(10)}
				row.FirstTokenNs = row.ScheduledNs + rng.Int64N(max(1, int64(now)-row.ScheduledNs+1))
				id++
				l.Ended(&row, now <= last)
				for i := range l.evs {
					e, r := &l.evs[i], recs[order[i]]
					before, after := l.in(e, arrival, true)
					for side, in := range []bool{before, after && !before} {
						if !in {
							continue
						}
						w := &r.arrived[side]
						w.ttft.Add(row.FirstTokenNs - row.ArrivalNs)
						w.e2e.Add(row.FinishNs - row.ArrivalNs)
						if tp, ok := tpotOf(&row); ok {
							w.tpot.Add(tp)
						}
						w.queue.Add(row.ScheduledNs - row.ArrivalNs)
						w.requests++
						w.input += row.InputTokens
						w.g1 += row.G1HitTokens
					}
				}
				continue
			}
			if rng.IntN(3) == 0 {
				now += des.Time(rng.Int64N(10))
			}
			tk := max(0, now-des.Time(rng.Int64N(5)))
			n, gap := rng.IntN(4), des.Time(rng.Int64N(1000))-100 // some without a gap
			open := tk <= last
			l.Tokens(tk, n, gap, open)
			for i := range l.evs {
				e, r := &l.evs[i], recs[order[i]]
				before, after := l.in(e, tk, open)
				if before && tk >= l.lo && tk < l.hi {
					r.nBefore += int64(n)
					if gap >= 0 {
						r.before.AddN(int64(gap), n)
					}
				}
				if after && tk >= l.lo && tk < l.hi {
					r.nAfte += int64(n)
					if gap >= 0 {
						r.after.AddN(int64(gap), n)
					}
				}
			}
		}
		l.finish()
		for i := range l.evs {
			e, r := &l.evs[i], recs[order[i]]
			for side, w := range []*eventWindow{&e.before, &e.after} {
				a := &r.arrived[side]
				if w.requests != a.requests || w.input != a.input || w.g1 != a.g1 || w.ttft.Count() != a.ttft.Count() ||
					w.ttft.Percentiles() != a.ttft.Percentiles() || w.e2e.Percentiles() != a.e2e.Percentiles() ||
					w.tpot.Count() != a.tpot.Count() || w.tpot.Percentiles() != a.tpot.Percentiles() || w.queue.Percentiles() != a.queue.Percentiles() {
					t.Fatalf("round %d, window %d, record %d at %d (late %v), side %d: %d requests, ttft %+v, want %d, %+v",
						round, window, i, e.at, e.late, side, w.requests, w.ttft.Percentiles(), a.requests, a.ttft.Percentiles())
				}
			}
			if e.before.tokens != r.nBefore || e.after.tokens != r.nAfte ||
				e.before.itl.Count() != r.before.Count() || e.after.itl.Count() != r.after.Count() ||
				e.before.itl.Percentiles() != r.before.Percentiles() || e.after.itl.Percentiles() != r.after.Percentiles() {
				t.Fatalf("round %d, window %d, record %d at %d (late %v): tokens %d/%d, want %d/%d; gaps %d %+v / %d %+v, want %d %+v / %d %+v",
					round, window, i, e.at, e.late, e.before.tokens, e.after.tokens, r.nBefore, r.nAfte,
					e.before.itl.Count(), e.before.itl.Percentiles(), e.after.itl.Count(), e.after.itl.Percentiles(),
					r.before.Count(), r.before.Percentiles(), r.after.Count(), r.after.Percentiles())
			}
		}
	}
}
