// Command fidelity measures kvsim's timing error against the measured vLLM
// runs and prints the tables of docs/fidelity.md: for each run, the preset
// defaults on all its requests; the defaults and a calibration on the
// first half of its requests (by arrival), both predicting the second
// half; each run's calibration predicting the other run's model; and one
// calibration of all the runs together, the evidence for the defaults.
//
//	KVSIM_VLLM_TRACES=../shared/vllm-traces go run ./benchmarks/fidelity scenarios/vllm-llama2-7b.yaml scenarios/vllm-codellama-34b.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/kvsim/kvsim/calibrate"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

func main() {
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: fidelity SCENARIO...   (scenarios replaying measured otel traces)")
		os.Exit(2)
	}
	if err := run(flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(1)
	}
}

// errs are the error figures of one prediction.
type errs struct {
	name string
	f    *report.Fidelity
}

func run(files []string) error {
	ctx := context.Background()
	fits := make([]*calibrate.Result, len(files))
	var rows []errs
	for i, file := range files {
		sc, err := scenarios.Load(file, nil)
		if err != nil {
			return err
		}
		all, err := fidelity(ctx, sc)
		if err != nil {
			return err
		}
		half := all.E2E.Requests / 2 // every request of these runs completes
		train, err := scenarios.Load(file, []string{"workload.trace.limit=" + strconv.Itoa(half)})
		if err != nil {
			return err
		}
		fit, err := calibrate.Fit(ctx, fromStart(train), calibrate.Options{})
		if err != nil {
			return err
		}
		test, err := scenarios.Load(file, []string{"workload.trace.skip=" + strconv.Itoa(half)})
		if err != nil {
			return err
		}
		testDefault, err := fidelity(ctx, test)
		if err != nil {
			return err
		}
		test.Cluster.Engine.Timing = fit.Timing[0]
		testFitted, err := fidelity(ctx, test)
		if err != nil {
			return err
		}
		if fits[i], err = calibrate.Fit(ctx, fromStart(sc), calibrate.Options{}); err != nil {
			return err
		}
		rows = append(rows, errs{sc.Name + ": defaults, all requests", all},
			errs{sc.Name + ": defaults, second half", testDefault},
			errs{sc.Name + ": calibrated on the first half, second half", testFitted})
		fmt.Printf("%s: first-half fit %s\n", sc.Name, params(fit))
		fmt.Printf("%s: whole-run fit %s\n", sc.Name, params(fits[i]))
	}
	// Each run's whole-run efficiencies applied to the other runs' models.
	for i, file := range files {
		for j := range files {
			if i == j {
				continue
			}
			sc, err := scenarios.Load(file, nil)
			if err != nil {
				return err
			}
			t := &sc.Cluster.Engine.Timing
			from := fits[j].Timing[0]
			t.MFU, t.MBU, t.Overhead = from.MFU, from.MBU, from.Overhead
			f, err := fidelity(ctx, sc)
			if err != nil {
				return err
			}
			other, _ := scenarios.Load(files[j], nil)
			rows = append(rows, errs{fmt.Sprintf("%s: with %s's fit, all requests", sc.Name, other.Name), f})
		}
	}
	// One set of parameters for all the runs: the evidence for the preset
	// defaults.
	var scs []*scenarios.Scenario
	for _, file := range files {
		sc, err := scenarios.Load(file, nil)
		if err != nil {
			return err
		}
		scs = append(scs, fromStart(sc))
	}
	joint, err := calibrate.FitAll(ctx, scs, calibrate.Options{})
	if err != nil {
		return err
	}
	fmt.Printf("joint fit: %s\n", params(joint))
	for i, sc := range scs {
		rows = append(rows, errs{sc.Name + ": with the joint fit, all requests", joint.After[i]})
	}
	fmt.Println()
	fmt.Println("| prediction | requests | E2E mean | ITL mean | TTFT p50 | TTFT mean | E2E MAPE | ITL MAPE | TTFT MAPE |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		f := r.f
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %.1f %% | %.1f %% | %.1f %% |\n", r.name, f.E2E.Requests,
			rel(f.E2E.Simulated.Mean, f.E2E.Measured.Mean), rel(f.ITL.Simulated.Mean, f.ITL.Measured.Mean),
			rel(f.TTFT.Simulated.P50, f.TTFT.Measured.P50), rel(f.TTFT.Simulated.Mean, f.TTFT.Measured.Mean),
			100*f.E2E.MAPE, 100*f.ITL.MAPE, 100*f.TTFT.MAPE)
	}
	return nil
}

// fromStart sets sc's roofline efficiencies to where every fit starts, the
// guesses kvsim used before it was calibrated (MFU 0.5, MBU 0.7, 1 ms), so
// that the fits do not depend on the defaults they are evidence for.
func fromStart(sc *scenarios.Scenario) *scenarios.Scenario {
	t := &sc.Cluster.Engine.Timing
	t.MFU, t.MBU, t.Overhead = 0.5, 0.7, scenarios.Duration(1_000_000)
	return sc
}

// fidelity replays sc and returns its comparison with the measurements.
func fidelity(ctx context.Context, sc *scenarios.Scenario) (*report.Fidelity, error) {
	res, err := sim.Run(ctx, sc, sim.Options{})
	if err != nil {
		return nil, err
	}
	if res.Summary.Fidelity == nil {
		return nil, fmt.Errorf("%s: the trace carries no measurements", sc.File)
	}
	return res.Summary.Fidelity, nil
}

func params(r *calibrate.Result) string {
	s := ""
	for _, p := range r.Params {
		s += fmt.Sprintf("%s %.4g, ", p.Key, p.After)
	}
	return s + fmt.Sprintf("loss %.4f -> %.4f in %d replays", r.LossBefore, r.LossAfter, r.Evaluations)
}

// rel is the signed relative error of sim against meas, as a percentage.
func rel(sim, meas float64) string {
	return fmt.Sprintf("%+.1f %%", 100*(sim-meas)/meas)
}
