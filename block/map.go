package block

import "math/bits"

// Group is the number of neighbouring slots a place's group spans.
const Group = 8

type slot[V any] struct {
	key   uint64 // 0: empty
	place uint32
	val   V
}

// Map maps non-zero uint64 keys to V. The zero value is an empty map.
// Map is a hash map from non-zero uint64 keys to values, for the
// simulator's block-hash indexes. Each key comes with a place: a 32-bit
// hint whose top bits choose an aligned group of eight slots and whose low
// three bits a slot in it, so keys the caller knows are used together
// (consecutive blocks of a chain) land in the same two cache lines. It uses
// open addressing with linear probing and backward-shift deletion, so heavy
// insert/delete churn (a prefix cache evicting and committing blocks)
// leaves no tombstones. Iteration is not offered, so no map order can leak
// into results.
type Map[V any] struct {
	slots []slot[V]
	n     int
	bits  uint // log2(len(slots))
}

// SegKey is chain segment s as a Map key and place, for the tables that
// index by segment.
func SegKey(s int32) (uint64, uint32) {
	k := uint64(s) + 1
	return k, placeOfHash(k)
}

// home is a place's home slot in the table of 2^bits slots (bits >= 3):
// the place's top bits choose an aligned group of Group slots, its low bits
// the slot in the group.
func (m *Map[V]) home(place uint32) int {
	return int(place>>(32-m.bits))&^(Group-1) | int(place&(Group-1))
}

// Len is the number of keys.
func (m *Map[V]) Len() int { return m.n }

// Get returns the value of k.
func (m *Map[V]) Get(k uint64, place uint32) (V, bool) {
	if p := m.Ptr(k, place); p != nil {
		return *p, true
	}
	var zero V
	return zero, false
}

// Ptr returns a pointer to k's value, valid until the next Put, Insert or
// Delete, or nil when k is absent. place must be the one k was inserted
// with.
func (m *Map[V]) Ptr(k uint64, place uint32) *V {
	if m.n == 0 {
		return nil
	}
	mask := len(m.slots) - 1
	for i := m.home(place); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.key == k {
			return &s.val
		}
		if s.key == 0 {
			return nil
		}
	}
}

// Put sets k's value. k must not be 0.
func (m *Map[V]) Put(k uint64, place uint32, v V) {
	*m.Insert(k, place) = v
}

// Insert returns a pointer to k's value, adding k with the zero value when
// absent. The pointer is valid until the next Put, Insert or Delete.
func (m *Map[V]) Insert(k uint64, place uint32) *V {
	if k == 0 {
		panic("block: Map: zero key")
	}
	if 2*(m.n+1) > len(m.slots) { // load factor at most 1/2
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := m.home(place); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.key == k {
			return &s.val
		}
		if s.key == 0 {
			s.key, s.place = k, place
			m.n++
			return &s.val
		}
	}
}

// Delete removes k, if present.
func (m *Map[V]) Delete(k uint64, place uint32) {
	if m.n == 0 {
		return
	}
	mask := len(m.slots) - 1
	i := m.home(place)
	for m.slots[i].key != k {
		if m.slots[i].key == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move each later entry of the probe run into the hole
	// when the hole lies between its home and where it sits.
	for j := (i + 1) & mask; m.slots[j].key != 0; j = (j + 1) & mask {
		if (j-m.home(m.slots[j].place))&mask >= (j-i)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = slot[V]{}
	m.n--
}

// Sum adds f over every value. A sum does not depend on the order it is
// taken in, so it is offered where iteration is not.
func (m *Map[V]) Sum(f func(V) int) int {
	n := 0
	for i := range m.slots {
		if m.slots[i].key != 0 {
			n += f(m.slots[i].val)
		}
	}
	return n
}

// grow doubles the table and moves every key into it.
func (m *Map[V]) grow() {
	old := m.slots
	size := max(2*Group, 2*len(old))
	m.slots = make([]slot[V], size)
	m.bits = uint(bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		j := m.home(s.place)
		for m.slots[j].key != 0 {
			j = (j + 1) & mask
		}
		m.slots[j] = s
	}
}
