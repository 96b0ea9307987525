package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/study/page"
)

func newReport() *cobra.Command {
	var opt page.Options
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Write DIR/report.html: one self-contained page for a run, a sweep or a search",
		Long: "report reads a run, sweep or search directory and writes DIR/report.html, one page\n" +
			"to send a colleague: the question (the scenario and its events in words), the answer\n" +
			"(each event's effect against its twin, with intervals over replicates, and the\n" +
			"displaced requests'), then the summary, the events in full with the KV ledger, the\n" +
			"charts (inline SVG, kvsim plot's drawings), the warnings and the provenance. It has\n" +
			"no script and fetches nothing; the same directory gives the same bytes. A sweep's page\n" +
			"marks the grid points meeting every --slo and the one with the most room under the\n" +
			"first; a search's uses its own.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeReport(cmd.OutOrStdout(), args[0], opt)
		},
	}
	cmd.Flags().StringArrayVar(&opt.SLOs, "slo", nil, "sweep: a condition a grid point's runs must all meet: --slo 'ttft_p99_ms < 2000' (repeatable)")
	return cmd
}

// writeReport writes dir's page and prints its path on w; a directory
// that is none of kvsim's or a bad --slo is bad input.
func writeReport(w io.Writer, dir string, o page.Options) error {
	path, err := page.Write(dir, o)
	var in *study.InputError
	var opt *page.OptionError
	switch {
	case errors.Is(err, page.ErrNotADirectory) || errors.As(err, &opt) || errors.As(err, &in):
		return usageError{err}
	case err != nil:
		return err
	}
	_, err = fmt.Fprintln(w, path)
	return err
}
