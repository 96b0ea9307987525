package workload

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// rechunkOracle is Rechunk as its doc comment reads, one ChainHash per
// trace block an engine block overlaps: the reference the faster
// rechunker is checked against.
func rechunkOracle(ids []uint64, traceBlock, engineBlock, inputTokens int) []uint64 {
	n := inputTokens / engineBlock
	out := make([]uint64, n)
	var parent uint64
	for k := range n {
		start, end := k*engineBlock, (k+1)*engineBlock-1
		i0, i1 := start/traceBlock, end/traceBlock
		h := parent
		for i := i0; i <= i1; i++ {
			h = ChainHash(h, ids[i], uint64(start-i0*traceBlock))
		}
		out[k] = h
		parent = h
	}
	return out
}

// TestRechunkOracle: Rechunk equals rechunkOracle for block sizes that
// divide each other, straddle, or exceed one another, and prompts that end
// anywhere in their last trace block.
func TestRechunkOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range [][2]int{{512, 16}, {512, 1}, {16, 16}, {10, 4}, {512, 48}, {4, 10}, {3, 7}, {1, 1}} {
		for range 50 {
			ids := make([]uint64, 1+rng.IntN(12))
			for i := range ids {
				ids[i] = rng.Uint64N(8) // small ids: repeats within and across chains
			}
			in := rng.IntN(c[0]*len(ids)) + 1
			if got, want := Rechunk(ids, c[0], c[1], in), rechunkOracle(ids, c[0], c[1], in); !slices.Equal(got, want) {
				t.Fatalf("trace %d engine %d, %d tokens over %v: got %x, want %x", c[0], c[1], in, ids, got, want)
			}
		}
	}
}

// FuzzRechunk: Rechunk equals rechunkOracle on any ids and sizes.
func FuzzRechunk(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint16(512), uint16(16), uint32(600))
	f.Add([]byte{1, 2, 3}, uint16(10), uint16(4), uint32(30))
	f.Add([]byte{0}, uint16(4), uint16(10), uint32(4))
	f.Fuzz(func(t *testing.T, raw []byte, traceBlock, engineBlock uint16, in uint32) {
		if traceBlock == 0 || engineBlock == 0 || len(raw) == 0 {
			return
		}
		ids := make([]uint64, len(raw))
		for i, b := range raw {
			ids[i] = uint64(b) * 0x9e3779b97f4a7c15
		}
		n := int(in)%(int(traceBlock)*len(ids)) + 1
		if got, want := Rechunk(ids, int(traceBlock), int(engineBlock), n), rechunkOracle(ids, int(traceBlock), int(engineBlock), n); !slices.Equal(got, want) {
			t.Fatalf("got %x, want %x", got, want)
		}
	})
}
