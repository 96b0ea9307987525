package kvcr

import (
	"maps"
	"math"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// faultNets are the networks a link fault acts on, each with a 1 GB/s
// egress (1 byte a ns): egress links alone, the fair network with an
// unbounded ingress (a run with an ingress fault and no
// kvcr.ingress_gbps), and the fair network with an ingress too wide to
// bind.
func faultNets(q *des.Queue) map[string]network {
	return map[string]network{
		"egress":       &egressLinks{q: q, gbps: 1},
		"fair":         newFairNet(q, 1, 0, 1),
		"fair bounded": newFairNet(q, 1, 1000, 1),
	}
}

// netRun runs transfers and factor changes on one network.
type netRun struct {
	q    *des.Queue
	net  network
	done map[uint64]des.Time
}

func (r *netRun) start(at des.Time, id uint64, bytes int64, src, dst int32) *Transfer {
	t := &Transfer{ID: id, Bytes: bytes, index: -1}
	r.q.Schedule(at, des.PhaseArrival, id, call(func(now des.Time) {
		r.net.start(now, t, src, dst, func(now des.Time, t *Transfer) { r.done[t.ID] = now })
	}), 0)
	return t
}

// factor sets w's egress (or ingress) to x at at, in the phase of
// scenario events (after transfer completions at the same instant).
func (r *netRun) factor(at des.Time, w int32, ingress bool, x float64) {
	r.q.Schedule(at, des.PhaseLifecycle, 0, call(func(now des.Time) { r.net.setFactor(now, w, ingress, x) }), 0)
}

func (r *netRun) cancel(at des.Time, t *Transfer) {
	r.q.Schedule(at, des.PhaseDeadline, t.ID, call(func(now des.Time) { r.net.cancel(now, t) }), 0)
}

// TestLinkFault works link faults by hand on every network. Two 1 MB
// transfers from worker 0 start at 1 ms (a pull's first byte, staging at 0
// plus 1 ms latency) and share its 1 GB/s egress at 0.5 GB/s each: without
// a fault both end at 3 ms.
//
//   - Down: the egress goes to 0 at 2 ms for 1 ms. Each has 0.5 MB left
//     and keeps it while the link is down; from 3 ms they share 1 GB/s
//     again: 1 ms more, both end at 4 ms.
//   - Degraded: factor 0.5 at 2 ms for 1 ms: 0.25 GB/s each, 0.25 MB each
//     by 3 ms, leaving 0.25 MB, at 0.5 GB/s each 0.5 ms: 3.5 ms.
//   - Down, a transfer starting while down: the link is down from 2 ms to
//     4 ms and a third 1 MB transfer starts at 3 ms. It takes its place at
//     rate 0. From 4 ms three share 1 GB/s: the first two (0.5 MB left)
//     end 1.5 ms later at 5.5 ms, the third then has 0.5 MB left alone:
//     6 ms.
//   - Down, one cancelled while down: the second transfer is cancelled at
//     2.5 ms (its bytes lost); from 3 ms the first has the link alone,
//     0.5 MB: 3.5 ms.
//   - Down for good: the link goes to 0 at 2 ms and never returns:
//     neither ends.
func TestLinkFault(t *testing.T) {
	for _, c := range []struct {
		name string
		x    float64  // the egress's factor from 2 ms
		up   des.Time // when it returns to 1; 0: never
		more func(r *netRun, second *Transfer)
		want map[uint64]des.Time
	}{
		{"down", 0, 3 * ms, nil, map[uint64]des.Time{1: 4 * ms, 2: 4 * ms}},
		{"degraded", 0.5, 3 * ms, nil, map[uint64]des.Time{1: 3500 * us, 2: 3500 * us}},
		{"started while down", 0, 4 * ms, func(r *netRun, _ *Transfer) { r.start(3*ms, 3, mb, 0, 3) },
			map[uint64]des.Time{1: 5500 * us, 2: 5500 * us, 3: 6 * ms}},
		{"cancelled while down", 0, 3 * ms, func(r *netRun, b *Transfer) { r.cancel(2500*us, b) }, map[uint64]des.Time{1: 3500 * us}},
		{"down for good", 0, 0, nil, map[uint64]des.Time{}},
	} {
		var q des.Queue
		for name, net := range faultNets(&q) {
			q = des.Queue{}
			r := &netRun{q: &q, net: net, done: map[uint64]des.Time{}}
			r.start(1*ms, 1, mb, 0, 1)
			second := r.start(1*ms, 2, mb, 0, 2)
			r.factor(2*ms, 0, false, c.x)
			if c.up > 0 {
				r.factor(c.up, 0, false, 1)
			}
			if c.more != nil {
				c.more(r, second)
			}
			for q.Step() {
			}
			if !maps.Equal(r.done, c.want) {
				t.Errorf("%s, %s: ended %v, want %v", c.name, name, r.done, c.want)
			}
		}
	}
}

// TestIngressFault: the fair network without kvcr.ingress_gbps (ingress
// unbounded), egress 1 GB/s. Transfers of 1 MB from workers 0 and 1 to
// worker 2 start at 0, each alone on its egress at 1 GB/s: without a fault
// both end at 1 ms. An ingress fault on worker 2, factor 0.5, from 0.5 ms
// for 1 ms caps its ingress at 0.5 x bandwidth_gbps (1) = 0.5 GB/s, 0.25
// each: with 0.5 MB left each at 0.5 ms, 0.25 MB left at 1.5 ms, then 1
// GB/s each again: both end at 1.75 ms. Down instead (factor 0) for the
// same window: 0.5 MB left at 1.5 ms, both end at 2 ms. With an
// ingress_gbps of 0.8 the fault caps the ingress at factor x ingress_gbps
// (the case "bounded").
func TestIngressFault(t *testing.T) {
	for _, c := range []struct {
		name    string
		ingress float64
		x       float64
		want    des.Time
	}{
		{"degraded", 0, 0.5, 1750 * us},
		{"down", 0, 0, 2 * ms},
		// ingress_gbps 0.8: 0.4 GB/s each, 0.2 MB by 0.5 ms, 0.8 MB left;
		// at factor 0.5 the ingress is 0.4 GB/s, 0.2 each: 0.2 MB by 1.5 ms,
		// 0.6 MB left, at 0.4 each again: 1.5 ms more, 3 ms.
		{"bounded", 0.8, 0.5, 3 * ms},
	} {
		var q des.Queue
		r := &netRun{q: &q, net: newFairNet(&q, 1, c.ingress, 1), done: map[uint64]des.Time{}}
		r.start(0, 1, mb, 0, 2)
		r.start(0, 2, mb, 1, 2)
		r.factor(500*us, 2, true, c.x)
		r.factor(1500*us, 2, true, 1)
		for q.Step() {
		}
		if r.done[1] != c.want || r.done[2] != c.want {
			t.Errorf("%s: ended %v, want both at %v", c.name, r.done, c.want)
		}
	}
}

// TestInstantLinkDown: an instant link (rate 0) taken down holds a
// transfer started on it until it comes back up, then completes it at
// once; down is not instant.
func TestInstantLinkDown(t *testing.T) {
	var q des.Queue
	l := NewLink("instant", 0, &q)
	var ended des.Time = -1
	l.SetFactor(0, 0)
	tr := &Transfer{ID: 1, Bytes: mb}
	l.Start(1*ms, tr, func(now des.Time, _ *Transfer) { ended = now })
	if ended >= 0 || !tr.Active() || !l.Instant() || !l.Down() {
		t.Fatalf("a transfer on a down instant link ended at %v", ended)
	}
	q.Schedule(5*ms, des.PhaseLifecycle, 0, call(func(now des.Time) { l.SetFactor(now, 1) }), 0)
	for q.Step() {
	}
	if ended != 5*ms || l.Moved() != mb {
		t.Errorf("ended at %v, moved %d; want 5 ms, 1 MB", ended, l.Moved())
	}
}

// TestFairNetUnbounded: the fair network's capacities without a fault: an
// unbounded ingress never binds, and a down link gives its flows rate 0
// and no scheduled completion (no infinite time reaches the queue).
func TestFairNetUnbounded(t *testing.T) {
	var q des.Queue
	f := newFairNet(&q, 1, 0, 1)
	if c := f.capacity(ingressKey(3)); !math.IsInf(c, 1) {
		t.Errorf("ingress capacity %g, want +Inf", c)
	}
	f.setFactor(0, 3, true, 0.25)
	if c := f.capacity(ingressKey(3)); c != 0.25 {
		t.Errorf("faulted ingress capacity %g, want 0.25 (factor x bandwidth)", c)
	}
	f.setFactor(0, 0, false, 0)
	f.start(0, &Transfer{ID: 1, Bytes: mb, index: -1}, 0, 1, func(des.Time, *Transfer) { t.Error("completed on a down link") })
	if q.Len() != 0 {
		t.Errorf("%d events scheduled for a flow at rate 0", q.Len())
	}
}

// TestLinkFactorLowest: overlapping link faults on one worker: the lowest
// factor in force applies, on each side separately, and ending one leaves
// the others'.
func TestLinkFactorLowest(t *testing.T) {
	var q des.Queue
	k := New(Config{BandwidthGbps: 1, FairNet: true}, &q)
	k.StartLinkFault(0, des.MaxTime, 0, []int32{1, 2}, 0.5, true, false)
	k.StartLinkFault(0, des.MaxTime, 1, []int32{2}, 0.2, true, true)
	k.StartLinkFault(0, des.MaxTime, 2, []int32{2}, 0.8, true, false)
	for _, c := range []struct {
		w       int32
		ingress bool
		want    float64
	}{{1, false, 0.5}, {2, false, 0.2}, {2, true, 0.2}, {1, true, 1}} {
		if got := k.linkFactor(c.w, c.ingress); got != c.want {
			t.Errorf("worker %d ingress %v: factor %g, want %g", c.w, c.ingress, got, c.want)
		}
	}
	k.EndLinkFault(0, 1)
	if got := k.linkFactor(2, false); got != 0.5 {
		t.Errorf("after the 0.2 ended: %g, want 0.5", got)
	}
	if got := k.linkFactor(2, true); got != 1 {
		t.Errorf("ingress after the 0.2 ended: %g, want 1", got)
	}
}
