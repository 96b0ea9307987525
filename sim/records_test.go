package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReorderReleasesInIDOrder puts ids in a fixed order and checks what
// comes out after each put. Ids 2, 0, 1, 5, 3, 4: 2 is held; 0 releases 0;
// 1 releases 1 and the held 2; 5 is held; 3 releases 3; 4 releases 4 and 5.
func TestReorderReleasesInIDOrder(t *testing.T) {
	var r reorder[int64]
	var out []int64
	sink := func(v *int64) error { out = append(out, *v); return nil }
	want := [][]int64{{}, {0}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3, 4, 5}}
	for i, id := range []int64{2, 0, 1, 5, 3, 4} {
		if err := r.put(id, id, sink); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, want[i]) {
			t.Fatalf("after put %d: out %v, want %v", id, out, want[i])
		}
	}
	if r.pending() != 0 {
		t.Fatalf("%d rows still held", r.pending())
	}
}

// TestReorderRandom puts random permutations of dense ids, with windows
// that make the ring grow while rows are held across its wrap, and checks
// that every id comes out once, in order, and that pending counts what is
// held: the count of ids put and not yet released.
func TestReorderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(2000)
		window := 1 + rng.IntN(300)
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
		for i := range ids { // shuffle within a window: ids end near their order
			j := min(n-1, i+rng.IntN(window))
			ids[i], ids[j] = ids[j], ids[i]
		}
		var r reorder[int64]
		var out []int64
		sink := func(v *int64) error { out = append(out, *v); return nil }
		for k, id := range ids {
			if err := r.put(id, id*10, sink); err != nil {
				t.Fatal(err)
			}
			if got, want := r.pending(), k+1-len(out); got != want {
				t.Fatalf("trial %d: after %d puts pending %d, want %d", trial, k+1, got, want)
			}
		}
		if len(out) != n {
			t.Fatalf("trial %d: %d rows out of %d", trial, len(out), n)
		}
		for i, v := range out {
			if v != int64(i)*10 {
				t.Fatalf("trial %d: row %d is %d, want %d", trial, i, v, i*10)
			}
		}
	}
}
