package workload

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestSyntheticPrevTurns: constant arrivals, 3 turns a session and no
// think time: a session's three turns arrive at its start, before the next
// session (1 s later at 3 requests a second), so requests 0, 1, 2 are
// session 0's turns and 3, 4, 5 session 1's: previous turns -1, 0, 1, -1,
// 3, 4.
func TestSyntheticPrevTurns(t *testing.T) {
	cfg := Synthetic{Requests: 6, Rate: 3, Arrival: ArrivalConstant, InputMean: 100, OutputMean: 10, Turns: 3, BlockSize: 16}
	got := readAll(t, NewGenerator(cfg, des.NewRNG(1)))
	var ps []int64
	for _, r := range got {
		ps = append(ps, r.Prev)
	}
	if want := []int64{-1, 0, 1, -1, 3, 4}; !slices.Equal(ps, want) {
		t.Errorf("prev %v, want %v", ps, want)
	}
	if got[3].Arrival != des.Second || got[5].Arrival != des.Second {
		t.Errorf("session 1 at %v and %v, want 1s", got[3].Arrival, got[5].Arrival)
	}
}

// TestSyntheticPrevTurnsInterleaved: 1000 sessions of 3 turns, 5 s of think
// time, interleaved. Each session is a line of three requests linked by
// Prev: 1000 first turns (-1), each request the previous turn of at most
// one later request, no line longer than 3; a turn's prompt chain extends
// its previous turn's; and some previous turn is not the request just
// before (the sessions interleave).
func TestSyntheticPrevTurnsInterleaved(t *testing.T) {
	got := readAll(t, NewGenerator(synth, des.NewRNG(7)))
	firsts, interleaved := 0, false
	depth := make([]int, len(got))
	taken := make([]bool, len(got))
	for i, r := range got {
		p := r.Prev
		if p < 0 {
			firsts, depth[i] = firsts+1, 1
			continue
		}
		if p >= r.ID || taken[p] || got[p].Arrival > r.Arrival {
			t.Fatalf("request %d: previous turn %d (taken %v)", i, p, taken[p])
		}
		taken[p], depth[i] = true, depth[p]+1
		interleaved = interleaved || p != r.ID-1
		if hp, hr := hashes(got[p]), hashes(r); !slices.Equal(hp, hr[:len(hp)]) {
			t.Errorf("request %d does not extend its previous turn %d", i, p)
		}
	}
	if firsts != 1000 || slices.Max(depth) != 3 || !interleaved {
		t.Errorf("%d first turns, longest session %d, interleaved %v; want 1000, 3, true", firsts, slices.Max(depth), interleaved)
	}
}
