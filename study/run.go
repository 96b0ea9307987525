package study

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// RunSummary is summary.json: the run's summary and the manifest of what
// produced it.
type RunSummary struct {
	*results.Summary
	Manifest *report.Manifest `json:"manifest"`
}

// ReadRunSummary reads dir/summary.json; an InputError when dir holds
// none or another file by that name.
func ReadRunSummary(dir string) (*RunSummary, error) {
	raw, err := os.ReadFile(filepath.Join(dir, report.SummaryFile))
	if err != nil {
		return nil, inputErr("%s is not a kvsim run directory: %w", dir, err)
	}
	s := &RunSummary{Summary: &results.Summary{}}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, inputErr("%s: %w", filepath.Join(dir, report.SummaryFile), err)
	}
	return s, nil
}

// RunTo runs plan, writing its tables through path, and writes
// scenario.yaml and summary.json beside them, the summary with the wall
// time the run took and the manifest m, which it completes (complete). It
// returns the summary.
func (e *Env) RunTo(ctx context.Context, path func(name string) string, plan *sim.Plan, opt sim.Options, m *report.Manifest) (*RunSummary, error) {
	start := time.Now()
	if err := writeScenario(path(report.ScenarioFile), plan.Scenario); err != nil {
		return nil, err
	}
	tables, err := parquetio.NewTables(path, results.PullColumns, results.EventColumns)
	if err != nil {
		return nil, err
	}
	opt.Sink = tables
	if e.Started != nil {
		e.Started(plan.Scenario)
	}
	res, err := plan.Run(ctx, opt)
	if err != nil {
		tables.Close(nil, nil, nil, nil)
		return nil, err
	}
	if err := tables.Close(res.Workers, res.Counters, res.Summary.EventRows, res.Planner); err != nil {
		return nil, err
	}
	if err := complete(m, plan.Scenario); err != nil {
		return nil, err
	}
	sum := &RunSummary{Summary: res.Summary, Manifest: m}
	sum.WallTimeS = time.Since(start).Seconds()
	return sum, report.WriteJSON(path(report.SummaryFile), sum)
}

// writeScenario writes sc, resolved as validate prints it, to path.
func writeScenario(path string, sc *scenarios.Scenario) error {
	b, err := sc.YAML()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// traceIDs caches the identity of each trace file, hashed on a goroutine
// of its own beside the runs (report.StartIdentifyFile), so that a sweep
// hashes its trace once, not once a run.
var traceIDs sync.Map // path -> func() (*report.FileID, error)

// commandManifest is the manifest of a command over the scenario file
// path ("" for the embedded default) with sets, naming no trace: a
// sweep's or a merge's.
func (e *Env) commandManifest(path string, sets []string) *report.Manifest {
	m := e.buildless(path, sets)
	m.Build = m.Build.WithExecutable()
	return m
}

// buildless is commandManifest without the executable's hash, which
// complete adds once the run is over (a replay hashes the executable while
// it runs: report.HashExecutable).
func (e *Env) buildless(path string, sets []string) *report.Manifest {
	return &report.Manifest{Tool: report.Tool, Build: e.Build, Command: e.Command,
		Scenario: path, Sets: append([]string{}, sets...)}
}

// Manifest returns the manifest of a run of sc, loaded from the scenario
// file path ("" for the embedded default) with sets: the command's. It
// opens the trace sc replays, an error naming the key, and starts hashing
// it; complete adds its identity and the executable's hash.
func (e *Env) Manifest(path string, sets []string, sc *scenarios.Scenario) (*report.Manifest, error) {
	if t := sc.Workload.Trace; t != nil {
		if _, err := traceID(t.Path); err != nil {
			return nil, errTrace(sc, err)
		}
	}
	return e.buildless(path, sets), nil
}

// complete adds to m, sc's manifest from Manifest, the executable's hash
// and the identities of the trace sc replays and of its engine's
// model_config, waiting for them.
func complete(m *report.Manifest, sc *scenarios.Scenario) error {
	m.Build = m.Build.WithExecutable()
	if t := sc.Workload.Trace; t != nil {
		id, err := traceID(t.Path)
		if err == nil {
			m.Trace, err = id()
		}
		if err != nil {
			return errTrace(sc, err)
		}
	}
	if path := sc.Cluster.Engine.Timing.ModelConfig; path != "" { // read when the scenario loaded: resolved, readable
		id, err := report.IdentifyFile(path)
		if err != nil {
			return sc.ErrAt("cluster.engine.timing.model_config", "%v", err)
		}
		m.ModelConfig = id
	}
	return nil
}

// traceID is the identity of the trace at path, hashing or hashed: from
// traceIDs, or started there.
func traceID(path string) (func() (*report.FileID, error), error) {
	if id, ok := traceIDs.Load(path); ok {
		return id.(func() (*report.FileID, error)), nil
	}
	id, err := report.StartIdentifyFile(path)
	if err != nil {
		return nil, err
	}
	traceIDs.Store(path, id)
	return id, nil
}

// errTrace is the error of a trace that cannot be read for its identity.
func errTrace(sc *scenarios.Scenario, err error) error {
	return sc.ErrAt("workload.trace.path", "cannot open trace: %v", err)
}
