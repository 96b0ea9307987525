package sim

import (
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
)

// chainEnd names a chain a G2 pool holds the end of: the chain through the
// first hi blocks of segment seg (and every block before them).
type chainEnd struct{ seg, hi int32 }

// leafChains turns runs of a pool, most recent first, into the chains
// ending at them, most recent first, leaving out every chain another of
// them continues (moving the longer chain moves it too).
func leafChains(chains *block.Chains, runs []block.Run) []chainEnd {
	hi := map[int32]int32{} // by segment: the end of its blocks among runs
	var order []int32       // the segments, in the order runs first name them
	for _, r := range runs {
		h, ok := hi[r.Seg]
		if !ok {
			order = append(order, r.Seg)
		}
		hi[r.Seg] = max(h, r.Hi)
	}
	covered := map[int32]int32{} // by segment: how far into it a chain of a later segment runs
	for _, s := range order {
		for p, at := chains.Parent(s); p >= 0; p, at = chains.Parent(p) {
			covered[p] = max(covered[p], int32(at))
		}
	}
	var out []chainEnd
	for _, s := range order { // order, not the maps, fixes the output's order
		if covered[s] < hi[s] {
			out = append(out, chainEnd{s, hi[s]})
		}
	}
	return out
}

// path appends e's chain to dst as a path in the chain store, and returns
// it with the chain's length in blocks.
func (e chainEnd) path(chains *block.Chains, dst []block.Piece) ([]block.Piece, int) {
	dst = append(dst[:0], block.Piece{Seg: e.seg, N: e.hi})
	for p, at := chains.Parent(e.seg); p >= 0; p, at = chains.Parent(p) {
		dst = append(dst, block.Piece{Seg: p, N: int32(at)})
	}
	slices.Reverse(dst)
	return dst, chains.Pos(e.seg) + int(e.hi)
}

// budget plans orders for one drained or added worker: at most left blocks
// in all.
type budget struct {
	c      *Cluster
	left   int
	orders []kvcr.Order
	sends  []int // by order: the blocks it sends, as planned
}

// plan adds the order moving (or copying) the chain from source to target,
// from the first of its blocks the source holds in G2, cut to the blocks
// the budget has left, and reports the blocks it will send; 0 when it
// sends none and no order is added. The count is the walk's now: blocks an
// earlier order of the plan sends too count in both.
func (b *budget) plan(source, target int32, path []block.Piece, length int, move bool, tag int32) int {
	kv := b.c.kv
	from := kv.FirstHeld(source, path, length)
	n := kv.Sendable(target, source, path, from, length)
	if n > b.left {
		// The longest prefix of the chain that sends no more than the
		// budget has left: Sendable grows with the prefix's length.
		// n ends as Sendable(lo): lo moves only to a mid whose count it
		// takes, and Sendable(0) is 0.
		lo, hi := 0, length // the largest l in [lo, hi] with Sendable(l) <= left
		n = 0
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if s := kv.Sendable(target, source, path, from, mid); s <= b.left {
				lo, n = mid, s
			} else {
				hi = mid - 1
			}
		}
		length = lo
	}
	if n == 0 {
		return 0
	}
	b.left -= n
	b.orders = append(b.orders, kvcr.Order{Source: source, Target: target, Move: move,
		Path: slices.Clone(path), From: from, Blocks: length, Tag: tag})
	b.sends = append(b.sends, n)
	return n
}

// evacuate plans and issues the moves (or copies) of scenario event key's
// evacuation of drained worker w: its G2 chains, most recently used first,
// each to the worker the router would route a request for it to, counting
// the chains placed before it (of every drained worker of the event:
// placed) as requests routed to theirs, while blocks last.
func (c *Cluster) evacuate(now des.Time, key int, w int32, blocks int, move bool, placed []int) []int {
	runs := c.kv.Recent(nil, w, c.kv.Pool(w).Used())
	b := &budget{c: c, left: blocks}
	var path []block.Piece
	for _, e := range leafChains(c.chains, runs) {
		if b.left == 0 {
			break
		}
		var length int
		path, length = e.path(c.chains, path)
		dest, ok := c.router.Place(now, path, length, placed)
		if !ok {
			break // no worker is left to take anything
		}
		if b.plan(w, dest, path, length, move, int32(key)) > 0 {
			for int(dest) >= len(placed) {
				placed = append(placed, 0)
			}
			placed[dest] += length
		}
	}
	c.issue(now, key, b)
	return placed
}

// prewarm plans and issues the prefetches of scenario event key's new
// workers: the ready workers' G2 chains, most recently used first, taken
// from each ready worker in turn (in id order), each chain once, dealt to
// the new workers in turn while each has blocks left.
func (c *Cluster) prewarm(now des.Time, key int, added []int32, blocks int) {
	type held struct {
		source int32
		chains []chainEnd
	}
	var sources []held
	for _, n := range c.workers {
		if c.status(n) != lifecycle.Ready || slices.Contains(added, n.id) {
			continue
		}
		runs := c.kv.Recent(nil, n.id, c.kv.Pool(n.id).Used())
		sources = append(sources, held{n.id, leafChains(c.chains, runs)})
	}
	budgets := make([]*budget, len(added))
	for i := range budgets {
		budgets[i] = &budget{c: c, left: blocks}
	}
	seen := map[chainEnd]bool{}
	var path []block.Piece
	next := 0 // the new worker whose turn it is
	for rank := 0; ; rank++ {
		more := false
		for _, s := range sources {
			if rank >= len(s.chains) {
				continue
			}
			more = true
			e := s.chains[rank]
			if seen[e] {
				continue
			}
			seen[e] = true
			i := turn(budgets, &next)
			if i < 0 {
				more = false
				break
			}
			var length int
			path, length = e.path(c.chains, path)
			budgets[i].plan(s.source, added[i], path, length, false, int32(key))
		}
		if !more {
			break
		}
	}
	for _, b := range budgets {
		c.issue(now, key, b)
	}
}

// turn is the index of the next new worker's budget, from *next on, that
// has blocks left, and moves *next past it; -1 when none has.
func turn(budgets []*budget, next *int) int {
	for range budgets {
		i := *next
		*next = (i + 1) % len(budgets)
		if budgets[i].left > 0 {
			return i
		}
	}
	return -1
}

// issue hands a budget's orders to KVCR, after the whole plan is made (an
// order staged at once changes what the next one's walk would find).
func (c *Cluster) issue(now des.Time, key int, b *budget) {
	for i, o := range b.orders {
		c.events.Ordered(key, b.sends[i])
		c.kv.Issue(now, o)
		c.applyKV()
	}
}
