package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// TestSpans: adding [2,4), [6,8) and [4,6) leaves one span [2,8) and
// reports 2, 2 and 2 new offsets; adding [0,10) then adds 4. Taking [3,5)
// out leaves [0,3) and [5,10) and takes 2; taking [0,10) takes the other 8.
func TestSpans(t *testing.T) {
	var s spans
	for _, c := range []struct {
		lo, hi int32
		n      int
	}{{2, 4, 2}, {6, 8, 2}, {4, 6, 2}, {0, 10, 4}, {3, 7, 0}} {
		if n := s.add(c.lo, c.hi); n != c.n {
			t.Errorf("add [%d,%d): %d new, want %d (now %v)", c.lo, c.hi, n, c.n, s)
		}
	}
	if !slices.Equal(s, spans{{Lo: 0, Hi: 10}}) {
		t.Fatalf("spans %v", s)
	}
	if n := s.sub(3, 5); n != 2 || !slices.Equal(s, spans{{Lo: 0, Hi: 3}, {Lo: 5, Hi: 10}}) {
		t.Fatalf("sub [3,5): took %d, left %v", n, s)
	}
	if e := s.end(1); e != 3 {
		t.Errorf("end(1) = %d, want 3", e)
	}
	if e := s.end(3); e != 3 {
		t.Errorf("end(3) = %d, want 3 (not held)", e)
	}
	if n := s.sub(0, 10); n != 8 || len(s) != 0 {
		t.Fatalf("sub [0,10): took %d, left %v", n, s)
	}
}

// TestIndexAgainstBlockIndex applies the same random adds and removes of
// runs of random chains (over a random tree of contents, so they share
// prefixes) to the per-block oracle (blockIndex), block by block, and to
// Index, by runs of segments, and requires the same answers after every update:
// facts, the prefixes and hint runs of every chain from random blocks, and
// the tier mask of random blocks.
func TestIndexAgainstBlockIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 60 {
		var chains block.Chains
		old, idx := newBlockIndex(), NewIndex(&chains)
		hashes, paths := randomChains(rng, &chains)
		workers := int32(1 + rng.IntN(12))
		for op := range 200 {
			u := randomUpdate(rng, hashes, workers)
			for k := u.lo; k < u.hi; k++ {
				if u.add {
					old.Add(u.w, u.tier, block.RefOf(hashes[u.c], k))
				} else {
					old.Remove(u.w, u.tier, block.RefOf(hashes[u.c], k))
				}
			}
			u.apply(idx, paths[u.c])
			if a, b := old.Facts(), idx.Facts(); a != b {
				t.Fatalf("trial %d op %d: facts %d per block, %d by runs", trial, op, a, b)
			}
			for c := range hashes {
				from := rng.IntN(len(hashes[c]))
				for _, q := range []struct{ outer, inner Tiers }{{InEither, InG1}, {InG2, 0}} {
					want := old.runs(hashes[c], from, uint8(q.outer), uint8(q.inner), nil)
					got := idx.runs(paths[c], from, q.outer, q.inner, nil, nil)
					if !slices.Equal(got, want) {
						t.Fatalf("trial %d op %d: chain %d from %d tiers %v/%v: by runs %+v, per block %+v",
							trial, op, c, from, q.outer, q.inner, got, want)
					}
					// The walk of some workers only is the full walk's
					// entries for them.
					var only []int32
					for w := range workers {
						if rng.IntN(3) == 0 {
							only = append(only, w)
						}
					}
					want = slices.DeleteFunc(want, func(p Prefix) bool { return !slices.Contains(only, p.Worker) })
					if got := idx.runs(paths[c], from, q.outer, q.inner, append(only, workers+5), nil); !slices.Equal(got, want) {
						t.Fatalf("trial %d op %d: chain %d from %d tiers %v/%v, workers %v only: %+v, want %+v",
							trial, op, c, from, q.outer, q.inner, only, got, want)
					}
				}
				seg, off := locate(paths[c], from)
				for w := range workers {
					if a, b := old.Mask(w, block.RefOf(hashes[c], from)), idx.Mask(w, seg, off); a != b {
						t.Fatalf("trial %d op %d: worker %d block %d of chain %d: mask %b per block, %b by runs", trial, op, w, from, c, a, b)
					}
				}
			}
		}
		for w := range workers { // empty it: every segment reference returns
			for c, path := range paths {
				for _, r := range runsOf(path, 0, len(hashes[c])) {
					idx.Remove(w, G1, r)
					idx.Remove(w, G2, r)
				}
			}
		}
		for _, p := range paths {
			chains.Release(p)
		}
		chains.Collect()
		if idx.Facts() != 0 || chains.Live() != 0 {
			t.Fatalf("trial %d: emptied, %d facts and %d live segments remain", trial, idx.Facts(), chains.Live())
		}
	}
}

// update is a random add (or remove) by worker w of blocks [lo, hi) of
// chain c in tier.
type update struct {
	c, lo, hi int
	w         int32
	tier      Tier
	add       bool
}

// randomUpdate draws an update of one of the chains (their hashes) by one
// of workers: two adds in three.
func randomUpdate(rng *rand.Rand, hashes [][]uint64, workers int32) update {
	c := rng.IntN(len(hashes))
	lo := rng.IntN(len(hashes[c]))
	hi := lo + 1 + rng.IntN(len(hashes[c])-lo)
	w, tier, add := rng.Int32N(workers), Tier(rng.IntN(2)), rng.IntN(3) > 0
	return update{c: c, lo: lo, hi: hi, w: w, tier: tier, add: add}
}

// apply makes u in ix, by runs of the segments of path, its chain's.
func (u update) apply(ix *Index, path []block.Piece) {
	for _, r := range runsOf(path, u.lo, u.hi) {
		if u.add {
			ix.Add(u.w, u.tier, r)
		} else {
			ix.Remove(u.w, u.tier, r)
		}
	}
}

// runsOf splits blocks [lo, hi) of a path's chain into runs of segments.
func runsOf(path []block.Piece, lo, hi int) []block.Run {
	var out []block.Run
	pos := 0
	for _, p := range path {
		a, b := max(lo, pos), min(hi, pos+int(p.N))
		if a < b {
			out = append(out, block.Run{Seg: p.Seg, Lo: int32(a - pos), Hi: int32(b - pos)})
		}
		pos += int(p.N)
	}
	return out
}

// locate is block k of a path's chain as segment and offset.
func locate(path []block.Piece, k int) (int32, int32) {
	for _, p := range path {
		if k < int(p.N) {
			return p.Seg, int32(k)
		}
		k -= int(p.N)
	}
	panic("block past the chain's end")
}

// randomChains interns up to 12 random chains into chains: paths down a
// random forest of up to 30 blocks, some with up to 3 blocks of their own,
// so that they share prefixes. It returns each chain's hashes and path.
func randomChains(rng *rand.Rand, chains *block.Chains) (hashes [][]uint64, paths [][]block.Piece) {
	nodes := 1 + rng.IntN(30)
	parent := make([]int, nodes)
	for i := range parent {
		parent[i] = -1
		if i > 0 && rng.IntN(6) > 0 {
			parent[i] = rng.IntN(i)
		}
	}
	for range 1 + rng.IntN(12) {
		var contents []uint64
		for n := rng.IntN(nodes); n >= 0; n = parent[n] {
			contents = append(contents, uint64(n))
		}
		slices.Reverse(contents)
		for range rng.IntN(4) {
			contents = append(contents, 100+rng.Uint64N(3))
		}
		chain := make([]uint64, len(contents))
		var h uint64
		for k, c := range contents {
			h = block.Mix(h^block.Mix(c+7)) | 1
			chain[k] = h
		}
		hashes = append(hashes, chain)
		paths = append(paths, chains.Intern(block.Hashed(chain), nil))
	}
	return hashes, paths
}
