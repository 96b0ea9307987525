package scenarios

import (
	"reflect"
	"testing"

	"github.com/kvsim/kvsim/des"
)

const chaosBase = "name: c\nworkload: {synthetic: {requests: 10}}\ncluster: {workers: 10}\n"

// TestChaosDraw: chaos's faults come from the seed alone, lie in the
// window, and are as many as their rates ask. 360 faults a worker-hour of
// each of 4 kinds on 10 workers over 100 s is 10 a second: a mean of 100
// a kind; a Poisson count lies within 100 ± 40 (4 standard deviations).
// The pull errors are two events over the whole window, at the start and
// the end, each with half the probability.
func TestChaosDraw(t *testing.T) {
	y := chaosBase + "chaos: {from: 100s, to: 200s, rates: {link: 360, slow: 360, down: 360, notices: 360}, pull_errors: 0.2, for: {min: 1s, max: 30s}}\n"
	sc, err := Parse("c.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Parse("c.yaml", []byte(y), nil)
	if !reflect.DeepEqual(sc.Events, again.Events) {
		t.Error("two loads of one scenario drew different faults")
	}
	other, _ := Parse("c.yaml", []byte(y), []string{"seed=2"})
	if reflect.DeepEqual(sc.Events, other.Events) {
		t.Error("seeds 1 and 2 drew the same faults")
	}
	counts := map[string]int{}
	for i, ev := range sc.Events {
		counts[ev.Kind()]++
		if ev.Origin != OriginChaos || ev.At < Duration(100*des.Second) || ev.End() > Duration(200*des.Second) || ev.For < 1 {
			t.Errorf("event %d %+v outside the window [100s, 200s)", i, ev)
		}
		if i > 0 && ev.At < sc.Events[i-1].At {
			t.Errorf("event %d at %v before event %d's %v", i, ev.At, i-1, sc.Events[i-1].At)
		}
		if ev.Kind() != KindPullErrors && ev.For > Duration(30*des.Second) {
			t.Errorf("event %d lasts %v, over for.max", i, des.Time(ev.For))
		}
	}
	for _, k := range []string{KindLink, KindSlow, KindDown, KindNotices} {
		if counts[k] < 60 || counts[k] > 140 {
			t.Errorf("%d %s faults, want 100 ± 40", counts[k], k)
		}
	}
	var errs []PullErrorsFault
	for _, ev := range sc.Events {
		if ev.PullErrors != nil {
			if ev.At != Duration(100*des.Second) || ev.For != Duration(100*des.Second) {
				t.Errorf("pull_errors at %v for %v, want the whole window", des.Time(ev.At), des.Time(ev.For))
			}
			errs = append(errs, *ev.PullErrors)
		}
	}
	if want := []PullErrorsFault{{Rate: 0.1, When: ErrorAtStart}, {Rate: 0.1, When: ErrorAtEnd}}; !reflect.DeepEqual(errs, want) {
		t.Errorf("pull_errors %+v, want %+v (0.2 halved, at the start and at the end)", errs, want)
	}
}

// TestChaosWrittenOut: the resolved scenario keeps chaos and leaves its
// drawn faults out (loading it draws them again, the same); --expand's
// scenario lists them with origin chaos and no chaos key, and loads back
// to the same events; either's twin of the drawn faults is the scenario
// without them.
func TestChaosWrittenOut(t *testing.T) {
	y := chaosBase + "events: [{at: 5s, drain: [9]}]\nchaos: {from: 1s, to: 60s, rates: {slow: 600, down: 300}}\n"
	sc, err := Parse("c.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Events) < 10 || sc.Events[0].Drain == nil {
		t.Fatalf("%d events, want the drain and about 150 drawn", len(sc.Events))
	}
	for name, out := range map[string]*Scenario{"resolved": sc, "expanded": sc.Expanded()} {
		b, err := out.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("c.yaml", b, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		if !reflect.DeepEqual(back.Events, sc.Events) {
			t.Errorf("%s: the events read back differ", name)
		}
		if (back.Chaos == nil) != (name == "expanded") {
			t.Errorf("%s: chaos %+v", name, back.Chaos)
		}
		if w := back.WithoutChaos(); len(w.Events) != 1 || w.Events[0].Drain == nil || w.Chaos != nil {
			t.Errorf("%s: without chaos: %+v", name, w.Events)
		}
	}
	if _, err := Parse("c.yaml", []byte(y+"  # \n"), []string{"events[0].origin=chaos"}); err == nil {
		t.Error("a scenario with chaos and an event of origin chaos loaded")
	}
}
