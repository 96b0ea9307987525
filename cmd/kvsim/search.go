package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/study/page"
)

// searchFlags are kvsim search's flags.
type searchFlags struct {
	gridFlags
	key        string
	span       string // --range A:B
	slos       []string
	replicates int
	quorum     int // 0: every replicate
}

func newSearch(cmdline []string) *cobra.Command {
	var f searchFlags
	cmd := &cobra.Command{
		Use:   "search SCENARIO --key KEY --range A:B --slo 'METRIC OP VALUE' [--slo ...] -o DIR",
		Short: "Find the largest integer value of a scenario key whose runs meet every SLO",
		Long: "search finds the largest value of the integer key KEY in [A, B] whose runs meet every\n" +
			"--slo (a metric, as in expect: ttft_p99_ms < 2000). It probes A and B, then bisects;\n" +
			"when a probe shows an SLO's metric is not monotone in KEY, or A and B fail different\n" +
			"SLOs, it says so and runs every value instead. A value passes when at least --quorum\n" +
			"of its --replicates runs (seeds seed, seed+1, ...) meet every SLO. Its runs go to\n" +
			"DIR/runs/run-NNN as a sweep's do (--resume reuses them), with DIR/sweep.json,\n" +
			"DIR/sweep.parquet and DIR/search.json.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("quorum") {
				f.quorum = f.replicates
			}
			return search(cmd, cmdline, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "the integer scenario key to search: --key cluster.workers (required)")
	fl.StringVar(&f.span, "range", "", "the values to search, from A to B: --range 1:32 (required)")
	fl.StringArrayVar(&f.slos, "slo", nil, "a condition every passing run meets: --slo 'ttft_p99_ms < 2000' (repeatable; at least one)")
	fl.IntVar(&f.replicates, "replicates", 1, "runs of each value, seeds from the scenario's seed up")
	fl.IntVar(&f.quorum, "quorum", 0, "the replicates of a value that must meet every SLO for it to pass (default all)")
	f.add(cmd, "search", "reuse the runs DIR holds of the same grid (scenario, --set, --key, --range, --replicates)")
	return cmd
}

// search runs kvsim search (study.Search) and prints its answer, with a
// note when values below the answer fail.
func search(cmd *cobra.Command, cmdline []string, scenario string, f searchFlags) error {
	if f.out == "" {
		return usageError{fmt.Errorf("search needs -o DIR")}
	}
	if err := f.check(); err != nil {
		return err
	}
	a, b, err := parseRange(f.span)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	env := newEnv(cmd, cmdline, f.quiet)
	env.Twins = f.twins
	s := &study.Search{Env: env, Scenario: scenario, Sets: f.sets, Key: f.key, From: a, To: b,
		SLOs: f.slos, Replicates: f.replicates, Quorum: f.quorum, Dir: f.dir(), Log: w}
	res, err := s.Run(cmd.Context())
	if err != nil {
		return err
	}
	if res.Answer == nil {
		fmt.Fprintf(w, "answer: no value of %s in [%d, %d] meets the SLOs\n", f.key, a, b)
		return f.writeReport(cmd)
	}
	fmt.Fprintf(w, "answer %s=%d\n", f.key, *res.Answer)
	printFailing(w, f.key, a, res)
	return f.writeReport(cmd)
}

// printFailing says, after a scan, which values below the answer fail:
// the answer then sits where the SLOs hold only by some replicates' luck.
func printFailing(w io.Writer, key string, from int64, res *study.SearchResult) {
	if len(res.Failing) == 0 {
		return
	}
	failing := make([]string, len(res.Failing))
	for i, v := range res.Failing {
		failing[i] = strconv.FormatInt(v, 10)
	}
	verb, every := "fails", ""
	if len(failing) > 1 {
		verb = "fail"
	}
	switch to := res.PassTo; {
	case to != nil && *to > from:
		every = fmt.Sprintf(": every value from %d to %d passes", from, *to)
	case to != nil:
		every = fmt.Sprintf(": only %d passes before them", from)
	}
	fmt.Fprintf(w, "note: below the answer, %s=%s %s%s\n", key, strings.Join(failing, ", "), verb, every)
}

// parseRange reads --range "A:B", integers with A <= B.
func parseRange(s string) (int64, int64, error) {
	x, y, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	b, err2 := strconv.ParseInt(strings.TrimSpace(y), 10, 64)
	if !ok || err1 != nil || err2 != nil || a > b {
		return 0, 0, usageError{fmt.Errorf("--range %q: want A:B, integers with A <= B, as in 1:32", s)}
	}
	return a, b, nil
}

// writeReport writes the study's page when --report asks for it.
func (f *gridFlags) writeReport(cmd *cobra.Command) error {
	if !f.report {
		return nil
	}
	return writeReport(cmd.ErrOrStderr(), f.out, page.Options{})
}
