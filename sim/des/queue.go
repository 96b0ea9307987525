package des

import "fmt"

// Phase orders events that fall on the same virtual time. Lower phases run
// first; DESIGN.md section 2 fixes the order.
type Phase uint8

// The phases, in the order they run within one timestamp.
const (
	PhaseTransfer  Phase = 1 + iota // transfer completions, by transfer id
	PhasePass                       // pass completions, by worker id
	PhaseDeadline                   // pull deadlines, by pull id
	PhaseLifecycle                  // scenario lifecycle events, in scenario order
	PhaseArrival                    // request arrivals, in trace order
	PhaseDrive                      // drive scans, by worker id
	PhaseSample                     // samplers
)

var phaseNames = [...]string{"", "transfer", "pass", "deadline", "lifecycle", "arrival", "drive", "sample"}

// String names the phase.
func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", p)
}

// MaxKey is the largest stable key an event can carry.
const MaxKey = 1<<56 - 1

// Handler receives the events it scheduled. key and arg are the values given
// to Schedule. A handler that may be superseded (a rescheduled completion)
// passes a generation in arg and ignores stale events.
type Handler interface {
	Fire(now Time, key, arg uint64)
}

type entry struct {
	at  Time
	ord uint64 // phase<<56 | key
	seq uint64 // push counter: the last tie-break
	h   Handler
	arg uint64
}

func (a *entry) before(b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.ord != b.ord {
		return a.ord < b.ord
	}
	return a.seq < b.seq
}

// Queue is the event queue and run loop: a 4-ary min-heap ordered by
// (time, phase, key, seq). The zero value is ready to use at time 0.
type Queue struct {
	heap  []entry
	seq   uint64
	now   Time
	phase Phase
	fired uint64
}

// Now is the time of the event being fired, or of the last one fired.
func (q *Queue) Now() Time { return q.now }

// Phase is the phase of the event being fired, or of the last one fired.
func (q *Queue) Phase() Phase { return q.phase }

// Len is the number of pending events.
func (q *Queue) Len() int { return len(q.heap) }

// Fired is the number of events fired so far.
func (q *Queue) Fired() uint64 { return q.fired }

// PastError is the panic of a model that schedules an event before the
// current time: virtual time never goes back.
type PastError struct {
	Phase   Phase
	At, Now Time
}

func (e PastError) Error() string {
	return fmt.Sprintf("a %s event scheduled at %v when the time is %v", e.Phase, e.At, e.Now)
}

// Schedule adds an event. Scheduling before Now panics with a PastError:
// virtual time never goes back. key orders events of one phase at one time
// (a worker, pull or request id) and must not exceed MaxKey.
func (q *Queue) Schedule(at Time, phase Phase, key uint64, h Handler, arg uint64) {
	if at < q.now {
		panic(PastError{Phase: phase, At: at, Now: q.now})
	}
	if key > MaxKey {
		panic(fmt.Sprintf("des: key %d exceeds MaxKey", key))
	}
	q.seq++
	q.heap = append(q.heap, entry{at: at, ord: uint64(phase)<<56 | key, seq: q.seq, h: h, arg: arg})
	q.up(len(q.heap) - 1)
}

// Peek returns the time of the next event, or false when none is pending.
func (q *Queue) Peek() (Time, bool) {
	if len(q.heap) == 0 {
		return 0, false
	}
	return q.heap[0].at, true
}

// Step fires the next event and reports whether there was one.
func (q *Queue) Step() bool {
	if len(q.heap) == 0 {
		return false
	}
	e := q.heap[0]
	last := len(q.heap) - 1
	q.heap[0] = q.heap[last]
	q.heap[last] = entry{}
	q.heap = q.heap[:last]
	if last > 0 {
		q.down(0)
	}
	q.now, q.phase = e.at, Phase(e.ord>>56)
	q.fired++
	e.h.Fire(e.at, e.ord&MaxKey, e.arg)
	return true
}

// Run fires events until the queue is empty or stop returns true (checked
// before each event; nil means never).
func (q *Queue) Run(stop func() bool) {
	for len(q.heap) > 0 {
		if stop != nil && stop() {
			return
		}
		q.Step()
	}
}

func (q *Queue) up(i int) {
	h := q.heap
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func (q *Queue) down(i int) {
	h := q.heap
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}
