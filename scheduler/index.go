// Package scheduler holds cluster-level scheduling: the router's view of
// every worker's KV inventory, the routing policies, and hint source
// selection.
package scheduler

import (
	"slices"

	"github.com/kvsim/kvsim/sim/u64map"
)

// Index is the router's view of which workers cache which blocks: a map
// from chained block hash to the sorted ids of the workers holding it. Its
// cost per query grows with the matched prefix and the few workers that
// hold it, not with the cluster size.
type Index struct {
	holders u64map.Map[[]int32]
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{} }

// Add records that worker w holds hash.
func (ix *Index) Add(w int32, hash uint64) {
	hs := ix.holders.Insert(hash)
	i, found := slices.BinarySearch(*hs, w)
	if found {
		return
	}
	*hs = slices.Insert(*hs, i, w)
}

// Remove records that worker w no longer holds hash.
func (ix *Index) Remove(w int32, hash uint64) {
	hs := ix.holders.Ptr(hash)
	if hs == nil {
		return
	}
	i, found := slices.BinarySearch(*hs, w)
	if !found {
		return
	}
	if len(*hs) == 1 {
		ix.holders.Delete(hash)
		return
	}
	*hs = slices.Delete(*hs, i, i+1)
}

// Len is the number of distinct hashes held by any worker.
func (ix *Index) Len() int { return ix.holders.Len() }

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
	first, _ := ix.holders.Get(chain[0])
	if len(first) == 0 {
		return dst
	}
	start := len(dst)
	for _, w := range first {
		dst = append(dst, Overlap{Worker: w, Blocks: 1})
	}
	live := dst[start:] // workers still matching, a prefix of dst[start:]
	for k := 1; k < len(chain) && len(live) > 0; k++ {
		hs, _ := ix.holders.Get(chain[k])
		// Keep the live workers that hold block k; move the others behind.
		n := 0
		for i := range live {
			if _, ok := slices.BinarySearch(hs, live[i].Worker); ok {
				live[i].Blocks++
				live[i], live[n] = live[n], live[i]
				n++
			}
		}
		live = live[:n]
	}
	out := dst[start:]
	slices.SortFunc(out, func(a, b Overlap) int { return int(a.Worker - b.Worker) })
	return dst
}
