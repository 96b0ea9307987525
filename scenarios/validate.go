package scenarios

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/workload"
)

// ErrAt is bad input at key: an InputError naming the file and the line
// where key (or the nearest enclosing key) was written.
func (sc *Scenario) ErrAt(key, format string, a ...any) error {
	file := sc.DisplayFile()
	for k := key; k != ""; {
		if l, ok := sc.pos[k]; ok {
			err := fmt.Errorf(format, a...)
			if !l.flag { // the file's line, but a --set inside it may be what is wrong
				if set := sc.setUnder(key); set != "" {
					err = fmt.Errorf("%w (with --set %s)", err, set)
				}
			}
			return &InputError{File: l.file, Line: l.line, Key: key, Err: err}
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return &InputError{File: file, Key: key, Err: fmt.Errorf(format, a...)}
}

// setUnder is the first, in order, of the keys inside key that a --set
// wrote, at their deepest ("events[0].slow.factor", not "events[0].slow");
// "" when none did.
func (sc *Scenario) setUnder(key string) string {
	inside := func(k, of string) bool { return strings.HasPrefix(k, of+".") || strings.HasPrefix(k, of+"[") }
	var set []string
	for k, l := range sc.pos {
		if l.flag && inside(k, key) {
			set = append(set, k)
		}
	}
	slices.Sort(set)
	for i, k := range set {
		if i+1 == len(set) || !inside(set[i+1], k) { // sorted: a key's inner keys follow it
			return k
		}
	}
	return ""
}

// Has reports whether key was written in the file or by --set.
func (sc *Scenario) Has(key string) bool {
	_, ok := sc.pos[key]
	return ok
}

type check struct {
	sc   *Scenario
	errs []error
}

func (c *check) fail(key, format string, a ...any) {
	if c.sc.failed[key] {
		return // blamed by decoding already
	}
	c.errs = append(c.errs, c.sc.ErrAt(key, format, a...))
}

func (c *check) atLeast(key string, v, lo int64) {
	if v < lo {
		c.fail(key, "must be at least %d, got %d", lo, v)
	}
}

// durationAtLeast is atLeast for a duration key, naming durations.
func (c *check) durationAtLeast(key string, v Duration, lo des.Time) {
	if des.Time(v) < lo {
		c.fail(key, "must be at least %v, got %v", lo, des.Time(v))
	}
}

// perTokenAtLeast0 is durationAtLeast for a per-token cost.
func (c *check) perTokenAtLeast0(key string, v PerToken) {
	if v < 0 {
		c.fail(key, "must be at least 0s, got %s", v.duration())
	}
}

func (c *check) positive(key string, v float64) {
	if !(v > 0) {
		c.fail(key, "must be positive, got %g", v)
	}
}

// MinGbps is the lowest bandwidth a link may have, 1 MB/s, but 0 where 0
// means instant or unbounded. Slower is a unit's typo, not a link, and its
// transfers would keep the run (which samples its workers every
// report.sample_interval to its last event) going as long as they take:
// years at 1e-12 GB/s.
const MinGbps = 0.001

// bandwidth checks a link's GB/s: at least MinGbps, or 0 where zero (its
// meaning) is allowed.
func (c *check) bandwidth(key string, v float64, zero string) {
	switch {
	case v >= MinGbps || zero != "" && v == 0:
	case zero != "":
		c.fail(key, "must be 0 (%s) or at least %g GB/s (1 MB/s), got %g", zero, MinGbps, v)
	default:
		c.fail(key, "must be at least %g GB/s (1 MB/s), got %g", MinGbps, v)
	}
}

func (c *check) nonNegative(key string, v float64) {
	if v < 0 {
		c.fail(key, "must not be negative, got %g", v)
	}
}

// oneOf checks an enum value, suggesting the allowed value nearest a typo.
func oneOf[T ~string](c *check, key string, v T, allowed ...T) {
	if slices.Contains(allowed, v) {
		return
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	hint := ""
	if best := Closest(string(v), names); best != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	}
	c.fail(key, "%q is not one of %s%s", v, strings.Join(names, ", "), hint)
}

// validate checks every value's range and the combinations of keys. Errors
// come in key order, the first one first: section by section (workload,
// cluster, router, kvcr, events, then expect and report).
func (sc *Scenario) validate() error {
	c := &check{sc: sc}
	sc.validateWorkload(c)
	sc.validateCluster(c)
	sc.validateRouter(c)
	sc.validateKVCR(c)
	sc.validateEvents(c)
	sc.validateChaos(c)
	sc.validatePlanner(c)
	sc.validateReport(c)
	return errors.Join(c.errs...)
}

// validateWorkload checks workload: one of a trace and a synthetic
// workload, and its keys. It fills in a trace's format from its file when
// the scenario names none.
func (sc *Scenario) validateWorkload(c *check) {
	w := &sc.Workload
	switch {
	case w.Trace == nil && w.Synthetic == nil:
		c.fail("workload", "set workload.trace or workload.synthetic")
	case w.Trace != nil && w.Synthetic != nil:
		c.fail("workload", "set only one of workload.trace and workload.synthetic")
	}
	if t := w.Trace; t != nil {
		if t.Path == "" {
			c.fail("workload.trace.path", "missing")
		}
		if t.Format == "" {
			t.Format = workload.FormatMooncake
			if strings.EqualFold(filepath.Ext(t.Path), ".csv") {
				t.Format = workload.FormatAzure
			} else if p, err := sc.tracePath(); t.Path != "" && err == nil && isOtelFile(p) {
				t.Format = workload.FormatOtel
			}
		}
		if p, err := sc.tracePath(); t.Path != "" && err == nil {
			if fi, err := os.Stat(p); err == nil && workload.Stream(fi.Mode()) {
				c.fail("workload.trace.path", "%s is a pipe or a device, which can be read only once: a run reads its trace more than once "+
					"(its identity, its extent, the run, each event's twin); write it to a file and give that", t.Path)
			}
		}
		oneOf(c, "workload.trace.format", t.Format, workload.Formats...)
		c.atLeast("workload.trace.block_size", int64(t.BlockSize), 1)
		c.positive("workload.trace.time_scale", t.TimeScale)
		c.atLeast("workload.trace.limit", int64(t.Limit), 0)
		c.atLeast("workload.trace.skip", int64(t.Skip), 0)
		if t.Limit > 0 && t.Skip >= t.Limit {
			c.fail("workload.trace.skip", "skips all %d requests the limit keeps", t.Limit)
		}
		c.atLeast("workload.trace.shared_prefix", int64(t.SharedPrefix), 0)
		c.durationAtLeast("workload.trace.arrival_jitter", t.ArrivalJitter, 0)
		if t.SharedPrefix != 0 && t.Format != workload.FormatOtel {
			c.fail("workload.trace.shared_prefix", "applies only to format otel, whose prompts are unknown; a %s trace says what its prompts share", t.Format)
		}
	}
	if s := w.Synthetic; s != nil {
		c.atLeast("workload.synthetic.requests", int64(s.Requests), 1)
		c.positive("workload.synthetic.rate", s.Rate)
		oneOf(c, "workload.synthetic.arrival", s.Arrival, workload.Arrivals...)
		for _, l := range []struct {
			key  string
			mean float64
		}{{"workload.synthetic.input.mean", s.Input.Mean}, {"workload.synthetic.output.mean", s.Output.Mean}} {
			if !(l.mean >= 1 && l.mean <= workload.MaxTokens) {
				c.fail(l.key, "must be from 1 to %d tokens, got %g", workload.MaxTokens, l.mean)
			}
		}
		c.nonNegative("workload.synthetic.input.sigma", s.Input.Sigma)
		c.nonNegative("workload.synthetic.output.sigma", s.Output.Sigma)
		c.atLeast("workload.synthetic.prefix_groups", int64(s.PrefixGroups), 0)
		c.atLeast("workload.synthetic.shared_prefix", int64(s.SharedPrefix), 0)
		c.atLeast("workload.synthetic.turns", int64(s.Turns), 1)
		c.durationAtLeast("workload.synthetic.think_time", s.ThinkTime, 0)
	}
	if sc.Has("workload.envelope") && len(w.Envelope) == 0 {
		c.fail("workload.envelope", "empty: give at least one segment {for: DURATION, rate: FACTOR}, or leave the key out")
	}
	for i, s := range w.Envelope {
		if s.bad {
			continue // decoding said what is wrong with it
		}
		key := fmt.Sprintf("workload.envelope[%d]", i)
		c.durationAtLeast(key+".for", s.For, 1)
		c.positive(key+".rate", s.Rate)
	}
}

// validateCluster checks cluster: the workers, the engine and its timing
// model, and the G2 pools.
func (sc *Scenario) validateCluster(c *check) {
	cl := &sc.Cluster
	c.atLeast("cluster.workers", int64(cl.Workers), 1)
	c.atLeast("cluster.migration_limit", int64(cl.MigrationLimit), 0)
	e := &cl.Engine
	c.atLeast("cluster.engine.block_size", int64(e.BlockSize), engine.MinBlockSize)
	if e.GPUBlocks != 0 && e.GPUBlocks < engine.MinGPUBlocks {
		c.fail("cluster.engine.gpu_blocks", "must be 0 (derived) or at least %d, got %d", engine.MinGPUBlocks, e.GPUBlocks)
	}
	c.atLeast("cluster.engine.kv_bytes_per_token", e.KVBytesPerToken, 0)
	c.atLeast("cluster.engine.max_num_seqs", int64(e.MaxNumSeqs), engine.MinMaxNumSeqs)
	c.atLeast("cluster.engine.max_batched_tokens", int64(e.MaxBatchedTokens), engine.MinMaxBatchedTokens)
	c.atLeast("cluster.engine.max_model_len", int64(e.MaxModelLen), 0)
	oneOf(c, "cluster.engine.admission", e.Admission, engine.Admissions...)
	sc.validateTiming(c)
	c.atLeast("cluster.g2.capacity_blocks", int64(cl.G2.CapacityBlocks), -1)
	c.bandwidth("cluster.g2.d2h_gbps", cl.G2.D2HGbps, "instant")
	c.bandwidth("cluster.g2.h2d_gbps", cl.G2.H2DGbps, "instant")
}

// validateRouter checks router: the policy, its weights and the hints.
func (sc *Scenario) validateRouter(c *check) {
	r := &sc.Router
	oneOf(c, "router.policy", r.Policy, scheduler.Policies...)
	c.nonNegative("router.overlap_credit", r.OverlapCredit)
	c.nonNegative("router.host_hit_weight", r.HostHitWeight)
	c.nonNegative("router.prefill_load_scale", r.PrefillLoadScale)
	c.durationAtLeast("router.event_delay", r.EventDelay, 0)
	c.nonNegative("router.temperature", r.Temperature)
	if r.Temperature > 0 && r.Policy != scheduler.KVAware {
		c.fail("router.temperature", "applies only to router.policy %s (a softmax over its costs), not %s; leave it 0", scheduler.KVAware, r.Policy)
	}
	oneOf(c, "router.hints.mode", r.Hints.Mode, kvcr.Modes...)
	c.atLeast("router.hints.min_blocks", int64(r.Hints.MinBlocks), 1)
	oneOf(c, "router.hints.policy", r.Hints.Policy, scheduler.HintPolicies...)
}

// validateKVCR checks kvcr: its latencies, bandwidths, timeouts and windows.
func (sc *Scenario) validateKVCR(c *check) {
	k := &sc.KVCR
	c.durationAtLeast("kvcr.latency", k.Latency, 0)
	c.bandwidth("kvcr.bandwidth_gbps", k.BandwidthGbps, "")
	c.bandwidth("kvcr.ingress_gbps", k.IngressGbps, "unbounded")
	c.durationAtLeast("kvcr.operation_timeout", k.OperationTimeout, 1)
	c.atLeast("kvcr.max_inflight_pulls", int64(k.MaxInflightPulls), 0)
	c.durationAtLeast("kvcr.loss_notice", k.LossNotice, 0)
	c.durationAtLeast("kvcr.descriptor_cost", k.DescriptorCost, 0)
	c.atLeast("kvcr.descriptors_per_block", int64(k.DescriptorsPerBlock), 1)
	c.durationAtLeast("kvcr.session_setup", k.SessionSetup, 0)
	c.durationAtLeast("kvcr.background_timeout", k.BackgroundTimeout, 0)
	c.atLeast("kvcr.background_inflight", int64(k.BackgroundInflight), 0)
	switch { // abandon < 2 x operation, for integers, without 2 x overflowing
	case k.AbandonTimeout/2 >= k.OperationTimeout:
	case des.Time(k.OperationTimeout) > des.MaxTime/2:
		c.fail("kvcr.operation_timeout", "must be at most half of virtual time (%v), so that abandon_timeout, at least twice it, fits; got %v",
			des.MaxTime/2, des.Time(k.OperationTimeout))
	default:
		c.fail("kvcr.abandon_timeout", "must be at least 2 x operation_timeout (%v), got %v",
			des.Time(2*k.OperationTimeout), des.Time(k.AbandonTimeout))
	}
}

// validateReport checks the expect entries and report.
func (sc *Scenario) validateReport(c *check) {
	for i, s := range sc.Expect {
		if _, err := ParseExpectation(s); err != nil {
			c.fail(fmt.Sprintf("expect[%d]", i), "%v", err)
		}
	}
	if sc.Report.SampleInterval < Duration(des.Millisecond) {
		c.fail("report.sample_interval", "must be at least 1ms (one time-series row a worker a sample), got %v", des.Time(sc.Report.SampleInterval))
	}
	c.durationAtLeast("report.event_window", sc.Report.EventWindow, 1)
}

// timingKeys lists the keys each timing model takes besides model and the
// hardware keys.
var timingKeys = map[TimingModel][]string{
	TimingFixed:      {"prefill", "decode"},
	TimingLinear:     {"base", "per_prefill_token", "per_decode_token", "per_context_token"},
	TimingPolynomial: {"speedup_ratio"},
	TimingRoofline:   {"mfu", "mbu", "overhead"},
}

// hardwareKeys name the GPU and model; every timing model takes them.
var hardwareKeys = []string{"gpu", "model_preset", "model_config", "tp"}

// validateTiming checks cluster.engine.timing: a known model, no key of
// another model, the hardware, and the model's own keys.
func (sc *Scenario) validateTiming(c *check) {
	t := &sc.Cluster.Engine.Timing
	const p = "cluster.engine.timing."
	keys, ok := timingKeys[t.Model]
	if !ok {
		oneOf(c, p+"model", t.Model, TimingModels...)
		return
	}
	for _, model := range TimingModels {
		for _, key := range timingKeys[model] {
			if model != t.Model && sc.Has(p+key) && !slices.Contains(keys, key) {
				c.fail(p+key, "belongs to timing model %s, not %s", model, t.Model)
			}
		}
	}
	sc.validateHardware(c)
	switch t.Model {
	case TimingFixed:
		c.durationAtLeast(p+"prefill", t.Prefill, 0)
		c.durationAtLeast(p+"decode", t.Decode, 0)
	case TimingLinear:
		c.durationAtLeast(p+"base", t.Base, 0)
		c.perTokenAtLeast0(p+"per_prefill_token", t.PerPrefillToken)
		c.perTokenAtLeast0(p+"per_decode_token", t.PerDecodeToken)
		c.perTokenAtLeast0(p+"per_context_token", t.PerContextToken)
	case TimingPolynomial:
		c.positive(p+"speedup_ratio", t.SpeedupRatio)
	case TimingRoofline:
		if !(t.MFU > 0 && t.MFU <= 1) {
			c.fail(p+"mfu", "must be in (0, 1], got %g", t.MFU)
		}
		if !(t.MBU > 0 && t.MBU <= 1) {
			c.fail(p+"mbu", "must be in (0, 1], got %g", t.MBU)
		}
		c.durationAtLeast(p+"overhead", t.Overhead, 0)
	}
}

// validateHardware checks the hardware keys. Roofline names the hardware
// by default (h100, llama-3.1-8b, tp 1); another model names it when any
// hardware key is written, and then needs gpu and a model. model_config
// replaces the default model_preset; both written is an error.
func (sc *Scenario) validateHardware(c *check) {
	t := &sc.Cluster.Engine.Timing
	const p = "cluster.engine.timing."
	named := t.Model == TimingRoofline
	for _, key := range hardwareKeys {
		named = named || sc.Has(p+key)
	}
	if !named {
		return
	}
	if t.ModelConfig != "" {
		if sc.Has(p + "model_preset") {
			c.fail(p+"model_config", "set only one of model_preset and model_config")
			return
		}
		t.ModelPreset = "" // the roofline default gives way
	}
	if t.Model != TimingRoofline && !sc.Has(p+"tp") {
		t.TP = 1
	}
	if t.GPU == "" {
		c.fail(p+"gpu", "missing: a timing model that names its model (model_preset, model_config) or tp names its gpu too, one of %s", strings.Join(engine.GPUNames(), ", "))
	} else {
		oneOf(c, p+"gpu", t.GPU, engine.GPUNames()...)
	}
	if t.ModelPreset == "" && t.ModelConfig == "" {
		c.fail(p+"model_preset", "missing: a timing model that names its gpu names its model too: model_preset (one of %s) or model_config", strings.Join(engine.ModelNames(), ", "))
	} else if t.ModelPreset != "" {
		oneOf(c, p+"model_preset", t.ModelPreset, engine.ModelNames()...)
	}
	c.atLeast(p+"tp", int64(t.TP), 1)
}

// Warnings lists what in a valid scenario is probably not what its author
// meant, each naming the file, line and key as an error does. (A lifecycle
// event after the last arrival is known only once the workload has been
// read; replay warns of it after the run.)
func (sc *Scenario) Warnings() []string {
	var w []string
	if sc.Router.Hints.Enabled && !sc.KVCR.Enabled && sc.Has("router.hints") { // on by default: warn only when a hints key was written
		w = append(w, sc.ErrAt("router.hints.enabled", "hints are on but kvcr.enabled is false: the router attaches hints that nothing pulls").Error())
	}
	if ch := sc.Chaos; ch != nil && ch.Rates == (ChaosRates{}) && ch.PullErrors == 0 {
		w = append(w, sc.ErrAt("chaos", "every rate and pull_errors is 0: chaos draws no fault (only its settle check runs)").Error())
	}
	if ch, k := sc.Chaos, sc.KVCR; ch != nil && k.Enabled && ch.Settle < k.AbandonTimeout { // validation holds abandon_timeout >= 2 x operation_timeout
		longer := fmt.Sprintf("kvcr.abandon_timeout (%v)", des.Time(k.AbandonTimeout))
		if ch.Settle < k.OperationTimeout {
			longer = fmt.Sprintf("kvcr.operation_timeout (%v) and %s", des.Time(k.OperationTimeout), longer)
		}
		w = append(w, sc.ErrAt("chaos.settle", "%v is shorter than %s: a pull chaos delays may outlast it and fail the check that the cluster settles after chaos; "+
			"set it longer than kvcr.abandon_timeout plus the longest write", des.Time(ch.Settle), longer).Error())
	}
	if sc.Router.Hints.Policy == scheduler.HintsCost && !sc.Router.Hints.Enabled {
		w = append(w, sc.ErrAt("router.hints.policy", "%s weighs hints, but router.hints.enabled is false: the router attaches none", scheduler.HintsCost).Error())
	}
	if k := sc.KVCR; !sc.Orders() { // a value other than the default, which a resolved scenario writes
		for _, b := range []struct {
			key   string
			other bool
		}{{"kvcr.background_timeout", k.BackgroundTimeout != 0}, {"kvcr.background_inflight", k.BackgroundInflight != 1}} {
			if b.other {
				w = append(w, sc.ErrAt(b.key, "applies to request-independent pulls only, and neither an event nor the planner evacuates or prewarms: it changes nothing").Error())
			}
		}
	}
	if sc.HasPlanner() { // ids go to workers in the order they are added, the planner's adds among the scenario's
		for i := range sc.Events {
			if s := sc.Events[i].Workers(); s != nil && slices.ContainsFunc(s.IDs, func(id int) bool { return id >= sc.Cluster.Workers }) {
				w = append(w, sc.ErrAt(fmt.Sprintf("events[%d]", i), "names a worker of id %d or more, which only an add makes; the planner adds workers too, "+
					"and ids go in the order workers are added, so the id may be one of the planner's: pick by count (drain: {count: N, pick: ...}) to act on what is there",
					sc.Cluster.Workers).Error())
			}
		}
	}
	if tr := sc.Workload.Trace; tr != nil && tr.Format == workload.FormatOtel && tr.TimeScale != 1 {
		w = append(w, sc.ErrAt("workload.trace.time_scale", "%g changes the load the server's latencies were measured under: the comparison with them is not like for like", tr.TimeScale).Error())
	}
	if tr := sc.Workload.Trace; tr != nil && tr.Format == workload.FormatOtel && len(sc.Workload.Envelope) > 0 {
		w = append(w, sc.ErrAt("workload.envelope", "changes the load the server's latencies were measured under: the comparison with them is not like for like").Error())
	}
	for i, ev := range sc.Events {
		switch {
		case ev.Origin != OriginScenario:
		case ev.Slow != nil && ev.Slow.Factor == 1:
			w = append(w, sc.ErrAt(fmt.Sprintf("events[%d].slow.factor", i), "1 slows nothing: every pass takes as long as without the fault, which tests nothing").Error())
		case ev.Link != nil && ev.Link.Factor == 1:
			w = append(w, sc.ErrAt(fmt.Sprintf("events[%d].link.factor", i), "1 runs the links at their full rate: the fault tests nothing").Error())
		}
	}
	t := sc.Cluster.Engine.Timing
	if (t.Model == TimingFixed && t.Prefill == 0 && t.Decode == 0) ||
		(t.Model == TimingLinear && t.Base == 0 && t.PerPrefillToken == 0 && t.PerDecodeToken == 0 && t.PerContextToken == 0) {
		w = append(w, sc.ErrAt("cluster.engine.timing", "the %s timing model takes no time: every pass is instant, so every latency is 0", t.Model).Error())
	}
	return w
}

// LateEvents warns of the lifecycle events after lastArrival, the virtual
// time the workload's last request arrived: no request is routed after
// them, so they change only where the work in flight ends.
// The faults chaos drew are not the file's to name one by one: one
// warning says how many came after.
func (sc *Scenario) LateEvents(lastArrival des.Time) []string {
	var w []string
	drawn, first := 0, des.Time(0)
	for i, ev := range sc.Events {
		switch {
		case des.Time(ev.At) <= lastArrival:
		case ev.Origin == OriginChaos:
			if drawn == 0 {
				first = des.Time(ev.At)
			}
			drawn++
		default:
			w = append(w, sc.ErrAt(fmt.Sprintf("events[%d].at", i), "%v is after the last arrival (%v): no request arrives after this event",
				des.Time(ev.At), lastArrival).Error())
		}
	}
	if drawn > 0 {
		faults, verb := fmt.Sprintf("%d faults", drawn), "are"
		if drawn == 1 {
			faults, verb = "1 fault", "is"
		}
		w = append(w, sc.ErrAt("chaos.to", "%s chaos drew, the first at %v, %s after the last arrival (%v): no request arrives after them; "+
			"a chaos.to at most the last arrival draws only faults that requests meet", faults, first, verb, lastArrival).Error())
	}
	return w
}

// validateEvents checks each event in order against the workers that exist
// when it happens. A pick's workers are known only at its time: it takes
// that many of the live ones, and a later id is checked only against the
// workers listed before it.
func (sc *Scenario) validateEvents(c *check) {
	live := make([]bool, max(sc.Cluster.Workers, 0)) // by id: not listed in a drain or remove
	for i := range live {
		live[i] = true
	}
	left := len(live) // workers neither listed nor picked by a drain or remove so far
	var last Duration
	for i, ev := range sc.Events {
		key := fmt.Sprintf("events[%d]", i)
		if ks := ev.kinds(); len(ks) != 1 {
			c.fail(key, "set exactly one of %s", strings.Join(Kinds, ", "))
			continue
		}
		if ev.At < 0 {
			c.fail(key+".at", "must not be negative, got %v", des.Time(ev.At))
		}
		if sc.Has(key) && !sc.Has(key+".at") { // written without at (chaos's drawn events are not written)
			c.fail(key+".at", "required: when the event happens (a duration from the trace's start, like 10m)")
		}
		if ev.At >= 0 && ev.At < last && ev.Origin == OriginScenario {
			c.fail(key+".at", "events must be in time order (%v before %v)", des.Time(ev.At), des.Time(last))
		}
		if ev.Origin == OriginScenario {
			last = max(last, ev.At)
		}
		oneOf(c, key+".origin", ev.Origin, OriginScenario, OriginChaos)
		if ev.DrainTimeout != 0 && ev.Drain == nil {
			c.fail(key+".drain_timeout", "only applies to drain")
		}
		if sc.Has(key+".on_remove") && ev.Remove == nil && ev.Down == nil && (ev.Drain == nil || ev.DrainTimeout == 0) {
			c.fail(key+".on_remove", "only applies to remove, down, and a drain with a drain_timeout (the requests of the workers it removes)")
		}
		if ev.OnRemove == RemoveMigrate && sc.Cluster.MigrationLimit < 1 {
			c.fail(key+".on_remove", "migrate needs cluster.migration_limit of at least 1 (the times a request may move), got %d", sc.Cluster.MigrationLimit)
		}
		if ev.Startup != 0 && ev.Add == 0 && ev.Down == nil {
			c.fail(key+".startup", "only applies to add and down")
		}
		if ev.For != 0 && !ev.Fault() {
			c.fail(key+".for", "only applies to a fault (link, slow, pull_errors, notices, down)")
		}
		c.durationAtLeast(key+".for", ev.For, 0)
		if ev.For > 0 && ev.At >= 0 && des.Time(ev.For) > des.MaxTime-des.Time(ev.At) {
			c.fail(key+".for", "the window would end past the end of virtual time (about 292 years), at %v + %v; without for, the fault lasts to the end of the run", des.Time(ev.At), des.Time(ev.For))
		}
		sc.validateBudget(c, key+".evacuate", ev.Evacuate, ev.Drain != nil, "drain")
		sc.validateBudget(c, key+".prewarm", ev.Prewarm, ev.Add != 0, "add")
		c.durationAtLeast(key+".drain_timeout", ev.DrainTimeout, 0)
		c.durationAtLeast(key+".startup", ev.Startup, 0)
		oneOf(c, key+".on_remove", ev.OnRemove, RemoveActions...)
		if ev.Fault() {
			sc.validateFault(c, key, &ev)
			sc.validateFaultWorkers(c, key+"."+ev.Kind()+".workers", ev.Workers(), len(live), ev)
			continue
		}
		sel, verb := ev.Drain, "drain"
		if ev.Remove != nil {
			sel, verb = ev.Remove, "remove"
		}
		if sel != nil && sel.bad {
			continue // its decoding error said what is wrong
		}
		if ev.Add != 0 {
			c.atLeast(key+".add", int64(ev.Add), 1)
			for range max(ev.Add, 0) {
				live = append(live, true)
			}
			left += max(ev.Add, 0)
			continue
		}
		if sel.Picked() {
			oneOf(c, key+"."+verb+".pick", sel.Pick, Picks...)
			switch {
			case sel.Count < 1:
				c.fail(key+"."+verb+".count", "must be at least 1, got %d", sel.Count)
			case sel.Count > left:
				c.fail(key+"."+verb+".count", "picks %d workers; only %d are neither drained nor removed at %v", sel.Count, left, des.Time(ev.At))
			}
			left -= max(sel.Count, 0)
		} else {
			if len(sel.IDs) == 0 {
				c.fail(key+"."+verb, "names no worker")
			}
			for j, id := range sel.IDs {
				if id < 0 || id >= len(live) || !live[id] {
					c.fail(fmt.Sprintf("%s.%s[%d]", key, verb, j), "worker %d does not exist or is already drained or removed at %v", id, des.Time(ev.At))
					continue
				}
				live[id] = false
				left--
			}
		}
		if ev.Drain != nil && left < 1 && !(sel.Picked() && sel.Count < 1) {
			c.fail(key+".drain", "drains every worker: no worker would be left to serve requests")
		}
	}
}

// validateFaultWorkers checks the workers a fault names at key: some must
// be named, unless the kind takes every worker without (notices), and
// each must exist at the event's time (n workers have been made by then).
// A fault may name a worker an earlier event drained or removed: it does
// nothing to it, and the run's warnings say so.
func (sc *Scenario) validateFaultWorkers(c *check, key string, sel *Selection, n int, ev Event) {
	switch {
	case sel == nil && ev.PullErrors == nil && ev.Notices == nil:
		c.fail(key, "missing: name the workers as a drain does (a list of ids, or {count: N, pick: P})")
	case sel == nil || sel.bad:
	case sel.Picked():
		oneOf(c, key+".pick", sel.Pick, Picks...)
		if sel.Count < 1 || sel.Count > n {
			c.fail(key+".count", "must be in [1, %d] (the workers at %v), got %d", n, des.Time(ev.At), sel.Count)
		}
	case len(sel.IDs) == 0:
		c.fail(key, "names no worker")
	default:
		for j, id := range sel.IDs {
			if id < 0 || id >= n {
				c.fail(fmt.Sprintf("%s[%d]", key, j), "worker %d does not exist at %v", id, des.Time(ev.At))
			}
			if slices.Contains(sel.IDs[:j], id) {
				c.fail(fmt.Sprintf("%s[%d]", key, j), "worker %d is named twice", id)
			}
		}
	}
}

// validateBudget checks an evacuate or prewarm budget b at key, which only
// an event of kind applies to (applies) and which needs KVCR and G2.
func (sc *Scenario) validateBudget(c *check, key string, b *Budget, applies bool, kind string) {
	switch {
	case b == nil:
	case !applies:
		c.fail(key, "only applies to %s", kind)
	case !sc.KVCR.Enabled:
		c.fail(key, "needs kvcr.enabled: true (its blocks move by KVCR pulls)")
	case sc.Cluster.G2.CapacityBlocks == 0:
		c.fail(key, "needs G2 (cluster.g2.capacity_blocks is 0): it moves G2 blocks")
	default:
		c.atLeast(key+".blocks", int64(b.Blocks), 1)
		if kind == "add" && b.Mode != "" {
			c.fail(key+".mode", "a prewarm copies (kv.prefetch); only evacuate takes a mode")
		} else if b.Mode != "" {
			oneOf(c, key+".mode", b.Mode, kvcr.Modes...)
		}
	}
}

// Orders reports whether the scenario's events, or its planner's, issue
// request-independent pulls (an evacuate or a prewarm).
func (sc *Scenario) Orders() bool {
	if p := sc.Planner; sc.HasPlanner() && (p.ScaleIn.Evacuate != nil || p.Prewarm != nil) {
		return true
	}
	for _, ev := range sc.Events {
		if ev.Evacuate != nil || ev.Prewarm != nil {
			return true
		}
	}
	return false
}

// resolve fills the derived values: trace path (made absolute), G1 size, KV bytes per token,
// max_model_len and G2 capacity.
func (sc *Scenario) resolve() error {
	if t := sc.Workload.Trace; t != nil {
		p, err := sc.tracePath()
		if err != nil {
			return err
		}
		t.Path = p
	}
	if err := sc.resolveHardware(); err != nil {
		return err
	}
	if sc.Cluster.G2.CapacityBlocks < 0 {
		sc.Cluster.G2.CapacityBlocks = 4 * sc.Cluster.Engine.GPUBlocks
	}
	return nil
}

// resolveHardware reads the model the timing names and derives from the
// hardware kv_bytes_per_token, max_model_len and gpu_blocks where they are
// 0 (sim.Prepare checks a timing model other than roofline against the
// hardware's physical bound).
func (sc *Scenario) resolveHardware() error {
	e := &sc.Cluster.Engine
	t := &e.Timing
	const p = "cluster.engine.timing."
	if !t.NamesHardware() {
		if e.KVBytesPerToken == 0 {
			return sc.ErrAt("cluster.engine.kv_bytes_per_token", "required when timing.model is %s and names no model (model_preset or model_config) to derive it from", t.Model)
		}
		if e.GPUBlocks == 0 {
			e.GPUBlocks = 16384
		}
		return nil
	}
	gpu, _ := engine.FindGPU(t.GPU)
	if t.ModelConfig != "" {
		path := sc.filePath(p+"model_config", t.ModelConfig, false)
		t.ModelConfig = path
		m, err := engine.LoadModelConfig(path)
		if err != nil {
			return sc.ErrAt(p+"model_config", "%v", err)
		}
		t.model = m
	} else {
		t.model, _ = engine.FindModel(t.ModelPreset)
	}
	model := t.model
	if e.KVBytesPerToken == 0 {
		e.KVBytesPerToken = model.KVBytesPerToken()
	}
	t.model.KVPerToken = e.KVBytesPerToken // the cache as configured, read by every pass
	if e.MaxModelLen == 0 {
		e.MaxModelLen = model.MaxModelLen
	}
	if e.GPUBlocks == 0 {
		r := engine.Roofline{GPU: gpu, Model: model, TP: t.TP}
		n, err := r.GPUBlocks(e.BlockSize, e.KVBytesPerToken)
		if err != nil {
			return sc.ErrAt("cluster.engine.timing", "%v", err)
		}
		e.GPUBlocks = n
	}
	return nil
}

// TraceEnvs are the environment variables a trace path may start with:
// the folder of the public traces and that of the measured vLLM traces.
var TraceEnvs = []string{"KVSIM_TRACES", "KVSIM_VLLM_TRACES"}

// tracePath is the trace file: $KVSIM_TRACES or $KVSIM_VLLM_TRACES
// expanded, relative to the scenario file's folder when written in the
// file, made absolute.
func (sc *Scenario) tracePath() (string, error) {
	t := sc.Workload.Trace
	fromEnv := false
	for _, env := range TraceEnvs {
		if !strings.Contains(t.Path, "$"+env) && !strings.Contains(t.Path, "${"+env+"}") {
			continue
		}
		if os.Getenv(env) == "" {
			return "", sc.ErrAt("workload.trace.path", "uses $%s, which is not set: set it to the traces folder or pass --set workload.trace.path=FILE", env)
		}
		fromEnv = fromEnv || strings.HasPrefix(t.Path, "$"+env) || strings.HasPrefix(t.Path, "${"+env+"}")
	}
	p := os.Expand(t.Path, func(v string) string {
		if slices.Contains(TraceEnvs, v) {
			return os.Getenv(v)
		}
		return "$" + v
	})
	return sc.filePath("workload.trace.path", p, fromEnv), nil
}

// filePath resolves a file named by key: relative to the scenario file's
// folder when written in the file, to the working directory when given by
// --set or expanded from an environment variable (fromEnv); then absolute,
// so that the resolved scenario (a run's scenario.yaml) names the same file
// wherever it is loaded from.
func (sc *Scenario) filePath(key, path string, fromEnv bool) string {
	if !filepath.IsAbs(path) && sc.File != "" && !sc.isSet(key) && !fromEnv {
		path = filepath.Join(filepath.Dir(sc.File), path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path
}

// isOtelFile reports whether the regular file at path opens as OTLP JSON
// (its format cannot be told from a .json name). A file that cannot be read
// is not: opening the trace reports it.
func isOtelFile(path string) bool {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return workload.IsOtel(head[:n])
}

// isSet reports whether key came from --set or another flag (its paths are
// relative to the working directory, not the scenario file).
func (sc *Scenario) isSet(key string) bool {
	return sc.pos[key].flag
}

// Without is the scenario with event i left out (its twin's, DESIGN.md
// section 11) and no expect entries, which are the full scenario's. Its
// error says why the events left would not be valid, each by its index in
// sc: a later event may name a worker only event i adds, or drain the last
// worker only event i adds.
func (sc *Scenario) Without(i int) (*Scenario, error) {
	out := *sc
	out.Events = slices.Delete(slices.Clone(sc.Events), i, i+1)
	out.Expect = nil
	out.pos = sc.pos.without(i)
	c := &check{sc: &out}
	out.validateEvents(c)
	var msgs []string
	for _, err := range c.errs {
		var ie *InputError
		if !errors.As(err, &ie) {
			msgs = append(msgs, err.Error())
			continue
		}
		key := ie.Key
		if j, tail, ok := eventKey(key); ok && j >= i {
			key = fmt.Sprintf("events[%d]%s", j+1, tail)
		}
		msgs = append(msgs, key+": "+ie.Err.Error())
	}
	if len(msgs) > 0 {
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	return &out, nil
}

// without is the positions of the keys with event i's left out and the
// later events' renumbered down one, as in Without's scenario.
func (p positions) without(i int) positions {
	out := make(positions, len(p))
	for k, l := range p {
		j, tail, ok := eventKey(k)
		switch {
		case !ok || j < i:
			out[k] = l
		case j > i:
			out[fmt.Sprintf("events[%d]%s", j-1, tail)] = l
		}
	}
	return out
}

// eventKey splits a key of an event, "events[3].drain[0]", into its index
// and the rest, ".drain[0]".
func eventKey(key string) (int, string, bool) {
	rest, ok := strings.CutPrefix(key, "events[")
	if !ok {
		return 0, "", false
	}
	n, tail, ok := strings.Cut(rest, "]")
	j, err := strconv.Atoi(n)
	return j, tail, ok && err == nil
}
