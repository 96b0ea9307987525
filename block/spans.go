package block

import "slices"

// A Span is offsets [Lo, Hi) of a segment that share a value V. V comes
// first so that a span without one (V struct{}) takes 8 bytes.
type Span[V any] struct {
	V      V
	Lo, Hi int32
}

// Spans is some of a segment's offsets as sorted, disjoint, non-empty
// spans, each with its value: how the G1 pool keeps its cached blocks and
// the router a worker's holding in a tier.
type Spans[V any] []Span[V]

// Find is the index of the first span ending after offset x: the span
// holding x when one does, else where a span holding x would go.
func (s Spans[V]) Find(x int32) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].Hi > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// Holding is the index of the span holding offset x, or -1.
func (s Spans[V]) Holding(x int32) int {
	if i := s.Find(x); i < len(s) && s[i].Lo <= x {
		return i
	}
	return -1
}

// Cut splits span i at offset x, inside it: span i keeps [Lo, x) and a
// span [x, Hi) with the same value follows it.
func (s *Spans[V]) Cut(i int, x int32) {
	upper := (*s)[i]
	upper.Lo = x
	(*s)[i].Hi = x
	*s = slices.Insert(*s, i+1, upper)
}

// SegMap keeps a value of V for each chain segment that has one, found
// through a Map keyed by the segment (SegKey): a pool's index by segment.
// The last segment found is remembered, so a run of calls on one segment
// costs one lookup. Values sit in a slice in the order their entries were
// made, reused as segments come and go, and that order is all Each shows.
// The zero value is an empty map.
type SegMap[V any] struct {
	idx     Map[int32] // segment -> its entry + 1
	entries []segEntry[V]
	spare   []int32 // entries free for reuse
	last    int32   // the segment last found + 1; 0: none
	lastAt  int32   // its entry
}

type segEntry[V any] struct {
	seg int32 // -1: free
	v   V
}

// Get is segment s's value, nil when it has none; s is a segment id, not
// -1. The pointer is valid until the next Add.
func (m *SegMap[V]) Get(s int32) *V {
	if s+1 == m.last {
		return &m.entries[m.lastAt].v
	}
	return m.lookup(s)
}

// lookup is Get of a segment other than the last found.
func (m *SegMap[V]) lookup(s int32) *V {
	i, ok := m.idx.Get(SegKey(s))
	if !ok {
		return nil
	}
	m.last, m.lastAt = s+1, i-1
	return &m.entries[i-1].v
}

// Add is segment s's value, made when it has none: then the zero V, or the
// value a deleted segment left (see Delete). The pointer is valid until the
// next Add.
func (m *SegMap[V]) Add(s int32) *V {
	if v := m.Get(s); v != nil {
		return v
	}
	var i int32
	if n := len(m.spare); n > 0 {
		i, m.spare = m.spare[n-1], m.spare[:n-1]
	} else {
		i = int32(len(m.entries))
		m.entries = append(m.entries, segEntry[V]{})
	}
	m.entries[i].seg = s
	k, pl := SegKey(s)
	m.idx.Put(k, pl, i+1)
	m.last, m.lastAt = s+1, i
	return &m.entries[i].v
}

// Delete forgets segment s, which must have a value. The value stays in
// its entry for the next segment Add makes there, so a slice keeps its
// capacity: the caller empties it first.
func (m *SegMap[V]) Delete(s int32) {
	k, pl := SegKey(s)
	i := m.lastAt // a segment is mostly deleted right after a Get of it
	if s+1 == m.last {
		m.last = 0
	} else {
		j, _ := m.idx.Get(k, pl)
		i = j - 1
	}
	m.idx.Delete(k, pl)
	m.entries[i].seg = -1
	m.spare = append(m.spare, i)
}

// Len is the number of segments with a value.
func (m *SegMap[V]) Len() int { return m.idx.Len() }

// Each calls f with each segment that has a value, and its value, in the
// order of their entries. f must not call Add or Delete.
func (m *SegMap[V]) Each(f func(s int32, v *V)) {
	for i := range m.entries {
		if e := &m.entries[i]; e.seg >= 0 {
			f(e.seg, &e.v)
		}
	}
}
