package kvcr

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortByHash: the radix sort agrees with a stable comparison sort on
// random hashes, on hashes sharing bytes (passes skipped), and on repeated
// hashes (stability), at sizes on both sides of radixMin.
func TestSortByHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tmp []hashPos
	for trial := range 400 {
		n := rng.IntN(3 * radixMin)
		ps := make([]hashPos, n)
		for i := range ps {
			h := rng.Uint64()
			switch trial % 4 {
			case 1: // a few low bytes vary
				h &= 0xffff
			case 2: // high bytes vary, low bytes shared
				h = h&^0xffffff | 0xabcdef
			case 3: // many repeats
				h %= 7
			}
			ps[i] = hashPos{h, i}
		}
		want := slices.Clone(ps)
		slices.SortStableFunc(want, func(a, b hashPos) int { return cmp.Compare(a.hash, b.hash) })
		tmp = sortByHash(ps, tmp)
		if !slices.Equal(ps, want) {
			t.Fatalf("trial %d (%d blocks): got %v, want %v", trial, n, ps, want)
		}
	}
}

// BenchmarkSortByHash sorts 1,700 random hashes, about a conversation-trace
// pull; BenchmarkSortByHashCompare sorts them with slices.SortFunc, as
// before.
func BenchmarkSortByHash(b *testing.B) {
	ps, work := randomHashes(1700), make([]hashPos, 1700)
	var tmp []hashPos
	for b.Loop() {
		copy(work, ps)
		tmp = sortByHash(work, tmp)
	}
}

func BenchmarkSortByHashCompare(b *testing.B) {
	ps, work := randomHashes(1700), make([]hashPos, 1700)
	for b.Loop() {
		copy(work, ps)
		slices.SortFunc(work, func(a, b hashPos) int { return cmp.Compare(a.hash, b.hash) })
	}
}

func randomHashes(n int) []hashPos {
	rng := rand.New(rand.NewPCG(5, 6))
	ps := make([]hashPos, n)
	for i := range ps {
		ps[i] = hashPos{rng.Uint64(), i}
	}
	return ps
}
