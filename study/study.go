// Package study runs kvsim as a study does: one run into a directory of
// its own with the manifest of what produced it (RunTo), a sweep over a
// grid of scenario variations, resumable and shardable, with replicates
// (Sweep), the search for the largest value of a key whose runs meet SLOs
// (Search), and the merge of a sharded sweep's parts (Merge). Every
// scenario goes through sim.Prepare under this machine's memory (Prepare),
// every run writes its tables as Parquet files, and each returns its
// figures: the CLI keeps only its flags and its printing. docs/sweeps.md
// and docs/cli.md describe what each does.
package study

import (
	"fmt"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// Env is what the program running a study gives it: what the manifests
// record, and the callbacks that follow the runs. A nil callback is not
// called.
type Env struct {
	Command []string     // the command line, recorded in every manifest
	Build   report.Build // the build, recorded in every manifest (with its executable's hash)
	// Warn is called with each warning about the study's runs, once each,
	// in the order they came.
	Warn func(string)
	// Started is called as each run starts, its tables open, in the
	// goroutine that runs it.
	Started func(*scenarios.Scenario)
	// Progress follows a sweep's or a search's batches of runs.
	Progress Progress
	// Twins runs each run's event twins beside it (sim.Options.Twins).
	Twins bool
}

// Progress follows the batches of runs a sweep or a search makes: Start
// as a batch of n runs begins, Done as each of them finishes (in the
// goroutine that ran it), End once the batch is over, finished or not.
type Progress interface {
	Start(n int)
	Done()
	End()
}

// warn hands each of lines to Warn.
func (e *Env) warn(lines []string) {
	if e.Warn == nil {
		return
	}
	for _, l := range lines {
		e.Warn(l)
	}
}

// InputError is a study asked of what cannot be: a grid, a range, an SLO
// or an output directory that does not fit. Nothing has run; the CLI exits
// 2 on it, as on a bad flag.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// inputErr is an InputError with the message format makes.
func inputErr(format string, a ...any) error { return &InputError{fmt.Errorf(format, a...)} }

// LoadScenario loads the scenario file path, or the embedded default when
// path is "", with sets applied and opts changing how it is read.
func LoadScenario(path string, sets []string, opts ...scenarios.Option) (*scenarios.Scenario, error) {
	if path == "" {
		return scenarios.LoadDefault(sets, opts...)
	}
	return scenarios.Load(path, sets, opts...)
}

// Prepare loads a scenario (LoadScenario) and turns it into the plan a run
// follows (sim.Prepare), refusing one whose estimated memory this machine
// cannot hold, then one whose time series would pass sim.MaxSampleRows
// (which may read a trace, so last): what every command that runs or
// checks a scenario does first. atOnce runs (a sweep's -j) share the
// memory, and with twins each run shares it with the twins it runs at once
// (sim.Plan.TwinsAtOnce).
func Prepare(path string, sets []string, atOnce int, twins bool, opts ...scenarios.Option) (*sim.Plan, error) {
	sc, err := LoadScenario(path, sets, opts...)
	if err != nil {
		return nil, err
	}
	p, err := sim.Prepare(sc)
	if err != nil {
		return nil, err
	}
	limit, source := MachineMemory()
	if atOnce > 1 {
		limit /= int64(atOnce)
		source = fmt.Sprintf("%s, shared by %d runs at once", source, atOnce)
	}
	if n := p.TwinsAtOnce(); twins && n > 0 {
		limit /= int64(1 + n)
		twins := "its twin"
		if n > 1 {
			twins = fmt.Sprintf("its %d twins at once", n)
		}
		source = fmt.Sprintf("%s, shared with %s; --twins=false runs none", source, twins)
	}
	if err := p.CheckMemory(limit, source); err != nil {
		return nil, err
	}
	if err := p.CheckOutput(); err != nil {
		return nil, err
	}
	return p, nil
}
