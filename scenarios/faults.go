package scenarios

// The faults of DESIGN.md section 12: scenario events like drains, each
// over the window [at, at+for) (for 0: to the end of the run), naming
// workers as a drain names them. docs/scenarios.md states every key and
// docs/kvcr.md every rule.

// LinkFault runs the workers' KVCR links at Factor times their bandwidth
// for the window: 0 is down.
type LinkFault struct {
	Workers   *Selection `yaml:"workers"`
	Factor    float64    `yaml:"factor"`
	Direction Direction  `yaml:"direction"`
}

// Direction is the side of a worker's KVCR link a link fault acts on: the
// value of the scenario key events[i].link.direction.
type Direction string

// The directions.
const (
	DirectionEgress  Direction = "egress"  // what the worker serves, as a source
	DirectionIngress Direction = "ingress" // what it receives, as a target
	DirectionBoth    Direction = "both"
)

// Directions lists the directions, in the order errors name them.
var Directions = []Direction{DirectionEgress, DirectionIngress, DirectionBoth}

// Egress reports whether the fault acts on the egress side.
func (d Direction) Egress() bool { return d != DirectionIngress }

// Ingress reports whether the fault acts on the ingress side.
func (d Direction) Ingress() bool { return d != DirectionEgress }

// SlowFault makes every pass that starts on the workers in the window take
// Factor (at least 1) times as long: a straggler.
type SlowFault struct {
	Workers *Selection `yaml:"workers"`
	Factor  float64    `yaml:"factor"`
}

// PullErrorsFault fails each pull whose transfer starts in the window with
// probability Rate, before its first byte or at its last (When).
type PullErrorsFault struct {
	Rate float64   `yaml:"rate"`
	When ErrorWhen `yaml:"when"`
}

// ErrorWhen is when an injected pull error strikes: the value of the
// scenario key events[i].pull_errors.when.
type ErrorWhen string

// The instants of a pull error.
const (
	ErrorAtStart ErrorWhen = "start" // the write could not be posted: nothing moves
	ErrorAtEnd   ErrorWhen = "end"   // the bytes crossed the link, the completion reports an error
)

// ErrorWhens lists the instants, in the order errors name them.
var ErrorWhens = []ErrorWhen{ErrorAtStart, ErrorAtEnd}

// NoticesFault delays by Delay, or loses (Lost), the completion notice of
// every transfer into the workers (every worker when Workers is nil) that
// ends in the window.
type NoticesFault struct {
	Workers *Selection `yaml:"workers,omitempty"`
	Delay   Duration   `yaml:"delay,omitempty"`
	Lost    bool       `yaml:"lost,omitempty"`
}

// DownFault takes the workers' engines down for the window, their G2 kept
// (the KVCR agent stays up) or lost (the whole process died).
type DownFault struct {
	Workers *Selection `yaml:"workers"`
	G2      G2Fate     `yaml:"g2"`
}

// G2Fate is what becomes of a down worker's G2: the value of the scenario
// key events[i].down.g2.
type G2Fate string

// The fates.
const (
	G2Kept G2Fate = "kept" // the KVCR agent and its host pool stay up
	G2Lost G2Fate = "lost" // the whole process died
)

// G2Fates lists the fates, in the order errors name them.
var G2Fates = []G2Fate{G2Kept, G2Lost}

// Origin is where a scenario event comes from: the value of the scenario
// key events[i].origin and of events.parquet's origin column.
type Origin string

// The origins.
const (
	OriginScenario Origin = ""      // written in the scenario (events.parquet: "scenario")
	OriginChaos    Origin = "chaos" // drawn by the scenario's chaos
	// OriginPlanner is an add or drain the planner decided during the run;
	// no scenario file writes it.
	OriginPlanner Origin = "planner"
)

// The kinds of scenario event: the scenario's key of each, and the value
// of events.parquet's kind column.
const (
	KindDrain      = "drain"
	KindRemove     = "remove"
	KindAdd        = "add"
	KindLink       = "link"
	KindSlow       = "slow"
	KindPullErrors = "pull_errors"
	KindNotices    = "notices"
	KindDown       = "down"
)

// Kinds lists the kinds of scenario event, in the order events.parquet's
// kind dictionary holds them.
var Kinds = []string{KindDrain, KindRemove, KindAdd, KindLink, KindSlow, KindPullErrors, KindNotices, KindDown}

// kinds is which keys of e are set, in the order of Kinds.
func (e *Event) kinds() []string {
	var ks []string
	for i, set := range []bool{e.Drain != nil, e.Remove != nil, e.Add != 0, e.Link != nil, e.Slow != nil,
		e.PullErrors != nil, e.Notices != nil, e.Down != nil} {
		if set {
			ks = append(ks, Kinds[i])
		}
	}
	return ks
}

// Kind is the event's kind, the key that is set ("" when none is, which
// validation refuses).
func (e *Event) Kind() string {
	if ks := e.kinds(); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// Fault reports whether the event is a fault, which lasts for its window.
func (e *Event) Fault() bool { return IsFault(e.Kind()) }

// IsFault reports whether kind is a fault's (events.parquet's kind).
func IsFault(kind string) bool {
	switch kind {
	case KindLink, KindSlow, KindPullErrors, KindNotices, KindDown:
		return true
	}
	return false
}

// Workers is the selection of workers the event acts on: a drain's, a
// remove's or a fault's; nil for an add, a pull_errors fault and a notices
// fault on every worker.
func (e *Event) Workers() *Selection {
	switch {
	case e.Drain != nil:
		return e.Drain
	case e.Remove != nil:
		return e.Remove
	case e.Link != nil:
		return e.Link.Workers
	case e.Slow != nil:
		return e.Slow.Workers
	case e.Notices != nil:
		return e.Notices.Workers
	case e.Down != nil:
		return e.Down.Workers
	}
	return nil
}

// End is the instant the event's window ends: at + for, or the end of
// virtual time for an event without a length.
func (e *Event) End() Duration {
	if e.For <= 0 {
		return Duration(1<<63 - 1)
	}
	return e.At + e.For
}

// MaxSlowFactor is the most a slow fault may lengthen a pass by: a
// million-fold, a 10 ms pass taking nearly 3 hours. Past it a pass's
// length leaves virtual time's range.
const MaxSlowFactor = 1e6

// MinLinkFactor is the lowest factor a link fault may run a link at but 0
// (down). Below it a write takes a thousand times its time or more: a link
// down in all but name, and a transfer's completion, scheduled at the slow
// rate, that outlives the fault by days keeps the run (and its samples)
// going that long.
const MinLinkFactor = 0.001

// validateFault checks the keys of fault event ev at key (its kind set).
func (sc *Scenario) validateFault(c *check, key string, ev *Event) {
	switch {
	case ev.Link != nil:
		k := key + ".link"
		switch f := ev.Link.Factor; {
		case f < 0 || f > 1:
			c.fail(k+".factor", "must be in [0, 1] (0 is down), got %g", f)
		case f > 0 && f < MinLinkFactor:
			c.fail(k+".factor", "must be 0 (down) or at least %g, got %g: a link that slow is down in all but name, its writes taking days", MinLinkFactor, f)
		}
		oneOf(c, k+".direction", ev.Link.Direction, Directions...)
		sc.needKVCR(c, k, "it acts on KVCR links")
	case ev.Slow != nil:
		if !(ev.Slow.Factor >= 1 && ev.Slow.Factor <= MaxSlowFactor) {
			c.fail(key+".slow.factor", "must be in [1, %g] (a pass takes factor times as long; slower is down in all but name: use down), got %g", MaxSlowFactor, ev.Slow.Factor)
		}
	case ev.PullErrors != nil:
		k := key + ".pull_errors"
		if !(ev.PullErrors.Rate >= 0 && ev.PullErrors.Rate <= 1) {
			c.fail(k+".rate", "must be a probability in [0, 1], got %g", ev.PullErrors.Rate)
		}
		oneOf(c, k+".when", ev.PullErrors.When, ErrorWhens...)
		sc.needKVCR(c, k, "it fails KVCR pulls")
	case ev.Notices != nil:
		k := key + ".notices"
		n := ev.Notices
		switch {
		case n.Lost && n.Delay != 0:
			c.fail(k, "set one of delay and lost: true, not both")
		case !n.Lost && n.Delay == 0:
			c.fail(k, "set delay (a duration above 0) or lost: true")
		case !n.Lost:
			c.durationAtLeast(k+".delay", n.Delay, 1)
		}
		sc.needKVCR(c, k, "it acts on KVCR's completion notices")
	case ev.Down != nil:
		oneOf(c, key+".down.g2", ev.Down.G2, G2Fates...)
	}
}

// needKVCR fails key unless KVCR is on.
func (sc *Scenario) needKVCR(c *check, key, why string) {
	if !sc.KVCR.Enabled {
		c.fail(key, "needs kvcr.enabled: true (%s)", why)
	}
}
