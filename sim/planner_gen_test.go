package sim

import (
	"flag"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

var (
	plannerN    = flag.Int("planner.n", 150, "planner cases TestGeneratedPlanner runs")
	plannerSeed = flag.Uint64("planner.seed", 1, "first seed TestGeneratedPlanner runs (with -planner.n=1: replay one case)")
)

// TestGeneratedPlanner runs random small scenarios with a planner
// (scengen.GeneratePlanner) with --check on, so that every change the
// planner reads is checked counted after every event, and every event's
// twin, twice: with the decode fast-forward at GOMAXPROCS 1, and pass by
// pass at GOMAXPROCS 2. No invariant may break, except by vLLM 0.11's
// admission stall in a case that runs it, and both runs must give the same
// digest, twin digests and planner decisions. Every action must be
// reached over the cases.
func TestGeneratedPlanner(t *testing.T) {
	actions := map[string]int{}
	samePlanner := func(a, b outcome) string {
		if !slices.EqualFunc(a.res.Planner, b.res.Planner, sameDecision) {
			return "the planner decided differently pass by pass"
		}
		return ""
	}
	eachGenerated(t, scengen.GeneratePlanner, *plannerSeed, *plannerN, "TestGeneratedPlanner", "planner", samePlanner, func(_ *scenarios.Scenario, a outcome) {
		if a.err == nil {
			for _, r := range a.res.Planner {
				actions[r.Action]++
			}
		}
	})
	t.Logf("%d cases; decisions by action: %v", *plannerN, actions)
	if *plannerN >= 100 {
		for _, a := range report.PlannerActions {
			if actions[a] == 0 {
				t.Errorf("no case had a decision %s", a)
			}
		}
	}
}
