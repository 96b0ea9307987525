package page

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// TestSelectionWords: every pick has words of its own, for one worker and
// for several; the cache-aware picks say they read the router's view.
func TestSelectionWords(t *testing.T) {
	want := map[scenarios.Pick][2]string{
		scenarios.PickBusiest:    {"the busiest ready worker", "the 8 busiest ready workers"},
		scenarios.PickIdlest:     {"the idlest ready worker", "the 8 idlest ready workers"},
		scenarios.PickMostCached: {"the most cached (G2) ready worker", "the 8 most cached (G2) ready workers"},
		scenarios.PickRandom:     {"the randomly picked ready worker", "the 8 randomly picked ready workers"},
		scenarios.PickHighestID:  {"the highest-id ready worker", "the 8 highest-id ready workers"},
		scenarios.PickLeastCached: {"the ready worker holding the fewest blocks in G1 and G2, as the router sees them",
			"the 8 ready workers holding the fewest blocks in G1 and G2, as the router sees them"},
		scenarios.PickFewestUnique: {"the ready worker holding the fewest blocks no other worker holds, as the router sees them",
			"the 8 ready workers holding the fewest blocks no other worker holds, as the router sees them"},
	}
	for _, p := range scenarios.Picks { // every pick, in the scenario's order
		w, ok := want[p]
		if !ok {
			t.Errorf("pick %s: no words in this test", p)
			continue
		}
		for i, n := range []int{1, 8} {
			if got := selectionWords(&scenarios.Selection{Count: n, Pick: p}); got != w[i] {
				t.Errorf("%s, %d: %q, want %q", p, n, got, w[i])
			}
		}
	}
	if got := selectionWords(&scenarios.Selection{IDs: []int{0, 3}}); got != "workers 0, 3" {
		t.Errorf("a list: %q", got)
	}
}

// TestRunHeadlineOne: a run of one request says "1 request".
func TestRunHeadlineOne(t *testing.T) {
	var s results.Summary
	s.Requests.Total, s.Requests.Completed = 1, 1
	if got := runHeadline(&s); !strings.HasPrefix(got, "1 request, 1 completed;") {
		t.Errorf("headline %q", got)
	}
}
