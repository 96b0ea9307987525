package kvcr

import (
	"cmp"
	"math"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// fairNet shares bandwidth max-min fairly over two links a transfer: the
// source's egress and the target's ingress. Rates come from progressive
// filling: the link whose capacity split among its unfixed transfers is
// smallest fixes those transfers at that share, which is taken off their
// other link, until every transfer has a rate. Unlike Link's virtual clock
// this recomputes every active transfer at each start, completion and
// cancel (O(n x links)); it is used only when kvcr.ingress_gbps is set or
// a link fault acts on ingress (Config.FairNet).
//
// Without kvcr.ingress_gbps an ingress is unbounded (+Inf capacity: never
// the link that fixes a share). A link fault scales a link's capacity by
// its factor; a faulted ingress without kvcr.ingress_gbps runs at factor x
// kvcr.bandwidth_gbps, a NIC's ingress being as fast as its egress. A flow
// whose rate is 0 (a link at factor 0) makes no progress and is not
// scheduled until rates change.
type fairNet struct {
	q       *des.Queue
	egress  float64           // bytes per ns
	ingress float64           // +Inf: unbounded
	nic     float64           // the ingress a link fault scales when ingress is unbounded
	factors map[int64]float64 // by link key: the link faults' factors in force (absent: 1)
	act     []*flow           // by start order
	last    des.Time
	gen     uint64
	moved   []int64 // by source worker: bytes of completed transfers

	// scratch of reshare and Fire
	links  []linkState
	eg, in []int // by flow: its egress and ingress in links
	fixed  []bool
	done   []*flow
}

// linkState is one link in progressive filling: its capacity left and its
// flows not fixed yet.
type linkState struct {
	key  int64
	cap  float64
	open int
}

type flow struct {
	t        *Transfer
	src, dst int32
	left     float64 // bytes
	rate     float64 // bytes per ns
}

// newFairNet shares egressGbps over each source and ingressGbps (0:
// unbounded) over each target; a faulted unbounded ingress runs at its
// factor times nicGbps.
func newFairNet(q *des.Queue, egressGbps, ingressGbps, nicGbps float64) *fairNet {
	f := &fairNet{q: q, egress: egressGbps, ingress: ingressGbps, nic: nicGbps}
	if ingressGbps <= 0 {
		f.ingress = math.Inf(1)
	}
	return f
}

// capacity is the capacity of link key, bytes per ns: its base rate times
// the factor of the link fault in force on it.
func (f *fairNet) capacity(key int64) float64 {
	base := f.egress
	if key%2 == 1 {
		base = f.ingress
	}
	x, ok := f.factors[key]
	if !ok {
		return base
	}
	if math.IsInf(base, 1) {
		base = f.nic
	}
	return base * x
}

func (f *fairNet) setFactor(now des.Time, w int32, ingress bool, x float64) {
	key := egressKey(w)
	if ingress {
		key = ingressKey(w)
	}
	if old, ok := f.factors[key]; ok && old == x || !ok && x == 1 {
		return
	}
	f.advance(now)
	if x == 1 {
		delete(f.factors, key)
	} else {
		if f.factors == nil {
			f.factors = map[int64]float64{}
		}
		f.factors[key] = x
	}
	f.reshare(now)
}

func (f *fairNet) start(now des.Time, t *Transfer, src, dst int32, done func(des.Time, *Transfer)) {
	f.advance(now)
	t.done, t.index = done, 0
	f.act = append(f.act, &flow{t: t, src: src, dst: dst, left: float64(t.Bytes)})
	f.reshare(now)
}

func (f *fairNet) cancel(now des.Time, t *Transfer) {
	if !t.Active() {
		return
	}
	f.advance(now)
	for i, fl := range f.act {
		if fl.t == t {
			f.act = append(f.act[:i], f.act[i+1:]...)
			break
		}
	}
	t.index = -1
	f.reshare(now)
}

func (f *fairNet) movedBy(w int32) int64 {
	if int(w) < len(f.moved) {
		return f.moved[w]
	}
	return 0
}

func (f *fairNet) advance(now des.Time) {
	dt := float64(now - f.last)
	for _, fl := range f.act {
		fl.left -= float64(fl.rate * dt)
	}
	f.last = now
}

// egressKey and ingressKey name a link: a worker's egress (even) or
// ingress (odd).
func egressKey(w int32) int64  { return 2 * int64(w) }
func ingressKey(w int32) int64 { return 2*int64(w) + 1 }

// reshare recomputes the rates and schedules the earliest completion.
func (f *fairNet) reshare(now des.Time) {
	f.gen++
	if len(f.act) == 0 {
		return
	}
	f.fill()
	first, at := -1, des.MaxTime
	for i, fl := range f.act {
		t, ok := completion(now, fl.leftNs())
		if !ok {
			continue // at rate 0, or so low it never ends: not before rates change
		}
		if first < 0 || t < at || (t == at && fl.t.ID < f.act[first].t.ID) {
			first, at = i, t
		}
	}
	if first >= 0 {
		f.q.Schedule(at, des.PhaseTransfer, f.act[first].t.ID, f, f.gen)
	}
}

// leftNs is the service time the flow still needs at its rate: +Inf at
// rate 0 with bytes left.
func (fl *flow) leftNs() float64 {
	if fl.rate == 0 {
		if fl.left <= 0 {
			return 0
		}
		return math.Inf(1)
	}
	return max(fl.left, 0) / fl.rate
}

// fill sets every active flow's rate by progressive filling over the links
// the flows use.
func (f *fairNet) fill() {
	links := f.links[:0]
	find := func(key int64) int {
		for i := range links {
			if links[i].key == key {
				return i
			}
		}
		links = append(links, linkState{key: key, cap: f.capacity(key)})
		return len(links) - 1
	}
	n := len(f.act)
	eg, in, fixed := slices.Grow(f.eg[:0], n)[:n], slices.Grow(f.in[:0], n)[:n], slices.Grow(f.fixed[:0], n)[:n]
	clear(fixed)
	for i, fl := range f.act {
		eg[i] = find(egressKey(fl.src))
		in[i] = find(ingressKey(fl.dst))
		links[eg[i]].open++
		links[in[i]].open++
	}
	f.links, f.eg, f.in, f.fixed = links, eg, in, fixed
	for left := len(f.act); left > 0; {
		best, share := -1, math.Inf(1)
		for i, l := range links {
			if l.open == 0 {
				continue
			}
			s := l.cap / float64(l.open)
			if best < 0 || s < share || (s == share && l.key < links[best].key) {
				best, share = i, s
			}
		}
		for i, fl := range f.act {
			if fixed[i] || (eg[i] != best && in[i] != best) {
				continue
			}
			fixed[i], fl.rate = true, share
			left--
			for _, li := range []int{eg[i], in[i]} {
				links[li].cap -= share
				links[li].open--
			}
		}
	}
}

// Fire completes the flow scheduled now and, by the rule every link
// follows (endsNow), every other whose remaining time at its rate after
// each re-share rounds to now.
func (f *fairNet) Fire(now des.Time, key, gen uint64) {
	if gen != f.gen {
		return
	}
	f.advance(now)
	done := f.done[:0]
	if i := slices.IndexFunc(f.act, func(fl *flow) bool { return fl.t.ID == key }); i >= 0 {
		done = append(done, f.act[i])
		f.act = slices.Delete(f.act, i, i+1)
	}
	for len(f.act) > 0 {
		f.fill() // the rates the rest have from now on
		n := len(done)
		kept := f.act[:0]
		for _, fl := range f.act {
			if endsNow(fl.leftNs()) {
				done = append(done, fl)
			} else {
				kept = append(kept, fl)
			}
		}
		clear(f.act[len(kept):])
		f.act = kept
		if len(done) == n {
			break
		}
	}
	f.reshare(now)
	slices.SortFunc(done, func(a, b *flow) int { return cmp.Compare(a.t.ID, b.t.ID) })
	for _, fl := range done {
		fl.t.index = -1
		for int(fl.src) >= len(f.moved) {
			f.moved = append(f.moved, 0)
		}
		f.moved[fl.src] += fl.t.Bytes
		fl.t.done(now, fl.t)
	}
	clear(done)
	f.done = done[:0]
}
