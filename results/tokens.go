package results

import (
	"slices"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
)

// The tokens and the completed requests the events' windows count (their
// ITL, output tokens, latencies and cohorts). Each is in every window that
// holds its instant, thousands of them when a planner or chaos makes
// thousands of events: adding each to each window cost a run its time (a
// flapping planner's 10,712 windows, 8 of its 19.5 s). The windows' edges
// cut the time axis into segments (a timeline); a token or a request goes
// into the one segment holding its instant, and a window's figures are the
// segments' between its edges, summed once at the end (finish): its
// tokens as differences of running totals, its requests gathered.

// segment is the tokens emitted in one piece of the time axis: those at an
// instant at most the run's last arrival (open: windows after count them)
// and the others (windows before only); and the completed requests that
// arrived in it.
type segment struct {
	open, closed tally
	arrived      []arrival
	routed       []int32 // the workers requests arriving in it were first routed to
}

// arrival is a completed request's figures as a window it arrived in
// counts them, and as the window's cohort reads them (cohort.go).
type arrival struct {
	id, prev                        int64
	worker                          int32
	ttft, e2e, queue, tpot          int64
	hasTPOT                         bool
	input, g1, g2, pulled, computed int64
}

// arrivalOf is a completed request's row as an arrival.
func arrivalOf(r *report.RequestRow) arrival {
	a := arrival{id: r.RequestID, prev: r.PrevRequestID, worker: r.Worker,
		ttft: r.FirstTokenNs - r.ArrivalNs, e2e: r.FinishNs - r.ArrivalNs, queue: r.ScheduledNs - r.ArrivalNs,
		input: r.InputTokens, g1: r.G1HitTokens, g2: r.G2HitTokens, pulled: r.PulledTokens, computed: r.ComputedPromptTokens}
	a.tpot, a.hasTPOT = tpotOf(r)
	return a
}

// arrive records a completed request that arrived at t.
func (s *timeline) arrive(t des.Time, a arrival) {
	if sg := s.at(t); sg != nil {
		sg.arrived = append(sg.arrived, a)
	}
}

// tally is a segment's tokens of one kind: how many, their gaps by
// bucket (a run of one bucket once: consecutive gaps mostly share one)
// and their largest gap; and the requests completed in it. A histogram a
// segment would hold a slice as long as its largest gap's bucket index;
// thousands of segments held a GB.
type tally struct {
	n, completed int64
	gaps         []bucketRun
	max          int64
}

// bucketRun is n gaps in bucket b.
type bucketRun struct {
	b int32
	n int64
}

// total is a running total of segments' tallies of one kind: tokens,
// their gaps and requests completed.
type total struct {
	n, completed int64
	itl          report.Histogram
}

// add adds a segment's tally to the total.
func (t *total) add(s *tally) {
	t.n += s.n
	t.completed += s.completed
	for _, r := range s.gaps {
		t.itl.AddBucket(int(r.b), uint64(r.n))
	}
}

// timeline is the time axis cut at every window's edges: segment k is
// [edges[k], edges[k+1]) (two edges at one instant: a record decided then,
// cutAfter).
type timeline struct {
	edges []des.Time // sorted
	segs  []segment  // len(edges) - 1, or none
}

// cut adds an edge at x, unless there is one. A segment it splits keeps
// its tokens on the left: an edge is added before any token is (the
// scenario's records and a twin's) or past every token recorded (the end
// of a window after of a record decided during the run).
func (s *timeline) cut(x des.Time) {
	if k, found := slices.BinarySearch(s.edges, x); !found {
		s.insert(k, x)
	}
}

// cutAfter adds an edge at x, the current instant, after any there is
// (rank, returned, the edges at x before it): the start of a window after
// of a record decided now. The segment from the edge before it, of tokens
// at x alone (none is later than now), keeps them: a token at the instant
// of a record decided then, recorded before it, is not its window's.
func (s *timeline) cutAfter(x des.Time) (rank int) {
	first := s.first(x)
	k := s.past(x)
	s.insert(k, x)
	return k - first
}

// insert puts edge x at index k, and the segment it starts, empty.
func (s *timeline) insert(k int, x des.Time) {
	s.edges = slices.Insert(s.edges, k, x)
	switch {
	case len(s.edges) == 1:
	case k == len(s.edges)-1: // a new last segment
		s.segs = append(s.segs, segment{})
	default: // a new first segment, or segment k-1 split at x: the right part starts empty
		s.segs = slices.Insert(s.segs, k, segment{})
	}
}

// first is the index of the first edge at or after x.
func (s *timeline) first(x des.Time) int {
	k, _ := slices.BinarySearch(s.edges, x)
	return k
}

// past is the index of the first edge after x.
func (s *timeline) past(x des.Time) int {
	k, _ := slices.BinarySearchFunc(s.edges, x, func(e, x des.Time) int {
		if e <= x {
			return -1
		}
		return 1
	})
	return k
}

// at is the segment holding instant t, nil outside every window.
func (s *timeline) at(t des.Time) *segment {
	k := s.past(t) - 1             // the segment from the last edge at or before t
	if k < 0 || k >= len(s.segs) { // before the first edge or at or after the last
		return nil
	}
	return &s.segs[k]
}

// tallyAt is the tally of instant t of its kind, nil outside every window.
func (s *timeline) tallyAt(t des.Time, open bool) *tally {
	sg := s.at(t)
	switch {
	case sg == nil:
		return nil
	case open:
		return &sg.open
	}
	return &sg.closed
}

// complete records a request completed at t.
func (s *timeline) complete(t des.Time, open bool) {
	if st := s.tallyAt(t, open); st != nil {
		st.completed++
	}
}

// route records a request arriving at t first routed to worker w.
func (s *timeline) route(t des.Time, w int32) {
	if sg := s.at(t); sg != nil {
		sg.routed = append(sg.routed, w)
	}
}

// routedTo counts the requests first routed in segments [from, to): all of
// them, and those to ids (each id as often as it is listed).
func (s *timeline) routedTo(from, to int, ids []int32) (all, share int64) {
	for _, sg := range s.segs[from:to] {
		all += int64(len(sg.routed))
		for _, w := range sg.routed {
			for _, id := range ids {
				if id == w {
					share++
				}
			}
		}
	}
	return all, share
}

// add records n tokens emitted at t with their gap (none for gap < 0).
func (s *timeline) add(t des.Time, n int, gap des.Time, open bool) {
	st := s.tallyAt(t, open)
	if st == nil {
		return
	}
	st.n += int64(n)
	if gap < 0 || n == 0 {
		return
	}
	b := int32(report.Bucket(int64(gap)))
	if k := len(st.gaps) - 1; k >= 0 && st.gaps[k].b == b {
		st.gaps[k].n += int64(n)
	} else {
		st.gaps = append(st.gaps, bucketRun{b, int64(n)})
	}
	st.max = max(st.max, int64(gap))
}

// gather gives window w its segments, and the completed requests that
// arrived in it.
func (s *timeline) gather(w window) {
	ew := w.w
	ew.segs = s.segs[w.from:w.to]
	n, tpots := 0, 0
	for _, sg := range ew.segs {
		n += len(sg.arrived)
		for _, a := range sg.arrived {
			if a.hasTPOT {
				tpots++
			}
		}
	}
	if n == 0 {
		return
	}
	ttft, e2e, queue, tpot := make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, tpots)
	for _, sg := range ew.segs {
		for _, a := range sg.arrived {
			ttft, e2e, queue = append(ttft, a.ttft), append(e2e, a.e2e), append(queue, a.queue)
			if a.hasTPOT {
				tpot = append(tpot, a.tpot)
			}
			ew.requests++
			ew.input += a.input
			ew.g1 += a.g1
			ew.g2 += a.g2
			ew.pl += a.pulled
			ew.computed += a.computed
		}
	}
	ew.ttft, ew.e2e, ew.queue, ew.tpot = report.DistOf(ttft), report.DistOf(e2e), report.DistOf(queue), report.DistOf(tpot)
}

// window is what the tokens between two edges came to: those open only
// (a window after) or all.
type window struct {
	from, to int // edge indexes
	open     bool
	w        *eventWindow
}

// finish gives each window its tokens and gaps: a sweep of the segments in
// time order keeps running totals, and a window is the totals at its end
// less those at its start. Its largest gap is its segments' largest. It
// gives each window its arrivals too, gathered from its segments: their
// latencies' exact samples in the order of the segments, which no
// percentile depends on.
func (s *timeline) finish(ws []window) {
	for _, w := range ws {
		s.gather(w)
	}
	starts := make([][]int, len(s.edges)) // the windows starting at each edge
	ends := make([][]int, len(s.edges))
	for i, w := range ws {
		if w.from == w.to { // an empty window: no token
			continue
		}
		starts[w.from] = append(starts[w.from], i)
		ends[w.to] = append(ends[w.to], i)
	}
	var open, all total
	then := make([]total, len(ws))
	for k := range s.edges {
		for _, i := range ends[k] {
			w := ws[i]
			now, was := &all, &then[i]
			if w.open {
				now = &open
			}
			largest := int64(0)
			for j := w.from; j < w.to; j++ {
				largest = max(largest, s.segs[j].open.max)
				if !w.open {
					largest = max(largest, s.segs[j].closed.max)
				}
			}
			w.w.tokens, w.w.completed = now.n-was.n, now.completed-was.completed
			w.w.itl = now.itl.Since(&was.itl, largest)
			then[i] = total{}
		}
		for _, i := range starts[k] {
			if ws[i].open {
				then[i] = total{n: open.n, completed: open.completed, itl: open.itl.Clone()}
			} else {
				then[i] = total{n: all.n, completed: all.completed, itl: all.itl.Clone()}
			}
		}
		if k < len(s.segs) {
			sg := &s.segs[k]
			open.add(&sg.open)
			all.add(&sg.open)
			all.add(&sg.closed)
		}
	}
}
