package kvcr

import (
	"fmt"
	"testing"

	"github.com/kvsim/kvsim/des"
)

const (
	us = des.Microsecond
	ms = des.Millisecond
	mb = 1_000_000
)

// linkRun records the completion time of each transfer on one link.
type linkRun struct {
	q    des.Queue
	l    *Link
	done map[uint64]des.Time
}

func newLinkRun(gbps float64) *linkRun {
	r := &linkRun{done: map[uint64]des.Time{}}
	r.l = NewLink("test", gbps, &r.q)
	return r
}

type startAt struct {
	r   *linkRun
	t   *Transfer
	fin func(des.Time, *Transfer)
}

func (s *startAt) Fire(now des.Time, _, _ uint64) { s.r.l.Start(now, s.t, s.fin) }

type cancelAt struct {
	r *linkRun
	t *Transfer
}

func (c *cancelAt) Fire(now des.Time, _, _ uint64) { c.r.l.Cancel(now, c.t) }

func (r *linkRun) start(at des.Time, id uint64, bytes int64) *Transfer {
	t := &Transfer{ID: id, Bytes: bytes}
	r.q.Schedule(at, des.PhaseTransfer, id, &startAt{r, t, func(now des.Time, t *Transfer) { r.done[t.ID] = now }}, 0)
	return t
}

func (r *linkRun) cancel(at des.Time, t *Transfer) {
	r.q.Schedule(at, des.PhaseDeadline, t.ID, &cancelAt{r, t}, 0)
}

func TestProcessorSharing(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(r *linkRun)
		want  map[uint64]des.Time
	}{
		// Two 1 MB transfers at 1 GB/s from 1 ms (the first byte after 1 ms
		// latency): 0.5 GB/s each, 2 ms each: both end at 3 ms.
		{"two equal", func(r *linkRun) {
			r.start(1*ms, 1, mb)
			r.start(1*ms, 2, mb)
		}, map[uint64]des.Time{1: 3 * ms, 2: 3 * ms}},
		// Cancelling one at 2 ms: the other has 0.5 MB left at the full
		// 1 GB/s: it ends at 2.5 ms.
		{"cancel re-shares", func(r *linkRun) {
			r.start(1*ms, 1, mb)
			b := r.start(1*ms, 2, mb)
			r.cancel(2*ms, b)
		}, map[uint64]des.Time{1: 2500 * us}},
		// Three 1 MB at once: 1/3 GB/s each, 3 ms.
		{"three equal", func(r *linkRun) {
			r.start(0, 1, mb)
			r.start(0, 2, mb)
			r.start(0, 3, mb)
		}, map[uint64]des.Time{1: 3 * ms, 2: 3 * ms, 3: 3 * ms}},
		// 1, 2 and 3 MB at once: three share until the 1 MB one has its
		// 1 MB (3 ms); two share the 1 and 2 MB left until 5 ms; the last
		// MB goes alone: 6 ms, the 6 MB total at 1 GB/s.
		{"three unequal", func(r *linkRun) {
			r.start(0, 1, mb)
			r.start(0, 2, 2*mb)
			r.start(0, 3, 3*mb)
		}, map[uint64]des.Time{1: 3 * ms, 2: 5 * ms, 3: 6 * ms}},
		// Staggered: A alone for 0.5 ms (0.5 MB), then both at 0.5 GB/s;
		// A's last 0.5 MB takes 1 ms (1.5 ms), B then has 0.5 MB alone
		// (2 ms).
		{"staggered", func(r *linkRun) {
			r.start(0, 1, mb)
			r.start(500*us, 2, mb)
		}, map[uint64]des.Time{1: 1500 * us, 2: 2 * ms}},
	} {
		r := newLinkRun(1)
		c.setup(r)
		for r.q.Step() {
		}
		if len(r.done) != len(c.want) {
			t.Errorf("%s: completions %v, want %v", c.name, r.done, c.want)
		}
		for id, want := range c.want {
			if got, ok := r.done[id]; !ok || got != want {
				t.Errorf("%s: transfer %d ended at %v, want %v", c.name, id, got, want)
			}
		}
		if r.l.Active() != 0 {
			t.Errorf("%s: %d still active", c.name, r.l.Active())
		}
	}
}

// TestMovedBytes: a link's moved bytes are the sizes of the transfers that
// completed, not of those cancelled.
func TestMovedBytes(t *testing.T) {
	r := newLinkRun(2)
	r.start(0, 1, 3*mb)
	b := r.start(0, 2, 5*mb)
	r.cancel(1*ms, b)
	for r.q.Step() {
	}
	// 1 ms at 1 GB/s each (2 MB sent in all), then A's last 2 MB at 2 GB/s: 2 ms.
	if r.done[1] != 2*ms || r.l.Moved() != 3*mb {
		t.Errorf("A ended %v, moved %d", r.done[1], r.l.Moved())
	}
}

// TestNeverEnds: a transfer whose end falls past the end of virtual time
// is as on a down link: no completion is scheduled, and none panics. On a
// 1 GB/s link at factor 1e-12 (1e-12 bytes a ns) 10 MB take 1e19 ns, past
// the 9.2e18 ns virtual time holds. Raised to factor 1 at 1 ms, after
// 1e-6 bytes served, the 10 MB take 10 ms: the transfer ends at 11 ms.
func TestNeverEnds(t *testing.T) {
	r := newLinkRun(1)
	r.l.SetFactor(0, 1e-12)
	r.start(0, 1, 10*mb)
	r.q.Step() // the start
	if r.q.Len() != 0 {
		t.Fatalf("%d events scheduled for a transfer that never ends", r.q.Len())
	}
	r.l.SetFactor(1*ms, 1)
	for r.q.Step() {
	}
	if r.done[1] != 11*ms {
		t.Errorf("ended at %v, want 11ms", r.done[1])
	}
}

// TestInstantLink completes transfers when they start.
func TestInstantLink(t *testing.T) {
	r := newLinkRun(0)
	r.start(7*ms, 1, mb)
	for r.q.Step() {
	}
	if r.done[1] != 7*ms {
		t.Errorf("ended %v", r.done[1])
	}
}

// BenchmarkLink measures a transfer start and a completion on one link
// with 1 to 1024 transfers active.
func BenchmarkLink(b *testing.B) {
	for _, n := range []int{1, 16, 256, 1024} {
		b.Run(fmt.Sprintf("active=%d", n), func(b *testing.B) {
			var q des.Queue
			l := NewLink("b", 50, &q)
			nop := func(des.Time, *Transfer) {}
			for i := range n {
				l.Start(0, &Transfer{ID: uint64(i), Bytes: int64(1e6 + i)}, nop)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l.Start(q.Now(), &Transfer{ID: uint64(2000 + i), Bytes: 2e6}, nop)
				q.Step()
			}
		})
	}
}

// TestOneCompletionRule runs the same cases through both networks: egress
// links alone, and max-min fair sharing with an ingress too wide to bind.
// Every link ends a transfer at the nanosecond its last byte is served.
//
//   - Long busy: B (2 TB) runs alone at 1 GB/s for 1,000 s; then X (10 MB)
//     and Y (10.5 MB) start. Three share 1/3 GB/s: X ends 30 ms later; Y
//     has 0.5 MB left, shared with B at 0.5 GB/s: 1 ms more, 31 ms. (With a
//     tolerance of a millionth of the clock, 1 MB after 1,000 s, Y ended
//     with X.)
//   - Five bytes apart: A (10,000,000 bytes) and C (10,000,005) share 1
//     GB/s: A ends at 20 ms; C's last 5 bytes alone take 5 ns: 20,000,005
//     ns. (A tolerance of a millionth of the size, 10 bytes, ended C with
//     A.)
func TestOneCompletionRule(t *testing.T) {
	const s = des.Second
	for _, name := range []string{"egress", "fair"} {
		var q des.Queue
		var net network = &egressLinks{q: &q, gbps: 1}
		if name == "fair" {
			net = newFairNet(&q, 1, 1000, 1)
		}
		done := map[uint64]des.Time{}
		rec := func(now des.Time, t *Transfer) { done[t.ID] = now }
		start := func(at des.Time, id uint64, bytes int64, src, dst int32) *Transfer {
			t := &Transfer{ID: id, Bytes: bytes, index: -1}
			q.Schedule(at, des.PhaseArrival, id, call(func(now des.Time) { net.start(now, t, src, dst, rec) }), 0)
			return t
		}
		b := start(0, 1, 2_000_000_000_000, 0, 1)
		start(1000*s, 2, 10*mb, 0, 2)
		start(1000*s, 3, 10_500_000, 0, 3)
		q.Schedule(1001*s, des.PhaseDeadline, 1, call(func(now des.Time) { net.cancel(now, b) }), 0)
		start(2000*s, 4, 10*mb, 4, 5)
		start(2000*s, 5, 10*mb+5, 4, 6)
		for q.Step() {
		}
		want := map[uint64]des.Time{2: 1000*s + 30*ms, 3: 1000*s + 31*ms, 4: 2000*s + 20*ms, 5: 2000*s + 20*ms + 5}
		for id, w := range want {
			if done[id] != w {
				t.Errorf("%s: transfer %d ended at %v, want %v", name, id, done[id], w)
			}
		}
		if _, ok := done[1]; ok {
			t.Errorf("%s: the cancelled transfer completed", name)
		}
	}
}
