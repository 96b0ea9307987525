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
//
// An entry packs the slot number + 1 in its low slotBits bits and, above
// them, the entry's distance from its home. The distance lets a lookup
// skip entries homed elsewhere and a delete shift entries without reading
// their slots, each of which would be a cache miss. A distance too large
// for its bits is stored as distUnknown and read from the slot.
type slotIndex struct {
	tab      []uint32 // 0: empty
	n        int
	bits     uint // log2(len(tab))
	slotBits uint // bits of an entry holding slot + 1
}

// newSlotIndex returns an empty index for slots 0 .. capacity-1.
func newSlotIndex(capacity int) slotIndex {
	return slotIndex{slotBits: uint(min(max(bits.Len(uint(capacity)), 1), 31))}
}

func (x *slotIndex) slotOf(e uint32) int32 { return int32(e&(1<<x.slotBits-1)) - 1 }

// distUnknown is the stored distance of an entry farther from its home
// than its bits can say.
func (x *slotIndex) distUnknown() uint32 { return 1<<(32-x.slotBits) - 1 }

// dist returns entry e's distance from its home, at table position i.
func (x *slotIndex) dist(slots []slot, e uint32, i int) int {
	if d := e >> x.slotBits; d != x.distUnknown() {
		return int(d)
	}
	return (i - u64map.Home(slots[x.slotOf(e)].place, x.bits)) & (len(x.tab) - 1)
}

// entry packs slot s at distance d from its home.
func (x *slotIndex) entry(s int32, d int) uint32 {
	return uint32(s+1) | min(uint32(d), x.distUnknown())<<x.slotBits
}

// find returns the slot holding hash (whose place is place), or -1.
func (x *slotIndex) find(slots []slot, hash uint64, place uint32) int32 {
	if x.n == 0 {
		return -1
	}
	mask := len(x.tab) - 1
	d := 0
	for i := u64map.Home(place, x.bits); ; i, d = (i+1)&mask, d+1 {
		e := x.tab[i]
		if e == 0 {
			return -1
		}
		if sd := e >> x.slotBits; sd != uint32(d) && sd != x.distUnknown() {
			continue // homed elsewhere
		}
		if s := x.slotOf(e); slots[s].hash == hash {
			return s
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
	i, d := u64map.Home(slots[s].place, x.bits), 0
	for x.tab[i] != 0 {
		i, d = (i+1)&mask, d+1
	}
	x.tab[i] = x.entry(s, d)
}

// remove drops slot s, which must be indexed and still hold its hash.
func (x *slotIndex) remove(slots []slot, s int32) {
	mask := len(x.tab) - 1
	i := u64map.Home(slots[s].place, x.bits)
	for x.slotOf(x.tab[i]) != s {
		i = (i + 1) & mask
	}
	// Backward shift: move each later entry of the probe run into the hole
	// when the hole lies between its home and where it sits.
	for j := (i + 1) & mask; x.tab[j] != 0; j = (j + 1) & mask {
		e := x.tab[j]
		if d, gap := x.dist(slots, e, j), (j-i)&mask; d >= gap {
			x.tab[i] = x.entry(x.slotOf(e), d-gap)
			i = j
		}
	}
	x.tab[i] = 0
	x.n--
}

func (x *slotIndex) grow(slots []slot) {
	old := x.tab
	size := max(2*u64map.Group, 2*len(old))
	x.tab = make([]uint32, size)
	x.bits = uint(bits.TrailingZeros(uint(size)))
	for _, e := range old {
		if e != 0 {
			x.place(slots, x.slotOf(e))
		}
	}
}
