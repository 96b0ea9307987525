package block

import (
	"fmt"
	"slices"
)

// Chains interns block chains into a tree of segments, so that a chain is
// a short path of pieces and a cache can name a run of blocks by segment
// and offsets instead of block by block. A segment is a run of blocks that
// follows the first attach blocks of its parent segment (a chain's first
// segment has no parent). Segments never split: a chain that leaves a
// segment part-way starts a child segment there, and one that runs past a
// segment's end appends to it (a conversation's next turn). So every block
// of every interned chain has one name, (segment, offset), for as long as
// its segment lives, and tables keyed by it never need re-keying.
//
// Chains are hash chains (a block's hash identifies it and every block
// before it), so two chains share exactly their common prefix. A segment
// keeps its blocks as the chains' links (Chain), not as hashes, and a
// hash is derived where it is needed: a segment's first, which indexes it,
// and those of Ref. A 64-bit collision, two different prefixes with the
// same hash, is not detected inside a segment; at a segment's start it
// gives the chain a private segment that no later chain finds, and is
// counted (Collisions).
//
// A segment lives while it is referenced: by each interned path through it
// (Intern takes the references, Release returns them), by each child, and
// by whatever the caller adds with Acquire. A segment whose last reference
// goes is freed at the next Collect, with its id reused and its parent's
// reference returned; until then a Ref naming it stays valid, and Acquire
// or Intern can take it up again. So a table that drops its reference and
// reports the block to another table later in the same event needs no
// care, as long as Collect runs between events.
type Chains struct {
	segs   []segment
	starts Map[int32] // a segment's first hash -> its id + 1
	free   []int32    // freed ids
	unref  []int32    // segments whose references reached zero since the last Collect
	given  [][]uint64 // by segment: the given hashes of its links without a rule; shorter than segs past the last segment with any
	live   int
	clash  int // segments made private by a hash collision
}

// A segment keeps its blocks as links (see Chain), a few words each
// however many blocks, and the hash of the block before its first, from
// which every hash of its blocks follows. A rule link's last hash is kept
// once derived, so the links before a block are stepped through once, and
// deriving its hash takes the steps of its own link up to it.
type segment struct {
	links  []slink
	h0     uint64 // the hash of the block before its first; 0 for a chain's first segment
	n      int32  // blocks; 0 once freed
	parent int32  // -1: a chain's first segment
	attach int32  // the segment follows its parent's first attach blocks
	pos    int32  // chain position of its first block
	refs   int32
}

// slink is a segment's link with, for a rule, the hash of its last block,
// 0 until derived.
type slink struct {
	link
	last uint64
}

// A Piece is the first N blocks of segment Seg. A chain's path is its
// pieces in order; each piece's segment is the child of the piece before,
// attached where that piece ends.
type Piece struct {
	Seg int32
	N   int32
}

// Locate is block k of the chain whose path is given, as its segment and
// offset there; (-1, 0) past the path's end.
func Locate(path []Piece, k int) (int32, int32) {
	for _, p := range path {
		if k < int(p.N) {
			return p.Seg, int32(k)
		}
		k -= int(p.N)
	}
	return -1, 0
}

// cursor is a position in a chain's or a segment's links: link i, whose
// first block is at start (a chain position, or a segment offset).
type cursor struct{ i, start int }

// advance moves the cursor at block k by m blocks over links.
func (c *cursor) advance(links []link, k, m int) {
	for k += m; c.i < len(links) && k >= c.start+int(links[c.i].n); c.i++ {
		c.start += int(links[c.i].n)
	}
}

// advanceSeg is advance over a segment's links.
func (c *cursor) advanceSeg(links []slink, k, m int) {
	for k += m; c.i < len(links) && k >= c.start+int(links[c.i].n); c.i++ {
		c.start += int(links[c.i].n)
	}
}

// Intern appends chain's path to dst, creating the segments it needs, and
// takes a reference on each segment of the path; Release returns them.
//
// It walks the chain and each segment it follows link by link: where a
// link of each gives the blocks the same rule (sameRule), they share every
// block the two cover, and otherwise a block is shared when its hash, or
// for two rules its key, is equal; hashes are derived only where a block's
// is needed (a segment start, a link that gives hashes). The tree built is
// the one comparing the hashes block by block would build: a block whose
// hash equals the segment's block there has the same parent hash and so
// the same key (Mix is a bijection), except where ChainHash maps a zero
// Mix to 1, a 64-bit collision like those the type's comment describes.
func (c *Chains) Intern(ch Chain, dst []Piece) []Piece {
	if ch.n == 0 {
		return dst
	}
	var at cursor   // the chain's link holding block k
	var prev uint64 // the hash of block k-1
	hk := ch.hashAt(at, 0, 0)
	parent, attach := int32(-1), int32(0)
	s := c.find(hk, parent, attach)
	for k := 0; k < ch.n; {
		if s < 0 {
			s = c.make(ch, at, k, parent, attach, prev, hk)
			return append(dst, Piece{Seg: s, N: int32(ch.n - k)})
		}
		seg := &c.segs[s]
		seg.refs++
		var sat cursor // the segment's link holding offset j
		j := 1         // its first block is block k: its hash is hk
		sat.advanceSeg(seg.links, 0, 1)
		at.advance(ch.links, k, 1)
		k++
		h := hk // the hash of block k-1, or 0 when not derived
	walk:
		for j < int(seg.n) && k < ch.n {
			sl, cl := &seg.links[sat.i], &ch.links[at.i]
			m := 1
			switch {
			case sl.sameRule(cl):
				m, h = min(sat.start+int(sl.n)-j, at.start+int(cl.n)-k), 0
			case sl.step != 0 && cl.step != 0:
				if sl.key(k) != cl.key(k) {
					break walk
				}
				h = 0
			default: // a given hash: compare hashes
				if h == 0 {
					h = c.hashAt(s, int32(j-1))
				}
				hs := seg.next(sat, j, h, c.givenOf(s))
				if hs != ch.hashAt(at, k, h) {
					break walk
				}
				h = hs
			}
			sat.advanceSeg(seg.links, j, m)
			at.advance(ch.links, k, m)
			j += m
			k += m
		}
		next := int32(-1) // the segment the chain goes on in
		switch {
		case k == ch.n:
		case j < int(seg.n): // leaves the segment part-way: the child starting with block k, if any
			if prev = h; prev == 0 {
				prev = c.hashAt(s, int32(j-1))
			}
			hk = ch.hashAt(at, k, prev)
			next = c.find(hk, s, int32(j))
		default: // runs past the end, where no child starts (a chain that reaches a segment's end extends it)
			c.append(s, ch, at, k)
			j += ch.n - k
			k = ch.n
		}
		dst = append(dst, Piece{Seg: s, N: int32(j)})
		parent, attach, s = s, int32(j), next
	}
	return dst
}

// hashAt is the hash of block k of the chain, in the link at names, given
// prev, the hash of block k-1.
func (ch *Chain) hashAt(at cursor, k int, prev uint64) uint64 {
	l := &ch.links[at.i]
	if l.step == 0 {
		return ch.hashes[l.base+uint64(k-at.start)]
	}
	return StepHash(prev, l.key(k))
}

// next is the hash of the segment's block at offset j, in the link at
// names, given prev, the hash of the block before, and the segment's given
// hashes.
func (s *segment) next(at cursor, j int, prev uint64, given []uint64) uint64 {
	l := &s.links[at.i]
	if l.step == 0 {
		return given[l.base+uint64(j-at.start)]
	}
	return StepHash(prev, l.key(int(s.pos)+j))
}

// append appends the chain's blocks from k, in the link at names, to
// segment s's, joining its last link when it goes on by the same rule or
// both give hashes.
func (c *Chains) append(s int32, ch Chain, at cursor, k int) {
	seg := &c.segs[s]
	for i := at.i; i < len(ch.links); i++ {
		l := ch.links[i]
		if i == at.i && k > at.start { // the chain's blocks from k only
			if l.step == 0 {
				l.base += uint64(k - at.start)
			}
			l.n -= int32(k - at.start)
		}
		seg.n += l.n
		if l.step == 0 {
			if n := len(c.segs); len(c.given) < n {
				c.given = slices.Grow(c.given, n-len(c.given))[:n]
			}
			from := l.base
			l.base = uint64(len(c.given[s]))
			c.given[s] = append(c.given[s], ch.hashes[from:from+uint64(l.n)]...)
		}
		if last := len(seg.links) - 1; last >= 0 {
			if p := &seg.links[last]; p.sameRule(&l) || (p.step == 0 && l.step == 0) {
				p.n += l.n
				p.last = 0
				continue
			}
		}
		seg.links = append(seg.links, slink{link: l})
	}
}

// find is the segment starting with hash h that follows the first attach
// blocks of parent, or -1.
func (c *Chains) find(h uint64, parent, attach int32) int32 {
	id, ok := c.starts.Get(h, placeOfHash(h))
	if !ok {
		return -1
	}
	s := &c.segs[id-1]
	if s.parent != parent || s.attach != attach {
		return -1 // a hash collision
	}
	return id - 1
}

// make creates a segment holding the chain's blocks from k (in the link at
// names), whose first has hash first and follows one of hash h0, with one
// reference (the path's), after parent's first attach blocks; it takes a
// reference on parent.
func (c *Chains) make(ch Chain, at cursor, k int, parent, attach int32, h0, first uint64) int32 {
	seg := segment{links: make([]slink, 0, len(ch.links)-at.i), h0: h0, parent: parent, attach: attach, pos: int32(k), refs: 1}
	var s int32
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
		c.segs[s] = seg
	} else {
		s = int32(len(c.segs))
		c.segs = append(c.segs, seg)
	}
	c.append(s, ch, at, k)
	c.live++
	if p := c.starts.Insert(first, placeOfHash(first)); *p == 0 {
		*p = s + 1
	} else {
		c.clash++ // a hash collision: the segment stays private
	}
	if parent >= 0 {
		c.segs[parent].refs++
	}
	return s
}

// hashAt is the hash of block off of segment s, derived from the nearest
// hash before it the segment knows; the last hash of each link it derives
// through is kept.
func (c *Chains) hashAt(s, off int32) uint64 {
	seg := &c.segs[s]
	var at cursor // the link holding offset off
	at.advanceSeg(seg.links, 0, int(off))
	i, start := at.i, int32(at.start)
	l := &seg.links[i]
	if l.step == 0 {
		return c.given[s][l.base+uint64(off-start)]
	}
	end := off == start+l.n-1
	if end && l.last != 0 {
		return l.last
	}
	h := l.walk(seg.before(i, start, c.givenOf(s)), int(seg.pos+start), int(seg.pos+off+1))
	if end {
		l.last = h
	}
	return h
}

// before is the hash of the block before link i of the segment, which
// starts at offset start, deriving (and keeping) the last hashes of the
// links before it that are not yet known; given is the segment's given
// hashes.
func (s *segment) before(i int, start int32, given []uint64) uint64 {
	j := i // links j..i-1 follow rules and have no last hash yet
	for j > 0 && s.links[j-1].step != 0 && s.links[j-1].last == 0 {
		j--
		start -= s.links[j].n
	}
	h := s.h0
	if j > 0 {
		h = s.lastOf(j-1, given)
	}
	for ; j < i; j++ {
		l := &s.links[j]
		h = l.walk(h, int(s.pos+start), int(s.pos+start+l.n))
		l.last = h
		start += l.n
	}
	return h
}

// lastOf is the hash of link i's last block, known: kept, or given.
func (s *segment) lastOf(i int, given []uint64) uint64 {
	l := &s.links[i]
	if l.step == 0 {
		return given[l.base+uint64(l.n)-1]
	}
	return l.last
}

// givenOf is segment s's given hashes.
func (c *Chains) givenOf(s int32) []uint64 {
	if int(s) < len(c.given) {
		return c.given[s]
	}
	return nil
}

// placeOfHash is a place taken from a key's own bits: the top half of its
// mix. The starts table places a segment's first hash by it, SegKey a
// segment, and leaderPlace a place group's blocks.
func placeOfHash(h uint64) uint32 { return uint32(Mix(h) >> 32) }

// Release returns the references Intern took for path.
func (c *Chains) Release(path []Piece) {
	for _, p := range path {
		c.Drop(p.Seg)
	}
}

// Acquire takes a reference on segment s. A nil store takes none; a
// segment -1 (a Ref made without its chain's path) is a caller's bug.
func (c *Chains) Acquire(s int32) { c.AcquireN(s, 1) }

// Drop returns a reference on segment s; when it was the last, the next
// Collect frees s. A nil store or a segment -1 returns none.
func (c *Chains) Drop(s int32) { c.DropN(s, 1) }

// AcquireN takes n references on segment s, as n calls of Acquire would.
func (c *Chains) AcquireN(s int32, n int) {
	if c == nil {
		return
	}
	if s < 0 {
		panic("block: a reference taken on a block without a segment (a Ref made without its chain's path)")
	}
	c.segs[s].refs += int32(n)
}

// DropN returns n references on segment s, as n calls of Drop would.
func (c *Chains) DropN(s int32, n int) {
	if c == nil || s < 0 || n == 0 {
		return
	}
	if c.segs[s].refs -= int32(n); c.segs[s].refs == 0 {
		c.unref = append(c.unref, s)
	}
}

// Ref is block off of segment s as a Ref: the same Ref as RefAt gives for
// that block from the chain of any path through it.
func (c *Chains) Ref(s, off int32) Ref {
	var r [1]Ref
	return c.AppendRefs(r[:0], s, off, off+1)[0]
}

// AppendRefs appends blocks lo..hi-1 of segment s to dst as Refs (Ref),
// deriving their hashes and each group leader's.
func (c *Chains) AppendRefs(dst []Ref, s, lo, hi int32) []Ref {
	if lo >= hi {
		return dst
	}
	seg := &c.segs[s]
	var at cursor // the link holding offset off
	at.advanceSeg(seg.links, 0, int(lo))
	h := c.hashAt(s, lo)
	lead, place := -1, uint32(0)
	for off := lo; off < hi; off++ {
		if off > lo {
			at.advanceSeg(seg.links, int(off-1), 1)
			h = seg.next(at, int(off), h, c.givenOf(s))
		}
		k := int(seg.pos) + int(off) // the block's chain position
		if g := k &^ (PlaceGroup - 1); g != lead {
			lh := h // the group leader's hash: this block's, or one before
			if g < k {
				ls := s // the segment holding the leader: s or an ancestor
				for g < int(c.segs[ls].pos) {
					ls = c.segs[ls].parent
				}
				lh = c.hashAt(ls, int32(g)-c.segs[ls].pos)
			}
			lead, place = g, leaderPlace(lh)
		}
		dst = append(dst, Ref{Hash: h, Place: place | uint32(k&(PlaceGroup-1)), Seg: s, Off: off})
	}
	return dst
}

// Collect frees the segments left without references, and in turn parents
// left without any, in an order their ids fix, whatever order they lost
// their references in: the ids Intern hands out next depend only on which
// segments were dropped (a caller may drop them in another order and see
// the same ids).
func (c *Chains) Collect() {
	slices.Sort(c.unref)
	for len(c.unref) > 0 {
		s := c.unref[len(c.unref)-1]
		c.unref = c.unref[:len(c.unref)-1]
		seg := &c.segs[s]
		if seg.refs > 0 || seg.n == 0 { // taken up again, or already freed
			continue
		}
		h := c.hashAt(s, 0)
		if p := c.starts.Ptr(h, placeOfHash(h)); p != nil && *p == s+1 {
			c.starts.Delete(h, placeOfHash(h))
		}
		parent := seg.parent
		*seg = segment{}
		if int(s) < len(c.given) {
			c.given[s] = nil
		}
		c.free = append(c.free, s)
		c.live--
		c.Drop(parent)
	}
}

// Hashes is the hashes of segment s's blocks, derived (as AppendRefs
// derives them): a new slice, of the segment's length now.
func (c *Chains) Hashes(s int32) []uint64 {
	refs := c.AppendRefs(nil, s, 0, c.segs[s].n)
	hs := make([]uint64, len(refs))
	for i, r := range refs {
		hs[i] = r.Hash
	}
	return hs
}

// Pos is the chain position of segment s's first block.
func (c *Chains) Pos(s int32) int { return int(c.segs[s].pos) }

// Parent is the segment s follows and how many of its blocks, (-1, 0) for
// a chain's first segment. A freed segment has none: asking is a caller's
// bug (it names a segment it holds no reference on), and panics rather
// than hand back a parent a walk up the tree could loop on.
func (c *Chains) Parent(s int32) (int32, int) {
	seg := &c.segs[s]
	if seg.n == 0 {
		panic(fmt.Sprintf("block: the parent of segment %d, freed (a caller names it without holding a reference)", s))
	}
	return seg.parent, int(seg.attach)
}

// Live is the number of segments alive (collected ones not counted).
func (c *Chains) Live() int { return c.live }

// Collisions is the number of times a chain met, at a segment's start, a
// hash another segment already starts with under a different prefix: a
// 64-bit hash collision. Each such chain was kept apart in a private
// segment.
func (c *Chains) Collisions() int { return c.clash }
