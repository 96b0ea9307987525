package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/chart"
)

func newPlot() *cobra.Command {
	var opt chart.SweepOptions
	cmd := &cobra.Command{
		Use:   "plot DIR",
		Short: "Render a run's or a sweep's charts (PNG and SVG) into DIR/charts",
		Long: "plot reads a run directory and draws TTFT p50 and p99 by arrival time (rolling\n" +
			"window, log axis), requests running and waiting, pulls ended by outcome, G1 and G2\n" +
			"blocks in use (a panel a worker) with lifecycle events marked, and the distributions\n" +
			"(CDFs) of TTFT, TPOT, ITL and E2E; for a run of a measured trace, each request's\n" +
			"measured against simulated TTFT, ITL, E2E and prefill (fidelity-scatter) and both\n" +
			"distributions (fidelity-cdf). A chart with no data (no pulls, G2 never used, no\n" +
			"measurements) is not drawn. For a sweep directory it draws each --metric against --x, a line per\n" +
			"combination of the --by keys (long values numbered #0, #1, ... in grid order), and the\n" +
			"same distributions with a line a run. Legends and notes stand beside the data.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			var files []string
			var err error
			switch {
			case exists(filepath.Join(dir, report.SweepFile)):
				files, err = chart.Sweep(dir, opt)
			case exists(filepath.Join(dir, report.SummaryFile)):
				files, err = chart.Run(dir)
			default:
				return usageError{fmt.Errorf("%s is neither a run nor a sweep directory", dir)}
			}
			if errors.Is(err, chart.ErrOption) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opt.Metrics, "metric", nil, "sweep: a numeric sweep.parquet column to chart (repeatable; default ttft_p50_ms, ttft_p99_ms, hit_ratio_pulled)")
	fl.StringVar(&opt.X, "x", "", "sweep: the x axis, a varied key or a numeric column (default: the first varied key)")
	fl.StringSliceVar(&opt.By, "by", nil, "sweep: varied keys making one line each (default: every varied key but --x)")
	return cmd
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
