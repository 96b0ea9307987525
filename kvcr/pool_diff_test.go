package kvcr

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// diffRig drives the pool kept by runs and the slot-by-slot oracle with
// the same operations, as KVCR's callers make them.
type diffRig struct {
	t      *testing.T
	seed   uint64
	log    []string // the steps so far
	rng    *rand.Rand
	chains [][]uint64
	paths  [][]block.Piece
	p      *Pool
	o      *slotPool
	fills  []diffBatch // reserved, not yet ready or dropped
	pins   []diffBatch // pinned, not yet unpinned
}

// diffBatch is blocks reserved or pinned together: as runs in the pool,
// as slots in the oracle, in the same order. A pull's reservation may be
// given up: its blocks are discarded, and a store may take them over.
type diffBatch struct {
	runs  []block.Run
	slots []int32
	refs  []block.Ref
	pull  bool // a pull's reservation
	given bool // its target gave up on it: discarded
}

// newDiffRig makes chains with shared prefixes in a chain store of their
// own and two empty pools of a tiny capacity.
func newDiffRig(t *testing.T, seed uint64) *diffRig {
	g := &diffRig{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 99))}
	store := &block.Chains{}
	var contents [][]uint64
	for range 2 + g.rng.IntN(8) {
		var c []uint64
		if len(contents) > 0 && g.rng.IntN(3) > 0 {
			base := contents[g.rng.IntN(len(contents))]
			c = append(c, base[:g.rng.IntN(len(base)+1)]...)
		}
		for range 1 + g.rng.IntN(12) {
			c = append(c, g.rng.Uint64N(3))
		}
		contents = append(contents, c)
		chain := make([]uint64, len(c))
		var h uint64
		for k, x := range c {
			h = block.Mix(h^block.Mix(x+0x9e3779b97f4a7c15)) | 1
			chain[k] = h
		}
		g.chains = append(g.chains, chain)
		g.paths = append(g.paths, store.Intern(block.Hashed(chain), nil))
	}
	capacity := 1 + g.rng.IntN(12)
	g.p, g.o = NewPool(capacity, store), newSlotPool(capacity, store)
	return g
}

// blocks is blocks [a, b) of chain c as refs.
func (g *diffRig) blocks(c, a, b int) []block.Ref {
	var out []block.Ref
	for k := a; k < b; k++ {
		out = append(out, block.RefAt(g.chains[c], g.paths[c], k))
	}
	return out
}

// span picks a chain and a range of it.
func (g *diffRig) span() (int, int, int) {
	c := g.rng.IntN(len(g.chains))
	a := g.rng.IntN(len(g.chains[c]))
	return c, a, a + 1 + g.rng.IntN(len(g.chains[c])-a)
}

// step applies one random operation to both pools and says what it was.
func (g *diffRig) step() string {
	p, o := g.p, g.o
	switch op := g.rng.IntN(10); {
	case op == 0: // a store: the blocks absent, while there is room, and those discarded, taken over
		c, a, b := g.span()
		var d diffBatch
		dropped, oDropped := 0, 0
		for _, r := range block.AppendPath(nil, g.paths[c], a, b) {
			var n int
			d.runs, n = p.store(r, d.runs)
			dropped += n
		}
		var oTaken []block.Ref
		for _, x := range g.blocks(c, a, b) {
			switch {
			case o.Has(x) && o.slots[o.slot(x)].V.st == discarded:
				o.TakeOver(o.slot(x))
				oTaken = append(oTaken, x)
				d.slots = append(d.slots, o.slot(x))
				d.refs = append(d.refs, x)
			case o.Has(x):
			case !o.Room(1):
				oDropped++
			default:
				d.slots = append(d.slots, o.Fill(x))
				d.refs = append(d.refs, x)
			}
		}
		if dropped != oDropped || block.Blocks(d.runs) != len(d.slots) {
			g.fatalf("store: %d filled, %d dropped; oracle %d, %d", block.Blocks(d.runs), dropped, len(d.slots), oDropped)
		}
		g.sameRuns("taken over", p.taken, oTaken)
		for k := range g.fills { // as KVCR's takenOver: the pulls given up no longer hold them
			f := &g.fills[k]
			if !f.given {
				continue
			}
			for _, t := range p.taken {
				f.runs = cut(f.runs, t)
			}
			for j := 0; j < len(f.refs); {
				if slices.Contains(oTaken, f.refs[j]) {
					f.refs, f.slots = slices.Delete(f.refs, j, j+1), slices.Delete(f.slots, j, j+1)
					continue
				}
				j++
			}
		}
		p.taken = p.taken[:0]
		g.fills = append(g.fills, d)
		return fmt.Sprintf("store %d [%d,%d): %d taken over", c, a, b, len(oTaken))
	case op == 1 || op == 2: // a store or live pull lands, or a reservation is dropped (a pull's given up: what it still holds)
		if len(g.fills) == 0 {
			return "none"
		}
		i := g.rng.IntN(len(g.fills))
		d := g.fills[i]
		g.fills = slices.Delete(g.fills, i, i+1)
		land := op == 1 && !d.given
		for _, r := range d.runs {
			if land {
				p.makeReady(r)
			} else {
				p.drop(r)
			}
		}
		for _, s := range d.slots {
			if land {
				o.MakeReady(s)
			} else {
				o.Drop(s)
			}
		}
		return fmt.Sprintf("fill batch %d ready %v", i, land)
	case op == 9: // a pull's target gives up while its write runs: its blocks are discarded
		var live []int
		for k, f := range g.fills {
			if f.pull && !f.given {
				live = append(live, k)
			}
		}
		if len(live) == 0 {
			return "none"
		}
		i := live[g.rng.IntN(len(live))]
		d := &g.fills[i]
		d.given = true
		for _, r := range d.runs {
			p.discard(r)
		}
		for _, s := range d.slots {
			o.Discard(s)
		}
		return fmt.Sprintf("give up fill batch %d", i)
	case op == 3: // a pull's target reserves a run it lacks
		c, a, b := g.span()
		bs := g.blocks(c, a, b)
		n := 0
		for n < len(bs) && !o.Has(bs[n]) {
			n++
		}
		if n == 0 || !o.Room(n) {
			return "none"
		}
		d := diffBatch{pull: true}
		d.runs = block.AppendPath(nil, g.paths[c], a, a+n)
		for _, r := range d.runs {
			p.fill(r)
		}
		for _, x := range bs[:n] {
			d.slots = append(d.slots, o.Fill(x))
			d.refs = append(d.refs, x)
		}
		g.fills = append(g.fills, d)
		return fmt.Sprintf("pull fill %d [%d,%d)", c, a, a+n)
	case op == 4 || op == 5: // a load pins a ready run; a pull pins some ready blocks
		c, a, b := g.span()
		var d diffBatch
		for _, x := range g.blocks(c, a, b) {
			if !o.Ready(x) {
				if op == 4 {
					break
				}
				continue
			}
			if op == 5 && g.rng.IntN(4) == 0 {
				continue
			}
			d.runs = block.AppendRun(d.runs, runOf(x))
			d.slots = append(d.slots, o.slot(x))
			d.refs = append(d.refs, x)
		}
		for _, r := range d.runs {
			p.pin(r)
		}
		for _, s := range d.slots {
			o.Pin(s)
		}
		g.pins = append(g.pins, d)
		return fmt.Sprintf("pin %d [%d,%d): %d", c, a, b, len(d.slots))
	case op == 6 || op == 7: // pins released: in place, refreshed by runs (a pull's source), or refreshed block by block
		if len(g.pins) == 0 {
			return "none"
		}
		i := g.rng.IntN(len(g.pins))
		d := g.pins[i]
		g.pins = slices.Delete(g.pins, i, i+1)
		mode := g.rng.IntN(3)
		var removed []block.Run
		var oRemoved []block.Ref
		unpin := func(s int32, refresh bool) {
			b := o.ref(s)
			if o.Unpin(s, refresh) {
				oRemoved = append(oRemoved, b)
			}
		}
		switch mode {
		case 0, 1:
			for _, r := range d.runs {
				removed, _ = p.unpin(r, mode == 1, removed)
			}
			for _, s := range d.slots {
				unpin(s, mode == 1)
			}
		case 2: // block by block, in a random order
			for _, k := range g.rng.Perm(len(d.refs)) {
				removed, _ = p.unpin(runOf(d.refs[k]), true, removed)
				unpin(d.slots[k], true)
			}
		}
		g.sameRuns("removed by unpin", removed, oRemoved)
		return fmt.Sprintf("unpin batch %d mode %d", i, mode)
	default: // a move: ready blocks go, now or with their last pin
		c, a, b := g.span()
		var removed []block.Run
		var oRemoved []block.Ref
		for _, r := range block.AppendPath(nil, g.paths[c], a, b) {
			removed, _, _ = p.markPending(r, removed)
		}
		for _, x := range g.blocks(c, a, b) {
			if s := o.slot(x); s >= 0 && o.slots[s].V.st == ready {
				if o.MarkPending(s) {
					oRemoved = append(oRemoved, x)
				}
			}
		}
		g.sameRuns("removed by a move", removed, oRemoved)
		return fmt.Sprintf("move %d [%d,%d)", c, a, b)
	}
}

// fatalf fails the test, with the seed and the steps taken.
func (g *diffRig) fatalf(format string, args ...any) {
	g.t.Helper()
	g.t.Fatalf(format+"\nseed %d, steps %q", append(args, g.seed, g.log)...)
}

// sameRefs fails unless got and want are the same blocks in the same order.
func (g *diffRig) sameRefs(what string, got, want []block.Ref) {
	if !slices.Equal(got, want) {
		g.fatalf("%s: %v, oracle %v", what, got, want)
	}
}

// sameRuns fails unless the blocks of runs, each run's in ascending order,
// are want's in the same order.
func (g *diffRig) sameRuns(what string, runs []block.Run, want []block.Ref) {
	var got, names [][2]int32
	for _, r := range runs {
		for off := r.Lo; off < r.Hi; off++ {
			got = append(got, [2]int32{r.Seg, off})
		}
	}
	for _, b := range want {
		names = append(names, [2]int32{b.Seg, b.Off})
	}
	if !slices.Equal(got, names) {
		g.fatalf("%s: %v, oracle %v", what, got, names)
	}
}

// compare fails unless the two pools answer alike.
func (g *diffRig) compare() {
	p, o := g.p, g.o
	g.sameRuns("evicted", p.evicted, o.evicted)
	p.evicted, o.evicted = p.evicted[:0], o.evicted[:0]
	if p.Used() != o.Used() || p.Peak() != o.Peak() || p.Pinned() != o.Pinned() {
		g.fatalf("used %d peak %d pinned %d; oracle %d %d %d", p.Used(), p.Peak(), p.Pinned(), o.Used(), o.Peak(), o.Pinned())
	}
	for n := range p.Capacity() + 2 {
		if p.Room(n) != o.Room(n) {
			g.fatalf("room for %d: %v, oracle %v", n, p.Room(n), o.Room(n))
		}
	}
	var lru, oLRU []block.Ref
	for e := p.lru.Head(); e >= 0; e = p.ext[e].Next() {
		lru = p.chains.AppendRefs(lru, p.ext[e].V.Seg, p.ext[e].V.Lo, p.ext[e].V.Hi)
	}
	for s := o.lru.Head(); s >= 0; s = o.slots[s].Next() {
		oLRU = append(oLRU, o.ref(s))
	}
	g.sameRefs("LRU order", lru, oLRU)
	var vis, oVis []block.Ref
	p.Visible(func(b block.Ref) { vis = append(vis, b) })
	o.Visible(func(b block.Ref) { oVis = append(oVis, b) })
	byName := func(a, b block.Ref) int { return cmp.Or(cmp.Compare(a.Seg, b.Seg), cmp.Compare(a.Off, b.Off)) }
	slices.SortFunc(vis, byName)
	slices.SortFunc(oVis, byName)
	g.sameRefs("visible", vis, oVis)
	for c, chain := range g.chains {
		for k := range chain {
			x := block.RefAt(chain, g.paths[c], k)
			if p.Ready(x) != o.Ready(x) || p.Has(x) != o.Has(x) {
				g.fatalf("chain %d block %d: ready %v has %v; oracle %v %v", c, k, p.Ready(x), p.Has(x), o.Ready(x), o.Has(x))
			}
			for _, limit := range []int{k + 1, len(chain)} {
				if got, want := p.Prefix(g.paths[c], k, limit), o.Prefix(g.paths[c], k, limit); got != want {
					g.fatalf("chain %d prefix [%d,%d): %d, oracle %d", c, k, limit, got, want)
				}
			}
		}
	}
	if err := p.Check(); err != nil {
		g.fatalf("%v", err)
	}
	if err := o.Check(); err != nil {
		g.fatalf("oracle: %v", err)
	}
}

// TestPoolAgainstSlots applies random operation sequences to the pool kept
// by runs and to the slot-by-slot pool it replaced (slotPool), over chains
// with shared prefixes and tiny capacities, so that eviction splits runs
// all the time: stores of runs partly held, pull reservations, landings
// and drops, reservations given up and taken over by stores, pins of ready runs and of scattered ready blocks, unpins in
// place, refreshed by runs (a pull's source refreshing in chain order) and
// refreshed block by block in a random order, and moves. After each step both must agree on every
// answer: the blocks evicted and removed, in order; the LRU order of the
// ready blocks; used, peak, room and pins; readiness and prefixes; and
// both must pass Check.
func TestPoolAgainstSlots(t *testing.T) {
	trials := 400
	if testing.Short() {
		trials = 50
	}
	for seed := range uint64(trials) {
		g := newDiffRig(t, seed)
		for range 300 {
			g.log = append(g.log, g.step())
			g.compare()
		}
	}
}
