package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/kvsim/kvsim/des"
)

// TestCheckRescans plants the violation checkRescans looks for. In
// parkLines R3 parks at the idle worker 1 at 14 ms and stays parked until
// the store landing at 15 ms; worker 0 runs the filler R2 then. A probe at
// 14.5 ms (before that instant's rescan wakes worker 1) counts a stretch
// as running: the check after worker 1's drive scan names worker 1, and so
// does the whole-cluster look after worker 0's scan had it started one
// (its end handle set); with no stretch counted, or at worker 0 alone,
// neither fails. The run itself then goes on unharmed.
func TestCheckRescans(t *testing.T) {
	p, err := Prepare(traceScenario(t, kvBody, parkLines, parkSets...))
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(p, Options{Check: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	probed := false
	c.q.Schedule(des.Time(14500*us), des.PhaseLifecycle, 0, fireFunc(func(des.Time) {
		probed = true
		w0, w1 := c.workers[0], c.workers[1]
		if !c.idleWithParked(w1) || c.idleWithParked(w0) {
			t.Fatalf("at 14.5 ms: worker 1 idle with a parked pull %v, worker 0 %v", c.idleWithParked(w1), c.idleWithParked(w0))
		}
		for _, pl := range []struct {
			name      string
			stretches int
			n         *node
			started   bool
			fails     bool
		}{
			{"no stretch", 0, w1, false, false},
			{"worker 1 left idle", 1, w1, false, true},
			{"worker 0 scanned", 1, w0, false, false},
			{"worker 0 started a stretch", 1, w0, true, true},
		} {
			c.stretches, c.err = pl.stretches, nil
			if pl.started {
				pl.n.ff = &des.Handle{}
			}
			c.checkRescans(pl.n)
			pl.n.ff = nil
			var ie *InvariantError
			if got := errors.As(c.err, &ie) && ie.Invariant == invRescansQuiet; got != pl.fails {
				t.Errorf("%s: %v", pl.name, c.err)
			} else if got && ie.Err.Error() != "worker 1 is idle with a parked pull while 1 workers are in a stretch" {
				t.Errorf("%s: %v", pl.name, ie.Err)
			}
		}
		c.stretches, c.err = 0, nil
	}), 0)
	if _, err := c.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !probed {
		t.Fatal("the probe never fired")
	}
}
