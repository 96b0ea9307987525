package sim

import (
	"errors"
	"io"
	"os"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
	"github.com/kvsim/kvsim/workload"
)

// Plan is a loaded scenario turned into the model's configurations and
// checked against them. Prepare is the one place where a scenario becomes
// the engine, timing, router and KVCR configurations: replay, validate,
// sweep, calibrate and the progress bar all go through it, so what validate
// accepts is what replay runs.
type Plan struct {
	Scenario *scenarios.Scenario
	Engine   engine.Config    // every worker's, but for its ID and Chains, which the run sets
	Timing   engine.Timing    // the pass timing model
	Router   scheduler.Config // but for Chains, Workers and HintCosts.RNG, which the run sets
	KVCR     *kvcr.Config     // nil when KVCR is off; Chains and Workers are the run's
	// Workers bounds the workers the run holds at once: the initial ones
	// and every one an event adds (ids are never reused), or a planner's
	// max_workers when more; a planner's adds may reach ids past it.
	Workers int
	// Envelope is workload.envelope, nil without it (the identity).
	Envelope *workload.Envelope
	// trace is what reading the trace found, once it has been read whole
	// (readTrace); nil before.
	trace *traceRead
}

// traceRead is what reading a trace to its end found: its requests and
// the last arrival.
type traceRead struct {
	requests int64
	last     des.Time
}

// Prepare builds a resolved scenario's configurations and checks what the
// scenario's own validation cannot: the expect entries against the run's
// metrics, the engine configuration, and a timing model against the
// hardware it names. It reads no trace (ReadWorkload does).
func Prepare(sc *scenarios.Scenario) (*Plan, error) {
	if err := results.CheckExpect(sc); err != nil {
		return nil, err
	}
	e := sc.Cluster.Engine
	p := &Plan{Scenario: sc, Timing: passTiming(sc), Workers: sc.Cluster.Workers}
	p.Engine = engine.Config{
		BlockSize: e.BlockSize, GPUBlocks: e.GPUBlocks, MaxNumSeqs: e.MaxNumSeqs,
		MaxBatchedTokens: e.MaxBatchedTokens, ChunkedPrefill: e.ChunkedPrefill, PrefixCaching: e.PrefixCaching,
		Admission: e.Admission,
	}
	// The scenario's validation refuses the same bounds (engine.Min...), so
	// this holds today; it is here so that whatever engine.New would refuse
	// at the first worker, validate refuses too.
	if err := p.Engine.Validate(); err != nil {
		return nil, sc.ErrAt("cluster.engine", "%v", err)
	}
	if err := checkPhysics(sc, p.Timing); err != nil {
		return nil, err
	}
	kvOn := sc.KVCR.Enabled
	p.Router = scheduler.Config{
		Policy: sc.Router.Policy, OverlapCredit: sc.Router.OverlapCredit, HostHitWeight: sc.Router.HostHitWeight,
		PrefillLoadScale: sc.Router.PrefillLoadScale, EventDelay: des.Time(sc.Router.EventDelay),
		BlockSize: e.BlockSize, Hints: kvOn && sc.Router.Hints.Enabled && sc.Cluster.G2.CapacityBlocks > 0,
		HintMinBlocks: sc.Router.Hints.MinBlocks, HintPolicy: sc.Router.Hints.Policy, Temperature: sc.Router.Temperature,
	}
	if kvOn {
		k := sc.KVCR
		p.KVCR = &kvcr.Config{
			BlockBytes: int64(e.BlockSize) * e.KVBytesPerToken, G2Capacity: sc.Cluster.G2.CapacityBlocks,
			D2HGbps: sc.Cluster.G2.D2HGbps, H2DGbps: sc.Cluster.G2.H2DGbps, Latency: des.Time(k.Latency),
			BandwidthGbps: k.BandwidthGbps, IngressGbps: k.IngressGbps,
			OperationTimeout: des.Time(k.OperationTimeout), AbandonTimeout: des.Time(k.AbandonTimeout),
			MaxInflightPulls: k.MaxInflightPulls, LossNotice: des.Time(k.LossNotice), Opportunistic: k.OpportunisticQuery,
			BackgroundTimeout: des.Time(k.BackgroundTimeout), BackgroundInflight: k.BackgroundInflight,
			DescriptorCost: des.Time(k.DescriptorCost), DescriptorsPerBlock: k.DescriptorsPerBlock,
			SessionSetup: des.Time(k.SessionSetup), FairNet: ingressFault(sc),
		}
		p.Router.HintCosts = scheduler.HintCosts{Latency: p.KVCR.Latency, EgressRate: p.KVCR.EgressGbps(),
			BlockBytes: p.KVCR.BlockBytes, PassTime: passTimer(p.Timing, p.Engine)}
	}
	for _, ev := range sc.Events {
		p.Workers += ev.Add
	}
	if sc.HasPlanner() { // it holds up to max_workers at a time, whatever ids its adds reach
		p.Workers = max(p.Workers, sc.Planner.MaxWorkers)
	}
	if segs := sc.Workload.Envelope; len(segs) > 0 {
		env := make([]workload.Segment, len(segs))
		for i, s := range segs {
			env[i] = workload.Segment{For: des.Time(s.For), Rate: s.Rate}
		}
		var err error
		if p.Envelope, err = workload.NewEnvelope(env); err != nil { // refused by validation already
			return nil, sc.ErrAt("workload.envelope", "%v", err)
		}
	}
	return p, nil
}

// ingressFault reports whether a link fault of sc acts on ingress: then
// the run shares its links max-min fairly over egress and ingress
// (kvcr.Config.FairNet) from its start, and so do its twins (Plan.twin).
func ingressFault(sc *scenarios.Scenario) bool {
	for _, ev := range sc.Events {
		if ev.Link != nil && ev.Link.Direction.Ingress() {
			return true
		}
	}
	return false
}

// passTimer prices the router's passes (scheduler.Pass) with the engine's
// timing model, as the worker would count the batch: each decoding
// request one token attending to its context and itself, the prefill
// tokens attending to their prior tokens and each other, and the G1
// blocks in use those contexts' blocks (at most G1's capacity).
func passTimer(t engine.Timing, e engine.Config) scheduler.PassTimer {
	bs := int64(e.BlockSize)
	return func(p scheduler.Pass) des.Time {
		n, k := int64(p.Prefill), int64(p.Prior)
		b := engine.Batch{PrefillTokens: p.Prefill, DecodeTokens: p.DecodeSeqs, Seqs: p.DecodeSeqs,
			PriorContext: p.DecodeContext + k, AttnPairs: p.DecodeContext + int64(p.DecodeSeqs) + n*(2*k+n+1)/2,
			TotalBlocks: e.GPUBlocks}
		if n > 0 {
			b.Seqs++
		}
		b.UsedBlocks = int(min((p.DecodeContext+bs-1)/bs+(k+n+bs-1)/bs, int64(e.GPUBlocks)))
		return t.PassTime(&b)
	}
}

// passTiming builds the resolved scenario's pass timing model.
func passTiming(sc *scenarios.Scenario) engine.Timing {
	t := sc.Cluster.Engine.Timing
	switch t.Model {
	case scenarios.TimingFixed:
		return engine.Fixed{Prefill: des.Time(t.Prefill), Decode: des.Time(t.Decode)}
	case scenarios.TimingLinear:
		return engine.Linear{Base: float64(t.Base), PerPrefillToken: float64(t.PerPrefillToken),
			PerDecodeToken: float64(t.PerDecodeToken), PerContextToken: float64(t.PerContextToken)}
	case scenarios.TimingPolynomial:
		return engine.Polynomial{SpeedupRatio: t.SpeedupRatio}
	}
	gpu, model, tp, _ := sc.Hardware()
	return &engine.Roofline{GPU: gpu, Model: model, TP: tp, MFU: t.MFU, MBU: t.MBU, Overhead: des.Time(t.Overhead)}
}

// checkPhysics returns an error naming cluster.engine.timing when the
// timing model would run a pass faster than the hardware it names allows
// (engine.CheckPhysics); nil when it names no hardware, or is roofline, at
// or above the bound by construction (mfu, mbu <= 1).
func checkPhysics(sc *scenarios.Scenario, timing engine.Timing) error {
	e := &sc.Cluster.Engine
	gpu, model, tp, ok := sc.Hardware()
	if !ok || e.Timing.Model == scenarios.TimingRoofline {
		return nil
	}
	lim := engine.Limits{MaxNumSeqs: e.MaxNumSeqs, MaxBatchedTokens: e.MaxBatchedTokens, MaxModelLen: e.MaxModelLen,
		BlockSize: e.BlockSize, GPUBlocks: e.GPUBlocks}
	if err := engine.CheckPhysics(timing, gpu, model, tp, lim); err != nil {
		return sc.ErrAt("cluster.engine.timing", "the %s timing model is %v", e.Timing.Model, err)
	}
	return nil
}

// OpenSource opens the scenario's workload as a run reads it: the seeded
// generator (a *workload.Generator) of a synthetic workload, or the trace
// reader with the scenario's block sizes, time scale, limit, sort, skip,
// shared prefix and arrival jitter, each request's previous turn found
// last, in that order and numbering (workload.PrevTurns). The envelope,
// when the scenario has one, moves the generator's arrivals, or the
// trace's after skip and before the jitter (workload.Enveloped, whose
// Unwrap gives the generator). A trace's *workload.ParseError from Next
// names a line of sc.Workload.Trace.Path. Close the closer when done.
func (p *Plan) OpenSource() (workload.Source, io.Closer, error) {
	src, closer, err := p.openRequests()
	if err != nil || p.Scenario.Workload.Trace == nil { // a generator gives its requests' previous turns itself
		return src, closer, err
	}
	return workload.PrevTurns(src), closer, nil
}

// openRequests is OpenSource without the previous turns: the requests as
// a run reads them, for what needs only their count and arrivals.
func (p *Plan) openRequests() (workload.Source, io.Closer, error) {
	sc := p.Scenario
	e := sc.Cluster.Engine
	if s := sc.Workload.Synthetic; s != nil {
		g := workload.NewGenerator(workload.Synthetic{
			Requests: s.Requests, Rate: s.Rate, Arrival: s.Arrival,
			InputMean: s.Input.Mean, InputSigma: s.Input.Sigma, OutputMean: s.Output.Mean, OutputSigma: s.Output.Sigma,
			PrefixGroups: s.PrefixGroups, SharedPrefix: s.SharedPrefix, Turns: s.Turns,
			ThinkTime: des.Time(s.ThinkTime), BlockSize: e.BlockSize, MaxTokens: e.MaxModelLen,
		}, des.NewRNG(sc.Seed))
		return workload.Enveloped(g, p.Envelope), io.NopCloser(nil), nil
	}
	t := sc.Workload.Trace
	f, err := os.Open(t.Path)
	if err != nil {
		return nil, nil, sc.ErrAt("workload.trace.path", "cannot open trace: %w", err)
	}
	opt := workload.TraceOptions{TraceBlockSize: t.BlockSize, EngineBlockSize: e.BlockSize, TimeScale: t.TimeScale,
		Limit: t.Limit, Unsorted: t.Sort, SharedPrefix: t.SharedPrefix}
	src := workload.Open(t.Format, f, opt)
	if t.Sort {
		if src, err = workload.Sorted(src); err != nil {
			f.Close()
			return nil, nil, traceError(sc, err)
		}
	}
	if t.Skip > 0 {
		src = workload.Skip(src, t.Skip)
	}
	// The envelope maps each arrival alone, so it commutes with the limit,
	// the sort and the skip; the jitter comes after it, so that its size is
	// simulated time, whatever the segment's rate.
	src = workload.Enveloped(src, p.Envelope)
	if t.ArrivalJitter > 0 {
		src = workload.Jitter(src, des.Time(t.ArrivalJitter), des.NewRNG(sc.Seed).Stream("arrival-jitter"))
	}
	return src, f, nil
}

// ReadWorkload reads the workload to its end as a run reads it and returns
// how many requests it holds; its error is the one the run would stop
// with (a trace that cannot be opened or parsed, or holds no request). A
// synthetic workload is not drawn: its generator cannot fail and makes the
// requests the scenario asks for. A trace is read once a plan: CheckOutput
// may have read it already.
func (p *Plan) ReadWorkload() (int64, error) {
	if s := p.Scenario.Workload.Synthetic; s != nil {
		return int64(s.Requests), nil // at least 1, as validated
	}
	t, err := p.readTrace()
	return t.requests, err
}

// readTrace reads the plan's trace to its end as a run reads it, the first
// time it is called, and returns what it found: the requests read, up to
// the error if there is one, and the last arrival.
func (p *Plan) readTrace() (*traceRead, error) {
	if p.trace != nil {
		return p.trace, nil
	}
	sc := p.Scenario
	src, closer, err := p.openRequests() // the count and the last arrival: no previous turns
	if err != nil {
		return &traceRead{}, err
	}
	defer closer.Close()
	t := &traceRead{}
	for {
		r, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return t, traceError(sc, err)
		}
		t.requests++
		t.last = max(t.last, r.Arrival)
	}
	if t.requests == 0 {
		return t, errNoRequests(sc)
	}
	p.trace = t
	return t, nil
}

// errNoRequests is the error of a workload without a request.
func errNoRequests(sc *scenarios.Scenario) error {
	if t := sc.Workload.Trace; t != nil && t.Skip > 0 {
		return sc.ErrAt("workload.trace.skip", "the workload has no requests: %s holds none past the %d skipped", t.Path, t.Skip)
	}
	return &scenarios.InputError{File: traceFile(sc), Key: "workload", Err: errors.New("the workload has no requests")}
}

// traceFile names the workload's source in errors: the trace, or the
// scenario of a synthetic workload.
func traceFile(sc *scenarios.Scenario) string {
	if sc.Workload.Trace != nil {
		return sc.Workload.Trace.Path
	}
	return sc.DisplayFile()
}

// traceError names the trace file and the scenario key in a reader error,
// and the scenario's workload.envelope in an arrival it cannot place.
func traceError(sc *scenarios.Scenario, err error) error {
	var ee *workload.EnvelopeError
	if errors.As(err, &ee) {
		return sc.ErrAt("workload.envelope", "%v", ee)
	}
	var pe *workload.ParseError
	if errors.As(err, &pe) && sc.Workload.Trace == nil { // the synthetic generator's
		return sc.ErrAt(pe.Key, "%v", pe.Err)
	}
	if errors.As(err, &pe) {
		key := "workload.trace"
		if pe.Key != "" {
			key = pe.Key
		}
		return &scenarios.InputError{File: sc.Workload.Trace.Path, Line: pe.Line, Key: key, Err: pe.Err}
	}
	return err
}
