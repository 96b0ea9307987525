package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/sim"
)

// errDiffer is compare's verdict on runs that differ: exit 1, the report
// already printed.
var errDiffer = errors.New("the runs differ")

func newCompare() *cobra.Command {
	return &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Compare two run directories: equal digests, or what changed",
		Long: "compare exits 0 when the two runs' digests are equal. Otherwise it exits 1 and prints\n" +
			"the counters that differ, the first differing request and pull rows, and how the\n" +
			"latency percentiles, hit ratios and throughput moved.",
		Args: positional(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compare(cmd.OutOrStdout(), args[0], args[1])
		},
	}
}

func readSummary(dir string) (*sim.Summary, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, usageError{fmt.Errorf("%s is not a kvsim run directory: %w", dir, err)}
	}
	var s sim.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", filepath.Join(dir, "summary.json"), err)}
	}
	return &s, nil
}

func compare(w io.Writer, dirA, dirB string) error {
	a, err := readSummary(dirA)
	if err != nil {
		return err
	}
	b, err := readSummary(dirB)
	if err != nil {
		return err
	}
	if a.Digest == b.Digest {
		fmt.Fprintf(w, "digests match: %s\n", a.Digest)
		return nil
	}
	fmt.Fprintf(w, "digests differ:\n  A %s  %s\n  B %s  %s\n\n", a.Digest, dirA, b.Digest, dirB)
	if err := compareCounters(w, dirA, dirB); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		diff func(string, string) (*report.RowDiff, error)
	}{{"requests.parquet", report.FirstRequestDiff}, {"pulls.parquet", report.FirstPullDiff}} {
		d, err := t.diff(filepath.Join(dirA, t.name), filepath.Join(dirB, t.name))
		if err != nil {
			return err
		}
		if d == nil {
			fmt.Fprintf(w, "%s: equal\n\n", t.name)
			continue
		}
		fmt.Fprintf(w, "%s: first difference at row %d\n", t.name, d.Row)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  column\tA\tB\n")
		for _, c := range d.Changes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Column, c.A, c.B)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	compareSummaries(w, a, b)
	return errDiffer
}

func compareCounters(w io.Writer, dirA, dirB string) error {
	ca, err := report.ReadCounters(filepath.Join(dirA, "counters.parquet"))
	if err != nil {
		return err
	}
	cb, err := report.ReadCounters(filepath.Join(dirB, "counters.parquet"))
	if err != nil {
		return err
	}
	bv := map[string]int64{}
	for _, c := range cb {
		bv[c.Name] = c.Value
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	n := 0
	for _, c := range ca { // in report order
		v, ok := bv[c.Name]
		if ok && v == c.Value {
			continue
		}
		if n == 0 {
			fmt.Fprintf(tw, "counter\tA\tB\tdelta\t\n")
		}
		n++
		fmt.Fprintf(tw, "%s\t%d\t%d\t%+d\t\n", c.Name, c.Value, v, v-c.Value)
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintln(w, "counters: equal")
	}
	fmt.Fprintln(w)
	return nil
}

func compareSummaries(w io.Writer, a, b *sim.Summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tA\tB\tdelta\t\n")
	row := func(name string, x, y float64) {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.3f\t\n", name, x, y, y-x)
	}
	for _, p := range []struct {
		name string
		a, b report.Percentiles
	}{{"ttft", a.TTFT, b.TTFT}, {"tpot", a.TPOT, b.TPOT}, {"itl", a.ITL, b.ITL}, {"e2e", a.E2E, b.E2E}} {
		row(p.name+" p50 ms", p.a.P50, p.b.P50)
		row(p.name+" p90 ms", p.a.P90, p.b.P90)
		row(p.name+" p99 ms", p.a.P99, p.b.P99)
		row(p.name+" max ms", p.a.Max, p.b.Max)
	}
	row("hit ratio g1", a.HitRatio.G1, b.HitRatio.G1)
	row("hit ratio g2", a.HitRatio.G2, b.HitRatio.G2)
	row("hit ratio pulled", a.HitRatio.Pulled, b.HitRatio.Pulled)
	row("requests/s", a.Throughput.RequestsPerS, b.Throughput.RequestsPerS)
	row("output tokens/s", a.Throughput.OutputTokensPerS, b.Throughput.OutputTokensPerS)
	tw.Flush()
}
