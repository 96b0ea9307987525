package sim

import (
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/scenarios"
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
// in all. Its event's ledger records where each chain's blocks went.
type budget struct {
	c      *Cluster
	left   int
	orders []kvcr.Order
	ledger *ledger
}

// plan adds the order moving (or copying) the chain from source to target,
// from the first of its blocks the source holds in G2, cut to the blocks
// the budget has left, and reports the blocks it will send; 0 when it
// sends none and no order is added. The count is the walk's now: blocks an
// earlier order of the plan sends too count in both.
func (b *budget) plan(source, target int32, path []block.Piece, length int, move bool, tag int32) int {
	from := b.c.kv.FirstHeld(source, path, length)
	sends := b.ledger.walked(source, path, from, length, b.c.kv.WalkOrder(target, source, path, from, length))
	n := block.Blocks(sends)
	if n > b.left {
		length, n = b.cut(source, target, path, from, length)
	}
	b.ledger.sent(source, sends, length)
	if n == 0 {
		return 0
	}
	b.left -= n
	b.orders = append(b.orders, kvcr.Order{Source: source, Target: target, Move: move,
		Path: slices.Clone(path), From: from, Blocks: length, Tag: tag, Planned: n})
	return n
}

// cut is the longest prefix of the chain, at most length blocks, whose
// walk sends no more than the budget has left, and the blocks it sends.
// Sendable grows with the prefix's length, and Sendable(0) is 0.
func (b *budget) cut(source, target int32, path []block.Piece, from, length int) (int, int) {
	lo, hi, n := 0, length, 0 // the largest l in [lo, hi] with Sendable(l) <= left, and Sendable(lo)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if s := b.c.kv.Sendable(target, source, path, from, mid); s <= b.left {
			lo, n = mid, s
		} else {
			hi = mid - 1
		}
	}
	return lo, n
}

// evacuation is a drain's evacuation as it is planned.
type evacuation struct {
	key    int // the scenario event's index
	blocks int // the budget of each drained worker
	move   bool
	placed []int // by worker: the blocks of the chains it sends there
	ledger *ledger
}

// evacuate plans and issues the moves (or copies) of scenario event key's
// evacuation of its drained workers ids, each in turn, every one of them
// draining already, and records where their G2 blocks went.
func (c *Cluster) evacuate(now des.Time, key int, ids []int32, b *scenarios.Budget) {
	e := &evacuation{key: key, blocks: b.Blocks, move: b.Moves(), ledger: newLedger(c.kv, c.chains)}
	for _, id := range ids {
		c.evacuateWorker(now, e, id)
	}
	c.events.Planned(key, e.ledger.result())
}

// evacuateWorker plans and issues the orders of drained worker w: its G2
// chains, most recently used first, each to the worker the router would
// route a request for it to, counting the chains placed before it (of
// every drained worker of the event) as requests routed to theirs, while
// blocks last.
func (c *Cluster) evacuateWorker(now des.Time, e *evacuation, w int32) {
	runs := c.kv.Recent(nil, w, c.kv.Pool(w).Used())
	e.ledger.source(w, runs)
	b := &budget{c: c, left: e.blocks, ledger: e.ledger}
	chains := leafChains(c.chains, runs)
	var path []block.Piece
	for i, ch := range chains {
		if b.left == 0 {
			e.ledger.skip(w, chains[i:], leftBudget)
			break
		}
		var length int
		path, length = ch.path(c.chains, path)
		dest, ok := c.router.Place(now, path, length, e.placed)
		if !ok {
			e.ledger.skip(w, chains[i:], leftNoDestination) // no worker is left to take anything
			break
		}
		if b.plan(w, dest, path, length, e.move, int32(e.key)) > 0 {
			for int(dest) >= len(e.placed) {
				e.placed = append(e.placed, 0)
			}
			e.placed[dest] += length
		}
	}
	c.issue(now, e.key, b)
}

// prewarm plans and issues the prefetches of scenario event key's new
// workers: the ready workers' G2 chains, most recently used first, taken
// from each ready worker in turn (in id order), each chain once, dealt to
// the new workers in turn while each has blocks left; and records where
// the ready workers' G2 blocks went.
func (c *Cluster) prewarm(now des.Time, key int, added []int32, blocks int) {
	d := &dealer{c: c, key: key, added: added, seen: map[chainEnd]bool{}, ledger: newLedger(c.kv, c.chains)}
	for range added {
		d.budgets = append(d.budgets, &budget{c: c, left: blocks, ledger: d.ledger})
	}
	sources := c.prewarmSources(added, d.ledger)
	for rank, more := 0, true; more; rank++ {
		more = false
		for _, s := range sources {
			if rank < len(s.chains) {
				more = true
				d.deal(s.source, s.chains[rank])
			}
		}
	}
	for _, b := range d.budgets {
		c.issue(now, key, b)
	}
	c.events.Planned(key, d.ledger.result())
}

// heldChains are a ready worker's G2 chains, most recently used first.
type heldChains struct {
	source int32
	chains []chainEnd
}

// prewarmSources are the chains of the ready workers but the added ones,
// in id order, each counted as one of the ledger's sources.
func (c *Cluster) prewarmSources(added []int32, l *ledger) []heldChains {
	var sources []heldChains
	for _, n := range c.workers {
		if c.status(n) != lifecycle.Ready || slices.Contains(added, n.id) {
			continue
		}
		runs := c.kv.Recent(nil, n.id, c.kv.Pool(n.id).Used())
		l.source(n.id, runs)
		sources = append(sources, heldChains{n.id, leafChains(c.chains, runs)})
	}
	return sources
}

// dealer deals a prewarm's chains to its new workers.
type dealer struct {
	c       *Cluster
	key     int
	added   []int32
	budgets []*budget // by new worker
	next    int       // the new worker whose turn it is
	spent   bool      // no budget has blocks left
	seen    map[chainEnd]bool
	path    []block.Piece
	ledger  *ledger
}

// deal deals chain e of source to the next new worker with blocks left,
// unless the chain was dealt from another worker already or every budget
// is spent; the ledger records why it was not.
func (d *dealer) deal(source int32, e chainEnd) {
	var length int
	d.path, length = e.path(d.c.chains, d.path)
	i := -1
	if !d.spent && !d.seen[e] {
		d.seen[e] = true
		i = turn(d.budgets, &d.next)
		d.spent = i < 0
	}
	switch {
	case i >= 0:
		d.budgets[i].plan(source, d.added[i], d.path, length, false, int32(d.key))
	case d.spent:
		d.ledger.leave(source, d.path, 0, length, leftBudget)
	default:
		d.ledger.leave(source, d.path, 0, length, leftOtherSource)
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
	for _, o := range b.orders {
		c.events.Ordered(key, o.Planned)
		c.kv.Issue(now, o)
		c.applyKV()
	}
}
