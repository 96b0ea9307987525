package des

import "fmt"

// Phase orders events that fall on the same virtual time. Lower phases run
// first; DESIGN.md section 2 fixes the order. What happens at an instant is
// its events, phase by phase, each followed by the work its caller does
// after it (Step returns between them; sim's steps are listed at
// sim.Cluster.loop and in docs/model.md).
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
// to Schedule (or FireOrSchedule). An event that may be superseded (a
// rescheduled completion) is scheduled with ScheduleHandle and cancelled,
// or its handler passes a generation in arg and ignores stale events.
type Handler interface {
	Fire(now Time, key, arg uint64)
}

// order is an event's place within its instant: phase, then key.
func order(phase Phase, key uint64) uint64 { return uint64(phase)<<56 | key }

type entry struct {
	at  Time
	ord uint64  // phase<<56 | key
	seq uint64  // push counter: the last tie-break
	h   Handler // a *handled when scheduled by ScheduleHandle
	arg uint64
}

// Handle is an event scheduled by ScheduleHandle, which Cancel can take
// back before it fires.
type Handle struct {
	h     Handler
	state handleState
}

// handled is the Handler a Handle's entry carries: the queue knows it by
// its type and fires its handler.
type handled Handle

func (c *handled) Fire(now Time, key, arg uint64) { c.h.Fire(now, key, arg) }

type handleState uint8

const (
	handlePending handleState = iota
	handleFired
	handleCancelled
)

func (a *entry) before(b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.ord != b.ord {
		return a.ord < b.ord
	}
	return a.seq < b.seq
}

// Queue is the event queue: a 4-ary min-heap ordered by (time, phase, key,
// seq). The zero value is ready to use at time 0. Its caller's loop fires
// one event at a time with Step and does its own work between two events
// in the open: sim's loop names its after-event steps, in order, beside the
// phases (sim.Cluster.loop).
type Queue struct {
	heap      []entry
	seq       uint64
	now       Time
	ord       uint64 // of the event being fired, or of the last one fired
	reached   uint64 // the largest ord fired at now (Reached)
	fired     uint64
	cancelled int // entries still in heap whose Handle was cancelled
}

// Now is the time of the event being fired, or of the last one fired.
func (q *Queue) Now() Time { return q.now }

// Reached is the latest place in the event order that an event of the
// current instant has fired at: the current event's time, and its phase
// and key, unless an event fired before it at this instant has a later
// place. That happens when a handler schedules an event at the current
// time in an earlier phase (or with a lower key) than its own: the event
// fires next, after events whose places come after its own. A caller
// deciding what passes one by one would have done before the current event
// reads this place, not the event's own.
func (q *Queue) Reached() (Time, Phase, uint64) {
	return q.now, Phase(q.reached >> 56), q.reached & MaxKey
}

// Passed reports whether the place reached at the current instant
// (Reached) comes after the event of phase phase and key key at this
// instant: whether passes one by one would have fired that event already.
func (q *Queue) Passed(phase Phase, key uint64) bool { return q.reached > order(phase, key) }

// Phase is the phase of the event being fired, or of the last one fired.
func (q *Queue) Phase() Phase { return Phase(q.ord >> 56) }

// Key is the stable key of the event being fired, or of the last one
// fired. With Now and Phase it places the current event in the order; what
// came before it at this instant is what came before Reached.
func (q *Queue) Key() uint64 { return q.ord & MaxKey }

// Len is the number of pending events; cancelled ones are not pending.
func (q *Queue) Len() int { return len(q.heap) - q.cancelled }

// Fired is the number of events Step has fired so far; cancelled events
// never fire, and events FireOrSchedule fires at once are not counted.
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
	checkKey(key)
	q.seq++
	q.heap = append(q.heap, entry{at: at, ord: order(phase, key), seq: q.seq, h: h, arg: arg})
	q.up(len(q.heap) - 1)
}

// checkKey panics when key exceeds MaxKey.
func checkKey(key uint64) {
	if key > MaxKey {
		panic(fmt.Sprintf("des: key %d exceeds MaxKey", key))
	}
}

// FireOrSchedule fires an event due at Now at once, inside the handler
// being fired, when no pending event is due at or before Now; otherwise it
// schedules it at Now, as Schedule would. It reports whether it fired it.
//
// The rule: with nothing pending at Now, the event scheduled at Now would
// be the next to fire whatever its phase and key, so firing it at once
// gives the same order, provided the calling handler, and every handler
// it is fired inside, does nothing after FireOrSchedule returns.
//
// While the event fires, Now, Phase and Key report it; afterwards they
// report the calling event again. Fired does not count it.
func (q *Queue) FireOrSchedule(phase Phase, key uint64, h Handler, arg uint64) bool {
	checkKey(key)
	if next, ok := q.Peek(); ok && next <= q.now {
		q.Schedule(q.now, phase, key, h, arg)
		return false
	}
	caller := q.ord
	q.ord = order(phase, key)
	q.reached = max(q.reached, q.ord)
	h.Fire(q.now, key, arg)
	q.ord = caller
	return true
}

// ScheduleHandle is Schedule for an event that may be taken back: Cancel
// with the returned handle removes it unfired.
func (q *Queue) ScheduleHandle(at Time, phase Phase, key uint64, h Handler, arg uint64) *Handle {
	c := &Handle{h: h}
	q.Schedule(at, phase, key, (*handled)(c), arg)
	return c
}

// ScheduleAgain is ScheduleHandle reusing c, a handle whose event has
// fired (a handler rescheduling itself saves an allocation), or on a new
// handle when c is nil; it returns the handle. It panics when c's event is
// pending or was cancelled: a cancelled event may still sit in the queue.
func (q *Queue) ScheduleAgain(c *Handle, at Time, phase Phase, key uint64, h Handler, arg uint64) *Handle {
	if c == nil {
		return q.ScheduleHandle(at, phase, key, h, arg)
	}
	if c.state != handleFired {
		panic("des: ScheduleAgain with a handle whose event has not fired")
	}
	c.h, c.state = h, handlePending
	q.Schedule(at, phase, key, (*handled)(c), arg)
	return c
}

// Cancel takes back a pending event scheduled by ScheduleHandle: it will
// not fire, and Len, Peek and Fired no longer see it. It reports false,
// changing nothing, when the event has already fired or been cancelled.
func (q *Queue) Cancel(c *Handle) bool {
	if c.state != handlePending {
		return false
	}
	c.state = handleCancelled
	q.cancelled++
	return true
}

// Peek returns the time of the next event, or false when none is pending.
func (q *Queue) Peek() (Time, bool) {
	if q.cancelled > 0 {
		q.dropCancelled()
	}
	if len(q.heap) == 0 {
		return 0, false
	}
	return q.heap[0].at, true
}

// Next returns the place of the next pending event: its time, phase and
// key; false when none is pending.
func (q *Queue) Next() (Time, Phase, uint64, bool) {
	if _, ok := q.Peek(); !ok {
		return 0, 0, 0, false
	}
	e := &q.heap[0]
	return e.at, Phase(e.ord >> 56), e.ord & MaxKey, true
}

// dropCancelled pops cancelled events off the top of the heap, so that the
// top, if any, is pending.
func (q *Queue) dropCancelled() {
	for q.cancelled > 0 && len(q.heap) > 0 {
		c, ok := q.heap[0].h.(*handled)
		if !ok || c.state != handleCancelled {
			return
		}
		q.removeTop()
		q.cancelled--
	}
}

// removeTop removes the top of the heap.
func (q *Queue) removeTop() {
	last := len(q.heap) - 1
	q.heap[0] = q.heap[last]
	q.heap[last] = entry{}
	q.heap = q.heap[:last]
	if last > 0 {
		q.down(0)
	}
}

// Step fires the next event and reports whether there was one.
func (q *Queue) Step() bool {
	if q.cancelled > 0 {
		q.dropCancelled()
	}
	if len(q.heap) == 0 {
		return false
	}
	e := q.heap[0]
	last := len(q.heap) - 1 // removeTop, written out on this hot path
	q.heap[0] = q.heap[last]
	q.heap[last] = entry{}
	q.heap = q.heap[:last]
	if last > 0 {
		q.down(0)
	}
	if c, ok := e.h.(*handled); ok {
		c.state = handleFired
	}
	if e.at != q.now || e.ord > q.reached {
		q.reached = e.ord
	}
	q.now, q.ord = e.at, e.ord
	q.fired++
	e.h.Fire(e.at, e.ord&MaxKey, e.arg)
	return true
}

// Before reports whether the next pending event is ordered before time
// at, phase phase and key key: a place in another queue's order. A caller
// keeping events of its own on a second queue steps it while they come
// before the place the first queue has reached (Reached).
func (q *Queue) Before(at Time, phase Phase, key uint64) bool {
	if _, ok := q.Peek(); !ok {
		return false
	}
	return q.heap[0].before(&entry{at: at, ord: order(phase, key)}) // seq 0: a tie is not before
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
