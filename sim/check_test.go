package sim

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/workload"
)

// TestCheckCausal: a row's times must run arrival, first scheduling, first
// token, finish.
func TestCheckCausal(t *testing.T) {
	for _, c := range []struct {
		row report.RequestRow
		bad bool
	}{
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 6, FirstTokenNs: 7, FinishNs: 9, Outcome: "completed"}, false},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 5, FirstTokenNs: 7, FinishNs: 7, Outcome: "completed"}, false},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: -1, FirstTokenNs: -1, FinishNs: 5, Outcome: "rejected"}, false},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 7, FirstTokenNs: 7, FinishNs: -1, Outcome: "unfinished"}, false},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 6, FirstTokenNs: -1, FinishNs: -1, Outcome: "unfinished"}, false},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 4, FirstTokenNs: 4, FinishNs: 9, Outcome: "completed"}, true},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 6, FirstTokenNs: 7, FinishNs: 6, Outcome: "completed"}, true},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: -1, FirstTokenNs: -1, FinishNs: 4, Outcome: "failed"}, true},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: -1, FirstTokenNs: -1, FinishNs: 9, Outcome: "completed"}, true},
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 4, FirstTokenNs: 7, FinishNs: 9, Outcome: "completed"}, true},  // scheduled before arrival
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: 8, FirstTokenNs: 7, FinishNs: 9, Outcome: "completed"}, true},  // first token before scheduling
		{report.RequestRow{ArrivalNs: 5, ScheduledNs: -1, FirstTokenNs: 7, FinishNs: 9, Outcome: "completed"}, true}, // never scheduled
	} {
		if err := checkCausal(&c.row); (err != nil) != c.bad {
			t.Errorf("%+v: %v", c.row, err)
		}
	}
}

// checkedCluster builds the cluster of scenario y with --set values sets,
// invariant checks on, not yet run.
func checkedCluster(t *testing.T, y string, sets ...string) *Cluster {
	t.Helper()
	sc, err := scenarios.Parse(filepath.Join(t.TempDir(), "s.yaml"), []byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(p, Options{Check: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRouterViewCheck runs a small KVCR scenario to its end (the checks
// pass), then breaks the router's view one way and the other: a block a
// worker holds that the router lost (which checkEnd reports as the router
// view's invariant alone), and a holding the router invented. Mended, it
// breaks a router load (finishing a route that was never counted), which
// checkEnd reports as the loads' invariant alone.
func TestRouterViewCheck(t *testing.T) {
	y := "name: v\nseed: 3\nworkload: {synthetic: {requests: 40, rate: 50, input: {mean: 200}, output: {mean: 5}, prefix_groups: 2, shared_prefix: 64}}\n" + kvBody
	c := checkedCluster(t, y, "router.event_delay=3ms")
	if _, err := c.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var held block.Ref
	c.workers[1].w.Cached(func(b block.Ref) { held = b })
	if held.Hash == 0 {
		t.Fatal("worker 1 caches nothing")
	}
	now := c.q.Now()
	one := []block.Run{{Seg: held.Seg, Lo: held.Off, Hi: held.Off + 1}}
	c.router.Removed(now, 1, scheduler.G1, one)
	if err := c.checkRouterView(); err == nil || !strings.Contains(err.Error(), "worker 1 holds block") {
		t.Errorf("lost holding: %v", err)
	}
	if got := broken(c.checkEnd()); !slices.Equal(got, []string{invRouterView}) {
		t.Errorf("lost holding: checkEnd found %q", got)
	}
	c.router.Stored(now, 1, scheduler.G1, one)
	invented := []block.Run{{Seg: held.Seg, Lo: 1 << 20, Hi: 1<<20 + 1}} // far past the segment's end
	c.router.Stored(now, 2, scheduler.G1, invented)
	if err := c.checkRouterView(); err == nil || !strings.Contains(err.Error(), "the router records") {
		t.Errorf("invented holding: %v", err)
	}
	c.router.Removed(now, 2, scheduler.G1, invented)
	if err := c.checkRouterView(); err != nil {
		t.Errorf("mended: %v", err)
	}
	c.router.Finished(scheduler.Route{Worker: 0}, false)
	if got := broken(c.checkEnd()); !slices.Equal(got, []string{invRouterLoads}) {
		t.Errorf("load left: checkEnd found %q", got)
	}
}

// TestEngineTransitionInvariant: an illegal change of a request's state in
// a worker, planted at 100 ms through the engine's API (PullDone for a
// request that has no pull: waiting -> waiting), fails the run as the
// engine's invariant at that time, with or without --check, and the run
// returns no result.
func TestEngineTransitionInvariant(t *testing.T) {
	y := "name: e\nseed: 3\nworkload: {synthetic: {requests: 40, rate: 50, input: {mean: 200}, output: {mean: 5}}}\n" + kvBody
	for _, check := range []bool{true, false} {
		c := checkedCluster(t, y)
		c.opt.Check = check
		plant(c, 100*des.Millisecond, fireFunc(func(des.Time) {
			w := c.workers[0].w
			w.PullDone(w.Enqueue(&workload.Request{ID: 99, InputTokens: 16, OutputTokens: 1}, false), 0, 0)
		}))
		res, err := c.run(context.Background())
		var ie *InvariantError
		want := "worker 0: request 99: to waiting while waiting: no transition allows it"
		if !errors.As(err, &ie) || ie.Invariant != engine.InvTransitions || ie.At != 100*des.Millisecond || res != nil ||
			!strings.Contains(err.Error(), want) {
			t.Errorf("check %v: %v (result %v), want %q at 100ms", check, err, res, want)
		}
	}
}
