// Package sim is the cluster simulation: it builds workers, the router and
// the workload from a scenario, runs them on one event queue, and streams
// request rows and a summary out.
package sim

import (
	"fmt"
	"io"
	"os"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/workload"
)

// engineConfig is worker id's engine configuration.
func engineConfig(sc *scenarios.Scenario, id int32) engine.Config {
	e := sc.Cluster.Engine
	return engine.Config{
		ID: id, BlockSize: e.BlockSize, GPUBlocks: e.GPUBlocks, MaxNumSeqs: e.MaxNumSeqs,
		MaxBatchedTokens: e.MaxBatchedTokens, ChunkedPrefill: e.ChunkedPrefill, PrefixCaching: e.PrefixCaching,
		Admission: e.Admission,
	}
}

// openSource opens the scenario's workload. The returned closer releases the
// trace file.
func openSource(sc *scenarios.Scenario) (workload.Source, io.Closer, error) {
	e := sc.Cluster.Engine
	if s := sc.Workload.Synthetic; s != nil {
		g := workload.NewGenerator(workload.Synthetic{
			Requests: s.Requests, Rate: s.Rate, Arrival: s.Arrival,
			InputMean: s.Input.Mean, InputSigma: s.Input.Sigma, OutputMean: s.Output.Mean, OutputSigma: s.Output.Sigma,
			PrefixGroups: s.PrefixGroups, SharedPrefix: s.SharedPrefix, Turns: s.Turns,
			ThinkTime: des.Time(s.ThinkTime), BlockSize: e.BlockSize, MaxTokens: e.MaxModelLen,
		}, des.NewRNG(sc.Seed))
		return g, io.NopCloser(nil), nil
	}
	t := sc.Workload.Trace
	f, err := os.Open(t.Path)
	if err != nil {
		return nil, nil, &scenarios.InputError{File: sc.DisplayFile(), Key: "workload.trace.path",
			Err: fmt.Errorf("cannot open trace: %w", err)}
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
	return src, f, nil
}

// traceFile names the workload's source in errors: the trace, or the
// scenario of a synthetic workload.
func traceFile(sc *scenarios.Scenario) string {
	if sc.Workload.Trace != nil {
		return sc.Workload.Trace.Path
	}
	return sc.DisplayFile()
}
