package scenarios

import (
	"github.com/kvsim/kvsim/des"
)

// Planner is an autoscaler in the loop (DESIGN.md section 13): every
// Interval it reads the interval just ended, as a planner scraping metrics
// would, and adds or drains workers. docs/planner.md states each policy's
// rule and where its defaults come from.
type Planner struct {
	// Policy decides; "" or none: no planner (SLO is still measured).
	Policy PlannerPolicy `yaml:"policy"`
	// Interval is the time between decisions; 0: the policy's deployed
	// default.
	Interval   Duration `yaml:"interval"`
	MinWorkers int      `yaml:"min_workers"`
	// MaxWorkers bounds the workers ready and starting (a Kubernetes
	// autoscaler's maxReplicas); DESIGN.md's 64 unless set.
	MaxWorkers int `yaml:"max_workers"`
	// Step is the most workers one decision adds or drains; 0: the
	// policy's deployed default.
	Step int `yaml:"step"`
	// Startup is an added worker's time from its add to ready.
	Startup Duration `yaml:"startup"`
	// Tail is the longest it goes on deciding after the last arrival: a
	// planner that flaps, draining with a drain timeout the workers whose
	// requests its next add cannot finish in time, would otherwise never
	// let the run end.
	Tail Duration `yaml:"tail"`
	// Prewarm makes the workers it adds prefetch the hottest chains of the
	// ready workers' G2, as an add's prewarm does.
	Prewarm    *Budget          `yaml:"prewarm,omitempty"`
	Load       LoadPolicy       `yaml:"load"`
	Throughput ThroughputPolicy `yaml:"throughput"`
	Target     TargetPolicy     `yaml:"target"`
	ScaleIn    ScaleIn          `yaml:"scale_in"`
	// SLO is the latency a request must meet to count as goodput:
	// DESIGN.md's 500 ms TTFT and 50 ms ITL unless set; null turns goodput
	// off.
	SLO *SLO `yaml:"slo,omitempty"`
}

// PlannerPolicy names a planner's decision rule: the value of the scenario
// key planner.policy.
type PlannerPolicy string

// The planner policies.
const (
	PlannerNone PlannerPolicy = "none"
	// PlannerLoad adds Step workers when the waiting requests per ready
	// worker or the G1 usage is above its _up threshold, drains Step when
	// both are below their _down (Dynamo's load-based planner).
	PlannerLoad PlannerPolicy = "load"
	// PlannerThroughput wants ceil(arrival rate / requests_per_worker_s)
	// workers (Dynamo's throughput planner, its predictor the last
	// interval's rate).
	PlannerThroughput PlannerPolicy = "throughput"
	// PlannerTarget wants ceil(ready x metric / value), the ready workers
	// averaged over the interval, outside a tolerance
	// band, scaling in only to the most it wanted over a window (the
	// Kubernetes Horizontal Pod Autoscaler).
	PlannerTarget PlannerPolicy = "target"
)

// PlannerPolicies lists the planner policies, in the order errors name them.
var PlannerPolicies = []PlannerPolicy{PlannerNone, PlannerLoad, PlannerThroughput, PlannerTarget}

// LoadPolicy is the load policy's thresholds: waiting requests per ready
// worker (queue) and the ready workers' G1 usage, used over capacity (kv).
type LoadPolicy struct {
	QueueUp   float64 `yaml:"queue_up"`
	QueueDown float64 `yaml:"queue_down"`
	KVUp      float64 `yaml:"kv_up"`
	KVDown    float64 `yaml:"kv_down"`
}

// ThroughputPolicy is the throughput policy's capacity: the requests a
// second one worker serves within the SLO, from profiling.
type ThroughputPolicy struct {
	RequestsPerWorkerS float64 `yaml:"requests_per_worker_s"`
}

// TargetPolicy is the target policy's metric, its target value per ready
// worker, the tolerance band around it and the scale-down window.
type TargetPolicy struct {
	Metric          TargetMetric `yaml:"metric"`
	Value           float64      `yaml:"value"`
	Tolerance       float64      `yaml:"tolerance"`
	ScaleDownWindow Duration     `yaml:"scale_down_window"`
	// Hold keeps the policy from deciding while workers it added are
	// starting or workers it drained are draining, as every policy does
	// (DESIGN.md section 13); false is the Kubernetes autoscaler's way,
	// which decides every period against the replicas ready and starting,
	// damped by the scale-down window alone.
	Hold bool `yaml:"hold"`
}

// TargetMetric is the metric the target policy holds at its value: the
// value of the scenario key planner.target.metric.
type TargetMetric string

// The target metrics.
const (
	TargetQueue TargetMetric = "queue" // waiting requests per ready worker
	TargetKV    TargetMetric = "kv"    // the ready workers' G1 usage, 0 to 1
)

// TargetMetrics lists the target metrics, in the order errors name them.
var TargetMetrics = []TargetMetric{TargetQueue, TargetKV}

// ScaleIn is how the planner drains: the pick, the drain timeout and the
// evacuation, as a scripted drain's.
type ScaleIn struct {
	Pick         Pick     `yaml:"pick"`
	DrainTimeout Duration `yaml:"drain_timeout"` // 0: none
	Evacuate     *Budget  `yaml:"evacuate,omitempty"`
}

// SLO is a request's latency objective: its time to first token and its
// mean inter-token latency, (E2E - TTFT) / (output tokens - 1).
type SLO struct {
	TTFT Duration `yaml:"ttft"`
	ITL  Duration `yaml:"itl"`
}

// HasPlanner reports whether the scenario runs a planner (a policy other
// than none).
func (sc *Scenario) HasPlanner() bool {
	p := sc.Planner
	return p != nil && p.Policy != "" && p.Policy != PlannerNone
}

// policyDefaults is a policy's deployed interval and step: Dynamo's
// load-based planner decides every 5 s and moves one worker; its
// throughput planner every 180 s, at most 8 replicas; the Kubernetes
// autoscaler syncs every 15 s and adds at most 4 pods a period.
func policyDefaults(p PlannerPolicy) (interval des.Time, step int) {
	switch p {
	case PlannerThroughput:
		return 180 * des.Second, 8
	case PlannerTarget:
		return 15 * des.Second, 4
	}
	return 5 * des.Second, 1
}

func plannerDefaults() *Planner {
	return &Planner{
		Policy: PlannerNone, MinWorkers: 1, MaxWorkers: 64, Startup: Duration(30 * des.Second), Tail: Duration(10 * des.Minute),
		SLO:        &SLO{TTFT: Duration(500 * des.Millisecond), ITL: Duration(50 * des.Millisecond)},
		Load:       LoadPolicy{QueueUp: 5, QueueDown: 0.5, KVUp: 0.8, KVDown: 0.3},
		Throughput: ThroughputPolicy{RequestsPerWorkerS: 2},
		Target:     TargetPolicy{Metric: TargetQueue, Value: 4, Tolerance: 0.1, ScaleDownWindow: Duration(5 * des.Minute), Hold: true},
		ScaleIn:    ScaleIn{Pick: PickHighestID},
	}
}

// validatePlanner fills the policy's deployed interval and step where the
// scenario leaves them unset (policyDefaults) and checks the planner's
// keys.
func (sc *Scenario) validatePlanner(c *check) {
	p := sc.Planner
	if p == nil {
		return
	}
	interval, step := policyDefaults(p.Policy)
	if p.Interval == 0 && !sc.Has("planner.interval") {
		p.Interval = Duration(interval)
	}
	if p.Step == 0 && !sc.Has("planner.step") {
		p.Step = step
	}
	oneOf(c, "planner.policy", p.Policy, PlannerPolicies...)
	if s := p.SLO; s != nil {
		c.durationAtLeast("planner.slo.ttft", s.TTFT, 1)
		c.durationAtLeast("planner.slo.itl", s.ITL, 1)
	}
	c.durationAtLeast("planner.interval", p.Interval, des.Millisecond)
	c.atLeast("planner.min_workers", int64(p.MinWorkers), 1)
	if p.MaxWorkers < p.MinWorkers {
		c.fail("planner.max_workers", "must be at least min_workers (%d), got %d", p.MinWorkers, p.MaxWorkers)
	}
	c.atLeast("planner.step", int64(p.Step), 1)
	c.durationAtLeast("planner.startup", p.Startup, 0)
	c.durationAtLeast("planner.tail", p.Tail, 0)
	l := p.Load
	c.nonNegative("planner.load.queue_down", l.QueueDown)
	if !(l.QueueUp > l.QueueDown) {
		if sc.blame("planner.load.queue_up", "planner.load.queue_down") == "planner.load.queue_down" {
			c.fail("planner.load.queue_down", "must be below queue_up (%g), got %g", l.QueueUp, l.QueueDown)
		} else {
			c.fail("planner.load.queue_up", "must be above queue_down (%g), got %g", l.QueueDown, l.QueueUp)
		}
	}
	if !(l.KVDown >= 0 && l.KVDown < l.KVUp && l.KVUp <= 1) {
		key := "planner.load.kv_up"
		if l.KVUp <= 1 && (l.KVDown < 0 || sc.blame(key, "planner.load.kv_down") == "planner.load.kv_down") {
			key = "planner.load.kv_down"
		}
		c.fail(key, "want 0 <= kv_down < kv_up <= 1 (G1 usage), got kv_down %g and kv_up %g", l.KVDown, l.KVUp)
	}
	c.positive("planner.throughput.requests_per_worker_s", p.Throughput.RequestsPerWorkerS)
	t := p.Target
	oneOf(c, "planner.target.metric", t.Metric, TargetMetrics...)
	c.positive("planner.target.value", t.Value)
	if !(t.Tolerance >= 0 && t.Tolerance < 1) {
		c.fail("planner.target.tolerance", "must be in [0, 1), got %g", t.Tolerance)
	}
	c.durationAtLeast("planner.target.scale_down_window", t.ScaleDownWindow, 0)
	oneOf(c, "planner.scale_in.pick", p.ScaleIn.Pick, Picks...)
	c.durationAtLeast("planner.scale_in.drain_timeout", p.ScaleIn.DrainTimeout, 0)
	sc.validateBudget(c, "planner.scale_in.evacuate", p.ScaleIn.Evacuate, true, "drain")
	sc.validateBudget(c, "planner.prewarm", p.Prewarm, true, "add")
}

// blame is which of two keys that disagree an error names: the one the
// scenario or a --set wrote when the other is its default, else the first.
func (sc *Scenario) blame(first, second string) string {
	if sc.Has(second) && !sc.Has(first) {
		return second
	}
	return first
}

// AddEvent is the add event a planner's decision at now to add n
// workers becomes: its startup and prewarm, origin planner.
func (p *Planner) AddEvent(now des.Time, n int) Event {
	return Event{At: Duration(now), Add: n, Startup: p.Startup, Prewarm: p.Prewarm, OnRemove: RemoveReroute, Origin: OriginPlanner}
}

// DrainEvent is the drain event a planner's decision at now to drain n
// workers becomes: scale_in's pick, drain timeout and evacuation, origin
// planner.
func (p *Planner) DrainEvent(now des.Time, n int) Event {
	return Event{At: Duration(now), Drain: &Selection{Count: n, Pick: p.ScaleIn.Pick}, DrainTimeout: p.ScaleIn.DrainTimeout,
		Evacuate: p.ScaleIn.Evacuate, OnRemove: RemoveReroute, Origin: OriginPlanner}
}
