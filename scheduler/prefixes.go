package scheduler

import (
	"math/bits"

	"github.com/kvsim/kvsim/block"
)

// Prefix is how much of a chain one worker holds: the leading blocks in G1,
// and the leading blocks each in G1 or G2.
type Prefix struct {
	Worker int32
	G1     int
	Either int
}

// Prefixes appends to dst, in worker id order, every worker holding the
// first block of chain in either tier, with its G1 and its G1+G2 prefix,
// in one walk of the chain.
func (ix *Index) Prefixes(chain []uint64, dst []Prefix) []Prefix {
	return ix.runs(chain, 0, uint8(InEither), uint8(InG1), dst)
}

// runs appends to dst, in worker order, every worker holding block from of
// chain in a tier of outer, with the run of blocks from there it holds each
// in a tier of outer (Either) and the run it holds each in a tier of inner
// (G1; inner is a subset of outer, 0 for none). Each block costs one
// lookup; a block in list mode a merge with the workers still in their
// runs, a block in set mode one AND a word of 64 workers when the first
// block is in set mode too.
func (ix *Index) runs(chain []uint64, from int, outer, inner uint8, dst []Prefix) []Prefix {
	if from >= len(chain) {
		return dst
	}
	e, _ := ix.heads.Get(chain[from], block.PlaceOf(chain, from))
	if e.mode() == modeSet {
		return ix.setRuns(chain, from, outer, inner, e, dst)
	}
	start := len(dst)
	for who, n := ix.holders(e); who != 0; who, n = ix.after(n) {
		if m := who.mask(); m&outer != 0 {
			p := Prefix{Worker: who.worker(), Either: 1}
			if m&inner != 0 {
				p.G1 = 1
			}
			dst = append(dst, p)
		}
	}
	out := dst[start:]              // at most maxList (< 64) workers, in worker order
	live := uint64(1)<<len(out) - 1 // bit i: out[i] is still in its run
	for k := from + 1; k < len(chain) && live != 0; k++ {
		e, _ := ix.heads.Get(chain[k], block.PlaceOf(chain, k))
		set := e.mode() == modeSet
		var who packed
		var n int32
		if !set {
			who, n = ix.holders(e)
		}
		for l := live; l != 0; l &= l - 1 {
			i := bits.TrailingZeros64(l)
			p := &out[i]
			var m uint8
			if set {
				m = ix.setMask(e.index(), p.Worker)
			} else {
				for who != 0 && who.worker() < p.Worker { // advance the holder list
					who, n = ix.after(n)
				}
				if who != 0 && who.worker() == p.Worker {
					m = who.mask()
				}
			}
			if m&outer == 0 {
				live &^= 1 << i
				continue
			}
			if p.G1 == k-from && m&inner != 0 { // its inner run is still unbroken
				p.G1++
			}
			p.Either++
		}
	}
	return dst
}

// holderBits sets dst to entry e's holders in the tiers of mask, as bits.
func (ix *Index) holderBits(e entry, mask uint8, dst []uint64) {
	if e.mode() == modeSet {
		g1, g2 := ix.set(e.index())
		switch mask {
		case uint8(InG1):
			copy(dst, g1)
		case uint8(InG2):
			copy(dst, g2)
		case uint8(InEither):
			for i := range dst {
				dst[i] = g1[i] | g2[i]
			}
		default:
			clear(dst)
		}
		return
	}
	clear(dst)
	for who, n := ix.holders(e); who != 0; who, n = ix.after(n) {
		if w := who.worker(); who.mask()&mask != 0 && int(w) < 64*len(dst) { // higher ids are in no run
			dst[w/64] |= 1 << (w % 64)
		}
	}
}

// endRuns keeps in live the workers that hold the block (bits held) and
// ends the runs of the others at n blocks. It reports whether any worker
// is still live.
func endRuns(live, held []uint64, run []int32, n int32) bool {
	any := false
	for i, word := range live {
		if word == 0 {
			continue
		}
		now := word & held[i]
		for gone := word &^ now; gone != 0; gone &= gone - 1 {
			run[i*64+bits.TrailingZeros64(gone)] = n
		}
		live[i] = now
		any = any || now != 0
	}
	return any
}

// setRuns is runs when block from is in set mode (entry first): the workers
// still in their runs are a bit set, ANDed with each later block's holders
// a word at a time; a worker's run ends at the block whose AND drops it.
func (ix *Index) setRuns(chain []uint64, from int, outer, inner uint8, first entry, dst []Prefix) []Prefix {
	ix.holderBits(first, outer, ix.start)
	copy(ix.live, ix.start)
	ix.holderBits(first, inner, ix.liveIn)
	for i, word := range ix.start {
		for ; word != 0; word &= word - 1 {
			ix.runInner[i*64+bits.TrailingZeros64(word)] = 0
		}
	}
	k := from + 1
	for ; k < len(chain); k++ {
		e, _ := ix.heads.Get(chain[k], block.PlaceOf(chain, k))
		ix.holderBits(e, outer, ix.outer)
		if inner != 0 {
			ix.holderBits(e, inner, ix.inner)
			endRuns(ix.liveIn, ix.inner, ix.runInner, int32(k-from))
		}
		if !endRuns(ix.live, ix.outer, ix.runOuter, int32(k-from)) {
			break
		}
	}
	if k == len(chain) { // the runs still going reach the chain's end
		clear(ix.outer)
		endRuns(ix.liveIn, ix.outer, ix.runInner, int32(k-from))
		endRuns(ix.live, ix.outer, ix.runOuter, int32(k-from))
	}
	for i, word := range ix.start {
		for ; word != 0; word &= word - 1 {
			w := i*64 + bits.TrailingZeros64(word)
			dst = append(dst, Prefix{Worker: int32(w), G1: int(ix.runInner[w]), Either: int(ix.runOuter[w])})
		}
	}
	return dst
}
