package sim

import (
	"io"

	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload"
)

// OpenSource opens the scenario's workload as a run reads it: the seeded
// generator (a *workload.Generator) of a synthetic workload, or the trace
// reader with the scenario's block sizes, time scale, limit, sort and shared
// prefix. A
// trace's *workload.ParseError from Next names a line of
// sc.Workload.Trace.Path. Close the closer when done.
func OpenSource(sc *scenarios.Scenario) (workload.Source, io.Closer, error) {
	return openSource(sc)
}
