package sim

import (
	"flag"
	"runtime"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/internal/scengen"
	"github.com/kvsim/kvsim/report"
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
	dir := t.TempDir()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	actions := map[string]int{}
	for seed := *plannerSeed; seed < *plannerSeed+uint64(*plannerN); seed++ {
		c := scengen.GeneratePlanner(seed)
		path, err := c.Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := loadCase(path)
		if err != nil {
			t.Fatalf("seed %d: the generator wrote an invalid scenario: %v", seed, err)
		}
		runtime.GOMAXPROCS(1)
		a := runTwinned(sc, false)
		runtime.GOMAXPROCS(2)
		b := runTwinned(sc, true)
		msg := verdict(a, b)
		if msg == "" && a.err == nil {
			msg = sameTwins(a.res, b.res)
			if msg == "" && !slices.EqualFunc(a.res.Planner, b.res.Planner, sameDecision) {
				msg = "the planner decided differently pass by pass"
			}
		}
		if msg != "" {
			t.Errorf("seed %d: %s\n%s", seed, msg, save(t, c, "TestGeneratedPlanner", "planner"))
			continue
		}
		if a.err == nil {
			for _, r := range a.res.Planner {
				actions[r.Action]++
			}
		}
	}
	t.Logf("%d cases; decisions by action: %v", *plannerN, actions)
	if *plannerN >= 100 {
		for _, a := range report.PlannerActions {
			if actions[a] == 0 {
				t.Errorf("no case had a decision %s", a)
			}
		}
	}
}
