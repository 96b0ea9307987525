// Package u64map is a hash map from non-zero uint64 keys to values, for the
// simulator's block-hash indexes. It uses open addressing with linear
// probing and backward-shift deletion, so heavy insert/delete churn (a
// prefix cache evicting and committing blocks) leaves no tombstones and
// lookups stay short; a key and its value share a slot, so a lookup touches
// one cache line. Iteration is not offered, so no map order can leak into
// results.
package u64map

import "math/bits"

type slot[V any] struct {
	key uint64 // 0: empty
	val V
}

// Map maps non-zero uint64 keys to V. The zero value is an empty map.
type Map[V any] struct {
	slots []slot[V]
	n     int
	shift uint // 64 - log2(len(slots))
}

// home is k's home slot: the top bits of a multiply-xorshift mix, so even
// keys with arithmetic structure spread evenly.
func (m *Map[V]) home(k uint64) int {
	k ^= k >> 32
	k *= 0xd6e8feb86659fd93
	k ^= k >> 32
	return int(k >> m.shift)
}

// Len is the number of keys.
func (m *Map[V]) Len() int { return m.n }

// Get returns the value of k.
func (m *Map[V]) Get(k uint64) (V, bool) {
	if p := m.Ptr(k); p != nil {
		return *p, true
	}
	var zero V
	return zero, false
}

// Ptr returns a pointer to k's value, valid until the next Put, Insert or
// Delete, or nil when k is absent.
func (m *Map[V]) Ptr(k uint64) *V {
	if m.n == 0 {
		return nil
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
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
func (m *Map[V]) Put(k uint64, v V) {
	*m.Insert(k) = v
}

// Insert returns a pointer to k's value, adding k with the zero value when
// absent. The pointer is valid until the next Put, Insert or Delete.
func (m *Map[V]) Insert(k uint64) *V {
	if k == 0 {
		panic("u64map: zero key")
	}
	if 2*(m.n+1) > len(m.slots) { // load factor at most 1/2
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.key == k {
			return &s.val
		}
		if s.key == 0 {
			s.key = k
			m.n++
			return &s.val
		}
	}
}

// Delete removes k, if present.
func (m *Map[V]) Delete(k uint64) {
	if m.n == 0 {
		return
	}
	mask := len(m.slots) - 1
	i := m.home(k)
	for m.slots[i].key != k {
		if m.slots[i].key == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move each later entry of the probe run into the hole
	// when the hole lies between its home and where it sits.
	for j := (i + 1) & mask; m.slots[j].key != 0; j = (j + 1) & mask {
		if (j-m.home(m.slots[j].key))&mask >= (j-i)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = slot[V]{}
	m.n--
}

func (m *Map[V]) grow() {
	size := max(16, 2*len(m.slots))
	old := m.slots
	m.slots = make([]slot[V], size)
	m.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		j := m.home(s.key)
		for m.slots[j].key != 0 {
			j = (j + 1) & mask
		}
		m.slots[j] = s
	}
}
