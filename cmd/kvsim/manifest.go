package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// runSummary is summary.json: the run's summary and the manifest of what
// produced it.
type runSummary struct {
	*sim.Summary
	Manifest *report.Manifest `json:"manifest"`
}

// traceIDs caches the identity of each trace file, so that a sweep hashes
// its trace once, not once a run.
var traceIDs sync.Map // path -> *report.FileID

// commandManifest is the manifest of a command over the scenario file path
// ("" for the embedded default) with sets, naming no trace: a sweep's or a
// merge's.
func commandManifest(cmdline []string, path string, sets []string) *report.Manifest {
	m := buildlessManifest(cmdline, path, sets)
	m.Build = m.Build.WithExecutable()
	return m
}

// buildlessManifest is commandManifest without the executable's hash, which
// runTo adds once the run is over (replay hashes the executable while it
// runs: report.HashExecutable).
func buildlessManifest(cmdline []string, path string, sets []string) *report.Manifest {
	return &report.Manifest{Tool: report.Tool, Build: report.ReadBuild(version), Command: cmdline,
		Scenario: path, Sets: append([]string{}, sets...)}
}

// newManifest returns the manifest of a run of sc, loaded from the scenario
// file path ("" for the embedded default) with sets: the command's, and the
// identity of the trace it replays. It leaves out the executable's hash
// (runTo adds it).
func newManifest(cmdline []string, path string, sets []string, sc *scenarios.Scenario) (*report.Manifest, error) {
	m := buildlessManifest(cmdline, path, sets)
	if t := sc.Workload.Trace; t != nil {
		if id, ok := traceIDs.Load(t.Path); ok {
			m.Trace = id.(*report.FileID)
			return m, nil
		}
		id, err := report.IdentifyFile(t.Path)
		if err != nil {
			return nil, sc.ErrAt("workload.trace.path", "cannot open trace: %v", err)
		}
		traceIDs.Store(t.Path, id)
		m.Trace = id
	}
	return m, nil
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
	s := &runSummary{Summary: &sim.Summary{}}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", filepath.Join(dir, report.SummaryFile), err)}
	}
	return s, nil
}
