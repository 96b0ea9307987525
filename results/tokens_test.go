package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
)

// inWindows is the obvious rule the timeline stands for: which of record
// e's windows hold instant t. Its window before is [max(0, at-window),
// at), none for a record decided during the run (nothing knew of it
// before); its window after is [at, at+window), for t at most the run's
// last arrival (open).
func inWindows(l *EventLog, e *eventRec, t des.Time, open bool) (before, after bool) {
	before = !e.late && t >= max(0, e.at-l.window) && t < e.at
	return before, open && t >= e.at && t < des.AddSat(e.at, l.window)
}

// naiveWindow is a window as the oracle counts it, a thing at a time.
type naiveWindow struct {
	itl                    report.Histogram
	tokens, completed      int64
	ttft, e2e, tpot, queue report.Dist
	requests, input, g1    int64
}

// TestTimeline checks the windows' figures against the obvious rule, each
// token, route, arrival or completion added to every window holding its
// instant when it is recorded, by the records there are then (the oracle,
// as the log did before it kept a timeline): random logs of scenario
// records, a twin's records left out and records decided during the run
// (no window before, at the current instant), windows from 1 ns to the end
// of time, tokens at instants up to the current one and out of order (a
// stretch's passes settled late), each open when at most the last
// arrival.
func TestTimeline(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 3000 {
		window := des.Time(1 + rng.Int64N(40))
		switch round % 10 {
		case 0:
			window = math.MaxInt64
		case 1:
			window = math.MaxInt64 / 3
		}
		l := &EventLog{window: window}
		var recs [][2]naiveWindow // by creation
		var routed [][2]int64     // by creation: routes in the window before, all and to worker 0
		var order []int           // each record's creation index, by its index in l.evs
		addRec := func(e eventRec) {
			i := len(l.evs) - l.leftOut
			l.add(e)
			order = append(order[:i], append([]int{len(recs)}, order[i:]...)...)
			recs, routed = append(recs, [2]naiveWindow{}), append(routed, [2]int64{})
		}
		// each does what the oracle says to every window of every record holding t
		each := func(t des.Time, open bool, do func(w *naiveWindow), route func(r *[2]int64)) {
			for i := range l.evs {
				before, after := inWindows(l, &l.evs[i], t, open)
				if before {
					if do != nil {
						do(&recs[order[i]][0])
					}
					if route != nil {
						route(&routed[order[i]])
					}
				}
				if after && do != nil {
					do(&recs[order[i]][1])
				}
			}
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
		now, id := des.Time(0), int64(0)
		for range rng.IntN(80) {
			switch rng.IntN(10) {
			case 0: // a record decided now
				addRec(eventRec{at: now, late: true})
			case 1: // a route now
				w := int32(rng.IntN(3))
				l.Routed(now, w)
				each(now, true, nil, func(r *[2]int64) {
					r[0]++
					if w == 0 {
						r[1]++
					}
				})
			case 2, 3: // a request ends now
				arrival := max(0, now-des.Time(rng.Int64N(30)))
				row := report.RequestRow{RequestID: id, Worker: -1, PrevRequestID: -1, Outcome: report.OutcomeCompleted, ArrivalNs: int64(arrival),
					ScheduledNs: int64(arrival) + rng.Int64N(3), FinishNs: int64(now), OutputTokens: rng.Int64N(3),
					InputTokens: rng.Int64N(100), G1HitTokens: rng.Int64N(10)}
				row.FirstTokenNs = row.ScheduledNs + rng.Int64N(max(1, int64(now)-row.ScheduledNs+1))
				id++
				open := now <= last
				l.Ended(&row, open)
				each(arrival, true, func(w *naiveWindow) {
					w.ttft.Add(row.FirstTokenNs - row.ArrivalNs)
					w.e2e.Add(row.FinishNs - row.ArrivalNs)
					if tp, ok := tpotOf(&row); ok {
						w.tpot.Add(tp)
					}
					w.queue.Add(row.ScheduledNs - row.ArrivalNs)
					w.requests++
					w.input += row.InputTokens
					w.g1 += row.G1HitTokens
				}, nil)
				each(now, open, func(w *naiveWindow) { w.completed++ }, nil)
			default: // tokens at or before now
				if rng.IntN(3) == 0 {
					now += des.Time(rng.Int64N(10))
				}
				tk := max(0, now-des.Time(rng.Int64N(5)))
				n, gap := rng.IntN(4), des.Time(rng.Int64N(1000))-100 // some without a gap
				l.Tokens(tk, n, gap, tk <= last)
				each(tk, tk <= last, func(w *naiveWindow) {
					w.tokens += int64(n)
					if gap >= 0 {
						w.itl.AddN(int64(gap), n)
					}
				}, nil)
			}
		}
		l.finish()
		for i := range l.evs {
			e := &l.evs[i]
			l.Fired(i, []int32{0}, nil, 0, 0)
			if r := routed[order[i]]; e.all != r[0] || e.row.LoadShare != ratio(r[1], r[0]) && r[0] > 0 {
				t.Fatalf("round %d, window %d, record %d at %d (late %v): routed %d, share %g; want %d, %d",
					round, window, i, e.at, e.late, e.all, e.row.LoadShare, r[0], r[1])
			}
			for side, w := range []*eventWindow{&e.before, &e.after} {
				a := &recs[order[i]][side]
				if w.tokens != a.tokens || w.completed != a.completed || w.itl.Count() != a.itl.Count() || fmt.Sprint(w.itl.Percentiles()) != fmt.Sprint(a.itl.Percentiles()) ||
					w.requests != a.requests || w.input != a.input || w.g1 != a.g1 || w.ttft.Count() != a.ttft.Count() ||
					fmt.Sprint(w.ttft.Percentiles()) != fmt.Sprint(a.ttft.Percentiles()) || fmt.Sprint(w.e2e.Percentiles()) != fmt.Sprint(a.e2e.Percentiles()) ||
					w.tpot.Count() != a.tpot.Count() || fmt.Sprint(w.tpot.Percentiles()) != fmt.Sprint(a.tpot.Percentiles()) || fmt.Sprint(w.queue.Percentiles()) != fmt.Sprint(a.queue.Percentiles()) {
					t.Fatalf("round %d, window %d, record %d at %d (late %v), side %d: %d tokens, %d gaps %+v, %d completed, %d requests, ttft %+v; "+
						"want %d, %d %+v, %d, %d, %+v", round, window, i, e.at, e.late, side, w.tokens, w.itl.Count(), w.itl.Percentiles(), w.completed,
						w.requests, w.ttft.Percentiles(), a.tokens, a.itl.Count(), a.itl.Percentiles(), a.completed, a.requests, a.ttft.Percentiles())
				}
			}
		}
	}
}
