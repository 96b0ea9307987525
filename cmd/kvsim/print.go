package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
)

// printSummary writes the run's summary as a table: the lines and tables
// of results' words, each event's block, then the digest, the events
// handled and the output directory.
func printSummary(w io.Writer, s *results.Summary, dir string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range results.SummaryLines(s) {
		fmt.Fprintf(tw, "%s\t%s\n", l.Label, l.Text)
	}
	printTable(tw, results.LatencyTable(s))
	if f, ok := results.FidelityTable(s); ok {
		printTable(tw, f)
	}
	c := results.CountersOf(s.Counters)
	own, drawn, _ := results.SplitEvents(s.EventRows) // the planner's actions are its summary line
	for _, e := range own {
		printEvent(tw, s.PullsByKind, &c, &e)
	}
	if len(drawn) > 0 {
		w := results.DescribeChaos(drawn)
		fmt.Fprintf(tw, "\t\n")
		fmt.Fprintf(tw, "chaos\t%s\n", w.Head)
		fmt.Fprintf(tw, "\t%s\n", w.Did)
		printEffect(tw, w.Effect)
		if w.Outside != "" {
			fmt.Fprintf(tw, "\t%s\n", w.Outside)
		}
		if w.Twin != "" {
			fmt.Fprintf(tw, "\t%s\n", w.Twin)
		}
	}
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "digest\t%s\n", s.Digest)
	fmt.Fprintf(tw, "events\t%d in %.2fs wall\n", s.Events, s.WallTimeS)
	fmt.Fprintf(tw, "output\t%s\n", dir)
	tw.Flush()
}

// printTable writes a table of the summary after a blank line, a cell a
// column.
func printTable(tw io.Writer, t results.Table) {
	fmt.Fprintf(tw, "\t\n")
	for _, r := range append([][]string{t.Head}, t.Rows...) {
		fmt.Fprintf(tw, "%s\n", strings.Join(r, "\t"))
	}
}

// printEffect writes an effect's lines (results.EventWords.Effect), those
// after the first indented under it.
func printEffect(tw io.Writer, effect []string) {
	for i, line := range effect {
		indent := "  "
		if i == 0 {
			indent = ""
		}
		fmt.Fprintf(tw, "\t%s%s\n", indent, line)
	}
}

// printEvent writes an events.parquet row as a block of the summary table,
// in the words of results.DescribeEvent.
func printEvent(tw io.Writer, k *results.PullsByKind, c *results.Counters, e *report.EventRow) {
	w := results.DescribeEvent(k, c, e)
	fmt.Fprintf(tw, "\t\n")
	fmt.Fprintf(tw, "event %d\t%s\n", e.Event, w.Head)
	printEffect(tw, w.Effect)
	if w.Cohort != "" {
		fmt.Fprintf(tw, "\t  %s\n", w.Cohort)
	}
	if w.Removal != "" {
		fmt.Fprintf(tw, "\t%s\n", w.Removal)
	}
	for _, line := range append(w.Orders, w.Trace...) {
		fmt.Fprintf(tw, "\t%s\n", line)
	}
}
