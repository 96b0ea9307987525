package sim

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
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

// TestPlannerTail: generated case 54 with its drains by busiest flaps (its
// target policy, without a hold or a window, drains the worker holding the
// waiting requests, whose 30 ms drain timeout takes them off to the other
// worker, whose queue wants an add, every 187 ms): planner.tail (1 s in the
// generated cases) stops its decisions a second after the last arrival,
// the warnings say so, and every request then completes. Were the
// generator to change so that this case no longer flaps, the test says so.
func TestPlannerTail(t *testing.T) {
	path, err := scengen.GeneratePlanner(54).Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(path, []string{"planner.scale_in.pick=busiest"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	last := res.Planner[len(res.Planner)-1].AtNs
	if w := strings.Join(res.Summary.Warnings, "\n"); !strings.Contains(w, "the planner stopped deciding at") ||
		last > res.Summary.LastArrivalNs+int64(des.Second) || res.Summary.Requests.Completed != res.Summary.Requests.Total {
		t.Errorf("last decision at %v, last arrival at %v, %+v; warnings %q", des.Time(last), des.Time(res.Summary.LastArrivalNs), res.Summary.Requests, w)
	}
}
