package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/study"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// errDiffer is compare's verdict on runs that differ: exit 1, the report
// already printed.
var errDiffer = errors.New("the runs differ")

func newCompare() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Compare two run directories: equal digests, or what changed",
		Long: "compare exits 0 when the two runs' digests are equal. Otherwise it exits 1 and prints\n" +
			"the scenario keys that differ, the counters that differ, the first differing request\n" +
			"and pull rows, and how the latency percentiles, hit ratios and throughput moved.",
		Args: positional(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := compare(args[0], args[1])
			if err != nil {
				return unreadable(err)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				err = printJSON(w, c)
			} else {
				c.print(w)
			}
			if err == nil && !c.Equal {
				err = errDiffer
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON on stdout instead of tables")
	return cmd
}

// comparison is what compare found; its JSON is compare --json.
type comparison struct {
	A       string `json:"a"`
	B       string `json:"b"`
	DigestA string `json:"digest_a"`
	DigestB string `json:"digest_b"`
	Equal   bool   `json:"equal"`
	// Scenario lists the resolved scenario keys whose values differ; nil
	// when a run directory has no scenario.yaml (written before kvsim
	// recorded it).
	Scenario []keyChange     `json:"scenario"`
	Counters []counterChange `json:"counters,omitempty"`
	// Requests and Pulls are the first differing rows; nil when equal.
	Requests *parquetio.RowDiff `json:"requests,omitempty"`
	Pulls    *parquetio.RowDiff `json:"pulls,omitempty"`
	Metrics  []metricChange     `json:"metrics,omitempty"`
}

type keyChange struct {
	Key string `json:"key"`
	A   string `json:"a"` // "" when absent
	B   string `json:"b"`
}

type counterChange struct {
	Name string `json:"name"`
	A    int64  `json:"a"`
	B    int64  `json:"b"`
}

type metricChange struct {
	Name string  `json:"name"`
	A    float64 `json:"a"`
	B    float64 `json:"b"`
}

// MarshalJSON writes m with null for NaN (a run that completed no request
// has no latency).
func (m metricChange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name string   `json:"name"`
		A    *float64 `json:"a"`
		B    *float64 `json:"b"`
	}{m.Name, report.OrNull(m.A), report.OrNull(m.B)})
}

func compare(dirA, dirB string) (*comparison, error) {
	a, err := study.ReadRunSummary(dirA)
	if err != nil {
		return nil, err
	}
	b, err := study.ReadRunSummary(dirB)
	if err != nil {
		return nil, err
	}
	c := &comparison{A: dirA, B: dirB, DigestA: a.Digest, DigestB: b.Digest, Equal: a.Digest == b.Digest}
	if c.Scenario, err = scenarioChanges(dirA, dirB); err != nil {
		return nil, err
	}
	if c.Equal {
		return c, nil
	}
	if c.Counters, err = counterChanges(dirA, dirB); err != nil {
		return nil, err
	}
	if c.Requests, err = parquetio.FirstRequestDiff(filepath.Join(dirA, report.RequestsFile), filepath.Join(dirB, report.RequestsFile)); err != nil {
		return nil, err
	}
	if c.Pulls, err = parquetio.FirstPullDiff(filepath.Join(dirA, report.PullsFile), filepath.Join(dirB, report.PullsFile)); err != nil {
		return nil, err
	}
	c.Metrics = metricChanges(a.Summary, b.Summary)
	return c, nil
}

// unreadable is compare's error: a run directory's file it could not read
// (missing or damaged), bad input, exit 2, as a directory that is no run
// is, so that exit 1 means only that the runs differ. The error names the
// file.
func unreadable(err error) error { return &study.InputError{Err: err} }

// scenarioChanges compares the two runs' resolved scenario.yaml key by
// key, in A's order, then the keys only B has.
func scenarioChanges(dirA, dirB string) ([]keyChange, error) {
	fa, okA, err := scenarioKeys(dirA)
	if err != nil {
		return nil, err
	}
	fb, okB, err := scenarioKeys(dirB)
	if err != nil || !okA || !okB {
		return nil, err
	}
	changes := []keyChange{}
	inB := map[string]string{}
	for _, kv := range fb {
		inB[kv.Key] = kv.A
	}
	inA := map[string]bool{}
	for _, kv := range fa {
		inA[kv.Key] = true
		if vb, ok := inB[kv.Key]; !ok || vb != kv.A {
			changes = append(changes, keyChange{Key: kv.Key, A: kv.A, B: vb})
		}
	}
	for _, kv := range fb {
		if !inA[kv.Key] {
			changes = append(changes, keyChange{Key: kv.Key, B: kv.A})
		}
	}
	return changes, nil
}

// scenarioKeys reads dir/scenario.yaml as its leaf keys ("cluster.workers",
// "events[0].at") and values, in the file's order; ok is false when the
// file does not exist.
func scenarioKeys(dir string) (keys []keyChange, ok bool, err error) {
	path := filepath.Join(dir, report.ScenarioFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return nil, false, usageError{fmt.Errorf("%s: not a scenario: %v", path, err)}
	}
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if key != "" {
					k = key + "." + k
				}
				walk(n.Content[i+1], k)
			}
		case yaml.SequenceNode:
			if len(n.Content) == 0 {
				keys = append(keys, keyChange{Key: key, A: "[]"})
			}
			for i, c := range n.Content {
				walk(c, key+"["+strconv.Itoa(i)+"]")
			}
		default:
			keys = append(keys, keyChange{Key: key, A: n.Value})
		}
	}
	walk(doc.Content[0], "")
	return keys, true, nil
}

func counterChanges(dirA, dirB string) ([]counterChange, error) {
	ca, err := parquetio.ReadCounters(filepath.Join(dirA, report.CountersFile))
	if err != nil {
		return nil, err
	}
	cb, err := parquetio.ReadCounters(filepath.Join(dirB, report.CountersFile))
	if err != nil {
		return nil, err
	}
	// A counter only one run has (a group its scenario adds: faults, say)
	// is 0 in the other: nothing of its kind happened there.
	av, bv := map[string]int64{}, map[string]int64{}
	for _, c := range ca {
		av[c.Name] = c.Value
	}
	for _, c := range cb {
		bv[c.Name] = c.Value
	}
	var out []counterChange
	for _, c := range ca { // in report order, then B's own
		if v := bv[c.Name]; v != c.Value {
			out = append(out, counterChange{Name: c.Name, A: c.Value, B: v})
		}
	}
	for _, c := range cb {
		if _, ok := av[c.Name]; !ok && c.Value != 0 {
			out = append(out, counterChange{Name: c.Name, A: 0, B: c.Value})
		}
	}
	return out, nil
}

func metricChanges(a, b *results.Summary) []metricChange {
	var out []metricChange
	add := func(name string, x, y float64) { out = append(out, metricChange{name, x, y}) }
	for _, p := range []struct {
		name string
		a, b report.Percentiles
	}{{"ttft", a.TTFT, b.TTFT}, {"tpot", a.TPOT, b.TPOT}, {"itl", a.ITL, b.ITL}, {"e2e", a.E2E, b.E2E}} {
		add(p.name+" p50 ms", p.a.P50, p.b.P50)
		add(p.name+" p90 ms", p.a.P90, p.b.P90)
		add(p.name+" p99 ms", p.a.P99, p.b.P99)
		add(p.name+" max ms", p.a.Max, p.b.Max)
	}
	a1, a2, ap := a.Hits()
	b1, b2, bp := b.Hits()
	add("hit ratio g1", a1, b1)
	add("hit ratio g2", a2, b2)
	add("hit ratio pulled", ap, bp)
	add("requests/s", a.Throughput.RequestsPerS, b.Throughput.RequestsPerS)
	add("output tokens/s", a.Throughput.OutputTokensPerS, b.Throughput.OutputTokensPerS)
	return out
}

// print writes the comparison as tables: the scenario keys first, then,
// when the digests differ, what changed.
func (c *comparison) print(w io.Writer) {
	switch {
	case c.Scenario == nil:
		fmt.Fprintf(w, "scenario: not recorded in both runs (no scenario.yaml)\n\n")
	case len(c.Scenario) == 0:
		fmt.Fprintf(w, "scenario: same keys and values\n\n")
	default:
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "scenario key\tA\tB\n")
		for _, k := range c.Scenario {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Key, orAbsent(k.A), orAbsent(k.B))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if c.Equal {
		fmt.Fprintf(w, "digests match: %s\n", c.DigestA)
		return
	}
	fmt.Fprintf(w, "digests differ:\n  A %s  %s\n  B %s  %s\n\n", c.DigestA, c.A, c.DigestB, c.B)
	if len(c.Counters) == 0 {
		fmt.Fprintln(w, "counters: equal")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "counter\tA\tB\tB - A\t\n")
		for _, k := range c.Counters {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%+d\t\n", k.Name, k.A, k.B, k.B-k.A)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	for _, t := range []struct {
		name string
		d    *parquetio.RowDiff
	}{{report.RequestsFile, c.Requests}, {report.PullsFile, c.Pulls}} {
		switch {
		case t.d == nil:
			fmt.Fprintf(w, "%s: equal\n\n", t.name)
			continue
		case t.d.Row < 0:
			fmt.Fprintf(w, "%s: the same behaviour; only configuration columns differ\n", t.name)
		default:
			fmt.Fprintf(w, "%s: first difference at row %d\n", t.name, t.d.Row)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  column\tA\tB\n")
		for _, ch := range t.d.Changes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", ch.Column, ch.A, ch.B)
		}
		for _, ch := range t.d.Config {
			fmt.Fprintf(tw, "  %s (configuration, from row %d)\t%s\t%s\n", ch.Column, ch.Row, ch.A, ch.B)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tA\tB\tB - A\t\n")
	for _, m := range c.Metrics {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", m.Name, orDash("%.3f", m.A), orDash("%.3f", m.B), orDash("%+.3f", m.B-m.A))
	}
	tw.Flush()
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}
