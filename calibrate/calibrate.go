// Package calibrate fits a scenario's timing model to a measured trace: it
// replays the trace with candidate parameters and minimises the error of
// the simulated per-request prefill and decode times against those the
// real server measured, with gonum's Nelder-Mead simplex method.
package calibrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// Param is one free parameter of a timing model: a key under
// cluster.engine.timing. Its value is either a fraction in (0, 1] or
// positive and unbounded; the optimizer moves an unbounded coordinate
// mapped into that range (logistic or exponential), so no candidate is
// ever out of range.
type Param struct {
	Key      string
	Fraction bool // in (0, 1]; otherwise > 0
	Duration bool // nanoseconds: a time, or a time per token
	get      func(*scenarios.Timing) float64
	set      func(*scenarios.Timing, float64)
	start    float64 // where the search starts when the scenario's value is 0
}

// value maps an optimizer coordinate to the parameter's value.
func (p Param) value(x float64) float64 {
	if p.Fraction {
		return 1 / (1 + math.Exp(-x))
	}
	return math.Exp(x)
}

// coord maps a value to its optimizer coordinate.
func (p Param) coord(v float64) float64 {
	if v <= 0 {
		v = p.start
	}
	if p.Fraction {
		v = min(max(v, 1e-3), 0.999)
		return math.Log(v / (1 - v))
	}
	return math.Log(v)
}

// Params returns the free parameters of a timing model: roofline's MFU, MBU
// and per-pass overhead; linear's four coefficients; fixed's two times;
// polynomial's speedup ratio.
func Params(model scenarios.TimingModel) []Param {
	dur := func(key string, start float64, f func(*scenarios.Timing) *scenarios.Duration) Param {
		return Param{Key: key, Duration: true, start: start,
			get: func(t *scenarios.Timing) float64 { return float64(*f(t)) },
			set: func(t *scenarios.Timing, v float64) { *f(t) = scenarios.Duration(math.Round(v)) }}
	}
	perToken := func(key string, start float64, f func(*scenarios.Timing) *scenarios.PerToken) Param {
		return Param{Key: key, Duration: true, start: start,
			get: func(t *scenarios.Timing) float64 { return float64(*f(t)) },
			set: func(t *scenarios.Timing, v float64) { *f(t) = scenarios.PerToken(v) }}
	}
	fraction := func(key string, f func(*scenarios.Timing) *float64) Param {
		return Param{Key: key, Fraction: true, start: 0.5,
			get: func(t *scenarios.Timing) float64 { return *f(t) },
			set: func(t *scenarios.Timing, v float64) { *f(t) = v }}
	}
	switch model {
	case scenarios.TimingRoofline:
		return []Param{
			fraction("mfu", func(t *scenarios.Timing) *float64 { return &t.MFU }),
			fraction("mbu", func(t *scenarios.Timing) *float64 { return &t.MBU }),
			dur("overhead", 1e6, func(t *scenarios.Timing) *scenarios.Duration { return &t.Overhead }),
		}
	case scenarios.TimingLinear:
		return []Param{
			dur("base", 1e6, func(t *scenarios.Timing) *scenarios.Duration { return &t.Base }),
			perToken("per_prefill_token", 1e4, func(t *scenarios.Timing) *scenarios.PerToken { return &t.PerPrefillToken }),
			perToken("per_decode_token", 1e5, func(t *scenarios.Timing) *scenarios.PerToken { return &t.PerDecodeToken }),
			perToken("per_context_token", 10, func(t *scenarios.Timing) *scenarios.PerToken { return &t.PerContextToken }),
		}
	case scenarios.TimingFixed:
		return []Param{
			dur("prefill", 1e7, func(t *scenarios.Timing) *scenarios.Duration { return &t.Prefill }),
			dur("decode", 1e7, func(t *scenarios.Timing) *scenarios.Duration { return &t.Decode }),
		}
	case scenarios.TimingPolynomial:
		return []Param{{Key: "speedup_ratio", start: 1,
			get: func(t *scenarios.Timing) float64 { return t.SpeedupRatio },
			set: func(t *scenarios.Timing, v float64) { t.SpeedupRatio = v }}}
	}
	return nil
}

// DefaultEvaluations is the replays a search makes at most unless
// Options.Evaluations says otherwise.
const DefaultEvaluations = 600

// Options tune a fit.
type Options struct {
	// Evaluations caps the replays the search makes; 0 means
	// DefaultEvaluations, a negative count is an error.
	Evaluations int
}

// Fitted is one parameter's value before and after the fit.
type Fitted struct {
	Key           string
	Duration      bool // the values are nanoseconds (Param.Duration)
	Before, After float64
}

// Result is a fit: each scenario's fitted timing, each parameter, and the
// comparison with the measurements before and after, by scenario.
type Result struct {
	Timing                []scenarios.Timing
	Params                []Fitted
	Before, After         []*report.Fidelity
	LossBefore, LossAfter float64
	Evaluations           int
}

// epsilon (0.1 ms) keeps the log ratio of a near-zero time finite.
const epsilon = 1e5

// missingPenalty is the squared log error of a measured request the
// candidate did not complete: as if it were off by a factor of ten.
var missingPenalty = math.Pow(math.Log(10), 2)

// Fit fits sc's timing model to its trace's measurements. The loss is the
// mean squared log ratio, simulated over measured, of each request's
// prefill time (first scheduling to first token) plus that of its mean
// decode gap (ITL), over the completed requests that carry both; log
// ratios weigh a request of 20 ms and one of 2 s alike. A candidate faster
// than the hardware the timing names allows (sim.Prepare checks it) is
// never chosen. sc is not modified.
func Fit(ctx context.Context, sc *scenarios.Scenario, opt Options) (*Result, error) {
	return FitAll(ctx, []*scenarios.Scenario{sc}, opt)
}

// FitAll fits one set of parameters to several scenarios of the same timing
// model at once (say, two models served on one GPU type), minimising the
// mean of their losses; each keeps its other timing keys (its model
// preset). The parameters start from the first scenario's values.
func FitAll(ctx context.Context, scs []*scenarios.Scenario, opt Options) (*Result, error) {
	model := scs[0].Cluster.Engine.Timing.Model
	params := Params(model)
	if len(params) == 0 {
		return nil, fmt.Errorf("calibrate: timing model %q has no parameters to fit", model)
	}
	if opt.Evaluations < 0 {
		return nil, fmt.Errorf("calibrate: %d evaluations: want at least 1 (0 for %d)", opt.Evaluations, DefaultEvaluations)
	}
	var runErr, runaway error // runaway: the last run stopped as one (sim.RunawayError)
	// eval replays every scenario with the parameter values of t and
	// returns the mean loss and each comparison.
	eval := func(t scenarios.Timing) (float64, []*report.Fidelity) {
		loss, fs := 0.0, make([]*report.Fidelity, len(scs))
		for i, sc := range scs {
			s := *sc // a copy whose timing the search changes
			s.Cluster.Engine.Timing = with(params, sc.Cluster.Engine.Timing, t)
			p, err := sim.Prepare(&s)
			if err != nil {
				return math.Inf(1), nil // faster than the hardware (FitAll prepared the rest): never a fit
			}
			var c collector
			if _, err := p.Run(ctx, sim.Options{Sink: &c}); err != nil {
				if _, ok := errors.AsType[*sim.RunawayError](err); ok { // a candidate so slow its run would not end: never a fit
					runaway = err
				} else {
					runErr = cmp.Or(runErr, err)
				}
				return math.Inf(1), nil
			}
			loss += c.loss() / float64(len(scs))
			fs[i] = c.fidelity.Result()
		}
		return loss, fs
	}
	for _, sc := range scs {
		if m := sc.Cluster.Engine.Timing.Model; m != model {
			return nil, fmt.Errorf("calibrate: %s uses timing model %s, %s uses %s: one fit needs one model", scs[0].File, model, sc.File, m)
		}
		if _, err := sim.Prepare(sc); err != nil {
			return nil, err
		}
	}
	res := &Result{}
	start := scs[0].Cluster.Engine.Timing
	res.LossBefore, res.Before = eval(start)
	if err := cmp.Or(runErr, runaway); err != nil { // the scenarios as given must run
		return nil, err
	}
	for i, f := range res.Before {
		if f == nil {
			return nil, fmt.Errorf("calibrate: %s: its trace carries no measurements; calibrate needs a measured trace (workload.trace.format: otel)", scs[i].File)
		}
	}
	at := func(x []float64) scenarios.Timing {
		t := start
		for i, p := range params {
			p.set(&t, p.value(x[i]))
		}
		return t
	}
	x0 := make([]float64, len(params))
	for i, p := range params {
		x0[i] = p.coord(p.get(&start))
	}
	problem := optimize.Problem{Func: func(x []float64) float64 {
		l, _ := eval(at(x))
		return l
	}}
	// Nelder-Mead's simplex can shrink onto a valley's floor before it
	// reaches the minimum; restarting from the best point with a fresh,
	// smaller simplex goes on along the valley. Stop when a restart gains
	// under 1 % or the evaluations run out.
	budget := cmp.Or(opt.Evaluations, DefaultEvaluations)
	x, best, size := x0, res.LossBefore, 1.0
	for res.Evaluations < budget {
		settings := &optimize.Settings{
			FuncEvaluations: budget - res.Evaluations,
			Converger:       &optimize.FunctionConverge{Relative: 1e-3, Iterations: 20},
		}
		out, err := optimize.Minimize(problem, x, settings, &optimize.NelderMead{SimplexSize: size})
		if runErr != nil {
			return nil, runErr
		}
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		res.Evaluations += out.FuncEvaluations
		gain := best - out.F
		x, best, size = out.X, min(best, out.F), size/4
		if !(gain > 0.01*best) {
			break
		}
	}
	fitted := at(x)
	res.LossAfter, res.After = eval(fitted)
	if res.LossAfter > res.LossBefore { // the search never reports worse than its start
		fitted, res.LossAfter, res.After = start, res.LossBefore, res.Before
	}
	for _, sc := range scs {
		res.Timing = append(res.Timing, with(params, sc.Cluster.Engine.Timing, fitted))
	}
	for _, p := range params {
		res.Params = append(res.Params, Fitted{Key: p.Key, Duration: p.Duration, Before: p.get(&start), After: p.get(&fitted)})
	}
	return res, nil
}

// with returns t with the parameters' values taken from from.
func with(params []Param, t, from scenarios.Timing) scenarios.Timing {
	for _, p := range params {
		p.set(&t, p.get(&from))
	}
	return t
}

// collector is a run's sink: the comparison with the measurements, whose
// prefill and ITL pairs make the loss, and the measured requests that did
// not complete.
type collector struct {
	fidelity report.FidelityCollector
	missing  int
}

func (c *collector) Request(r *report.RequestRow) error {
	c.fidelity.Add(r)
	if r.Outcome != report.OutcomeCompleted && r.MeasuredPrefillNs >= 0 {
		c.missing++
	}
	return nil
}

func (c *collector) Pull(*report.PullRow) error     { return nil }
func (c *collector) Sample(*report.SampleRow) error { return nil }

// loss is the mean squared log error of prefill plus that of ITL, each
// missing request counting missingPenalty in both.
func (c *collector) loss() float64 {
	mean := func(pairs [][2]int64) float64 {
		s := float64(c.missing) * missingPenalty
		for _, p := range pairs {
			d := math.Log((float64(p[0]) + epsilon) / (float64(p[1]) + epsilon))
			s += d * d
		}
		return s / float64(max(len(pairs)+c.missing, 1))
	}
	return mean(c.fidelity.Pairs("prefill")) + mean(c.fidelity.Pairs("itl"))
}
