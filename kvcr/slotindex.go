package kvcr

import (
	"math/bits"

	"github.com/kvsim/kvsim/sim/u64map"
)

// slotIndex finds a pool slot by its block's hash: an open-addressing table
// of slot numbers whose keys are the slots' own hash and place, so an entry
// takes 4 bytes where a map from hash to slot takes 16. It homes keys by
// place as u64map does, probes linearly, deletes by backward shift and
// keeps its load at most 1/2.
type slotIndex struct {
	tab  []int32 // slot + 1; 0: empty
	n    int
	bits uint // log2(len(tab))
}

// find returns the slot holding hash (whose place is place), or -1.
func (x *slotIndex) find(slots []slot, hash uint64, place uint32) int32 {
	if x.n == 0 {
		return -1
	}
	mask := len(x.tab) - 1
	for i := u64map.Home(place, x.bits); ; i = (i + 1) & mask {
		s := x.tab[i]
		if s == 0 {
			return -1
		}
		if slots[s-1].hash == hash {
			return s - 1
		}
	}
}

// insert indexes slot s under its hash, which must be absent.
func (x *slotIndex) insert(slots []slot, s int32) {
	if 2*(x.n+1) > len(x.tab) {
		x.grow(slots)
	}
	x.place(slots, s)
	x.n++
}

func (x *slotIndex) place(slots []slot, s int32) {
	mask := len(x.tab) - 1
	i := u64map.Home(slots[s].place, x.bits)
	for x.tab[i] != 0 {
		i = (i + 1) & mask
	}
	x.tab[i] = s + 1
}

// remove drops slot s, which must be indexed and still hold its hash.
func (x *slotIndex) remove(slots []slot, s int32) {
	mask := len(x.tab) - 1
	i := u64map.Home(slots[s].place, x.bits)
	for x.tab[i] != s+1 {
		i = (i + 1) & mask
	}
	// Backward shift: move each later entry of the probe run into the hole
	// when the hole lies between its home and where it sits.
	for j := (i + 1) & mask; x.tab[j] != 0; j = (j + 1) & mask {
		if (j-u64map.Home(slots[x.tab[j]-1].place, x.bits))&mask >= (j-i)&mask {
			x.tab[i] = x.tab[j]
			i = j
		}
	}
	x.tab[i] = 0
	x.n--
}

func (x *slotIndex) grow(slots []slot) {
	old := x.tab
	size := max(2*u64map.Group, 2*len(old))
	x.tab = make([]int32, size)
	x.bits = uint(bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s != 0 {
			x.place(slots, s-1)
		}
	}
}
