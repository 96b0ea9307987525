package block

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// hashChains is the chain store as it was before chains were kept as
// links: every segment holds its blocks' hashes, and Intern compares a
// chain with a segment hash by hash. It is the oracle Chains is checked
// against (TestChainsAgainstHashes): the same chains, interned, released
// and collected in the same order, must build the same segments.
type hashChains struct {
	segs   []hashSegment
	starts Map[int32] // a segment's first hash -> its id + 1
	free   []int32    // freed ids
	unref  []int32    // segments whose references reached zero since the last Collect
	live   int
	clash  int // segments made private by a hash collision
}

type hashSegment struct {
	hashes []uint64
	parent int32 // -1: a chain's first segment
	attach int32 // the segment follows its parent's first attach blocks
	pos    int32 // chain position of its first block
	refs   int32
}

// Intern appends chain's path to dst, creating the segments it needs, and
// takes a reference on each segment of the path; Release returns them.
func (c *hashChains) Intern(chain []uint64, dst []Piece) []Piece {
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
func (c *hashChains) find(h uint64, parent, attach int32) int32 {
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
func (c *hashChains) make(hashes []uint64, parent, attach, pos int32) int32 {
	seg := hashSegment{hashes: append([]uint64(nil), hashes...), parent: parent, attach: attach, pos: pos, refs: 1}
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

// Release returns the references Intern took for path.
func (c *hashChains) Release(path []Piece) {
	for _, p := range path {
		c.Drop(p.Seg)
	}
}

// Acquire and Drop count references as Chains' do, written out rather
// than shared so that compareStores checks Chains' counts (and the order
// of its unref list) against a count of its own: Acquire takes one on
// segment s; Drop returns one (none for -1, the parent of a chain's first
// segment) and, when it was the last, leaves s to the next Collect. The
// test takes and returns them one at a time, so the oracle has no AcquireN
// or DropN, and no nil store.
func (c *hashChains) Acquire(s int32) { c.segs[s].refs++ }

// Drop: see Acquire.
func (c *hashChains) Drop(s int32) {
	if s < 0 {
		return
	}
	if c.segs[s].refs--; c.segs[s].refs == 0 {
		c.unref = append(c.unref, s)
	}
}

// AppendRefs appends blocks lo..hi-1 of segment s to dst as Refs (Ref),
// mixing each group's leader once.
func (c *hashChains) AppendRefs(dst []Ref, s, lo, hi int32) []Ref {
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
// left without any, those dropped in id order.
func (c *hashChains) Collect() {
	slices.Sort(c.unref)
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
		*seg = hashSegment{}
		c.free = append(c.free, s)
		c.live--
		c.Drop(parent)
	}
}

// TestChainsAgainstHashes interns random chains into Chains and into the
// oracle, hashChains (given the same chains' hashes), and releases them in
// random order with Collect between, while holders take and return
// references on random blocks. The chains are built the ways the workload
// builds them: Mooncake-like trace blocks of a few engine blocks over ids
// with shared prefixes, the last trace block often partial; synthetic
// group prefixes of varying length then a private tail; next turns (a
// prefix of an earlier chain, cut anywhere, then new blocks); and given
// hashes: an earlier chain's, cut and continued by given hashes or by its
// own rules, and short chains over a few small hashes, which collide. After
// every step both stores must agree on every segment (alive, parent,
// attach, position, references), on the free list and the
// starts table, and on the path of each chain; and, every few steps, on
// the Ref of every block of every live segment, hash and place included.
func TestChainsAgainstHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 40 {
		var c Chains
		var o hashChains
		type live struct {
			chain Chain
			ids   []uint64 // a Mooncake-like chain's trace ids; nil otherwise
			path  []Piece
		}
		var lives, past []live
		var held []int32 // segments a holder keeps a reference on
		const step = 16  // a Mooncake-like chain's engine block, in tokens
		ratio := 1 + rng.IntN(8)
		mooncake := func(ids []uint64, n int) Chain {
			var ch Chain
			for i, id := range ids {
				if k := i * ratio; k < n {
					ch.AppendRule(id, -uint64(k*step), step, min(ratio, n-k))
				}
			}
			return ch
		}
		earlier := func() live {
			if len(past) == 0 || rng.IntN(3) == 0 {
				return live{}
			}
			return past[rng.IntN(len(past))]
		}
		for op := range 250 {
			switch k := rng.IntN(10); {
			case k < 3 && len(lives) > 0:
				i := rng.IntN(len(lives))
				c.Release(lives[i].path)
				o.Release(lives[i].path)
				lives = slices.Delete(lives, i, i+1)
				if rng.IntN(2) == 0 {
					c.Collect()
					o.Collect()
				}
			case k == 3 && len(lives) > 0:
				l := lives[rng.IntN(len(lives))]
				seg, _ := Locate(l.path, rng.IntN(l.chain.Len()))
				c.Acquire(seg)
				o.Acquire(seg)
				held = append(held, seg)
			case k == 4 && len(held) > 0:
				i := rng.IntN(len(held))
				c.Drop(held[i])
				o.Drop(held[i])
				held = slices.Delete(held, i, i+1)
				c.Collect()
				o.Collect()
			default:
				var l live
				switch rng.IntN(5) {
				case 0: // Mooncake-like: an earlier chain's ids, cut, then new ones
					e := earlier()
					ids := slices.Clone(e.ids[:rng.IntN(len(e.ids)+1)])
					for range rng.IntN(6) {
						ids = append(ids, rng.Uint64N(6))
					}
					if len(ids) == 0 {
						ids = append(ids, rng.Uint64N(6))
					}
					n := (len(ids)-1)*ratio + 1 + rng.IntN(ratio) // the last trace block full or partial
					l = live{chain: mooncake(ids, n), ids: ids}
				case 1: // synthetic: a group's prefix, then the request's own blocks
					var ch Chain
					ch.AppendRule(1<<40+rng.Uint64N(3), 0, 1, 1+rng.IntN(12))
					ch.AppendRule(1<<41+uint64(op), 0, 1, rng.IntN(20))
					l = live{chain: ch}
				case 2: // a next turn: an earlier chain cut anywhere, then own blocks
					e := earlier()
					l = live{chain: e.chain.Prefix(rng.IntN(e.chain.Len() + 1))}
					l.chain.AppendRule(1<<42+uint64(op), 0, 1, 1+rng.IntN(10))
				case 3: // given hashes: an earlier chain's, cut, then given or by its rules
					e := earlier()
					hs := e.chain.AppendHashes(nil)
					cut := rng.IntN(len(hs) + 1)
					rules := !slices.ContainsFunc(e.chain.links, func(l link) bool { return l.step == 0 })
					if rng.IntN(2) == 0 || !rules {
						for range rng.IntN(6) {
							hs = append(hs[:cut:cut], rng.Uint64()|1)
							cut++
						}
						l = live{chain: Hashed(hs[:cut])}
					} else {
						l = live{chain: Hashed(hs[:cut:cut])}
						at := 0
						for _, ln := range e.chain.links { // e's rules, from the cut on
							if from := max(cut, at); from < at+int(ln.n) {
								l.chain.AppendRule(ln.content, ln.base, ln.step, at+int(ln.n)-from)
							}
							at += int(ln.n)
						}
					}
				default: // a few small hashes: collisions
					hs := make([]uint64, 1+rng.IntN(4))
					for i := range hs {
						hs[i] = 1 + rng.Uint64N(5)
					}
					l = live{chain: Hashed(hs)}
				}
				if l.chain.Len() == 0 {
					continue
				}
				hs := l.chain.AppendHashes(nil)
				l.path = c.Intern(l.chain, nil)
				if want := o.Intern(hs, nil); !slices.Equal(l.path, want) {
					t.Fatalf("trial %d op %d: path %v, oracle %v", trial, op, l.path, want)
				}
				lives, past = append(lives, l), append(past, l)
			}
			compareStores(t, &c, &o, rng.IntN(3) == 0, trial, op)
		}
	}
}

// compareStores fails unless c and o hold the same segments (their first
// hashes included), free ids and starts, and with refs, the same Ref for every block of every live
// segment (by AppendRefs of the whole segment, and by Ref block by block).
func compareStores(t *testing.T, c *Chains, o *hashChains, refs bool, trial, op int) {
	t.Helper()
	if len(c.segs) != len(o.segs) || c.live != o.live || c.clash != o.clash || c.starts.Len() != o.starts.Len() ||
		!slices.Equal(c.free, o.free) || !slices.Equal(c.unref, o.unref) {
		t.Fatalf("trial %d op %d: %d segments, %d live, %d clashes, %d starts, free %v, unref %v; oracle %d, %d, %d, %d, %v, %v",
			trial, op, len(c.segs), c.live, c.clash, c.starts.Len(), c.free, c.unref,
			len(o.segs), o.live, o.clash, o.starts.Len(), o.free, o.unref)
	}
	for s := range c.segs {
		a, b := &c.segs[s], &o.segs[s]
		if int(a.n) != len(b.hashes) || a.parent != b.parent || a.attach != b.attach || a.pos != b.pos || a.refs != b.refs {
			t.Fatalf("trial %d op %d: segment %d: %d blocks after %d:%d at %d, %d refs; oracle %d blocks after %d:%d at %d, %d refs",
				trial, op, s, a.n, a.parent, a.attach, a.pos, a.refs, len(b.hashes), b.parent, b.attach, b.pos, b.refs)
		}
		if a.n == 0 {
			continue
		}
		// The starts entry of its first hash: with as many entries in each
		// and every entry some live segment's first hash, the same tables.
		h, oh := c.hashAt(int32(s), 0), b.hashes[0]
		id, ok := c.starts.Get(h, placeOfHash(h))
		oid, ook := o.starts.Get(oh, placeOfHash(oh))
		if h != oh || id != oid || ok != ook {
			t.Fatalf("trial %d op %d: segment %d: first hash %x, starts %d %v; oracle %x, %d %v", trial, op, s, h, id, ok, oh, oid, ook)
		}
		if !refs {
			continue
		}
		got, want := c.AppendRefs(nil, int32(s), 0, a.n), o.AppendRefs(nil, int32(s), 0, a.n)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d op %d: segment %d: refs %+v, oracle %+v", trial, op, s, got, want)
		}
		for off := range a.n {
			if r := c.Ref(int32(s), off); r != want[off] {
				t.Fatalf("trial %d op %d: segment %d offset %d: Ref %+v, oracle %+v", trial, op, s, off, r, want[off])
			}
		}
	}
}
