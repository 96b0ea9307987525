package block

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// hashChain makes a hash chain of contents: each hash mixes its parent's.
func hashChain(contents ...uint64) []uint64 {
	out := make([]uint64, len(contents))
	var h uint64
	for k, c := range contents {
		h = Mix(h^Mix(c+0x9e3779b97f4a7c15)) | 1
		out[k] = h
	}
	return out
}

// spell concatenates a path's pieces.
func spell(c *Chains, path []Piece) []uint64 {
	var out []uint64
	for _, p := range path {
		out = append(out, c.Hashes(p.Seg)[:p.N]...)
	}
	return out
}

// TestChainsByHand interns five chains over contents a0..a4 (A), A's first
// two then b2 (B), A then c5 c6 (C: A's next turn), B then d3 (D), and A's
// first three (E):
//   - A: one new segment S0 = a0..a4, path [S0:5].
//   - B: leaves S0 after 2 blocks: S1 = b2, attached at S0's 2; [S0:2 S1:1].
//   - C: runs past S0's end, where no child starts: S0 grows to a0..c6; [S0:7].
//   - D: S0's 2, then S1, past whose end it grows: S1 = b2 d3; [S0:2 S1:2].
//   - E: [S0:3].
//
// S0 is referenced by the five paths and its child S1, S1 by B's and D's
// paths: 6 and 2. Releasing every path frees both.
func TestChainsByHand(t *testing.T) {
	var c Chains
	a := hashChain(10, 11, 12, 13, 14)
	b := append(slices.Clone(a[:2]), hashChain(10, 11, 22)[2])
	cc := hashChain(10, 11, 12, 13, 14, 35, 36)
	d := append(slices.Clone(b), hashChain(10, 11, 22, 43)[3])
	e := a[:3]
	want := [][]Piece{{{0, 5}}, {{0, 2}, {1, 1}}, {{0, 7}}, {{0, 2}, {1, 2}}, {{0, 3}}}
	var paths [][]Piece
	for i, chain := range [][]uint64{a, b, cc, d, e} {
		p := c.Intern(Hashed(chain), nil)
		if !slices.Equal(p, want[i]) {
			t.Fatalf("chain %d: path %v, want %v", i, p, want[i])
		}
		paths = append(paths, p)
	}
	if c.segs[0].refs != 6 || c.segs[1].refs != 2 || c.Live() != 2 {
		t.Fatalf("refs %d %d, live %d; want 6 2 2", c.segs[0].refs, c.segs[1].refs, c.Live())
	}
	if p, at := c.Parent(1); p != 0 || at != 2 || c.Pos(1) != 2 {
		t.Errorf("S1 follows %d at %d, position %d; want 0, 2, 2", p, at, c.Pos(1))
	}
	for i, chain := range [][]uint64{a, b, cc, d, e} {
		if got := spell(&c, paths[i]); !slices.Equal(got, chain) {
			t.Errorf("chain %d spells %x", i, got)
		}
	}
	for _, p := range paths {
		c.Release(p)
	}
	c.Collect()
	if c.Live() != 0 || c.starts.Len() != 0 {
		t.Errorf("after releasing every path: %d segments, %d starts", c.Live(), c.starts.Len())
	}
}

// TestChainsCollision: chains 1 2 and 3 4 make segments 0 and 1; 1 5
// leaves segment 0 after one block, so segment 2 starts with 5 under
// segment 0. Chain 3 5 meets hash 5 at a segment's start under segment 1: a
// collision (hash 5 under two different prefixes). It is counted, and the
// chain gets a private segment 3, so each chain still spells itself and
// 3 5 shares nothing with 1 5.
func TestChainsCollision(t *testing.T) {
	var c Chains
	for _, ch := range [][]uint64{{1, 2}, {3, 4}, {1, 5}} {
		c.Intern(Hashed(ch), nil)
	}
	if c.Collisions() != 0 {
		t.Fatalf("collisions %d before any", c.Collisions())
	}
	p := c.Intern(Hashed([]uint64{3, 5}), nil)
	if want := []Piece{{1, 1}, {3, 1}}; !slices.Equal(p, want) || c.Collisions() != 1 {
		t.Errorf("path %v, collisions %d; want %v, 1", p, c.Collisions(), want)
	}
	if got := spell(&c, p); !slices.Equal(got, []uint64{3, 5}) {
		t.Errorf("spells %v", got)
	}
}

// TestChainsAgainstNames interns random chains over a random tree of
// contents and releases them in random order, interning more in between,
// while holders take and return references on the names of random blocks
// (collecting after each return).
// Every live path must spell its chain, and every block must have one name
// (segment, position): the same hash always at the same segment and chain
// position, and no two hashes under one name. Releasing everything frees
// every segment.
func TestChainsAgainstNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 50 {
		var c Chains
		// A tree of contents: node i has a parent < i; a chain is the path
		// from a root to a node, extended by up to 3 private blocks.
		nodes := 1 + rng.IntN(60)
		parent := make([]int, nodes)
		for i := range parent {
			parent[i] = -1
			if i > 0 && rng.IntN(8) > 0 {
				parent[i] = rng.IntN(i)
			}
		}
		chainOf := func(i int) []uint64 {
			var contents []uint64
			for n := i; n >= 0; n = parent[n] {
				contents = append(contents, uint64(n))
			}
			slices.Reverse(contents)
			for range rng.IntN(4) {
				contents = append(contents, 1000+rng.Uint64N(3))
			}
			return hashChain(contents...)
		}
		type live struct {
			chain []uint64
			path  []Piece
		}
		var lives []live
		// held are block names a table keeps with a reference on their
		// segment (as G1, G2 and the router do), past the paths that made
		// them and across collections.
		type name struct {
			seg int32
			pos int
		}
		type heldName struct {
			name
			hash uint64
		}
		var held []heldName
		for op := range 300 {
			switch k := rng.IntN(6); {
			case k < 2 && len(lives) > 0:
				i := rng.IntN(len(lives))
				c.Release(lives[i].path)
				lives = slices.Delete(lives, i, i+1)
				if rng.IntN(2) == 0 {
					c.Collect()
				}
			case k == 2 && len(lives) > 0:
				l := lives[rng.IntN(len(lives))]
				k := rng.IntN(len(l.chain))
				seg, off := Locate(l.path, k)
				c.Acquire(seg)
				held = append(held, heldName{name{seg, c.Pos(seg) + int(off)}, l.chain[k]})
			case k == 3 && len(held) > 0:
				i := rng.IntN(len(held))
				c.Drop(held[i].seg)
				held = slices.Delete(held, i, i+1)
				c.Collect()
			default:
				chain := chainOf(rng.IntN(nodes))
				lives = append(lives, live{chain, c.Intern(Hashed(chain), nil)})
			}
			names := map[uint64]name{}
			hashes := map[name]uint64{}
			for _, h := range held {
				if got := c.Hashes(h.seg)[h.pos-c.Pos(h.seg)]; got != h.hash {
					t.Fatalf("trial %d op %d: held name %v spells %x, want %x", trial, op, h.name, got, h.hash)
				}
				names[h.hash], hashes[h.name] = h.name, h.hash
			}
			for _, l := range lives {
				if got := spell(&c, l.path); !slices.Equal(got, l.chain) {
					t.Fatalf("trial %d op %d: path %v spells %x, want %x", trial, op, l.path, got, l.chain)
				}
				k := 0
				for _, p := range l.path {
					if c.Pos(p.Seg) != k {
						t.Fatalf("trial %d op %d: segment %d at position %d, its piece at %d", trial, op, p.Seg, c.Pos(p.Seg), k)
					}
					for j := range int(p.N) {
						n, h := name{p.Seg, k + j}, l.chain[k+j]
						if old, ok := names[h]; ok && old != n {
							t.Fatalf("trial %d op %d: block %x named %v and %v", trial, op, h, old, n)
						}
						if old, ok := hashes[n]; ok && old != h {
							t.Fatalf("trial %d op %d: %v names %x and %x", trial, op, n, old, h)
						}
						names[h], hashes[n] = n, h
					}
					k += int(p.N)
				}
			}
		}
		for _, h := range held {
			c.Drop(h.seg)
		}
		for _, l := range lives {
			c.Release(l.path)
		}
		c.Collect()
		if c.Live() != 0 || c.starts.Len() != 0 {
			t.Fatalf("trial %d: after releasing every path: %d segments, %d starts", trial, c.Live(), c.starts.Len())
		}
	}
}

// TestChainsAcquire: a segment a cache holds outlives the paths through
// it, and its parent with it; once freed, it has no parent to ask for.
func TestChainsAcquire(t *testing.T) {
	var c Chains
	a := hashChain(1, 2, 3)
	b := append(slices.Clone(a[:1]), hashChain(1, 9)[1])
	pa, pb := c.Intern(Hashed(a), nil), c.Intern(Hashed(b), nil) // [S0:3], [S0:1 S1:1]
	c.Acquire(1)
	c.Release(pa)
	c.Release(pb)
	c.Collect()
	if c.Live() != 2 || !slices.Equal(c.Hashes(1), b[1:]) {
		t.Fatalf("live %d, S1 %x", c.Live(), c.Hashes(1))
	}
	c.Drop(1)
	if c.Live() != 2 {
		t.Fatalf("live %d before Collect", c.Live())
	}
	c.Collect()
	if c.Live() != 0 {
		t.Fatalf("live %d after the last drop", c.Live())
	}
	// S1, freed, is zeroed: its parent field reads 0, itself, so a walk up
	// from it would never end. Asking panics instead.
	defer func() {
		if recover() == nil {
			t.Error("Parent of a freed segment did not panic")
		}
	}()
	c.Parent(1)
}

// TestCollectOrder: four unrelated chains of one block each are
// segments 0-3. Released in the order 0 1 2 3 or 3 1 0 2 and collected,
// their ids are freed in the same order (Intern takes the last freed
// first), so the next four chains get the same segments either way:
// 0, 1, 2, 3, the lowest freed last.
func TestCollectOrder(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 1, 0, 2}} {
		var c Chains
		var paths [][]Piece
		for i := range 4 {
			paths = append(paths, c.Intern(Hashed(hashChain(uint64(i))), nil))
		}
		for _, i := range order {
			c.Release(paths[i])
		}
		c.Collect()
		var segs []int32
		for i := range 4 {
			segs = append(segs, c.Intern(Hashed(hashChain(uint64(10+i))), nil)[0].Seg)
		}
		if !slices.Equal(segs, []int32{0, 1, 2, 3}) {
			t.Errorf("released in the order %v: the next chains are segments %v, want [0 1 2 3]", order, segs)
		}
	}
}

func BenchmarkIntern(b *testing.B) {
	// 64 prefix groups of 32 blocks, then 32 private blocks: the synthetic
	// workload's shape, as rules and as the same chains' given hashes.
	rules, hashed := make([]Chain, 1024), make([]Chain, 1024)
	for i := range rules {
		rules[i].AppendRule(uint64(i%64), 0, 1, 32)
		rules[i].AppendRule(uint64(1<<32+i), 0, 1, 32)
		hashed[i] = Hashed(rules[i].AppendHashes(nil))
	}
	for _, bc := range []struct {
		name   string
		chains []Chain
	}{{"rules", rules}, {"hashes", hashed}} {
		b.Run(bc.name, func(b *testing.B) {
			var c Chains
			path := make([]Piece, 0, 8)
			for i := 0; i < b.N; i++ {
				path = c.Intern(bc.chains[i&1023], path[:0])
				c.Release(path)
				c.Collect()
			}
		})
	}
}

// TestChainsAcquireGuards: a nil store takes and returns no reference; a
// reference on segment -1 (a Ref made without its chain's path) panics.
func TestChainsAcquireGuards(t *testing.T) {
	var none *Chains
	none.Acquire(3)
	none.Drop(3)
	defer func() {
		if recover() == nil {
			t.Error("Acquire(-1) did not panic")
		}
	}()
	var c Chains
	c.Acquire(-1)
}

// TestChainsRef: Ref of every block of random chains with shared prefixes,
// by its segment and offset, is the Ref RefAt gives on its chain, and
// AppendRefs of each piece of a chain's path gives those Refs.
func TestChainsRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var c Chains
	var chains [][]uint64
	for range 200 {
		var contents []uint64
		if len(chains) > 0 && rng.IntN(4) > 0 {
			base := chains[rng.IntN(len(chains))]
			contents = append(contents, base[:rng.IntN(len(base)+1)]...) // hashes as contents: a shared prefix
		}
		for range 1 + rng.IntN(30) {
			contents = append(contents, rng.Uint64N(4))
		}
		chains = append(chains, contents)
		chain := hashChain(contents...)
		path := c.Intern(Hashed(chain), nil)
		var all []Ref
		for k := range chain {
			want := RefAt(chain, path, k)
			if got := c.Ref(want.Seg, want.Off); got != want {
				t.Fatalf("block %d: Ref %+v, RefAt %+v", k, got, want)
			}
			all = append(all, want)
		}
		var got []Ref
		for _, p := range path {
			lo := rng.Int32N(p.N) // AppendRefs from the middle of a group, too
			got = append(got, all[len(got):len(got)+int(lo)]...)
			got = c.AppendRefs(got, p.Seg, lo, p.N)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("AppendRefs %+v, RefAt %+v", got, all)
		}
	}
}

// TestAppendRun: runs appended in ascending order join where one continues
// the last; anything else (another segment, a gap, a step back) starts a
// run, and an empty run is skipped.
func TestAppendRun(t *testing.T) {
	var rs []Run
	for _, r := range []Run{{1, 0, 2}, {1, 2, 5}, {1, 5, 5}, {1, 6, 7}, {2, 7, 8}, {2, 3, 7}, {1, 7, 9}} {
		rs = AppendRun(rs, r)
	}
	want := []Run{{1, 0, 5}, {1, 6, 7}, {2, 7, 8}, {2, 3, 7}, {1, 7, 9}}
	if !slices.Equal(rs, want) {
		t.Fatalf("runs %v, want %v", rs, want)
	}
	if n := Blocks(rs); n != 5+1+1+4+2 {
		t.Fatalf("Blocks %d", n)
	}
}

// TestAppendPath: blocks 2-8 of a chain whose path is 4 blocks of segment
// 7, 3 of segment 8 and 5 of segment 9 are offsets 2-3 of 7, 0-2 of 8 and
// 0-1 of 9; blocks 4-6 are segment 8 alone, and an empty range is no run.
func TestAppendPath(t *testing.T) {
	path := []Piece{{Seg: 7, N: 4}, {Seg: 8, N: 3}, {Seg: 9, N: 5}}
	if got, want := AppendPath(nil, path, 2, 9), []Run{{7, 2, 4}, {8, 0, 3}, {9, 0, 2}}; !slices.Equal(got, want) {
		t.Errorf("blocks 2-8: %v, want %v", got, want)
	}
	if got, want := AppendPath(nil, path, 4, 7), []Run{{8, 0, 3}}; !slices.Equal(got, want) {
		t.Errorf("blocks 4-6: %v, want %v", got, want)
	}
	if got := AppendPath(nil, path, 5, 5); len(got) != 0 {
		t.Errorf("no blocks: %v", got)
	}
}
