package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// TestHoldings: a 6-block chain A (hashes 1-6) and a chain B that shares
// its first 2 blocks (1, 2, then 20, 21). Worker 0 holds A's blocks 0-3 in
// G1 and 2-5 in G2 (blocks 2, 3 in both: 6 blocks, not 8); worker 1 holds
// B's blocks 0-3 in G2 (1, 2, 20, 21); worker 3 holds A's block 5 in G1.
// Held: 6, 4, 0, 1. Unique: worker 0 holds 1, 2 with worker 1 and 6 with
// worker 3, leaving 3, 4, 5: 3; worker 1 leaves 20, 21: 2; worker 3 none.
// Worker 2 holds nothing: 0 and 0.
func TestHoldings(t *testing.T) {
	var chains block.Chains
	ix := NewIndex(&chains)
	a := chains.Intern(block.Hashed([]uint64{1, 2, 3, 4, 5, 6}), nil)
	b := chains.Intern(block.Hashed([]uint64{1, 2, 20, 21}), nil)
	add := func(w int32, t Tier, path []block.Piece, lo, hi int) {
		for _, r := range runsOf(path, lo, hi) {
			ix.Add(w, t, r)
		}
	}
	add(0, G1, a, 0, 4)
	add(0, G2, a, 2, 6)
	add(1, G2, b, 0, 4)
	add(3, G1, a, 5, 6)
	want := []Holding{{6, 3}, {4, 2}, {0, 0}, {1, 0}}
	if got := ix.Holdings(nil); !slices.Equal(got, want) {
		t.Errorf("holdings %v, want %v", got, want)
	}
	if got := ix.Holdings(make([]Holding, 6)); !slices.Equal(got, append(want, Holding{}, Holding{})) {
		t.Errorf("holdings into 6 workers %v", got)
	}
}

// TestHoldingsAgainstBlocks applies random adds and removes of runs of
// random chains sharing prefixes (as TestIndexAgainstBlockIndex does) to
// an Index and, block by block, to a plain map of each worker's tiers by
// block hash, and after every update compares Holdings with the map's
// counts: a worker's blocks with any tier, and those of them no other
// worker has any tier of.
func TestHoldingsAgainstBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 60 {
		var chains block.Chains
		ix := NewIndex(&chains)
		hashes, paths := randomChains(rng, &chains)
		workers := int32(1 + rng.IntN(12))
		tiers := make([]map[uint64]uint8, workers) // by worker: block hash -> tier mask
		for w := range tiers {
			tiers[w] = map[uint64]uint8{}
		}
		for op := range 200 {
			u := randomUpdate(rng, hashes, workers)
			for _, h := range hashes[u.c][u.lo:u.hi] {
				if u.add {
					tiers[u.w][h] |= 1 << u.tier
				} else if tiers[u.w][h] &^= 1 << u.tier; tiers[u.w][h] == 0 {
					delete(tiers[u.w], h)
				}
			}
			u.apply(ix, paths[u.c])
			want := make([]Holding, workers)
			for w := range tiers {
				for h := range tiers[w] { // counts: the map's order does not matter
					want[w].Held++
					others := 0
					for v := range tiers {
						if v != w && tiers[v][h] != 0 {
							others++
						}
					}
					if others == 0 {
						want[w].Unique++
					}
				}
			}
			if got := ix.Holdings(make([]Holding, workers)); !slices.Equal(got, want) {
				t.Fatalf("trial %d op %d: holdings by runs %v, by blocks %v", trial, op, got, want)
			}
		}
	}
}

// TestHoldingsEventDelay: with a 5 ms delay, worker 1 stores blocks 42, 43
// in G1 at 0 and worker 0 stores block 42 in G2 at 2 ms; worker 1 drops
// 43 at 8 ms. Up to 4 ms the router has seen nothing: {0 0} {0 0}. At 5
// ms it has seen worker 1's 2 blocks, both its own: {0 0} {2 2}. At 7 ms
// it has seen worker 0's 42 too, which is then no longer worker 1's alone:
// {1 0} {2 1}. At 12 ms it still has 43 on worker 1 (the drop reaches it
// at 13 ms); at 13 ms not: {1 0} {1 0}.
func TestHoldingsEventDelay(t *testing.T) {
	r, tab, _ := newWithLife(Config{Policy: KVAware, OverlapCredit: 1, PrefillLoadScale: 1, EventDelay: 5 * des.Millisecond, BlockSize: 16, Chains: &block.Chains{}}, nil)
	tab.Add(lifecycle.Ready)
	tab.Add(lifecycle.Ready)
	r.Stored(0, 1, G1, blocks(r, []uint64{42, 43}, 0, 2))
	r.Stored(2*des.Millisecond, 0, G2, blocks(r, []uint64{42}, 0, 1))
	r.Removed(8*des.Millisecond, 1, G1, blocks(r, []uint64{42, 43}, 1, 2))
	for _, c := range []struct {
		at   des.Time
		want []Holding
	}{
		{1 * des.Millisecond, []Holding{{0, 0}, {0, 0}}},
		{4 * des.Millisecond, []Holding{{0, 0}, {0, 0}}},
		{5 * des.Millisecond, []Holding{{0, 0}, {2, 2}}},
		{7 * des.Millisecond, []Holding{{1, 0}, {2, 1}}},
		{12 * des.Millisecond, []Holding{{1, 0}, {2, 1}}},
		{13 * des.Millisecond, []Holding{{1, 0}, {1, 0}}},
	} {
		if got := r.Holdings(c.at); !slices.Equal(got, c.want) {
			t.Errorf("at %v: %v, want %v", c.at, got, c.want)
		}
	}
}
