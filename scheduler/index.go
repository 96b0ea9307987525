// Package scheduler holds cluster-level scheduling: the router's view of
// every worker's KV inventory, the routing policies, and hint source
// selection.
package scheduler

import (
	"github.com/kvsim/kvsim/sim/u64map"
	"github.com/kvsim/kvsim/workload"
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

// Index is the router's view of which workers hold which blocks in which
// tier: one map from chained block hash to the workers holding it, each
// with a tier mask, so a block held in both tiers costs one entry. A block
// held by a few workers keeps them in a list sorted by id: the first in the
// map entry itself (most blocks have one), the others in a node arena, so
// no block allocates. A block held by more than maxList workers (a shared
// system prompt on a large cluster) switches to a bit set per tier, so
// adding or removing a holder costs O(1) and a prefix walk tests 64 workers
// a word. A query's cost grows with the matched prefix and the workers
// holding it, never with a scan of the cluster.
type Index struct {
	heads u64map.Map[holders]
	nodes []holder
	free  int32 // first free node + 1

	words    int      // 64-bit words per tier of a bit set
	sets     []uint64 // bit sets, 2 x words each: the G1 words, then the G2 words
	freeSets []int32

	// scratch of the bit-set walk
	live, liveIn, start, outer, inner []uint64
	runOuter, runInner                []int32 // by worker
	overlaps                          []Prefix
}

// maxList is the most holders a block keeps in a list before it switches
// to bit sets.
const maxList = 8

// A holder packs a worker id and its tier mask: (worker + 1) | mask << 29.
type packed uint32

const tierShift = 29

func pack(w int32, mask uint8) packed { return packed(w+1) | packed(mask)<<tierShift }
func (p packed) worker() int32        { return int32(p&(1<<tierShift-1)) - 1 }
func (p packed) mask() uint8          { return uint8(p >> tierShift) }

// holders is a map entry. In list mode (rest >= 0) first is the lowest
// holder and rest the list of the others; in set mode (rest < 0) first
// counts the holding workers and rest is -(bit set + 1).
type holders struct {
	first packed // list: 0 none
	rest  int32  // list: node + 1, 0 none
}

type holder struct {
	who  packed
	next int32 // next node + 1 (0: end)
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{} }

func (ix *Index) node(who packed, next int32) int32 {
	if ix.free != 0 {
		i := ix.free - 1
		ix.free = ix.nodes[i].next
		ix.nodes[i] = holder{who: who, next: next}
		return i + 1
	}
	ix.nodes = append(ix.nodes, holder{who: who, next: next})
	return int32(len(ix.nodes))
}

func (ix *Index) freeNode(i int32) { ix.nodes[i-1].next, ix.free = ix.free, i }

// set returns bit set s's G1 and G2 words.
func (ix *Index) set(s int32) (g1, g2 []uint64) {
	b := int(s) * 2 * ix.words
	return ix.sets[b : b+ix.words], ix.sets[b+ix.words : b+2*ix.words]
}

// setOf is hs's bit set (hs in set mode).
func setOf(hs *holders) int32 { return -hs.rest - 1 }

// widen makes bit sets hold worker w, moving every set to the new width.
func (ix *Index) widen(w int32) {
	words := int(w)/64 + 1
	if words <= ix.words {
		return
	}
	n := len(ix.sets) / max(1, 2*ix.words)
	sets := make([]uint64, n*2*words)
	for s := range n {
		g1, g2 := ix.set(int32(s))
		copy(sets[s*2*words:], g1)
		copy(sets[s*2*words+words:], g2)
	}
	ix.sets, ix.words = sets, words
	for _, b := range []*[]uint64{&ix.live, &ix.liveIn, &ix.start, &ix.outer, &ix.inner} {
		*b = make([]uint64, words)
	}
	ix.runOuter, ix.runInner = make([]int32, 64*words), make([]int32, 64*words)
}

// toSet moves hs's holders from its list to a new bit set.
func (ix *Index) toSet(hs *holders) {
	last := hs.first.worker()
	for n := hs.rest; n != 0; n = ix.nodes[n-1].next {
		last = ix.nodes[n-1].who.worker() // the list is sorted: the last is the highest
	}
	ix.widen(last)
	var s int32
	if n := len(ix.freeSets); n > 0 {
		s, ix.freeSets = ix.freeSets[n-1], ix.freeSets[:n-1]
		g1, g2 := ix.set(s)
		clear(g1)
		clear(g2)
	} else {
		s = int32(len(ix.sets) / (2 * ix.words))
		ix.sets = append(ix.sets, make([]uint64, 2*ix.words)...)
	}
	g1, g2 := ix.set(s)
	put := func(who packed) {
		w, m := who.worker(), who.mask()
		if m&(1<<G1) != 0 {
			g1[w/64] |= 1 << (w % 64)
		}
		if m&(1<<G2) != 0 {
			g2[w/64] |= 1 << (w % 64)
		}
	}
	put(hs.first)
	count := 1
	for n := hs.rest; n != 0; count++ {
		nd := ix.nodes[n-1]
		put(nd.who)
		ix.freeNode(n)
		n = nd.next
	}
	hs.first, hs.rest = packed(count), -s-1
}

// setMask is worker w's tier mask in bit set s.
func (ix *Index) setMask(s int32, w int32) uint8 {
	if int(w) >= 64*ix.words {
		return 0
	}
	g1, g2 := ix.set(s)
	i, b := w/64, uint(w%64)
	return uint8(g1[i]>>b&1)<<G1 | uint8(g2[i]>>b&1)<<G2
}

// Add records that worker w holds block r in tier t.
func (ix *Index) Add(w int32, t Tier, r workload.Ref) {
	bit := uint8(1) << t
	hs := ix.heads.Insert(r.Hash, r.Place)
	if hs.rest < 0 {
		ix.setAdd(hs, w, t)
		return
	}
	switch f := hs.first; {
	case f == 0:
		hs.first = pack(w, bit)
		return
	case f.worker() == w:
		hs.first = pack(w, f.mask()|bit)
		return
	}
	prev, count := int32(0), 1 // prev: the node w goes after (0: the head of the list)
	for n := hs.rest; n != 0; n = ix.nodes[n-1].next {
		h := &ix.nodes[n-1]
		switch hw := h.who.worker(); {
		case hw == w:
			h.who = pack(w, h.who.mask()|bit)
			return
		case hw < w:
			prev = n
		}
		count++
	}
	switch f := hs.first; {
	case count == maxList:
		ix.toSet(hs)
		ix.setAdd(hs, w, t)
	case w < f.worker(): // w becomes the first; the old first heads the list
		hs.first = pack(w, bit)
		hs.rest = ix.node(f, hs.rest)
	case prev == 0:
		hs.rest = ix.node(pack(w, bit), hs.rest)
	default:
		n := ix.node(pack(w, bit), ix.nodes[prev-1].next)
		ix.nodes[prev-1].next = n
	}
}

// setAdd adds w's tier t to hs's bit set.
func (ix *Index) setAdd(hs *holders, w int32, t Tier) {
	ix.widen(w)
	g1, g2 := ix.set(setOf(hs))
	i, b := w/64, uint64(1)<<(w%64)
	if (g1[i]|g2[i])&b == 0 {
		hs.first++
	}
	if t == G1 {
		g1[i] |= b
	} else {
		g2[i] |= b
	}
}

// Remove records that worker w no longer holds block r in tier t.
func (ix *Index) Remove(w int32, t Tier, r workload.Ref) {
	bit := uint8(1) << t
	hs := ix.heads.Ptr(r.Hash, r.Place)
	if hs == nil {
		return
	}
	if hs.rest < 0 {
		if int(w) >= 64*ix.words {
			return
		}
		s := setOf(hs)
		g1, g2 := ix.set(s)
		i, b := w/64, uint64(1)<<(w%64)
		if (g1[i]|g2[i])&b == 0 {
			return
		}
		if t == G1 {
			g1[i] &^= b
		} else {
			g2[i] &^= b
		}
		if (g1[i]|g2[i])&b == 0 {
			if hs.first--; hs.first == 0 {
				ix.freeSets = append(ix.freeSets, s)
				ix.heads.Delete(r.Hash, r.Place)
			}
		}
		return
	}
	if f := hs.first; f.worker() == w {
		if m := f.mask() &^ bit; m != 0 {
			hs.first = pack(w, m)
			return
		}
		if hs.rest == 0 {
			ix.heads.Delete(r.Hash, r.Place)
			return
		}
		i := hs.rest // the next holder becomes the first
		hs.first, hs.rest = ix.nodes[i-1].who, ix.nodes[i-1].next
		ix.freeNode(i)
		return
	}
	link := &hs.rest
	for *link != 0 && ix.nodes[*link-1].who.worker() < w {
		link = &ix.nodes[*link-1].next
	}
	if *link == 0 || ix.nodes[*link-1].who.worker() != w {
		return
	}
	i := *link
	if m := ix.nodes[i-1].who.mask() &^ bit; m != 0 {
		ix.nodes[i-1].who = pack(w, m)
		return
	}
	*link = ix.nodes[i-1].next
	ix.freeNode(i)
}

// Len is the number of distinct hashes held by any worker in any tier.
func (ix *Index) Len() int { return ix.heads.Len() }
