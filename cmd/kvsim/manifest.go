package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/kvsim/kvsim/results"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// runSummary is summary.json: the run's summary and the manifest of what
// produced it.
type runSummary struct {
	*results.Summary
	Manifest *report.Manifest `json:"manifest"`
}

// traceIDs caches the identity of each trace file, hashed on a goroutine
// of its own beside the runs (report.StartIdentifyFile), so that a sweep
// hashes its trace once, not once a run.
var traceIDs sync.Map // path -> func() (*report.FileID, error)

// commandManifest is the manifest of a command over the scenario file path
// ("" for the embedded default) with sets, naming no trace: a sweep's or a
// merge's.
func commandManifest(cmdline []string, path string, sets []string) *report.Manifest {
	m := buildlessManifest(cmdline, path, sets)
	m.Build = m.Build.WithExecutable()
	return m
}

// buildlessManifest is commandManifest without the executable's hash, which
// completeManifest adds once the run is over (replay hashes the executable
// while it runs: report.HashExecutable).
func buildlessManifest(cmdline []string, path string, sets []string) *report.Manifest {
	return &report.Manifest{Tool: report.Tool, Build: report.ReadBuild(version), Command: cmdline,
		Scenario: path, Sets: append([]string{}, sets...)}
}

// newManifest returns the manifest of a run of sc, loaded from the scenario
// file path ("" for the embedded default) with sets: the command's. It
// opens the trace sc replays, an error naming the key, and starts hashing
// it; completeManifest adds its identity and the executable's hash.
func newManifest(cmdline []string, path string, sets []string, sc *scenarios.Scenario) (*report.Manifest, error) {
	if t := sc.Workload.Trace; t != nil {
		if _, err := traceID(t.Path); err != nil {
			return nil, errTrace(sc, err)
		}
	}
	return buildlessManifest(cmdline, path, sets), nil
}

// completeManifest adds to m, sc's manifest from newManifest, the
// executable's hash and the identity of the trace sc replays, waiting for
// them.
func completeManifest(m *report.Manifest, sc *scenarios.Scenario) error {
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

// writeScenario writes sc, resolved as validate prints it, to path.
func writeScenario(path string, sc *scenarios.Scenario) error {
	b, err := sc.YAML()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// readRunSummary reads dir/summary.json.
func readRunSummary(dir string) (*runSummary, error) {
	raw, err := os.ReadFile(filepath.Join(dir, report.SummaryFile))
	if err != nil {
		return nil, usageError{fmt.Errorf("%s is not a kvsim run directory: %w", dir, err)}
	}
	s := &runSummary{Summary: &results.Summary{}}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", filepath.Join(dir, report.SummaryFile), err)}
	}
	return s, nil
}
