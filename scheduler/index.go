// Package scheduler holds cluster-level scheduling: the router's view of
// every worker's KV inventory, the routing policies, and hint source
// selection.
package scheduler

import (
	"slices"

	"github.com/kvsim/kvsim/sim/u64map"
)

// Index is the router's view of which workers cache which blocks: a map from
// chained block hash to the workers holding it, kept as a short list sorted
// by worker id in a node arena (no allocation per block). Its cost per query
// grows with the matched prefix and the few workers holding it, not with the
// cluster size.
type Index struct {
	heads u64map.Map[int32] // hash -> first node + 1 (0: no holder)
	nodes []holder
	free  int32 // first free node + 1
}

type holder struct {
	worker int32
	next   int32 // next node + 1 (0: end)
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{} }

func (ix *Index) node(w int32, next int32) int32 {
	if ix.free != 0 {
		i := ix.free - 1
		ix.free = ix.nodes[i].next
		ix.nodes[i] = holder{worker: w, next: next}
		return i + 1
	}
	ix.nodes = append(ix.nodes, holder{worker: w, next: next})
	return int32(len(ix.nodes))
}

// Add records that worker w holds hash.
func (ix *Index) Add(w int32, hash uint64) {
	link := ix.heads.Insert(hash)
	for *link != 0 && ix.nodes[*link-1].worker < w {
		link = &ix.nodes[*link-1].next
	}
	if *link != 0 && ix.nodes[*link-1].worker == w {
		return
	}
	*link = ix.node(w, *link)
}

// Remove records that worker w no longer holds hash.
func (ix *Index) Remove(w int32, hash uint64) {
	head := ix.heads.Ptr(hash)
	if head == nil {
		return
	}
	link := head
	for *link != 0 && ix.nodes[*link-1].worker < w {
		link = &ix.nodes[*link-1].next
	}
	if *link == 0 || ix.nodes[*link-1].worker != w {
		return
	}
	i := *link - 1
	*link = ix.nodes[i].next
	ix.nodes[i].next = ix.free
	ix.free = i + 1
	if *head == 0 {
		ix.heads.Delete(hash)
	}
}

// Len is the number of distinct hashes held by any worker.
func (ix *Index) Len() int { return ix.heads.Len() }

// holds reports whether the holder list starting at node+1 contains w.
func (ix *Index) holds(head int32, w int32) bool {
	for n := head; n != 0; n = ix.nodes[n-1].next {
		if h := ix.nodes[n-1].worker; h >= w {
			return h == w
		}
	}
	return false
}

// Overlap is the number of leading blocks of a chain one worker holds.
type Overlap struct {
	Worker int32
	Blocks int
}

// Overlaps appends to dst, in worker id order, every worker holding at least
// the first block of chain, with the length of the prefix it holds.
func (ix *Index) Overlaps(chain []uint64, dst []Overlap) []Overlap {
	if len(chain) == 0 {
		return dst
	}
	first, _ := ix.heads.Get(chain[0])
	if first == 0 {
		return dst
	}
	start := len(dst)
	for n := first; n != 0; n = ix.nodes[n-1].next {
		dst = append(dst, Overlap{Worker: ix.nodes[n-1].worker, Blocks: 1})
	}
	live := dst[start:] // workers still matching, a prefix of dst[start:]
	for k := 1; k < len(chain) && len(live) > 0; k++ {
		head, _ := ix.heads.Get(chain[k])
		// Keep the live workers that hold block k; move the others behind.
		n := 0
		for i := range live {
			if ix.holds(head, live[i].Worker) {
				live[i].Blocks++
				live[i], live[n] = live[n], live[i]
				n++
			}
		}
		live = live[:n]
	}
	slices.SortFunc(dst[start:], func(a, b Overlap) int { return int(a.Worker - b.Worker) })
	return dst
}
