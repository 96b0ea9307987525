package scenarios

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/kvsim/kvsim/des"
)

const chaosBase = "name: c\nworkload: {synthetic: {requests: 10}}\ncluster: {workers: 10}\n"

// TestChaosDraw: chaos's faults come from the seed alone, lie in the
// window, and are as many as their rates ask. 360 faults a worker-hour of
// each of 4 kinds on 10 workers over 100 s is 10 a second: a mean of 100
// a kind; a Poisson count lies within 100 ± 40 (4 standard deviations).
// The pull errors are two events over the whole window, at the start and
// the end (TestChaosPullErrors has their rates).
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
	var whens []ErrorWhen
	for _, ev := range sc.Events {
		if ev.PullErrors != nil {
			if ev.At != Duration(100*des.Second) || ev.For != Duration(100*des.Second) {
				t.Errorf("pull_errors at %v for %v, want the whole window", des.Time(ev.At), des.Time(ev.For))
			}
			whens = append(whens, ev.PullErrors.When)
		}
	}
	if want := []ErrorWhen{ErrorAtStart, ErrorAtEnd}; !reflect.DeepEqual(whens, want) {
		t.Errorf("pull_errors at %v, want at the start and at the end", whens)
	}
}

// TestChaosPullErrors: chaos's pull_errors P strikes a write posted in
// its window with probability P exactly, P/2 at each instant. Its two
// events each draw once for every write, independently, and one at the
// start strikes first (kvcr.drawErrors): with rates s (start) and e (end)
// a write is struck at the start with probability s, at the end with
// (1 - s) e, at all with 1 - (1 - s)(1 - e). By hand:
//   - P = 0.4: s = 0.2, e = 0.4 / 1.6 = 0.25; at the end 0.8 x 0.25 = 0.2,
//     at all 1 - 0.8 x 0.75 = 0.4. (Halves, 0.2 each, struck 1 - 0.8 x 0.8
//     = 0.36.)
//   - P = 1: s = 0.5, e = 1: every write struck, at the end 0.5 x 1 = 0.5.
//     (Halves struck 1 - 0.5 x 0.5 = 0.75: the reviewer's 67 of 93.)
//   - P = 0.2: s = 0.1, e = 0.2 / 1.8 = 1/9; at the end 0.9 / 9 = 0.1, at
//     all 1 - 0.9 x 8/9 = 0.2.
//
// The rates are floating point (0.4, 0.2 and 1/9 are not exact in
// binary): they are compared to the hand's within 1e-15.
func TestChaosPullErrors(t *testing.T) {
	for _, c := range []struct{ p, start, end float64 }{{0.4, 0.2, 0.25}, {1, 0.5, 1}, {0.2, 0.1, 1.0 / 9}} {
		y := fmt.Sprintf("%schaos: {from: 1s, to: 2s, pull_errors: %g}\n", chaosBase, c.p)
		sc, err := Parse("c.yaml", []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		var s, e float64
		for _, ev := range sc.Events {
			switch f := ev.PullErrors; {
			case f != nil && f.When == ErrorAtStart:
				s = f.Rate
			case f != nil && f.When == ErrorAtEnd:
				e = f.Rate
			}
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-15 }
		if len(sc.Events) != 2 || !near(s, c.start) || !near(e, c.end) {
			t.Errorf("P = %g: %d events, rates %g at the start and %g at the end, want %g and %g", c.p, len(sc.Events), s, e, c.start, c.end)
		}
		if atEnd, all := (1-s)*e, 1-(1-s)*(1-e); !near(atEnd, c.p/2) || !near(all, c.p) {
			t.Errorf("P = %g: a write struck at the end with probability %g, at all %g, want %g and %g", c.p, atEnd, all, c.p/2, c.p)
		}
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

// TestChaosBound: a chaos that would draw more than MaxChaosFaults
// (10,000) faults is refused at its largest rate, with the count expected
// and the rates that fit; drawing stops there, so a rate far too high is
// refused at once, in little memory. On 3 workers over 1 s (3 worker-
// seconds, 1/1200 of a worker-hour):
//   - down: 1e12 (the reviewer's, which ran replay out of memory at 24 GB)
//     expects 1e12 / 1200 = 833,333,333 faults, "833.3 million";
//   - down: 4e7 expects 4e7 / 1200 = 33,333, past the bound (its standard
//     deviation is 183: the draw passes 10,000 whatever the seed);
//   - the sum of rates that fits is (10,000 - 5 sqrt(10,000)) x 1200 =
//     9,500 x 1200 = 11,400,000 a worker-hour, to two digits 1.1e+07, the
//     same for both (it depends on workers and window only);
//   - slow: 1e6 and down: 5e6 expect 6e6 / 1200 = 5,000 ± 71 (a standard
//     deviation): under the bound, they load.
//
// The rates are line 6 of the file.
func TestChaosBound(t *testing.T) {
	base := "name: c\nworkload: {synthetic: {requests: 10}}\ncluster: {workers: 3}\nchaos:\n  to: 1s\n  rates: "
	fits := "lower chaos.rates.down (rates summing to 1.1e+07 a worker-hour or less fit), or shorten the window (chaos.from to chaos.to)"
	for _, c := range []struct{ rates, want string }{
		{"{down: 1e12}", "c.yaml:6: chaos.rates.down: chaos would draw more than 10000 faults (about 833.3 million at these rates: 1e+12 a worker-hour in all, on 3 workers over 1s), " +
			"more than the 10000 a scenario may draw (each is an event of the run, 85 kB of its memory or more); " + fits},
		{"{down: 4e7}", "c.yaml:6: chaos.rates.down: chaos would draw more than 10000 faults (about 33333 at these rates: 4e+07 a worker-hour in all, on 3 workers over 1s), " +
			"more than the 10000 a scenario may draw (each is an event of the run, 85 kB of its memory or more); " + fits},
		{"{slow: 1e6, down: 5e6}", ""},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		sc, err := Parse("c.yaml", []byte(base+c.rates+"\n"), nil)
		runtime.ReadMemStats(&after)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.rates, err)
			} else if n := len(sc.Events); n < 4700 || n > 5300 {
				t.Errorf("%s: %d faults, want about 5000", c.rates, n)
			}
			continue
		}
		var ie *InputError
		if !errors.As(err, &ie) || err.Error() != c.want {
			t.Errorf("%s: got\n%v\nwant\n%s", c.rates, err, c.want)
		}
		// 10,000 events drawn at about 600 bytes each, their slice grown
		// by doubling: some 12 MB, where drawing on would take gigabytes.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%s: loading allocated %d MB, want under 64", c.rates, alloc>>20)
		}
	}
}

// TestChaosBoundExact: the bound is on the faults drawn, counted while
// drawing, not on an estimate: a chaos that draws n faults loads with a
// bound of n and is refused with n - 1, having drawn n - 1 and no more.
// 360 faults a worker-hour of each of 4 kinds on 10 workers over 10 s is
// a mean of 10 a kind, 40 in all.
func TestChaosBoundExact(t *testing.T) {
	ch := &Chaos{To: Duration(10 * des.Second), Rates: ChaosRates{Link: 360, Slow: 360, Down: 360, Notices: 360},
		For: ChaosSpan{Min: Duration(des.Second), Max: Duration(des.Second)}}
	all, ok := ch.chaosEvents(1, 10, false, math.MaxInt)
	if n := len(all); !ok || n < 20 || n > 60 {
		t.Fatalf("drew %d faults (ok %t), want about 40", n, ok)
	}
	n := len(all)
	if evs, ok := ch.chaosEvents(1, 10, false, n); !ok || !reflect.DeepEqual(evs, all) {
		t.Errorf("a bound of %d, the faults drawn: refused (ok %t) or drew others", n, ok)
	}
	if evs, ok := ch.chaosEvents(1, 10, false, n-1); ok || len(evs) != n-1 {
		t.Errorf("a bound of %d, one less than the faults drawn: ok %t, %d drawn, want refused at %d", n-1, ok, len(evs), n-1)
	}
}

// TestChaosSettleShort: a chaos.settle shorter than kvcr.abandon_timeout
// (and so perhaps than operation_timeout, at most half of it) warns at
// chaos.settle's line, or chaos's (its mapping's first line) when settle is
// the default 10 s: a pull chaos delays may wait out those timeouts past
// the settle check. Settle
// 10 s against 20 s and 40 s names both; 3 s against the defaults 1 s and
// 5 s names abandon_timeout alone; 5 s against 5 s is not shorter; without
// KVCR there is no pull to wait.
func TestChaosSettleShort(t *testing.T) {
	const advice = ": a pull chaos delays may outlast it and fail the check that the cluster settles after chaos; " +
		"set it longer than kvcr.abandon_timeout plus the longest write"
	checkWarnings(t, "c.yaml", []warningCase{
		{chaosBase + "kvcr: {operation_timeout: 20s, abandon_timeout: 40s}\nchaos:\n  to: 1s\n  pull_errors: 0.1\n",
			[]string{"c.yaml:6: chaos.settle: 10s is shorter than kvcr.operation_timeout (20s) and kvcr.abandon_timeout (40s)" + advice}},
		{chaosBase + "chaos:\n  to: 1s\n  settle: 3s\n  pull_errors: 0.1\n",
			[]string{"c.yaml:6: chaos.settle: 3s is shorter than kvcr.abandon_timeout (5s)" + advice}},
		{chaosBase + "chaos:\n  to: 1s\n  settle: 5s\n  pull_errors: 0.1\n", nil},
		{chaosBase + "kvcr: {enabled: false}\nchaos:\n  to: 1s\n  settle: 1s\n  rates: {slow: 1}\n", nil},
	})
}
