package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// TestLifeArgRoundTrip: every kind with the smallest, a middle and the
// largest worker id unpacks to what was packed, and the scenario's own
// event packs to 0. The field holds 32 bits, so every int32 round-trips,
// negative ones too, and no worker id can spill into another field.
func TestLifeArgRoundTrip(t *testing.T) {
	for _, kind := range []lifeKind{lifeScenario, lifeReady, lifeDrainTimeout, lifeRetire, math.MaxUint8} {
		for _, w := range []int32{0, 1, 255, 256, 1 << 24, math.MaxInt32, -1, math.MinInt32} {
			a := lifeArg{kind: kind, worker: w}
			if got := unpackLife(a.pack()); got != a {
				t.Errorf("%+v: unpacked %+v", a, got)
			}
		}
	}
	if x := (lifeArg{kind: lifeScenario}).pack(); x != 0 {
		t.Errorf("the scenario event packs to %#x, want 0", x)
	}
	if x := (lifeArg{kind: lifeRetire, worker: math.MaxInt32}).pack(); x != 3|math.MaxInt32<<8 {
		t.Errorf("retire of worker MaxInt32 packs to %#x, want %#x", x, uint64(3|math.MaxInt32<<8))
	}
}

// fireFunc is a handler that runs f: a test's planted event.
type fireFunc func(now des.Time)

func (f fireFunc) Fire(now des.Time, _, _ uint64) { f(now) }

// plant schedules f at at as a lifecycle event, which first takes the
// deferred crossings before it (look), as every event of that phase does.
func plant(c *Cluster, at des.Time, f fireFunc) {
	c.q.Schedule(at, des.PhaseLifecycle, 0, fireFunc(func(now des.Time) { c.look(); f(now) }), 0)
}

// TestIllegalStatusFailsRun: worker 2 drains at 100 ms and, idle then,
// is removed at once; an event planted at 200 ms makes it ready again
// through sim's own step, which no scenario can ask for (a removed worker
// never returns). The run fails with the invariant of the workers'
// transitions at 200 ms, naming the worker and both statuses, and returns
// no result.
func TestIllegalStatusFailsRun(t *testing.T) {
	y := "name: s\nseed: 3\nworkload: {synthetic: {requests: 40, rate: 50, input: {mean: 200}, output: {mean: 5}}}\n" + kvBody +
		"events:\n  - {at: 100ms, drain: [2]}\n"
	c := checkedCluster(t, y)
	plant(c, 200*des.Millisecond, fireFunc(func(now des.Time) { c.ready(now, c.workers[2]) }))
	res, err := c.run(context.Background())
	var ie *InvariantError
	if !errors.As(err, &ie) || ie.Invariant != lifecycle.InvTransitions || ie.At != 200*des.Millisecond || res != nil {
		t.Fatalf("run: %v (result %v)", err, res)
	}
	if want := "worker 2: to ready while removed"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
