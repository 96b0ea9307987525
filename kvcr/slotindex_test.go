package kvcr

import (
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// TestSlotIndexAgainstMap fills and frees 3000 slots at random with the
// blocks of random 20-block chains (so keys crowd their places' groups as
// real chains do) and checks after every step that the index finds
// exactly the slots a plain map says hold each hash, absent hashes
// included. The table grows many times and deletes shift long runs. It
// runs with the layout a 3000-block pool gets (7 distance bits, a 13-bit
// tag) and with layouts that exercise the fallbacks: distances of 3 and
// more read from the slots, a 1-bit tag that matches half the other
// hashes, and no tag at all.
func TestSlotIndexAgainstMap(t *testing.T) {
	t.Run("pool of 3000", func(t *testing.T) { testSlotIndex(t, newSlotIndex(3000)) })
	t.Run("2 distance bits", func(t *testing.T) { testSlotIndex(t, newSlotIndexBits(20, 2)) })
	t.Run("1 tag bit", func(t *testing.T) { testSlotIndex(t, newSlotIndexBits(24, 7)) })
	t.Run("no tag", func(t *testing.T) { testSlotIndex(t, newSlotIndexBits(30, 2)) })
}

func testSlotIndex(t *testing.T, x slotIndex) {
	r := rand.New(rand.NewPCG(3, 4))
	var refs []block.Ref
	for range 400 {
		chain := make([]uint64, 20)
		for i := range chain {
			chain[i] = r.Uint64() | 1
		}
		for k := range chain {
			refs = append(refs, block.RefOf(chain, k))
		}
	}
	slots := make([]block.Node[slot], 3000)
	want := map[uint64]int32{}
	for step := range 20000 {
		s := int32(r.IntN(len(slots)))
		if slots[s].V.hash != 0 {
			x.remove(slots, s)
			delete(want, slots[s].V.hash)
			slots[s].V = slot{}
		} else {
			ref := refs[r.IntN(len(refs))]
			if _, ok := want[ref.Hash]; ok {
				continue
			}
			slots[s].V = slot{hash: ref.Hash, place: ref.Place}
			x.insert(slots, s)
			want[ref.Hash] = s
		}
		if x.n != len(want) {
			t.Fatalf("step %d: %d entries, want %d", step, x.n, len(want))
		}
		if step%50 != 0 {
			continue
		}
		for _, ref := range refs {
			w, ok := want[ref.Hash]
			if !ok {
				w = -1
			}
			if got := x.find(slots, ref.Hash, ref.Place); got != w {
				t.Fatalf("step %d: hash %x in slot %d, want %d", step, ref.Hash, got, w)
			}
		}
	}
}
