package scheduler

import (
	"cmp"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// Holding is what the router's view has one worker hold: Held, the blocks
// it holds in G1 or G2 (a block in both tiers counts once), and Unique,
// those of them that no other worker holds in either tier.
type Holding struct {
	Held   int
	Unique int
}

// Holdings is, by worker id, what the router's view has each worker hold
// at now: the KV events sent by now - EventDelay applied, as a routing at
// now would see them. It is one walk of the index, whatever the number of
// workers; a scale-in pick (least_cached, fewest_unique) reads it at the
// pick's instant. Reading it changes no routing: every later reader of
// the index applies the same events first.
func (r *Router) Holdings(now des.Time) []Holding {
	r.catchUp(now)
	return r.index.Holdings(make([]Holding, len(r.loads)))
}

// edge is where one holder's run of blocks begins (up) or ends in a
// segment, for the sweep that finds blocks with a single holder.
type edge struct {
	off int32
	w   int32
	up  bool
}

// Holdings adds to dst, by worker id (dst grows to cover every worker the
// index records), each worker's blocks held in either tier and those no
// other worker holds in either, and returns it. It visits the segments in
// id order and, in each, its holders; every figure is a count, so neither
// order changes the result.
func (ix *Index) Holdings(dst []Holding) []Holding {
	var either spans
	var edges []edge
	for _, e := range ix.segs {
		if e == nil {
			continue
		}
		if w := int(e.ws[len(e.ws)-1]); w >= len(dst) { // ws is ascending
			dst = append(dst, make([]Holding, w+1-len(dst))...)
		}
		edges = edges[:0]
		for k := range e.holders {
			w := e.ws[k]
			h := &e.holders[k]
			either = append(either[:0], h.tiers[G1]...)
			for _, s := range h.tiers[G2] {
				either.add(s.Lo, s.Hi)
			}
			for _, s := range either {
				dst[w].Held += int(s.Hi - s.Lo)
				if len(e.ws) == 1 {
					dst[w].Unique += int(s.Hi - s.Lo)
				}
				edges = append(edges, edge{off: s.Lo, w: w, up: true}, edge{off: s.Hi, w: w})
			}
		}
		if len(e.ws) == 1 {
			continue
		}
		// Sweep the offsets: between two consecutive edges the holders are
		// the same; where there is one, its id is the sum of the ids held.
		// Edges at one offset may come in any order: only the spans between
		// distinct offsets count.
		slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.off, b.off) })
		holders, sum := 0, int64(0)
		for i, g := range edges {
			if i > 0 && holders == 1 && g.off > edges[i-1].off {
				dst[sum].Unique += int(g.off - edges[i-1].off)
			}
			if g.up {
				holders, sum = holders+1, sum+int64(g.w)
			} else {
				holders, sum = holders-1, sum-int64(g.w)
			}
		}
	}
	return dst
}
