package block

// Names maps block names, (segment, offset) in a Chains store, to int32
// values: the G1 block or G2 slot a pool keeps the block in. A pool holds
// runs of a chain, so Names keeps, per segment, one array of values over
// the span of offsets it holds; a lookup finds the segment once (the
// segments used lately are remembered, as a pool works along chains) and
// then indexes the array. Against a hash table keyed by block hash, a run of
// blocks costs array steps instead of one probe of a large table each.
//
// Names keyed by name are exact for a table keyed by hash: while a pool
// holds a block it holds a reference on the block's segment, so the
// block's name is fixed, and every chain holding the block is interned to
// that same name (Chains never names one block twice).
type Names struct {
	segs   Map[int32] // segment -> index in spans + 1
	spans  []nameSpan
	spare  []int32 // indices of spans free for reuse
	n      int
	recent [8]recentSpan // spans found lately, by segment mod 8
}

// recentSpan remembers the span of a segment: seg + 1 (0: none) and the
// span's index.
type recentSpan struct{ seg, idx int32 }

// nameSpan is one segment's values: vals[i] is the value of offset lo+i,
// plus one (0: absent). Its first and last values are present.
type nameSpan struct {
	lo   int32
	vals []int32
}

// NewNames returns an empty table.
func NewNames() Names { return Names{} }

// Len is the number of names held.
func (t *Names) Len() int { return t.n }

// segKey is segment s as a Map key and place.
func segKey(s int32) (uint64, uint32) {
	k := uint64(s) + 1
	return k, uint32(Mix(k) >> 32)
}

// span is the index of segment s's span, or -1 (always for s < 0, a Ref
// made without its chain's path).
func (t *Names) span(s int32) int32 {
	if s < 0 {
		return -1
	}
	r := &t.recent[s&7]
	if r.seg == s+1 {
		return r.idx
	}
	k, pl := segKey(s)
	i, ok := t.segs.Get(k, pl)
	if !ok {
		return -1
	}
	*r = recentSpan{s + 1, i - 1}
	return i - 1
}

// Get is the value of block (seg, off), or -1 when absent.
func (t *Names) Get(seg, off int32) int32 {
	i := t.span(seg)
	if i < 0 {
		return -1
	}
	sp := &t.spans[i]
	if j := uint(off - sp.lo); j < uint(len(sp.vals)) {
		return sp.vals[j] - 1
	}
	return -1
}

// Put sets the value of block (seg, off), which must be absent, to v >= 0.
func (t *Names) Put(seg, off, v int32) {
	if !t.Add(seg, off, v) {
		panic("block: Names.Put of a name already held")
	}
}

// Add sets the value of block (seg, off) to v >= 0 when it is absent and
// reports whether it was.
func (t *Names) Add(seg, off, v int32) bool {
	if seg < 0 {
		panic("block: Names.Add of a block without a segment (a Ref made without its chain's path)")
	}
	i := t.span(seg)
	if i < 0 {
		i = t.newSpan(seg, off)
	}
	sp := &t.spans[i]
	switch {
	case len(sp.vals) == 0:
		sp.lo = off
		sp.vals = append(sp.vals, 0)
	case off < sp.lo: // before the span: grow it at the front
		grown := make([]int32, int(sp.lo-off)+len(sp.vals), int(sp.lo-off)+cap(sp.vals))
		copy(grown[sp.lo-off:], sp.vals)
		sp.lo, sp.vals = off, grown
	case int(off-sp.lo) >= len(sp.vals): // past its end: grow it at the back
		for int(off-sp.lo) >= len(sp.vals) {
			sp.vals = append(sp.vals, 0)
		}
	}
	if sp.vals[off-sp.lo] != 0 {
		return false
	}
	sp.vals[off-sp.lo] = v + 1
	t.n++
	return true
}

// newSpan adds an empty span for segment s and returns its index.
func (t *Names) newSpan(s int32, off int32) int32 {
	var i int32
	if n := len(t.spare); n > 0 {
		i, t.spare = t.spare[n-1], t.spare[:n-1]
	} else {
		i = int32(len(t.spans))
		t.spans = append(t.spans, nameSpan{})
	}
	t.spans[i].lo = off
	k, pl := segKey(s)
	t.segs.Put(k, pl, i+1)
	t.recent[s&7] = recentSpan{s + 1, i}
	return i
}

// Delete removes block (seg, off), which must be held.
func (t *Names) Delete(seg, off int32) {
	i := t.span(seg)
	if i < 0 || t.Get(seg, off) < 0 {
		panic("block: Names.Delete of a name not held")
	}
	sp := &t.spans[i]
	sp.vals[off-sp.lo] = 0
	t.n--
	for len(sp.vals) > 0 && sp.vals[len(sp.vals)-1] == 0 {
		sp.vals = sp.vals[:len(sp.vals)-1]
	}
	for len(sp.vals) > 0 && sp.vals[0] == 0 {
		sp.vals = sp.vals[1:]
		sp.lo++
	}
	if len(sp.vals) == 0 {
		sp.vals = sp.vals[:0] // its array serves the next segment that takes the span
		k, pl := segKey(seg)
		t.segs.Delete(k, pl)
		t.spare = append(t.spare, i)
		t.recent[seg&7] = recentSpan{}
	}
}
