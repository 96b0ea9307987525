// Package scheduler holds cluster-level scheduling: the router's view of
// every worker's KV inventory, the routing policies, and hint source
// selection.
package scheduler

import (
	"slices"

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
// tier: one map from chained block hash to the workers holding it, sorted
// by id, each with a tier mask. The first holder sits in the map entry
// itself (most blocks have one); the others form a list in a node arena, so
// no block allocates, and a block held in both tiers costs one entry. Its
// cost per query grows with the matched prefix and the few workers holding
// it, not with the cluster size.
type Index struct {
	heads u64map.Map[holders]
	nodes []holder
	free  int32 // first free node + 1
}

// A holder packs a worker id and its tier mask: (worker + 1) | mask << 29.
type packed uint32

const tierShift = 29

func pack(w int32, mask uint8) packed { return packed(w+1) | packed(mask)<<tierShift }
func (p packed) worker() int32        { return int32(p&(1<<tierShift-1)) - 1 }
func (p packed) mask() uint8          { return uint8(p >> tierShift) }

// holders is a map entry: the lowest holder and the list of the others.
type holders struct {
	first packed // 0: none
	rest  int32  // node + 1; 0: none
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

// Add records that worker w holds block r in tier t.
func (ix *Index) Add(w int32, t Tier, r workload.Ref) {
	bit := uint8(1) << t
	hs := ix.heads.Insert(r.Hash, r.Place)
	switch f := hs.first; {
	case f == 0:
		hs.first = pack(w, bit)
		return
	case f.worker() == w:
		hs.first = pack(w, f.mask()|bit)
		return
	case w < f.worker(): // w becomes the first; the old first joins the list
		hs.first = pack(w, bit)
		w, bit = f.worker(), f.mask()
	}
	n := ix.node(pack(w, bit), 0) // before taking pointers into nodes: it may grow them
	link := &hs.rest
	for *link != 0 && ix.nodes[*link-1].who.worker() < w {
		link = &ix.nodes[*link-1].next
	}
	if *link != 0 && ix.nodes[*link-1].who.worker() == w {
		h := &ix.nodes[*link-1]
		h.who = pack(w, h.who.mask()|bit)
		ix.nodes[n-1].next, ix.free = ix.free, n // not needed after all
		return
	}
	ix.nodes[n-1].next, *link = *link, n
}

// Remove records that worker w no longer holds block r in tier t.
func (ix *Index) Remove(w int32, t Tier, r workload.Ref) {
	bit := uint8(1) << t
	hs := ix.heads.Ptr(r.Hash, r.Place)
	if hs == nil {
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
		i := hs.rest - 1 // the next holder becomes the first
		hs.first, hs.rest = ix.nodes[i].who, ix.nodes[i].next
		ix.nodes[i].next, ix.free = ix.free, i+1
		return
	}
	link := &hs.rest
	for *link != 0 && ix.nodes[*link-1].who.worker() < w {
		link = &ix.nodes[*link-1].next
	}
	if *link == 0 || ix.nodes[*link-1].who.worker() != w {
		return
	}
	i := *link - 1
	if m := ix.nodes[i].who.mask() &^ bit; m != 0 {
		ix.nodes[i].who = pack(w, m)
		return
	}
	*link = ix.nodes[i].next
	ix.nodes[i].next, ix.free = ix.free, i+1
}

// Len is the number of distinct hashes held by any worker in any tier.
func (ix *Index) Len() int { return ix.heads.Len() }

// Overlap is the number of leading blocks of a chain one worker holds.
type Overlap struct {
	Worker int32
	Blocks int
}

// Overlaps appends to dst, in worker id order, every worker holding block
// from of chain in one of the tiers, with the length of the run of blocks
// from there that it holds, each in one of them. Each block costs one
// lookup and a merge of its holder list with the workers still matching:
// O(run x holders), never a scan of the cluster.
func (ix *Index) Overlaps(chain []uint64, from int, tiers Tiers, dst []Overlap) []Overlap {
	if from >= len(chain) {
		return dst
	}
	bit := uint8(tiers)
	start := len(dst)
	hs, _ := ix.heads.Get(chain[from], workload.PlaceOf(chain, from))
	for who, n := hs.first, hs.rest; who != 0; {
		if who.mask()&bit != 0 {
			dst = append(dst, Overlap{Worker: who.worker(), Blocks: 1})
		}
		if n == 0 {
			break
		}
		who, n = ix.nodes[n-1].who, ix.nodes[n-1].next
	}
	out := dst[start:]
	live := len(out) // out[:live] still match, in worker order; the rest are final
	for k := from + 1; k < len(chain) && live > 0; k++ {
		hs, _ := ix.heads.Get(chain[k], workload.PlaceOf(chain, k))
		who, n := hs.first, hs.rest
		kept := 0
		for i := 0; i < live; i++ {
			w := out[i].Worker
			for who != 0 && who.worker() < w { // advance the holder list to w
				if n == 0 {
					who = 0
					break
				}
				who, n = ix.nodes[n-1].who, ix.nodes[n-1].next
			}
			if who != 0 && who.worker() == w && who.mask()&bit != 0 {
				out[i].Blocks++
				out[kept], out[i] = out[i], out[kept]
				kept++
			}
		}
		live = kept
	}
	slices.SortFunc(out, func(a, b Overlap) int { return int(a.Worker - b.Worker) })
	return dst
}

// Prefix is how much of a chain one worker holds: the leading blocks in G1,
// and the leading blocks each in G1 or G2.
type Prefix struct {
	Worker int32
	G1     int
	Either int
}

// Prefixes appends to dst, in worker id order, every worker holding the
// first block of chain in either tier, with its G1 and G1+G2 prefixes: the
// two Overlaps queries the router needs, in one walk of the chain.
func (ix *Index) Prefixes(chain []uint64, dst []Prefix) []Prefix {
	if len(chain) == 0 {
		return dst
	}
	g1 := uint8(InG1)
	start := len(dst)
	hs, _ := ix.heads.Get(chain[0], workload.PlaceOf(chain, 0))
	for who, n := hs.first, hs.rest; who != 0; {
		p := Prefix{Worker: who.worker(), Either: 1}
		if who.mask()&g1 != 0 {
			p.G1 = 1
		}
		dst = append(dst, p)
		if n == 0 {
			break
		}
		who, n = ix.nodes[n-1].who, ix.nodes[n-1].next
	}
	out := dst[start:]
	live := len(out) // out[:live] still match, in worker order; the rest are final
	for k := 1; k < len(chain) && live > 0; k++ {
		hs, _ := ix.heads.Get(chain[k], workload.PlaceOf(chain, k))
		who, n := hs.first, hs.rest
		kept := 0
		for i := 0; i < live; i++ {
			p := &out[i]
			for who != 0 && who.worker() < p.Worker { // advance the holder list
				if n == 0 {
					who = 0
					break
				}
				who, n = ix.nodes[n-1].who, ix.nodes[n-1].next
			}
			if who == 0 || who.worker() != p.Worker {
				continue
			}
			if p.G1 == k && who.mask()&g1 != 0 { // its G1 run is still unbroken
				p.G1++
			}
			p.Either++
			out[kept], out[i] = out[i], out[kept]
			kept++
		}
		live = kept
	}
	slices.SortFunc(out, func(a, b Prefix) int { return int(a.Worker - b.Worker) })
	return dst
}
