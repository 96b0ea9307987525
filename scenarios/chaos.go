package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// Chaos draws faults in [From, To) at the given rates, from the seeded
// stream "faults": they become ordinary fault events (Origin chaos),
// appended to the scenario's events when it is loaded, so that a failing
// seed replays exactly and `kvsim validate --expand` writes them out to be
// cut down by hand. docs/scenarios.md states what each drawn fault is.
type Chaos struct {
	From Duration `yaml:"from"`
	To   Duration `yaml:"to"`
	// Settle is the quiet time after To: at To+Settle no pull a drawn
	// fault acted on is live and every worker a drawn fault took down is
	// back (--check verifies it; docs/faults.md, "chaos").
	Settle Duration   `yaml:"settle"`
	Rates  ChaosRates `yaml:"rates"`
	// PullErrors is the probability that an injected error strikes a pull
	// whose write is posted in the window: half of them before its first
	// byte, half at its last (chaosPullErrors).
	PullErrors float64   `yaml:"pull_errors"`
	For        ChaosSpan `yaml:"for"`
}

// ChaosRates are the rates of the drawn faults of each kind, in faults per
// worker-hour.
type ChaosRates struct {
	Link    float64 `yaml:"link"`
	Slow    float64 `yaml:"slow"`
	Down    float64 `yaml:"down"`
	Notices float64 `yaml:"notices"`
}

// ChaosSpan bounds a drawn fault's length: uniform in [Min, Max].
type ChaosSpan struct {
	Min Duration `yaml:"min"`
	Max Duration `yaml:"max"`
}

// The drawn faults' parameters (docs/faults.md, "chaos"): a link goes
// down both ways, a straggler runs ChaosSlowFactor times slower, a notice
// is lost, an engine goes down with its G2 kept; pull errors are
// chaosPullErrors's two events.
const ChaosSlowFactor = 4

// chaosPullErrors are the rates of the two pull_errors events of chaos's
// pull_errors p, at the start and at the end, so that a write posted in
// the window is struck with probability p in all, p/2 at each instant.
// Each event draws once for every write, independently of the other,
// and one at the start strikes before one at the end (kvcr.drawErrors):
// a write is struck at the start with probability start, and at the end
// with (1 - start) x end. start = p/2 and (1 - p/2) x end = p/2 give
// end = (p/2) / (1 - p/2) = p / (2 - p), and the chance of neither is
// (1 - p/2)(1 - p/(2 - p)) = ((2 - p)/2)((2 - 2p)/(2 - p)) = 1 - p. (Two
// halves of p each strike 1 - (1 - p/2)^2 = p - p^2/4: 3/4 of the writes
// at p = 1; two of 1 - sqrt(1 - p) strike p in all, but at p = 1 every
// write at the start and none at the end.)
func chaosPullErrors(p float64) (start, end float64) {
	return p / 2, p / (2 - p)
}

func chaosDefaults() *Chaos {
	return &Chaos{Settle: Duration(10 * des.Second),
		For: ChaosSpan{Min: Duration(des.Second), Max: Duration(10 * des.Second)}}
}

// validateChaos checks the chaos keys.
func (sc *Scenario) validateChaos(c *check) {
	ch := sc.Chaos
	if ch == nil {
		return
	}
	c.durationAtLeast("chaos.from", ch.From, 0)
	if ch.To <= ch.From {
		c.fail("chaos.to", "must be after chaos.from (%v), got %v", des.Time(ch.From), des.Time(ch.To))
	}
	c.durationAtLeast("chaos.settle", ch.Settle, 0)
	for _, r := range []struct {
		key string
		v   float64
	}{{"link", ch.Rates.Link}, {"slow", ch.Rates.Slow}, {"down", ch.Rates.Down}, {"notices", ch.Rates.Notices}} {
		c.nonNegative("chaos.rates."+r.key, r.v)
	}
	if !(ch.PullErrors >= 0 && ch.PullErrors <= 1) {
		c.fail("chaos.pull_errors", "must be a probability in [0, 1], got %g", ch.PullErrors)
	}
	c.durationAtLeast("chaos.for.min", ch.For.Min, 1)
	if ch.For.Max < ch.For.Min {
		c.fail("chaos.for.max", "must be at least chaos.for.min (%v), got %v", des.Time(ch.For.Min), des.Time(ch.For.Max))
	}
	if !sc.KVCR.Enabled && (ch.Rates.Link > 0 || ch.Rates.Notices > 0 || ch.PullErrors > 0) {
		c.fail("chaos", "link, notices and pull_errors faults need kvcr.enabled: true")
	}
	for i, ev := range sc.Events {
		if ev.Origin == OriginChaos {
			c.fail(fmt.Sprintf("events[%d].origin", i), "chaos draws its own events: a scenario with chaos lists none of origin chaos (remove chaos to replay events written out)")
		}
	}
}

// MaxChaosFaults is the most faults a chaos block may draw at its rates
// (its pull errors, two events, are not counted). Each is an event of the
// run, with its events.parquet windows, which gather what the workload
// does in them: measured on 2 cores, a run holds about 85 kB a drawn fault
// on a workload of 30 requests (the default scenario's, 8 workers, slow
// faults over 100 s: 10,000 took 8 s and 0.9 GB, 20,000 38 s and 1.8 GB,
// 100,000 308 s and 8.5 GB), more on a larger one (its 3,000 requests:
// 10,000 faults took 147 s and 2.2 GB without the twin); drawing alone
// is about 600 bytes and 3 µs a fault (a million: 3.3 s and 616 MB to
// validate). 10,000 keep a run of the default's workload near 2 GB, what
// a laptop holds (sim.MaxSampleRows's measure), and are some hundred times
// the faults the design expects of chaos (DESIGN.md section 12: hundreds).
// benchmarks/evidence/2026-12-06-chaos-bound.md has the runs.
const MaxChaosFaults = 10_000

// chaosEvents are the faults ch draws for a cluster of workers workers,
// in time order: the stream "faults" of seed, each kind's arrivals a
// Poisson process of rate x workers per hour over [From, To), in the
// order link, slow, down, notices, each on a worker drawn uniformly and
// lasting a length drawn uniformly in [For.Min, For.Max], cut at To; then
// the pull errors over the whole window. migrate says a down fault's
// requests migrate (cluster.migration_limit is set). Drawing stops at the
// fault past limit, so that a rate too high for any run neither runs out
// of memory nor takes long: ok is then false, and evs the limit faults
// drawn first, unsorted and without the pull errors.
func (ch *Chaos) chaosEvents(seed uint64, workers int, migrate bool, limit int) (evs []Event, ok bool) {
	r := des.NewRNG(seed).Stream("faults")
	span := float64(ch.To - ch.From)
	for _, k := range []struct {
		kind string
		rate float64
	}{{KindLink, ch.Rates.Link}, {KindSlow, ch.Rates.Slow}, {KindDown, ch.Rates.Down}, {KindNotices, ch.Rates.Notices}} {
		perNs := k.rate * float64(workers) / float64(60*des.Minute)
		if perNs <= 0 {
			continue
		}
		for t := 0.0; ; {
			t += r.ExpFloat64() / perNs
			if t >= span {
				break
			}
			if len(evs) == limit {
				return evs, false
			}
			at := ch.From + Duration(math.Floor(t))
			length := ch.For.Min + Duration(r.Int64N(int64(ch.For.Max-ch.For.Min)+1))
			w := &Selection{IDs: []int{r.IntN(workers)}}
			ev := Event{At: at, For: min(length, ch.To-at), Origin: OriginChaos, OnRemove: RemoveReroute}
			switch k.kind {
			case KindLink:
				ev.Link = &LinkFault{Workers: w, Factor: 0, Direction: DirectionBoth}
			case KindSlow:
				ev.Slow = &SlowFault{Workers: w, Factor: ChaosSlowFactor}
			case KindDown:
				ev.Down = &DownFault{Workers: w, G2: G2Kept}
				if migrate {
					ev.OnRemove = RemoveMigrate
				}
			case KindNotices:
				ev.Notices = &NoticesFault{Workers: w, Lost: true}
			}
			evs = append(evs, ev)
		}
	}
	if ch.PullErrors > 0 {
		start, end := chaosPullErrors(ch.PullErrors)
		for _, f := range []PullErrorsFault{{Rate: start, When: ErrorAtStart}, {Rate: end, When: ErrorAtEnd}} {
			evs = append(evs, Event{At: ch.From, For: ch.To - ch.From, Origin: OriginChaos, OnRemove: RemoveReroute, PullErrors: &f})
		}
	}
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	return evs, true
}

// expandChaos appends the faults the scenario's chaos draws to its events,
// or refuses a chaos that draws more than MaxChaosFaults (tooManyFaults).
func (sc *Scenario) expandChaos() error {
	ch := sc.Chaos
	if ch == nil {
		return nil
	}
	evs, ok := ch.chaosEvents(sc.Seed, sc.Cluster.Workers, sc.Cluster.MigrationLimit > 0, MaxChaosFaults)
	if !ok {
		return sc.tooManyFaults(MaxChaosFaults)
	}
	sc.Events = append(sc.Events, evs...)
	return nil
}

// tooManyFaults is the error of a chaos that drew more than limit faults,
// at the rate that draws the most (the first of the highest), with the
// count expected at its rates (rates in all x workers x window) and the
// way out: the sum of the rates that fits, chosen 5 standard deviations
// of the Poisson count below limit (limit - 5 sqrt(limit)), so that a
// draw at it passes limit with a chance under one in a million, rounded
// down to two significant digits; or a shorter window.
func (sc *Scenario) tooManyFaults(limit int) error {
	ch := sc.Chaos
	rates := []struct {
		key string
		v   float64
	}{{"link", ch.Rates.Link}, {"slow", ch.Rates.Slow}, {"down", ch.Rates.Down}, {"notices", ch.Rates.Notices}}
	top, sum := rates[0], 0.0
	for _, r := range rates {
		sum += r.v
		if r.v > top.v {
			top = r
		}
	}
	workerHours := float64(sc.Cluster.Workers) * float64(ch.To-ch.From) / float64(60*des.Minute)
	fit := roundDown2((float64(limit) - 5*math.Sqrt(float64(limit))) / workerHours)
	return sc.ErrAt("chaos.rates."+top.key, "chaos would draw more than %d faults (about %s at these rates: %g a worker-hour in all, on %d workers over %v), "+
		"more than the %d a scenario may draw (each is an event of the run, 85 kB of its memory or more); "+
		"lower chaos.rates.%s (rates summing to %g a worker-hour or less fit), or shorten the window (chaos.from to chaos.to)",
		limit, aboutCount(sum*workerHours), sum, sc.Cluster.Workers, des.Time(ch.To-ch.From), limit, top.key, fit)
}

// aboutCount writes an expected count: whole below a million, then in
// millions to one decimal ("833.3 million"), then in powers of ten.
func aboutCount(n float64) string {
	switch {
	case n < 1e6:
		return fmt.Sprintf("%.0f", n)
	case n < 1e12:
		return fmt.Sprintf("%.1f million", n/1e6)
	}
	return fmt.Sprintf("%.3g", n)
}

// roundDown2 is x > 0 rounded down to two significant digits.
func roundDown2(x float64) float64 {
	unit := math.Pow(10, math.Floor(math.Log10(x))-1)
	return math.Floor(x/unit) * unit
}

// Expanded is the scenario with its chaos written out: the drawn faults
// kept as events of origin chaos, the chaos key gone. Replayed, it runs
// the same faults, and they can be cut down by hand.
func (sc *Scenario) Expanded() *Scenario {
	out := *sc
	out.Chaos = nil
	return &out
}

// scripted is the scenario's events as YAML writes them: with chaos, the
// events it drew are left out (loading draws them again).
func (sc *Scenario) scripted() []Event {
	if sc.Chaos == nil {
		return sc.Events
	}
	return withoutDrawn(sc.Events)
}

// withoutDrawn is a copy of evs without the events of origin chaos.
func withoutDrawn(evs []Event) []Event {
	return slices.DeleteFunc(slices.Clone(evs), func(e Event) bool { return e.Origin == OriginChaos })
}

// WithoutChaos is the scenario without the events its chaos drew, or
// without the events of origin chaos written out: the twin of them all
// (DESIGN.md section 12: the drawn faults share one twin), with no expect
// entries, which are the full scenario's.
func (sc *Scenario) WithoutChaos() *Scenario {
	out := *sc
	out.Chaos = nil
	out.Expect = nil
	out.Events = withoutDrawn(sc.Events)
	return &out
}
