package scheduler

import (
	"slices"

	"github.com/kvsim/kvsim/block"
)

// Tier is where a worker holds a block: GPU memory (G1) or its host pool
// (G2).
type Tier uint8

// The tiers.
const (
	G1 Tier = iota
	G2
)

// Tiers is a set of tiers, for prefix queries.
type Tiers uint8

// The tier sets.
const (
	InG1     Tiers = 1 << G1
	InG2     Tiers = 1 << G2
	InEither       = InG1 | InG2
)

// Prefix is how much of a chain one worker holds: the leading blocks in G1,
// and the leading blocks each in G1 or G2.
type Prefix struct {
	Worker int32
	G1     int
	Either int
}

// Index is the router's view by runs: for each chain segment some
// worker holds blocks of, the workers holding them, each with the offsets
// it holds in each tier as sorted disjoint spans. An update costs one
// lookup and a span merge for a whole run, and a prefix walk one step per
// piece of the request's path and worker holding it, never one per block.
// It holds a reference on every segment it records (block.Chains.Acquire).
type Index struct {
	chains *block.Chains
	segs   []*segHolders // by segment id; nil: no holder
	facts  int
	live   []bool // scratch of runs
}

type segHolders struct {
	ws      []int32   // the holders' worker ids, ascending: a search reads this line, not the holdings
	holders []holding // in the order of ws
}

type holding struct {
	tiers [2]spans // G1, G2
	// from0 is, by tier set (InG1, InG2, InEither), the end of the run
	// from offset 0 the worker holds: what a prefix walk asks of every
	// piece but the first, kept here so the walk reads only the holders.
	from0 [InEither + 1]int32
}

// refresh recomputes h.from0 after a change to its spans.
func (h *holding) refresh() {
	for _, t := range [...]Tiers{InG1, InG2, InEither} {
		h.from0[t] = h.span(0, t)
	}
}

// NewIndex returns an empty index over the segments of chains.
func NewIndex(chains *block.Chains) *Index { return &Index{chains: chains} }

// seg is segment s's holders, nil when no worker holds a block of it.
func (ix *Index) seg(s int32) *segHolders {
	if int(s) < len(ix.segs) {
		return ix.segs[s]
	}
	return nil
}

// holding finds worker w's holding of segment s: the segment's holders and
// its index there, creating it (and the segment's entry) when add; index
// -1 when absent.
func (ix *Index) holding(s int32, w int32, add bool) (*segHolders, int) {
	if int(s) >= len(ix.segs) {
		if !add {
			return nil, -1
		}
		ix.segs = append(ix.segs, make([]*segHolders, int(s)+1-len(ix.segs))...)
	}
	e := ix.segs[s]
	if e == nil {
		if !add {
			return nil, -1
		}
		e = &segHolders{}
		ix.segs[s] = e
		ix.chains.Acquire(s)
	}
	i, found := slices.BinarySearch(e.ws, w)
	if !found {
		if !add {
			return nil, -1
		}
		e.ws = slices.Insert(e.ws, i, w)
		e.holders = slices.Insert(e.holders, i, holding{})
	}
	return e, i
}

// Add records that worker w holds run r in tier t.
func (ix *Index) Add(w int32, t Tier, r block.Run) {
	if r.Lo >= r.Hi {
		return
	}
	e, i := ix.holding(r.Seg, w, true)
	h := &e.holders[i]
	ix.facts += h.tiers[t].add(r.Lo, r.Hi)
	if r.Lo <= h.from0[InEither] { // else every run from offset 0 ends before r
		h.refresh()
	}
}

// Remove records that worker w no longer holds run r in tier t.
func (ix *Index) Remove(w int32, t Tier, r block.Run) {
	e, i := ix.holding(r.Seg, w, false)
	if i < 0 || r.Lo >= r.Hi {
		return
	}
	h := &e.holders[i]
	ix.facts -= h.tiers[t].sub(r.Lo, r.Hi)
	if len(h.tiers[G1]) > 0 || len(h.tiers[G2]) > 0 {
		if r.Lo < h.from0[InEither] { // else every run from offset 0 ends at or before r
			h.refresh()
		}
		return
	}
	e.ws = slices.Delete(e.ws, i, i+1)
	e.holders = slices.Delete(e.holders, i, i+1)
	if len(e.holders) == 0 {
		ix.segs[r.Seg] = nil
		ix.chains.Drop(r.Seg)
	}
}

// Facts counts the (worker, tier, block) holdings the index records.
func (ix *Index) Facts() int { return ix.facts }

// Mask is worker w's tiers holding block off of segment s, as a bit set of
// 1 << Tier.
func (ix *Index) Mask(w int32, s, off int32) uint8 {
	e, i := ix.holding(s, w, false)
	if i < 0 {
		return 0
	}
	h := &e.holders[i]
	var m uint8
	for t := range h.tiers {
		if h.tiers[t].end(off) > off {
			m |= 1 << t
		}
	}
	return m
}

// Prefixes appends to dst, in worker id order, every worker holding the
// first block of the chain whose path is given in either tier, with its G1
// and its G1+G2 prefix.
func (ix *Index) Prefixes(path []block.Piece, dst []Prefix) []Prefix {
	return ix.runs(path, 0, InEither, InG1, nil, dst)
}

// PrefixesOf is Prefixes for the workers of ws (ascending ids) only: a
// walk that costs a binary search a worker of ws, not a step a holder.
func (ix *Index) PrefixesOf(path []block.Piece, ws []int32, dst []Prefix) []Prefix {
	return ix.runs(path, 0, InEither, InG1, ws, dst)
}

// FirstHolders is how many workers hold a block of the segment holding the
// path's first block: what Prefixes walks.
func (ix *Index) FirstHolders(path []block.Piece) int {
	if len(path) == 0 {
		return 0
	}
	if e := ix.seg(path[0].Seg); e != nil {
		return len(e.ws)
	}
	return 0
}

// Reach bounds the prefix any worker holds of the chain whose path is
// given: the blocks of its pieces up to the first whose segment no worker
// holds a block of (a run from block 0 that reaches a piece goes on only
// in that piece's segment).
func (ix *Index) Reach(path []block.Piece) int {
	n := 0
	for _, p := range path {
		if ix.seg(p.Seg) == nil {
			break
		}
		n += int(p.N)
	}
	return n
}

// runs appends to dst, in worker order, every worker (of only, ascending,
// when it is not nil) holding block from of the chain whose path is given
// in a tier of outer, with the run of blocks from there it holds each in a
// tier of outer (Either) and the run it holds each in a tier of inner (G1;
// a subset of outer, 0 for none).
func (ix *Index) runs(path []block.Piece, from int, outer, inner Tiers, only []int32, dst []Prefix) []Prefix {
	i, off := 0, int32(from) // the piece holding block from, and its offset there
	for i < len(path) && off >= path[i].N {
		off -= path[i].N
		i++
	}
	if i == len(path) {
		return dst
	}
	start := len(dst)
	if e := ix.seg(path[i].Seg); e != nil {
		n := path[i].N
		walk := len(e.holders)
		if only != nil {
			walk = len(only)
		}
		for j := range walk {
			k := j // the holder: the j-th, or only's j-th worker's
			if only != nil {
				var held bool
				if k, held = slices.BinarySearch(e.ws, only[j]); !held {
					continue
				}
			}
			h := &e.holders[k]
			either := h.cover(off, outer)
			if either <= off {
				continue
			}
			either = min(either, n)
			g1 := min(h.cover(off, inner), n)
			dst = append(dst, Prefix{Worker: e.ws[k], G1: int(max(0, g1-off)), Either: int(either - off)})
		}
	}
	out := dst[start:]
	// A worker whose run reaches the piece's end goes on into the next
	// piece's segment from its offset 0; its inner run goes on only if it
	// too reached the end.
	ix.live = append(ix.live[:0], make([]bool, len(out))...)
	live := ix.live
	for k := range out {
		live[k] = int32(out[k].Either) == path[i].N-off
	}
	for i++; i < len(path); i++ {
		p := path[i]
		var ws []int32
		var hs []holding
		if e := ix.seg(p.Seg); e != nil {
			ws, hs = e.ws, e.holders
		}
		any := false
		j := 0
		for k := range out {
			if !live[k] {
				continue
			}
			for j < len(ws) && ws[j] < out[k].Worker {
				j++
			}
			var either, g1 int32
			if j < len(ws) && ws[j] == out[k].Worker {
				either = min(hs[j].cover(0, outer), p.N)
				g1 = min(hs[j].cover(0, inner), p.N)
			}
			innerLive := out[k].G1 == out[k].Either
			out[k].Either += int(either)
			if innerLive {
				out[k].G1 += int(g1)
			}
			live[k] = either == p.N
			any = any || live[k]
		}
		if !any {
			break
		}
	}
	return dst
}

// cover is the end of the run of offsets from off that h holds, each in a
// tier of tiers; off itself when it holds off in none. The run from 0
// answers for every off inside it: it is one run of offsets held, so the
// run from off inside it ends where it does.
func (h *holding) cover(off int32, tiers Tiers) int32 {
	if end := h.from0[tiers]; end > off || off == 0 {
		return end
	}
	return h.span(off, tiers)
}

// span computes cover from the spans.
func (h *holding) span(off int32, tiers Tiers) int32 {
	switch tiers {
	case 0:
		return off
	case InG1:
		return h.tiers[G1].end(off)
	case InG2:
		return h.tiers[G2].end(off)
	}
	end := off
	for { // a run may alternate between the tiers
		next := max(h.tiers[G1].end(end), h.tiers[G2].end(end))
		if next == end {
			return end
		}
		end = next
	}
}

// spans is a set of offsets as sorted, disjoint, non-adjacent spans.
type spans block.Spans[struct{}]

// span is one of them.
type span = block.Span[struct{}]

// find is the index of the first span ending after off (block.Spans.Find).
func (s spans) find(off int32) int { return block.Spans[struct{}](s).Find(off) }

// end is the end of the span holding off, or off when none does.
func (s spans) end(off int32) int32 {
	if i := block.Spans[struct{}](s).Holding(off); i >= 0 {
		return s[i].Hi
	}
	return off
}

// add puts [lo, hi) in the set and reports how many offsets it added.
func (s *spans) add(lo, hi int32) int {
	v := *s
	// v[i] is the first span ending at or after lo: the first that may
	// touch [lo, hi); every span touching it merges into one
	i := v.find(lo - 1)
	j, held := i, 0
	for ; j < len(v) && v[j].Lo <= hi; j++ {
		held += int(v[j].Hi - v[j].Lo)
		lo, hi = min(lo, v[j].Lo), max(hi, v[j].Hi)
	}
	*s = slices.Replace(v, i, j, span{Lo: lo, Hi: hi})
	return int(hi-lo) - held
}

// sub takes [lo, hi) out of the set and reports how many offsets it took.
func (s *spans) sub(lo, hi int32) int {
	v := *s
	// v[i] is the first span ending after lo: the first that may overlap
	i := v.find(lo)
	j, took := i, 0
	for ; j < len(v) && v[j].Lo < hi; j++ {
		took += int(min(v[j].Hi, hi) - max(v[j].Lo, lo))
	}
	if took == 0 {
		return 0
	}
	var keep [2]span
	k := keep[:0]
	if v[i].Lo < lo {
		k = append(k, span{Lo: v[i].Lo, Hi: lo})
	}
	if v[j-1].Hi > hi {
		k = append(k, span{Lo: hi, Hi: v[j-1].Hi})
	}
	*s = slices.Replace(v, i, j, k...)
	return took
}
