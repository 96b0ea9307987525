package kvcr

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kvsim/kvsim/block"
)

// state is a G2 block's state.
type state uint8

const (
	free    state = iota // absent
	filling              // reserved for a store or pull in flight: not readable
	ready                // readable, visible to the router and peers
	pending              // moved away: absent to readers, removed when its last pin drops
	// discarded: reserved for a pull's write that its target gave up on
	// while the write may still run. It will never land: not readable, a
	// store takes it over (filling, for the store), else it is freed when
	// the write ends.
	discarded
)

// unlanded reports whether a block in st is reserved for a write that has
// not landed: filling, or discarded (a write given up on).
func (st state) unlanded() bool { return st == filling || st == discarded }

// Pool is one worker's G2 host pool of fixed capacity in blocks, kept by
// runs. Ready blocks sit on an LRU list, least recently used first;
// eviction takes the first unpinned one. Filling, discarded and pending
// blocks are never victims.
//
// The pool holds extents: runs of blocks with one state and one pin count
// whose blocks, when ready, are consecutive on the LRU list in ascending
// offset order. The LRU list is a list of extents, and each segment's
// extents are kept sorted by offset, so an operation on a run splits at
// most the two extents at its ends and then costs a step per extent, not
// per block. Eviction takes the head extent's blocks from its lowest
// offset, which is its least recently used. An extent made ready or
// refreshed joins the tail extent when it continues it (same segment, next
// offset, same pins), and one unpinned in place joins its LRU neighbours
// likewise, so a store's run stays one extent, and pins released in place
// (a pull's destination hits, a cancelled pull's source) or refreshed in
// chain order (a pull's source after its write) leave no cuts behind. The
// slot-by-slot pool this replaced is the oracle of TestPoolAgainstSlots.
type Pool struct {
	size      int
	used      int // blocks held: filling, ready or pending
	peak      int
	evictable int                  // ready and unpinned blocks
	ext       []block.Node[extent] // the extents; freed ones (n == 0) are listed in spare
	spare     []int32
	lru       block.List[extent]    // the ready extents, least recently used first
	segs      block.SegMap[[]entry] // per segment held, its extents by ascending offset
	scratch   []int32               // the extents of the run in hand (cover)
	// evicted collects the blocks eviction took, as runs in order; KVCR
	// reports and clears it.
	evicted []block.Run
	// taken collects the discarded blocks stores took over, as runs in
	// order; KVCR takes them from the given-up pulls that held them and
	// clears it.
	taken  []block.Run
	chains *block.Chains // holds a reference on the segment of every block held
	flows  Flows
}

// Flows counts the blocks that came into a pool and left it since it was
// made, by cause: Used is always Stored + Pulled - Evicted - Dropped -
// Moved. The difference of two readings accounts for every change of
// Used between them.
type Flows struct {
	Stored  int64 // reserved for the worker's own blocks (a store, D2H)
	Pulled  int64 // reserved for the blocks of pulls into it
	Evicted int64 // taken by eviction to make room
	Dropped int64 // reserved for a pull that landed nothing, and freed or taken over by a store (then Stored too)
	Moved   int64 // removed after a move took them: at once, or when their last pin dropped
	Lost    int64 // gone with the worker's process (a down fault with its G2 lost)
}

// entry is an extent in its segment's index, with the offset past its
// last block, so that a search reads the index alone. Its first block is
// the extent's alone (not a block.Spans with both ends): eviction trims
// an extent from its start without touching its segment's index, which
// is worth a Map lookup and a write a store (see
// benchmarks/evidence/2026-12-01-span-sets.md).
type entry struct{ end, e int32 }

// extent is a run of blocks the pool holds alike (see Pool).
type extent struct {
	block.Run
	pins int32 // on each block
	st   state
}

// NewPool returns an empty pool of capacity blocks. It holds a reference
// in chains on the segment of each block it holds, and names the blocks it
// reports from chains, so chains may be nil only for a pool that never
// holds a block.
func NewPool(capacity int, chains *block.Chains) *Pool {
	return &Pool{size: capacity, lru: block.NewList[extent](), chains: chains}
}

// Capacity is the pool size in blocks.
func (p *Pool) Capacity() int { return p.size }

// Used is the number of blocks held (filling, ready or pending).
func (p *Pool) Used() int { return p.used }

// Peak is the largest Used seen.
func (p *Pool) Peak() int { return p.peak }

// Flows is what came into the pool and left it since it was made.
func (p *Pool) Flows() Flows { return p.flows }

// Unreadable counts the blocks held that no reader may take: those still
// filling (for a live write, or discarded for one given up), and those
// pending removal after a move.
func (p *Pool) Unreadable() (fills, pends int) {
	for _, nd := range p.ext {
		switch nd.V.st {
		case filling, discarded:
			fills += nd.V.Len()
		case pending:
			pends += nd.V.Len()
		}
	}
	return fills, pends
}

// Room reports whether n blocks can be had, counting free places and
// evictable blocks.
func (p *Pool) Room(n int) bool { return n <= p.room() }

// room is how many blocks can be had.
func (p *Pool) room() int { return p.size - p.used + p.evictable }

// list is segment s's extents, nil when the pool holds none of its blocks
// (or s is -1: a Ref without its segment). The pointer is valid until an
// extent of a segment not held is added.
func (p *Pool) list(s int32) *[]entry {
	if s < 0 {
		return nil
	}
	return p.segs.Get(s)
}

// search is the position in es, a segment's index, of the first extent
// ending past off.
func search(es []entry, off int32) int {
	lo, hi := 0, len(es)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if es[m].end > off {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// find is the extent holding block (seg, off), or -1.
func (p *Pool) find(seg, off int32) int32 {
	l := p.list(seg)
	if l == nil {
		return -1
	}
	es := *l
	if i := search(es, off); i < len(es) && p.ext[es[i].e].V.Lo <= off {
		return es[i].e
	}
	return -1
}

// at is block (seg, off)'s state and the offset where the run of blocks
// from off in that state ends: its extent's end, or for an absent block
// the next held block of seg (math.MaxInt32: none).
func (p *Pool) at(seg, off int32) (state, int32) {
	l := p.list(seg)
	if l == nil {
		return free, math.MaxInt32
	}
	es := *l
	i := search(es, off)
	if i == len(es) {
		return free, math.MaxInt32
	}
	if x := &p.ext[es[i].e].V; x.Lo <= off {
		return x.st, es[i].end
	} else {
		return free, x.Lo
	}
}

// Prefix counts the readable blocks of the chain whose path is given from
// index from on, up to index limit or the first that is not readable.
func (p *Pool) Prefix(path []block.Piece, from, limit int) int {
	n, k := 0, 0
	for _, pc := range path {
		if k+int(pc.N) <= from {
			k += int(pc.N)
			continue
		}
		stop := int32(min(int(pc.N), limit-k)) // the piece's blocks before limit
		for off := int32(max(from-k, 0)); off < pc.N; {
			if off >= stop {
				return n
			}
			st, end := p.at(pc.Seg, off)
			if st != ready {
				return n
			}
			end = min(end, stop)
			n += int(end - off)
			off = end
		}
		k += int(pc.N)
	}
	return n
}

// unpinnedIn counts r's blocks that are ready and unpinned: those eviction
// could take.
func (p *Pool) unpinnedIn(r block.Run) int {
	l := p.list(r.Seg)
	if l == nil {
		return 0
	}
	n := 0
	es := *l
	for i := search(es, r.Lo); i < len(es) && p.ext[es[i].e].V.Lo < r.Hi; i++ {
		if x := &p.ext[es[i].e].V; x.st == ready && x.pins == 0 {
			n += int(min(x.Hi, r.Hi) - max(x.Lo, r.Lo))
		}
	}
	return n
}

// notReady is the offset of r's first block that is not readable, or -1.
func (p *Pool) notReady(r block.Run) int32 {
	for off := r.Lo; off < r.Hi; {
		st, end := p.at(r.Seg, off)
		if st != ready {
			return off
		}
		off = end
	}
	return -1
}

// alloc returns a new extent holding x, in no index and on no list.
func (p *Pool) alloc(x extent) int32 {
	var e int32
	if k := len(p.spare); k > 0 {
		e, p.spare = p.spare[k-1], p.spare[:k-1]
	} else {
		p.ext = block.Grow(p.ext, p.size)
		e = int32(len(p.ext) - 1)
	}
	p.ext[e].V = x
	return e
}

// newExtent adds extent x, whose blocks are not held, to the index and
// returns it. It is on no list.
func (p *Pool) newExtent(x extent) int32 {
	e := p.alloc(x)
	l := p.segs.Add(x.Seg)
	*l = slices.Insert(*l, search(*l, x.Lo), entry{x.Hi, e})
	return e
}

// freeExtent takes extent e, on no list, out of the index.
func (p *Pool) freeExtent(e int32) {
	l := p.list(p.ext[e].V.Seg)
	p.unindex(e, l, search(*l, p.ext[e].V.Lo))
}

// unindex frees extent e, on no list, at position i of its segment's
// extents l.
func (p *Pool) unindex(e int32, l *[]entry, i int) {
	x := &p.ext[e].V
	if *l = slices.Delete(*l, i, i+1); len(*l) == 0 {
		p.segs.Delete(x.Seg)
	}
	*x = extent{}
	p.spare = append(p.spare, e)
}

// split cuts the extent at position i of its segment's extents l at
// offset at, inside it, and returns the new extent holding its blocks from
// at on, which follows it on the LRU list.
func (p *Pool) split(l *[]entry, i int, at int32) int32 {
	e := (*l)[i].e
	x := p.ext[e].V
	(*l)[i].end = at
	p.ext[e].V.Hi = at
	r := p.alloc(extent{Run: block.Run{Seg: x.Seg, Lo: at, Hi: x.Hi}, pins: x.pins, st: x.st})
	*l = slices.Insert(*l, i+1, entry{x.Hi, r})
	if x.st == ready {
		p.lru.InsertAfter(p.ext, e, r)
	}
	return r
}

// cover splits the extents at r's ends and returns those holding r's
// blocks, in ascending order. The slice is valid until the next cover.
func (p *Pool) cover(r block.Run) []int32 {
	p.scratch = p.scratch[:0]
	l := p.list(r.Seg)
	if l == nil {
		return nil
	}
	for i := search(*l, r.Lo); i < len(*l); i++ {
		e := (*l)[i].e
		if p.ext[e].V.Lo >= r.Hi {
			break
		}
		if p.ext[e].V.Lo < r.Lo {
			e = p.split(l, i, r.Lo)
			i++
		}
		if (*l)[i].end > r.Hi {
			p.split(l, i, r.Hi)
		}
		p.scratch = append(p.scratch, e)
	}
	return p.scratch
}

// joins reports whether ready extent b, right after a on the LRU list,
// continues a: the same segment from a's end, and the same pins.
func (p *Pool) joins(a, b int32) bool {
	x, y := &p.ext[a].V, &p.ext[b].V
	return x.Seg == y.Seg && x.Hi == y.Lo && x.pins == y.pins
}

// merge joins extent b, right after a on the LRU list, into a.
func (p *Pool) merge(a, b int32) {
	p.lru.Unlink(p.ext, b)
	x := &p.ext[a].V
	l := p.list(x.Seg)
	i := search(*l, x.Lo) // a's position; b's is the next
	x.Hi = p.ext[b].V.Hi
	(*l)[i].end = x.Hi
	p.unindex(b, l, i+1)
}

// pushTail makes ready extent e, on no list, the most recently used.
func (p *Pool) pushTail(e int32) {
	p.lru.PushTail(p.ext, e)
	if t := p.ext[e].Prev(); t >= 0 && p.joins(t, e) {
		p.merge(t, e)
	}
}

// mergePrev joins ready extent e into its LRU predecessor when e continues
// it, and returns the extent now holding e's blocks.
func (p *Pool) mergePrev(e int32) int32 {
	if pv := p.ext[e].Prev(); pv >= 0 && p.joins(pv, e) {
		p.merge(pv, e)
		return pv
	}
	return e
}

// fill reserves r, whose blocks must not be held, for a pull into the
// pool, in the filling state, evicting as needed; the caller has checked
// room.
func (p *Pool) fill(r block.Run) {
	p.reserve(r)
	p.flows.Pulled += int64(r.Len())
}

// reserve reserves r as fill does, counting no flow in.
func (p *Pool) reserve(r block.Run) {
	if over := p.used + r.Len() - p.size; over > 0 {
		p.evict(over)
	}
	p.used += r.Len()
	p.peak = max(p.peak, p.used)
	p.chains.AcquireN(r.Seg, r.Len())
	p.newExtent(extent{Run: r, st: filling})
}

// evict removes the k least recently used unpinned ready blocks, listing
// them in p.evicted.
func (p *Pool) evict(k int) {
	for e := p.lru.Head(); k > 0; {
		next := p.ext[e].Next()
		x := &p.ext[e].V
		if x.pins > 0 {
			e = next
			continue
		}
		m := min(int32(k), x.Hi-x.Lo)
		p.evicted = block.AppendRun(p.evicted, block.Run{Seg: x.Seg, Lo: x.Lo, Hi: x.Lo + m})
		p.flows.Evicted += int64(m)
		k -= int(m)
		if x.Lo+m == x.Hi {
			p.remove(e)
		} else {
			p.chains.DropN(x.Seg, int(m))
			x.Lo += m
			p.evictable -= int(m)
			p.used -= int(m)
		}
		e = next
	}
}

// store reserves the blocks of r the pool does not hold, while there is
// room, and takes over those discarded (reserved for a write given up,
// which will land nothing: listed in p.taken), appending the runs reserved
// or taken over to filled; it returns them and the number of blocks it had
// no room for. A block ready, pending, or filling for a live write or
// another store is skipped: it is readable, or will be, or was moved away.
func (p *Pool) store(r block.Run, filled []block.Run) ([]block.Run, int) {
	dropped := 0
	for off := r.Lo; off < r.Hi; {
		st, end := p.at(r.Seg, off)
		end = min(end, r.Hi)
		switch st {
		case free:
			n := min(end-off, int32(p.room()))
			if n > 0 {
				p.reserve(block.Run{Seg: r.Seg, Lo: off, Hi: off + n})
				p.flows.Stored += int64(n)
				filled = append(filled, block.Run{Seg: r.Seg, Lo: off, Hi: off + n})
			}
			dropped += int(end - off - n)
		case discarded:
			t := block.Run{Seg: r.Seg, Lo: off, Hi: end}
			p.takeOver(t)
			filled = append(filled, t)
		}
		off = end
	}
	return filled, dropped
}

// takeOver gives r's discarded blocks to a store: they are filling for it
// now, in the slots the dead write reserved. The pull's reservation ends
// (dropped) and the store's begins (stored): used, pins and the LRU list
// do not change.
func (p *Pool) takeOver(r block.Run) {
	for _, e := range p.cover(r) {
		p.ext[e].V.st = filling
	}
	p.flows.Dropped += int64(r.Len())
	p.flows.Stored += int64(r.Len())
	p.taken = block.AppendRun(p.taken, r)
}

// discard marks r's blocks, filling for a pull's write, as discarded: the
// pull's target gave up on the write, which will land nothing.
func (p *Pool) discard(r block.Run) {
	for _, e := range p.cover(r) {
		p.ext[e].V.st = discarded
	}
}

// makeReady turns r's filling blocks readable, most recently used, in
// ascending order.
func (p *Pool) makeReady(r block.Run) {
	for _, e := range p.cover(r) {
		x := &p.ext[e].V
		x.st = ready
		if x.pins == 0 {
			p.evictable += x.Len()
		}
		p.pushTail(e)
	}
}

// remove frees extent e in any state.
func (p *Pool) remove(e int32) {
	x := &p.ext[e].V
	if x.st == ready {
		p.lru.Unlink(p.ext, e)
		if x.pins == 0 {
			p.evictable -= x.Len()
		}
	}
	p.used -= x.Len()
	p.chains.DropN(x.Seg, x.Len())
	p.freeExtent(e)
}

// drop frees r's blocks, filling or discarded, whose data never arrived:
// every block of r must be the caller's (a store's, or a pull's that no
// store took over).
func (p *Pool) drop(r block.Run) {
	for _, e := range p.cover(r) {
		p.flows.Dropped += int64(p.ext[e].V.Len())
		p.remove(e)
	}
}

// release returns the pool's segment references: its worker is gone.
func (p *Pool) release() {
	for _, nd := range p.ext {
		p.chains.DropN(nd.V.Seg, nd.V.Len())
	}
	p.chains = nil
}

// pin keeps r's blocks, ready or pending, from eviction and removal.
func (p *Pool) pin(r block.Run) {
	for _, e := range p.cover(r) {
		x := &p.ext[e].V
		if x.st == ready && x.pins == 0 {
			p.evictable -= x.Len()
		}
		x.pins++
	}
}

// unpin drops a pin from each of r's blocks, in ascending order; refresh
// moves the ready ones to the most recent end. A pending block goes with
// its last pin: it is appended to removed. It returns removed and the
// number of blocks removed.
func (p *Pool) unpin(r block.Run, refresh bool, removed []block.Run) ([]block.Run, int) {
	gone := 0
	last := int32(-1) // the extent holding the last ready blocks unpinned in place
	for _, e := range p.cover(r) {
		x := &p.ext[e].V
		x.pins--
		switch {
		case x.st == pending && x.pins == 0:
			removed = block.AppendRun(removed, x.Run)
			gone += x.Len()
			p.flows.Moved += int64(x.Len())
			p.remove(e)
		case x.st == ready:
			if x.pins == 0 {
				p.evictable += x.Len()
			}
			if refresh {
				p.lru.Unlink(p.ext, e)
				p.pushTail(e)
			} else {
				last = p.mergePrev(e) // not with the next: it may be r's, not unpinned yet
			}
		}
	}
	if last >= 0 {
		if nx := p.ext[last].Next(); nx >= 0 && p.joins(last, nx) {
			p.merge(last, nx)
		}
	}
	return removed, gone
}

// markPending makes r's ready blocks absent to readers: an unpinned one is
// removed now (appended to removed), a pinned one when its last pin drops.
// It returns removed, the number of blocks removed now and the number of
// r's blocks that were ready (those removed now or pending).
func (p *Pool) markPending(r block.Run, removed []block.Run) (_ []block.Run, gone, readyN int) {
	for _, e := range p.cover(r) {
		x := &p.ext[e].V
		if x.st != ready {
			continue
		}
		readyN += x.Len()
		if x.pins == 0 {
			removed = block.AppendRun(removed, x.Run)
			gone += x.Len()
			p.flows.Moved += int64(x.Len())
			p.remove(e)
		} else {
			p.lru.Unlink(p.ext, e)
			x.st = pending
		}
	}
	return removed, gone, readyN
}

// Pinned is the total of pins on the pool's blocks.
func (p *Pool) Pinned() int {
	n := 0
	for _, nd := range p.ext {
		n += int(nd.V.pins) * nd.V.Len()
	}
	return n
}

// Check verifies the pool's bookkeeping: each segment's extents are
// sorted, disjoint and of that segment, none filling or discarded is
// pinned (nothing reads a block before it lands), the index holds exactly
// the extents in use, the LRU list holds exactly the ready ones, the used
// and evictable counts match, and the flows in and out add up to the used
// count. O(extents).
func (p *Pool) Check() error {
	var errs []error
	indexed, used, evictable, readyN := 0, 0, 0, 0
	p.segs.Each(func(s int32, l *[]entry) {
		es := *l
		if len(es) == 0 {
			errs = append(errs, fmt.Errorf("segment %d: an empty index", s))
		}
		for i, en := range es {
			x := p.ext[en.e].V
			switch e := en.e; {
			case x.Len() <= 0 || x.st == free || x.pins < 0 || x.pins > 0 && x.st.unlanded():
				errs = append(errs, fmt.Errorf("extent %d: %d blocks, state %d, %d pins", e, x.Len(), x.st, x.pins))
			case x.Seg != s:
				errs = append(errs, fmt.Errorf("extent %d of segment %d indexed under segment %d", e, x.Seg, s))
			case en.end != x.Hi:
				errs = append(errs, fmt.Errorf("extent %d of segment %d ends at %d, indexed as ending at %d", e, x.Seg, x.Hi, en.end))
			case i > 0 && es[i-1].end > x.Lo:
				errs = append(errs, fmt.Errorf("extent %d of segment %d overlaps or precedes the one before", e, x.Seg))
			}
			indexed++
			used += x.Len()
			if x.st == ready {
				readyN++
				if x.pins == 0 {
					evictable += x.Len()
				}
			}
		}
	})
	listed := 0
	for e := p.lru.Head(); e >= 0; e = p.ext[e].Next() {
		if p.ext[e].V.st != ready {
			errs = append(errs, fmt.Errorf("extent %d on the LRU list is not ready", e))
		}
		listed++
	}
	if indexed != len(p.ext)-len(p.spare) || listed != readyN || used != p.used || evictable != p.evictable {
		errs = append(errs, fmt.Errorf("extents indexed %d / in use %d, LRU %d / ready %d, used %d / counted %d, evictable %d / counted %d",
			indexed, len(p.ext)-len(p.spare), listed, readyN, used, p.used, evictable, p.evictable))
	}
	if f := p.flows; f.Stored+f.Pulled-f.Evicted-f.Dropped-f.Moved-f.Lost != int64(p.used) {
		lost := ""
		if f.Lost != 0 {
			lost = fmt.Sprintf(" - %d lost", f.Lost)
		}
		errs = append(errs, fmt.Errorf("used %d, but %d stored + %d pulled in - %d evicted - %d dropped - %d moved away%s = %d",
			p.used, f.Stored, f.Pulled, f.Evicted, f.Dropped, f.Moved, lost, f.Stored+f.Pulled-f.Evicted-f.Dropped-f.Moved-f.Lost))
	}
	return errors.Join(errs...)
}

// Visible calls f with every block the router should see in the pool: the
// ready ones and those pending removal (announced removed only once
// removed).
func (p *Pool) Visible(f func(block.Ref)) {
	var refs []block.Ref
	for _, r := range p.visible(nil) {
		refs = p.chains.AppendRefs(refs[:0], r.Seg, r.Lo, r.Hi)
		for _, b := range refs {
			f(b)
		}
	}
}

// visible appends the blocks Visible calls f with to dst, as runs.
func (p *Pool) visible(dst []block.Run) []block.Run {
	for _, nd := range p.ext {
		if nd.V.st == ready || nd.V.st == pending {
			dst = block.AppendRun(dst, nd.V.Run)
		}
	}
	return dst
}
