package kvcr

import (
	"math/bits"

	"github.com/kvsim/kvsim/block"
)

// slotIndex finds a pool slot by its block's hash: an open-addressing table
// of slot numbers whose keys are the slots' own hash and place, so an entry
// takes 4 bytes where a map from hash to slot takes 16. It homes keys by
// place as block.Map does, probes linearly, deletes by backward shift and
// keeps its load at most 1/2.
//
// An entry packs, from its low bits up, the slot number + 1, the entry's
// distance from its home and a tag of the hash's top bits. The distance
// lets a lookup skip entries homed elsewhere and a delete shift entries
// without reading their slots; the tag lets a lookup skip most entries of
// other hashes with the same home. Each slot read saved is a cache miss
// saved. A distance too large for its bits is stored as distUnknown and
// read from the slot; a pool too large to leave room for a tag has none.
type slotIndex struct {
	tab      []uint32 // 0: empty
	n        int
	bits     uint // log2(len(tab))
	slotBits uint // bits of an entry holding slot + 1
	distBits uint // then the distance's
	tagBits  uint // then the tag's
}

// maxDistBits bounds an entry's distance field: at a load of at most 1/2,
// entries are rarely 127 slots from home, so further bits serve the tag
// better.
const maxDistBits = 7

// newSlotIndex returns an empty index for slots 0 .. capacity-1.
func newSlotIndex(capacity int) slotIndex {
	return newSlotIndexBits(uint(min(max(bits.Len(uint(capacity)), 1), 31)), maxDistBits)
}

// newSlotIndexBits returns an empty index with slotBits bits for slot
// numbers, at most distBits for distances and the rest for the tag.
func newSlotIndexBits(slotBits, distBits uint) slotIndex {
	distBits = min(distBits, 32-slotBits)
	return slotIndex{slotBits: slotBits, distBits: distBits, tagBits: 32 - slotBits - distBits}
}

func (x *slotIndex) slotOf(e uint32) int32 { return int32(e&(1<<x.slotBits-1)) - 1 }

// distUnknown is the stored distance of an entry farther from its home
// than its bits can say.
func (x *slotIndex) distUnknown() uint32 { return 1<<x.distBits - 1 }

func (x *slotIndex) storedDist(e uint32) uint32 { return e >> x.slotBits & x.distUnknown() }

// tag is the tag of hash, placed where an entry keeps it (0 without tag bits).
func (x *slotIndex) tag(hash uint64) uint32 {
	if x.tagBits == 0 {
		return 0
	}
	return uint32(hash>>(64-x.tagBits)) << (x.slotBits + x.distBits)
}

// tagMask selects an entry's tag bits.
func (x *slotIndex) tagMask() uint32 { return ^uint32(0) << (x.slotBits + x.distBits) }

// dist returns entry e's distance from its home, at table position i.
func (x *slotIndex) dist(slots []block.Node[slot], e uint32, i int) int {
	if d := x.storedDist(e); d != x.distUnknown() {
		return int(d)
	}
	return (i - block.Home(slots[x.slotOf(e)].V.place, x.bits)) & (len(x.tab) - 1)
}

// withDist returns entry e at distance d from its home.
func (x *slotIndex) withDist(e uint32, d int) uint32 {
	field := x.distUnknown() << x.slotBits
	return e&^field | min(uint32(d), x.distUnknown())<<x.slotBits
}

// find returns the slot holding hash (whose place is place), or -1.
func (x *slotIndex) find(slots []block.Node[slot], hash uint64, place uint32) int32 {
	if x.n == 0 {
		return -1
	}
	mask := len(x.tab) - 1
	tag, tags := x.tag(hash), x.tagMask()
	d := 0
	for i := block.Home(place, x.bits); ; i, d = (i+1)&mask, d+1 {
		e := x.tab[i]
		if e == 0 {
			return -1
		}
		if e&tags != tag {
			continue // another hash
		}
		if sd := x.storedDist(e); sd != uint32(d) && sd != x.distUnknown() {
			continue // homed elsewhere
		}
		if s := x.slotOf(e); slots[s].V.hash == hash {
			return s
		}
	}
}

// insert indexes slot s under its hash, which must be absent.
func (x *slotIndex) insert(slots []block.Node[slot], s int32) {
	if 2*(x.n+1) > len(x.tab) {
		x.grow(slots)
	}
	x.place(slots, s)
	x.n++
}

func (x *slotIndex) place(slots []block.Node[slot], s int32) {
	mask := len(x.tab) - 1
	i, d := block.Home(slots[s].V.place, x.bits), 0
	for x.tab[i] != 0 {
		i, d = (i+1)&mask, d+1
	}
	x.tab[i] = x.withDist(uint32(s+1)|x.tag(slots[s].V.hash), d)
}

// remove drops slot s, which must be indexed and still hold its hash.
func (x *slotIndex) remove(slots []block.Node[slot], s int32) {
	mask := len(x.tab) - 1
	i := block.Home(slots[s].V.place, x.bits)
	for x.slotOf(x.tab[i]) != s {
		i = (i + 1) & mask
	}
	// Backward shift: move each later entry of the probe run into the hole
	// when the hole lies between its home and where it sits.
	for j := (i + 1) & mask; x.tab[j] != 0; j = (j + 1) & mask {
		e := x.tab[j]
		if d, gap := x.dist(slots, e, j), (j-i)&mask; d >= gap {
			x.tab[i] = x.withDist(e, d-gap)
			i = j
		}
	}
	x.tab[i] = 0
	x.n--
}

func (x *slotIndex) grow(slots []block.Node[slot]) {
	old := x.tab
	size := max(2*block.Group, 2*len(old))
	x.tab = make([]uint32, size)
	x.bits = uint(bits.TrailingZeros(uint(size)))
	for _, e := range old {
		if e != 0 {
			x.place(slots, x.slotOf(e))
		}
	}
}
