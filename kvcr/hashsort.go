package kvcr

import (
	"cmp"
	"slices"
)

// hashPos is a block's hash and its position in a pull's blocks, to sort
// them in hash order.
type hashPos struct {
	hash uint64
	pos  int
}

// sortByHash sorts ps by hash, stably, using tmp (grown as needed) as
// scratch, and returns tmp for reuse. Hashes are uniform, so comparison
// sorts mispredict about every other branch; a least-significant-digit radix
// sort over the eight bytes of the hash does not branch on them, and skips a
// byte all hashes share. Below radixMin blocks slices.SortStableFunc is
// cheaper.
func sortByHash(ps, tmp []hashPos) []hashPos {
	if len(ps) < radixMin {
		slices.SortStableFunc(ps, func(a, b hashPos) int { return cmp.Compare(a.hash, b.hash) })
		return tmp
	}
	tmp = slices.Grow(tmp[:0], len(ps))[:len(ps)] // every pass writes all of dst
	src, dst := ps, tmp
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, p := range src {
			count[byte(p.hash>>shift)]++
		}
		if count[byte(src[0].hash>>shift)] == len(src) {
			continue // every hash has this byte: the pass would change nothing
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, p := range src {
			d := byte(p.hash >> shift)
			dst[count[d]] = p
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ps[0] {
		copy(ps, src)
	}
	return tmp
}

// radixMin is the number of blocks from which sortByHash sorts by radix.
const radixMin = 128
