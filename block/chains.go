package block

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
// before it), so two chains share exactly their common prefix. A 64-bit
// collision, two different prefixes with the same hash, is not detected
// inside a segment; at a segment's start it gives the chain a private
// segment that no later chain finds, and is counted (Collisions).
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
	live   int
	clash  int // segments made private by a hash collision
}

type segment struct {
	hashes []uint64
	parent int32 // -1: a chain's first segment
	attach int32 // the segment follows its parent's first attach blocks
	pos    int32 // chain position of its first block
	refs   int32
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

// Intern appends chain's path to dst, creating the segments it needs, and
// takes a reference on each segment of the path; Release returns them.
func (c *Chains) Intern(chain []uint64, dst []Piece) []Piece {
	if len(chain) == 0 {
		return dst
	}
	parent, attach := int32(-1), int32(0)
	s := c.find(chain[0], parent, attach)
	for k := 0; k < len(chain); {
		if s < 0 {
			s = c.make(chain[k:], parent, attach, int32(k))
			return append(dst, Piece{Seg: s, N: int32(len(chain) - k)})
		}
		seg := &c.segs[s]
		seg.refs++
		j := 1 // seg.hashes[0] == chain[k]
		k++
		for j < len(seg.hashes) && k < len(chain) && seg.hashes[j] == chain[k] {
			j++
			k++
		}
		next := int32(-1) // the segment the chain goes on in
		if k < len(chain) {
			next = c.find(chain[k], s, int32(j))
			if next < 0 && j == len(seg.hashes) { // runs past the end, where no child starts with its block
				seg.hashes = append(seg.hashes, chain[k:]...)
				j += len(chain) - k
				k = len(chain)
			}
		}
		dst = append(dst, Piece{Seg: s, N: int32(j)})
		parent, attach, s = s, int32(j), next
	}
	return dst
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

// make creates a segment holding hashes, with one reference (the path's),
// after parent's first attach blocks; it takes a reference on parent.
func (c *Chains) make(hashes []uint64, parent, attach, pos int32) int32 {
	seg := segment{hashes: append([]uint64(nil), hashes...), parent: parent, attach: attach, pos: pos, refs: 1}
	var s int32
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
		c.segs[s] = seg
	} else {
		s = int32(len(c.segs))
		c.segs = append(c.segs, seg)
	}
	c.live++
	if p := c.starts.Insert(hashes[0], placeOfHash(hashes[0])); *p == 0 {
		*p = s + 1
	} else {
		c.clash++ // a hash collision: the segment stays private
	}
	if parent >= 0 {
		c.segs[parent].refs++
	}
	return s
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
// mixing each group's leader once.
func (c *Chains) AppendRefs(dst []Ref, s, lo, hi int32) []Ref {
	seg := &c.segs[s]
	lead, place := -1, uint32(0)
	for off := lo; off < hi; off++ {
		k := int(seg.pos) + int(off) // the block's chain position
		if g := k &^ (PlaceGroup - 1); g != lead {
			ls := s // the segment holding the group's leader: s or an ancestor
			for g < int(c.segs[ls].pos) {
				ls = c.segs[ls].parent
			}
			lead, place = g, leaderPlace(c.segs[ls].hashes[g-int(c.segs[ls].pos)])
		}
		dst = append(dst, Ref{Hash: seg.hashes[off], Place: place | uint32(k&(PlaceGroup-1)), Seg: s, Off: off})
	}
	return dst
}

// Collect frees the segments left without references, and in turn parents
// left without any.
func (c *Chains) Collect() {
	for len(c.unref) > 0 {
		s := c.unref[len(c.unref)-1]
		c.unref = c.unref[:len(c.unref)-1]
		seg := &c.segs[s]
		if seg.refs > 0 || seg.hashes == nil { // taken up again, or already freed
			continue
		}
		h := seg.hashes[0]
		if p := c.starts.Ptr(h, placeOfHash(h)); p != nil && *p == s+1 {
			c.starts.Delete(h, placeOfHash(h))
		}
		parent := seg.parent
		*seg = segment{}
		c.free = append(c.free, s)
		c.live--
		c.Drop(parent)
	}
}

// Hashes is segment s's blocks. The slice is valid until s is freed or
// grows; its length is the segment's length now.
func (c *Chains) Hashes(s int32) []uint64 { return c.segs[s].hashes }

// Pos is the chain position of segment s's first block.
func (c *Chains) Pos(s int32) int { return int(c.segs[s].pos) }

// Parent is the segment s follows and how many of its blocks, (-1, 0) for
// a chain's first segment.
func (c *Chains) Parent(s int32) (int32, int) { return c.segs[s].parent, int(c.segs[s].attach) }

// Live is the number of segments alive (collected ones not counted).
func (c *Chains) Live() int { return c.live }

// Collisions is the number of times a chain met, at a segment's start, a
// hash another segment already starts with under a different prefix: a
// 64-bit hash collision. Each such chain was kept apart in a private
// segment.
func (c *Chains) Collisions() int { return c.clash }
