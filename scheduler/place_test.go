package scheduler

import (
	"testing"

	"github.com/kvsim/kvsim/block"
)

// TestPlace: round robin (Place is kv_aware's choice whatever the policy)
// over 4 workers, credits 1 a G1 block and 0.75 a G2 one, an 8-block
// chain. Worker 1's G2 holds blocks 0-3: cost 8 - 3 = 5; worker 2's G1
// holds 0-1: 8 - 2 = 6; worker 0 holds none: 8; worker 3 holds all 8 in
// G1 (cost 0) but drains: never placed. Worker 1 wins. Two more blocks
// counted on worker 1 make it 7: worker 2. With 3 on worker 1 and 4 on
// worker 2, workers 0 and 1 tie at 8 (worker 2: 10): the lowest id, 0.
// Place accounts for nothing and moves no round-robin turn; with no
// worker ready it reports false.
func TestPlace(t *testing.T) {
	r, tab := newRouter(t, RoundRobin, 4)
	chain := chainOf(8)
	r.Stored(0, 1, G2, blocks(r, chain, 0, 4))
	r.Stored(0, 2, G1, blocks(r, chain, 0, 2))
	r.Stored(0, 3, G1, blocks(r, chain, 0, 8))
	setReady(tab, 3, false)
	path := r.cfg.Chains.Intern(block.Hashed(chain), nil)
	for _, c := range []struct {
		extra []int
		want  int32
	}{
		{nil, 1},
		{[]int{0, 2}, 2},
		{[]int{0, 3, 4}, 0},
	} {
		if w, ok := r.Place(0, path, 8, c.extra); !ok || w != c.want {
			t.Errorf("extra %v: worker %d (%v), want %d", c.extra, w, ok, c.want)
		}
	}
	if r.next != 0 || r.loads[0] != (load{}) || r.loads[1] != (load{}) || r.loads[2] != (load{}) {
		t.Errorf("Place accounted: next %d, loads %+v", r.next, r.loads)
	}
	for w := range int32(3) {
		setReady(tab, w, false)
	}
	if w, ok := r.Place(0, path, 8, nil); ok {
		t.Errorf("no worker ready: placed on %d", w)
	}
}
