package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/kvsim/kvsim/calibrate"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/workload"
)

func newCalibrate() *cobra.Command {
	var sets []string
	var opt calibrate.Options
	cmd := &cobra.Command{
		Use:   "calibrate SCENARIO",
		Short: "Fit the scenario's timing model to the measurements of its trace",
		Long: "calibrate replays the scenario's measured trace (workload.trace.format: otel) with\n" +
			"candidate parameters of its timing model and keeps those whose simulated per-request\n" +
			"prefill and decode times come closest to the measured ones. It prints the fitted\n" +
			"timing on stdout as one YAML flow mapping, ready for\n" +
			"  kvsim replay other.yaml --set \"cluster.engine.timing=$(kvsim calibrate train.yaml)\"\n" +
			"and the fit report (each parameter, the error per metric before and after) on stderr.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Evaluations < 1 {
				return usageError{fmt.Errorf("--evaluations %d: want at least 1 replay", opt.Evaluations)}
			}
			p, err := study.Prepare(args[0], sets, 1, false)
			if err != nil {
				return err
			}
			sc := p.Scenario
			if t := sc.Workload.Trace; t == nil || t.Format != workload.FormatOtel {
				return sc.ErrAt("workload", "calibrate needs a measured trace (workload.trace.format: otel), whose requests carry the server's latencies")
			} else if t.TimeScale != 1 {
				return sc.ErrAt("workload.trace.time_scale", "must be 1 to calibrate: the latencies were measured at the trace's own arrival times")
			} else if len(sc.Workload.Envelope) > 0 {
				return sc.ErrAt("workload.envelope", "must be left out to calibrate: the latencies were measured at the trace's own arrival times")
			} else if t.ArrivalJitter != 0 {
				return sc.ErrAt("workload.trace.arrival_jitter", "must be 0 to calibrate: the latencies were measured at the trace's own arrival times")
			}
			// The fit's first replay would meet a bad trace too, but after
			// the warnings and as one of its evaluations: refuse it first.
			if _, err := p.ReadWorkload(); err != nil {
				return err
			}
			warn(cmd.ErrOrStderr(), sc.Warnings())
			res, err := calibrate.Fit(cmd.Context(), sc, opt)
			if err != nil {
				return err
			}
			out, err := yaml.Marshal(res.Timing[0])
			if err != nil {
				return err
			}
			printFit(cmd.ErrOrStderr(), res)
			_, err = fmt.Fprintln(cmd.OutOrStdout(), strings.TrimSpace(string(out)))
			return err
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a scenario key (repeatable)")
	cmd.Flags().IntVar(&opt.Evaluations, "evaluations", calibrate.DefaultEvaluations, "replays the search may make at most (at least 1)")
	return cmd
}

// printFit writes the fit report: the parameters, then each metric's
// error against the measurements before and after.
func printFit(w io.Writer, r *calibrate.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "parameter\tbefore\tafter\n")
	for _, p := range r.Params {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Key, paramText(p, p.Before), paramText(p, p.After))
	}
	fmt.Fprintf(tw, "loss\t%.4f\t%.4f\t(mean squared log error of prefill + that of ITL; %d replays)\n", r.LossBefore, r.LossAfter, r.Evaluations)
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "vs measured\tmean error before\tafter\tMAPE before\tafter\n")
	for i, name := range report.FidelityMetrics {
		b, a := r.Before[0].Metric(name), r.After[0].Metric(name)
		fmt.Fprintf(tw, "%s\t%+.1f%%\t%+.1f%%\t%.1f%%\t%.1f%%\n", results.FidelityLabels[i],
			100*relErr(b.Simulated.Mean, b.Measured.Mean), 100*relErr(a.Simulated.Mean, a.Measured.Mean), 100*b.MAPE, 100*a.MAPE)
	}
	tw.Flush()
}

// paramText writes a parameter's value: a duration with its unit (1.5 ms,
// 90.4 ns: four decimals at most, truncated), anything else as a number.
func paramText(p calibrate.Fitted, v float64) string {
	if p.Duration {
		return humanize.SIWithDigits(v/1e9, 4, "s")
	}
	return fmt.Sprintf("%.6g", v)
}

// relErr is (sim − meas) / meas, 0 when meas is 0.
func relErr(sim, meas float64) float64 {
	if meas == 0 {
		return 0
	}
	return (sim - meas) / meas
}
