package kvcr

import (
	"container/heap"
	"fmt"

	"github.com/kvsim/kvsim/des"
)

// Transfer is one write over a link: all its bytes land together when the
// last one arrives.
type Transfer struct {
	ID    uint64 // orders completions that fall on the same nanosecond
	Bytes int64
	done  func(now des.Time, t *Transfer)

	tag   float64 // virtual service at which it completes
	index int     // in its link's heap; -1 when not active
	link  *Link   // the link it was started on (not with fairNet)
}

// Active reports whether the transfer is on a link.
func (t *Transfer) Active() bool { return t.index >= 0 }

// Link is a link of fixed bandwidth shared equally by its active transfers
// (processor sharing): with n active, each receives rate/n, re-shared at
// every start, completion and cancel. It keeps a virtual clock, the bytes
// each active transfer has received since a base point, so a transfer
// completes when the clock reaches its tag (clock at start plus its size).
// Only the earliest tag is scheduled: a start, completion or cancel costs
// O(log n), never a rescheduling of every transfer. The clock is rebased to
// zero whenever it passes rebaseBytes, so its rounding error stays the same
// however long the link has been busy.
//
// A link fault (SetFactor) scales the rate by a factor in [0, 1]: the clock
// runs at the old rate up to the change and at the new one after it. At
// factor 0 the link is down: its transfers keep their place and tags, the
// clock stands still, and no completion is scheduled until the factor
// returns. An instant link (rate 0) stays instant at any factor above 0
// and is down at 0.
type Link struct {
	Name   string
	rate   float64 // bytes per ns; 0: instant
	factor float64 // the link fault's factor, 1 without one; 0: down
	eff    float64 // rate x factor: the rate it serves at now
	q      *des.Queue
	v      float64 // virtual clock, bytes
	last   des.Time
	act    transferHeap
	gen    uint64 // generation of the scheduled completion event
	moved  int64  // bytes of completed transfers
}

// NewLink returns an idle link of gbps GB/s (1e9 bytes a second); 0 means
// transfers complete the instant they start.
func NewLink(name string, gbps float64, q *des.Queue) *Link {
	return &Link{Name: name, rate: gbps, factor: 1, eff: gbps, q: q} // GB/s = bytes per ns
}

// Instant reports whether the link has no bandwidth limit.
func (l *Link) Instant() bool { return l.rate == 0 }

// Down reports whether a link fault holds the link at factor 0.
func (l *Link) Down() bool { return l.factor == 0 }

// SetFactor runs the link at f (0 <= f <= 1) times its bandwidth from now
// on: the service up to now is at the old rate, the rest at the new one.
// Processor sharing goes on at the new rate; at 0 nothing completes until
// the factor is raised again. An instant link that comes back up completes
// every transfer it held at once.
func (l *Link) SetFactor(now des.Time, f float64) {
	if f == l.factor {
		return
	}
	l.advance(now)
	l.factor, l.eff = f, l.rate*f
	if l.Instant() && f > 0 {
		l.gen++
		for len(l.act) > 0 {
			t := heap.Pop(&l.act).(*Transfer)
			t.index = -1
			l.moved += t.Bytes
			t.done(now, t)
		}
		l.v = 0
		return
	}
	l.reschedule(now)
}

// Moved is the total size of the transfers that completed on the link.
func (l *Link) Moved() int64 { return l.moved }

// rebaseBytes bounds the virtual clock: past it, every tag is shifted down
// by the clock and the clock restarts at zero (O(n), once every 16 MB of
// service to each active transfer).
const rebaseBytes = 1 << 24

// advance brings the virtual clock to now.
func (l *Link) advance(now des.Time) {
	if n := len(l.act); n > 0 {
		l.v += float64(float64(now-l.last)*l.eff) / float64(n)
	}
	l.last = now
	if l.v > rebaseBytes {
		for _, t := range l.act {
			t.tag -= l.v
		}
		l.v = 0
		heap.Init(&l.act) // shifted tags may tie where they differed by less than their rounding
	}
}

// left is the service time t still needs at the current share, in
// nanoseconds (+Inf on a down link).
func (l *Link) left(t *Transfer) float64 {
	return float64(max(t.tag-l.v, 0)*float64(len(l.act))) / l.eff
}

// Start puts t on the link at now; done is called when its last byte lands.
// On an instant link it completes at once, before Start returns. On a down
// link it takes its place and waits.
func (l *Link) Start(now des.Time, t *Transfer, done func(des.Time, *Transfer)) {
	t.done, t.link = done, l
	if (l.Instant() && !l.Down()) || t.Bytes == 0 {
		t.index = -1
		l.moved += t.Bytes
		done(now, t)
		return
	}
	l.advance(now)
	t.tag = l.v + float64(t.Bytes)
	heap.Push(&l.act, t)
	l.reschedule(now)
}

// Cancel takes t off the link; its bytes so far are lost and it never
// completes. Cancelling a transfer that is not active does nothing.
func (l *Link) Cancel(now des.Time, t *Transfer) {
	if !t.Active() {
		return
	}
	l.advance(now)
	heap.Remove(&l.act, t.index)
	t.index = -1
	l.reschedule(now)
}

// reschedule schedules the completion of the earliest tag; none on a down
// link, nor past the end of virtual time (a rate so low that the transfer
// never ends, as on a down link).
func (l *Link) reschedule(now des.Time) {
	l.gen++
	if len(l.act) == 0 {
		l.v = 0 // idle: restart the clock, keeping tags small
		return
	}
	if l.Down() {
		return // nothing is served until the factor returns
	}
	t := l.act[0]
	if at, ok := completion(now, l.left(t)); ok {
		l.q.Schedule(at, des.PhaseTransfer, t.ID, l, l.gen)
	}
}

// completion is the instant a transfer with leftNs of service time left
// from now ends, and false when that is past the end of virtual time: it
// never ends.
func completion(now des.Time, leftNs float64) (des.Time, bool) {
	d, ok := des.FromNanos(leftNs)
	if !ok || d > des.MaxTime-now {
		return 0, false
	}
	return now + d, true
}

// endsNow is the completion rule of every link and network: a transfer
// ends at the nanosecond nearest to the instant its last byte is served,
// so one whose remaining service time, at the rate it has from now on, is
// under half a nanosecond ends now. The tolerance is that half nanosecond,
// whatever the link's history.
func endsNow(leftNs float64) bool { return leftNs < 0.5 }

// Fire completes the transfer scheduled now and every other whose
// remaining time, re-shared after each completion, rounds to now.
func (l *Link) Fire(now des.Time, _, gen uint64) {
	if gen != l.gen {
		return // superseded by a later start, completion or cancel
	}
	l.advance(now)
	first := true
	for len(l.act) > 0 && (first || endsNow(l.left(l.act[0]))) {
		t := heap.Pop(&l.act).(*Transfer)
		t.index = -1
		l.moved += t.Bytes
		first = false
		l.reschedule(now) // before done: done may start or cancel transfers
		t.done(now, t)
	}
}

func (l *Link) String() string { return fmt.Sprintf("link %s (%d active)", l.Name, len(l.act)) }

// transferHeap orders active transfers by (tag, id).
type transferHeap []*Transfer

func (h transferHeap) Len() int { return len(h) }
func (h transferHeap) Less(i, j int) bool {
	if h[i].tag != h[j].tag {
		return h[i].tag < h[j].tag
	}
	return h[i].ID < h[j].ID
}
func (h transferHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *transferHeap) Push(x any) {
	t := x.(*Transfer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *transferHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
