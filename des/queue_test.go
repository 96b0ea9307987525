package des

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

type recorder struct{ got []string }

func (r *recorder) Fire(now Time, key, arg uint64) {
	r.got = append(r.got, Time(now).String()+"/"+Phase(arg>>32).String()+"/"+string(rune('a'+key)))
}

// TestSameInstantOrder pushes events in scrambled order and checks they fire
// by time, then phase in the DESIGN.md order, then key, then push order.
func TestSameInstantOrder(t *testing.T) {
	var q Queue
	r := &recorder{}
	push := func(at Time, p Phase, key uint64) { q.Schedule(at, p, key, r, uint64(p)<<32) }
	push(2, PhaseTransfer, 0)
	push(1, PhaseSample, 0)
	push(1, PhaseDrive, 1)
	push(1, PhaseDrive, 0)
	push(1, PhaseArrival, 3)
	push(1, PhaseLifecycle, 0)
	push(1, PhaseDeadline, 2)
	push(1, PhasePass, 5)
	push(1, PhasePass, 4)
	push(1, PhaseTransfer, 7)
	for q.Step() {
	}
	want := []string{
		"1ns/transfer/h", "1ns/pass/e", "1ns/pass/f", "1ns/deadline/c", "1ns/lifecycle/a",
		"1ns/arrival/d", "1ns/drive/a", "1ns/drive/b", "1ns/sample/a", "2ns/transfer/a",
	}
	if !slices.Equal(r.got, want) {
		t.Errorf("order:\n got %v\nwant %v", r.got, want)
	}
	if q.Now() != 2 || q.Fired() != 10 {
		t.Errorf("now %v fired %d, want 2ns 10", q.Now(), q.Fired())
	}
}

type seqRec struct{ args []uint64 }

func (s *seqRec) Fire(_ Time, _, arg uint64) { s.args = append(s.args, arg) }

// fireFunc is a Handler calling a function of the time.
type fireFunc func(now Time)

func (f fireFunc) Fire(now Time, _, _ uint64) { f(now) }

// TestSeqBreaksTies: equal (time, phase, key) fire in push order.
func TestSeqBreaksTies(t *testing.T) {
	var q Queue
	s := &seqRec{}
	for i := range uint64(20) {
		q.Schedule(5, PhasePass, 1, s, i)
	}
	for q.Step() {
	}
	for i, a := range s.args {
		if a != uint64(i) {
			t.Fatalf("fire %d carried arg %d", i, a)
		}
	}
}

// TestHeapMatchesSort fires random events and checks the sequence equals a
// sort of the same entries by (at, phase, key, seq).
func TestHeapMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q Queue
	type ev struct {
		at   Time
		p    Phase
		k    uint64
		id   uint64
		seqn int
	}
	var evs []ev
	s := &seqRec{}
	for i := range 5000 {
		e := ev{Time(r.IntN(100)), Phase(1 + r.IntN(7)), uint64(r.IntN(10)), uint64(i), i}
		evs = append(evs, e)
		q.Schedule(e.at, e.p, e.k, s, e.id)
	}
	slices.SortFunc(evs, func(a, b ev) int {
		switch {
		case a.at != b.at:
			return int(a.at - b.at)
		case a.p != b.p:
			return int(a.p) - int(b.p)
		case a.k != b.k:
			return int(a.k) - int(b.k)
		}
		return a.seqn - b.seqn
	})
	for q.Step() {
	}
	for i := range evs {
		if s.args[i] != evs[i].id {
			t.Fatalf("event %d: got id %d want %d", i, s.args[i], evs[i].id)
		}
	}
}

type reschedule struct {
	q *Queue
	n int
}

func (r *reschedule) Fire(now Time, key, _ uint64) {
	r.n++
	if r.n < 3 {
		r.q.Schedule(now+10, PhasePass, key, r, 0)
	}
}

func TestScheduleFromHandlerAndPast(t *testing.T) {
	var q Queue
	r := &reschedule{q: &q}
	q.Schedule(0, PhasePass, 0, r, 0)
	for q.Step() {
	}
	if r.n != 3 || q.Now() != 20 {
		t.Fatalf("fired %d, now %v; want 3 at 20ns", r.n, q.Now())
	}
	defer func() {
		if recover() == nil {
			t.Error("scheduling in the past did not panic")
		}
	}()
	q.Schedule(19, PhasePass, 0, r, 0)
}

// TestStepFiresOne: Step fires the next event only, so that its caller
// works between two events: ten events at 0..9 ns, five steps fire those
// at 0..4 ns and leave five pending, the time that of the fifth.
func TestStepFiresOne(t *testing.T) {
	var q Queue
	s := &seqRec{}
	for i := range uint64(10) {
		q.Schedule(Time(i), PhaseArrival, i, s, i)
	}
	for range 5 {
		if !q.Step() {
			t.Fatal("Step fired nothing with events pending")
		}
	}
	if len(s.args) != 5 || q.Len() != 5 || q.Now() != 4 {
		t.Errorf("fired %d, pending %d, now %v; want 5, 5, 4ns", len(s.args), q.Len(), q.Now())
	}
}

// TestBefore: events at 5 ns in the drive phase, keys 3 and 7, and one at
// 6 ns. Key 3 is not before (5 ns, drive, 3), its own place, but is
// before (5 ns, drive, 4); once it fires, key 7 is before (5 ns, sample,
// 0) but not (5 ns, arrival, 9), whose phase comes first; once 7 fires,
// the last is before (7 ns, transfer, 0) only. A cancelled head is passed
// over: it is not the next event.
func TestBefore(t *testing.T) {
	var q Queue
	s := &seqRec{}
	c := q.ScheduleHandle(1, PhaseDrive, 0, s, 99)
	q.Schedule(5, PhaseDrive, 7, s, 7)
	q.Schedule(5, PhaseDrive, 3, s, 3)
	q.Schedule(6, PhaseDrive, 1, s, 1)
	q.Cancel(c)
	for i, st := range []struct {
		at     Time
		phase  Phase
		key    uint64
		before bool
	}{
		{5, PhaseDrive, 3, false},
		{5, PhaseDrive, 4, true},
		{5, PhaseArrival, 9, false},
		{5, PhaseSample, 0, true},
		{6, PhaseArrival, 9, false},
		{7, PhaseTransfer, 0, true},
	} {
		got := q.Before(st.at, st.phase, st.key)
		if got != st.before {
			t.Errorf("check %d: Before(%v, %v, %d) = %v, want %v", i, st.at, st.phase, st.key, got, st.before)
		}
		if got {
			q.Step()
		}
	}
	if !slices.Equal(s.args, []uint64{3, 7, 1}) || q.Len() != 0 || q.Before(MaxTime, PhaseSample, 0) {
		t.Errorf("fired %v, %d pending, the next before the end of time %v; want [3 7 1], none, false", s.args, q.Len(), q.Before(MaxTime, PhaseSample, 0))
	}
}

// TestReached: drive scans at 5 ns with keys 5 and 7, an arrival at 6 ns;
// drive 5 schedules a lifecycle event at 5 ns, which fires next, after
// drive 5 although its place comes before: inside it Reached is drive 5's
// place, (5 ns, drive, 5), not its own, and Passed compares with that
// place. Then drive 7's own, then the
// arrival's at 6 ns, a new instant, and that of the drive scan it fires
// inline (FireOrSchedule), (6 ns, drive, 2).
func TestReached(t *testing.T) {
	var q Queue
	var got []string
	note := fireFunc(func(Time) {
		at, ph, key := q.Reached()
		got = append(got, fmt.Sprintf("%v/%v/%d at %v/%v", at, ph, key, q.Phase(), q.Key()))
	})
	q.Schedule(5, PhaseDrive, 5, fireFunc(func(now Time) {
		note(now)
		q.Schedule(now, PhaseLifecycle, 0, fireFunc(func(now Time) {
			note(now)
			// Passed compares with drive 5's place: drive 4 and any arrival
			// at 5 ns came before, drive 5 itself and the samples did not.
			if !q.Passed(PhaseDrive, 4) || q.Passed(PhaseDrive, 5) || !q.Passed(PhaseArrival, 9) || q.Passed(PhaseSample, 0) {
				t.Errorf("Passed at (5ns, drive, 5): drive 4 %v, drive 5 %v, arrival 9 %v, sample 0 %v; want true, false, true, false",
					q.Passed(PhaseDrive, 4), q.Passed(PhaseDrive, 5), q.Passed(PhaseArrival, 9), q.Passed(PhaseSample, 0))
			}
		}), 0)
	}), 0)
	q.Schedule(5, PhaseDrive, 7, note, 0)
	q.Schedule(6, PhaseArrival, 1, fireFunc(func(now Time) {
		note(now)
		q.FireOrSchedule(PhaseDrive, 2, note, 0)
	}), 0)
	for q.Step() {
	}
	want := []string{"5ns/drive/5 at drive/5", "5ns/drive/5 at lifecycle/0", "5ns/drive/7 at drive/7",
		"6ns/arrival/1 at arrival/1", "6ns/drive/2 at drive/2"}
	if !slices.Equal(got, want) {
		t.Errorf("Reached %q, want %q", got, want)
	}
}

func TestFromNanos(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want Time
		ok   bool
	}{
		{1.4, 1, true}, {1.5, 2, true}, {2.5, 3, true}, {-1.5, -2, true},
		{9.3e18, 0, false}, {1e300, 0, false},
		// The ends of Time: 2^63 does not fit, -2^63 does; the floats next
		// to them fit; NaN and the infinities do not.
		{math.Ldexp(1, 63), 0, false}, {math.Nextafter(math.Ldexp(1, 63), 0), 1<<63 - 1024, true},
		{-math.Ldexp(1, 63), math.MinInt64, true}, {math.Nextafter(-math.Ldexp(1, 63), math.Inf(-1)), 0, false},
		{math.NaN(), 0, false}, {math.Inf(1), 0, false}, {math.Inf(-1), 0, false},
	} {
		got, ok := FromNanos(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("FromNanos(%g) = %d,%v want %d,%v", c.in, got, ok, c.want, c.ok)
		}
	}
	if AddSat(MaxTime-1, 5) != MaxTime || AddSat(1, 2) != 3 {
		t.Error("AddSat")
	}
}

func TestStreamsIndependentAndStable(t *testing.T) {
	a1 := NewRNG(42).Stream("router")
	a2 := NewRNG(42).Stream("router")
	b := NewRNG(42).Stream("workload")
	c := NewRNG(43).Stream("router")
	x1, x2, y, z := a1.Uint64(), a2.Uint64(), b.Uint64(), c.Uint64()
	if x1 != x2 {
		t.Error("same seed and name differ")
	}
	if x1 == y || x1 == z {
		t.Error("different name or seed gave the same first draw")
	}
}

type nop struct{}

func (nop) Fire(Time, uint64, uint64) {}

// BenchmarkQueue measures one push and one pop with about 1000 pending
// events, the shape of a busy cluster run.
func BenchmarkQueue(b *testing.B) {
	var q Queue
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 1000 {
		q.Schedule(Time(r.IntN(1e6)), PhasePass, uint64(i), nop{}, 0)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.Schedule(q.Now()+Time(r.IntN(1e6)), PhasePass, uint64(i&1023), nop{}, 0)
		q.Step()
	}
}

// TestCancel schedules three events at 1, 2 and 3 ns and cancels the one
// at 2 and the one at 1: only the event at 3 fires, Len counts it alone,
// Peek shows 3 ns, Next its place (3 ns, pass, key 7) and Fired is 1.
// Cancelling again, or after the event fired, reports false and changes
// nothing; Next of the empty queue reports none.
func TestCancel(t *testing.T) {
	var q Queue
	s := &seqRec{}
	h1 := q.ScheduleHandle(1, PhasePass, 0, s, 1)
	h2 := q.ScheduleHandle(2, PhasePass, 0, s, 2)
	h3 := q.ScheduleHandle(3, PhasePass, 7, s, 3)
	if !q.Cancel(h2) || !q.Cancel(h1) {
		t.Fatal("Cancel of a pending event reported false")
	}
	if q.Cancel(h2) {
		t.Error("second Cancel reported true")
	}
	if q.Len() != 1 {
		t.Errorf("Len %d, want 1", q.Len())
	}
	if at, ok := q.Peek(); !ok || at != 3 {
		t.Errorf("Peek %v %v, want 3ns true", at, ok)
	}
	if at, ph, key, ok := q.Next(); !ok || at != 3 || ph != PhasePass || key != 7 {
		t.Errorf("Next %v %v %d %v, want 3ns pass 7 true", at, ph, key, ok)
	}
	for q.Step() {
	}
	if _, _, _, ok := q.Next(); ok {
		t.Error("Next of an empty queue reported an event")
	}
	if !slices.Equal(s.args, []uint64{3}) || q.Fired() != 1 || q.Len() != 0 {
		t.Errorf("fired args %v, Fired %d, Len %d; want [3] 1 0", s.args, q.Fired(), q.Len())
	}
	if q.Cancel(h3) {
		t.Error("Cancel after firing reported true")
	}
}

// TestScheduleAgain: a nil handle makes a new one; a handle whose event
// fired schedules the next one, on itself, and can cancel it; a pending or
// cancelled handle cannot be reused.
func TestScheduleAgain(t *testing.T) {
	var q Queue
	s := &seqRec{}
	h := q.ScheduleAgain(nil, 1, PhasePass, 0, s, 1)
	q.Step()
	if again := q.ScheduleAgain(h, 2, PhasePass, 0, s, 2); again != h {
		t.Error("ScheduleAgain of a fired handle made a new one")
	}
	q.Step()
	q.ScheduleAgain(h, 3, PhasePass, 0, s, 3)
	if !q.Cancel(h) {
		t.Error("Cancel of the rescheduled event reported false")
	}
	for q.Step() {
	}
	if !slices.Equal(s.args, []uint64{1, 2}) {
		t.Errorf("fired args %v, want [1 2]", s.args)
	}
	for _, c := range []struct {
		name string
		h    *Handle
	}{{"pending", q.ScheduleHandle(4, PhasePass, 0, s, 4)}, {"cancelled", h}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ScheduleAgain of a %s handle did not panic", c.name)
				}
			}()
			q.ScheduleAgain(c.h, 5, PhasePass, 0, s, 5)
		}()
	}
}

// TestCancelOnlyPending: a queue whose only events are cancelled is empty:
// Len is 0 and Step fires nothing and reports false.
func TestCancelOnlyPending(t *testing.T) {
	var q Queue
	s := &seqRec{}
	q.Cancel(q.ScheduleHandle(5, PhaseDrive, 0, s, 0))
	if q.Step() || q.Len() != 0 || len(s.args) != 0 {
		t.Errorf("Step fired, Len %d, args %v", q.Len(), s.args)
	}
}

// TestCancelRandom is the queue with cancellation against a sorted list:
// 2,000 events at random times, a random third of them cancelled at
// random points of the run, fire in (time, phase, key, seq) order and
// the cancelled ones never.
func TestCancelRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	var q Queue
	s := &seqRec{}
	type ev struct {
		at   Time
		key  uint64
		h    *Handle
		gone bool
	}
	evs := make([]ev, 2000)
	for i := range evs {
		evs[i] = ev{at: Time(rng.IntN(500)), key: uint64(rng.IntN(4))}
		evs[i].h = q.ScheduleHandle(evs[i].at, PhasePass, evs[i].key, s, uint64(i))
	}
	var want []uint64
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if evs[a].at != evs[b].at {
			return int(evs[a].at - evs[b].at)
		}
		return int(evs[a].key) - int(evs[b].key)
	})
	pos := 0
	for q.Len() > 0 {
		if rng.IntN(3) == 0 { // cancel a random event not yet fired
			i := order[pos+rng.IntN(len(order)-pos)]
			if q.Cancel(evs[i].h) == evs[i].gone {
				t.Fatalf("Cancel(%d) disagrees with gone=%v", i, evs[i].gone)
			}
			evs[i].gone = true
		}
		for pos < len(order) && evs[order[pos]].gone {
			pos++
		}
		if pos == len(order) {
			break
		}
		want = append(want, uint64(order[pos]))
		pos++
		q.Step()
	}
	if !slices.Equal(s.args, want) {
		t.Errorf("fired %d events, want %d in order", len(s.args), len(want))
	}
	if q.Len() != 0 || q.Step() {
		t.Errorf("Len %d after the run", q.Len())
	}
}

// seen is one fire as the queue places it: Now, Phase and Key inside the
// handler, and the event's arg.
type seen struct {
	at  Time
	p   Phase
	key uint64
	arg uint64
}

// caller is a handler whose fire with arg 0 hands the queue, as its last
// action, a drive event (key 2, arg 9) through FireOrSchedule; every fire
// is recorded as the queue places it.
type caller struct {
	q      *Queue
	got    []seen
	inline []bool
}

func (c *caller) Fire(now Time, key, arg uint64) {
	c.got = append(c.got, seen{now, c.q.Phase(), c.q.Key(), arg})
	if arg == 0 {
		c.inline = append(c.inline, c.q.FireOrSchedule(PhaseDrive, 2, c, 9))
	}
}

// TestFireOrSchedule works the rule by hand. The caller fires at 5 ns in
// PhaseArrival with key 3 and hands over a drive event (key 2, arg 9).
// Each row adds one more event (arg 1) before the run, or none:
//   - none, or one at 6 ns: nothing is due at 5 ns, so the drive fires at
//     once, inside the caller, and Fired does not count it;
//   - one at 5 ns in a later phase (sample), in the same phase with a
//     higher key (drive, 3) or with a lower key (drive, 1): it is due at
//     5 ns, so the drive is scheduled and fires in its place in the
//     (phase, key) order: before the sample and drive 3, after drive 1;
//   - one at 5 ns, cancelled: a cancelled event is not due, so inline.
func TestFireOrSchedule(t *testing.T) {
	arrival := seen{5, PhaseArrival, 3, 0}
	drive := seen{5, PhaseDrive, 2, 9}
	for _, c := range []struct {
		name   string
		other  *seen // the one more event, if any
		cancel bool
		inline bool
		want   []seen
	}{
		{"alone", nil, false, true, []seen{arrival, drive}},
		{"later instant", &seen{6, PhaseTransfer, 0, 1}, false, true,
			[]seen{arrival, drive, {6, PhaseTransfer, 0, 1}}},
		{"later phase", &seen{5, PhaseSample, 0, 1}, false, false,
			[]seen{arrival, drive, {5, PhaseSample, 0, 1}}},
		{"higher key", &seen{5, PhaseDrive, 3, 1}, false, false,
			[]seen{arrival, drive, {5, PhaseDrive, 3, 1}}},
		{"lower key", &seen{5, PhaseDrive, 1, 1}, false, false,
			[]seen{arrival, {5, PhaseDrive, 1, 1}, drive}},
		{"cancelled", &seen{5, PhaseSample, 0, 1}, true, true, []seen{arrival, drive}},
	} {
		var q Queue
		h := &caller{q: &q}
		q.Schedule(5, PhaseArrival, 3, h, 0)
		if o := c.other; o != nil {
			hd := q.ScheduleHandle(o.at, o.p, o.key, h, o.arg)
			if c.cancel {
				q.Cancel(hd)
			}
		}
		if !q.Step() {
			t.Fatalf("%s: nothing fired", c.name)
		}
		if len(h.inline) != 1 || h.inline[0] != c.inline {
			t.Errorf("%s: fired at once %v, want %v", c.name, h.inline, c.inline)
		}
		if q.Phase() != PhaseArrival || q.Key() != 3 {
			t.Errorf("%s: after the caller Phase %v Key %d, want arrival 3", c.name, q.Phase(), q.Key())
		}
		for q.Step() {
		}
		if !slices.Equal(h.got, c.want) {
			t.Errorf("%s: fired\n %v\nwant\n %v", c.name, h.got, c.want)
		}
		if want := uint64(len(c.want)); c.inline && q.Fired() != want-1 || !c.inline && q.Fired() != want {
			t.Errorf("%s: Fired %d of %d events, inline %v", c.name, q.Fired(), want, c.inline)
		}
	}
}

// chain is a handler that, with its own stream of draws, schedules at most
// one event at or after the current instant, in a random phase and key, and
// then, as its last action, may hand over one more event due now,
// through FireOrSchedule or always through Schedule.
type chain struct {
	q        Queue
	rng      *rand.Rand
	useFire  bool
	next     uint64 // the next event's arg: a serial number
	got      []seen
	atOnce   int // events fired by FireOrSchedule at once
	deferred int // events FireOrSchedule scheduled
}

func (c *chain) Fire(now Time, key, arg uint64) {
	c.got = append(c.got, seen{now, c.q.Phase(), c.q.Key(), arg})
	if c.next > 500 {
		return
	}
	for range c.rng.IntN(2) {
		c.next++
		c.q.Schedule(now+Time(c.rng.IntN(4)), Phase(1+c.rng.IntN(7)), uint64(c.rng.IntN(4)), c, c.next)
	}
	if c.rng.IntN(3) == 0 {
		return
	}
	c.next++
	p, k := Phase(1+c.rng.IntN(7)), uint64(c.rng.IntN(4))
	if !c.useFire {
		c.q.Schedule(now, p, k, c, c.next)
	} else if c.q.FireOrSchedule(p, k, c, c.next) {
		c.atOnce++
	} else {
		c.deferred++
	}
}

// TestFireOrScheduleMatchesSchedule runs 200 random event sets twice, with
// the same draws: once handing the last event of a handler to
// FireOrSchedule, once always to Schedule. Both fire the same events in
// the same order with the same Now, Phase and Key, and Fired differs by
// the events fired at once.
func TestFireOrScheduleMatchesSchedule(t *testing.T) {
	var atOnce, deferred int
	for seed := range uint64(200) {
		run := func(useFire bool) *chain {
			c := &chain{rng: rand.New(rand.NewPCG(seed, 99)), useFire: useFire}
			for range 1 + c.rng.IntN(20) {
				c.next++
				c.q.Schedule(Time(c.rng.IntN(50)), Phase(1+c.rng.IntN(7)), uint64(c.rng.IntN(4)), c, c.next)
			}
			for c.q.Step() {
			}
			return c
		}
		fire, sched := run(true), run(false)
		if !slices.Equal(fire.got, sched.got) {
			t.Fatalf("seed %d: FireOrSchedule fired %d events, Schedule %d, in a different order",
				seed, len(fire.got), len(sched.got))
		}
		if fire.q.Fired()+uint64(fire.atOnce) != sched.q.Fired() {
			t.Errorf("seed %d: Fired %d + %d at once, want %d", seed, fire.q.Fired(), fire.atOnce, sched.q.Fired())
		}
		atOnce, deferred = atOnce+fire.atOnce, deferred+fire.deferred
	}
	if atOnce == 0 || deferred == 0 {
		t.Errorf("%d events fired at once and %d scheduled: the sets do not reach both ways", atOnce, deferred)
	}
	t.Logf("%d events fired at once, %d scheduled", atOnce, deferred)
}
