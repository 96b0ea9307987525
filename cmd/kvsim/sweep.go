package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// sweepSpec is a sweep's grid, written to DIR/sweep.json so that the parts
// of a sharded sweep can be checked and merged.
type sweepSpec struct {
	Scenario string     `json:"scenario"`
	Sets     []string   `json:"sets"`
	Keys     []string   `json:"keys"`
	Values   [][]string `json:"values"` // by key
	Runs     int        `json:"runs"`
	Shard    string     `json:"shard,omitempty"` // "I/N"
}

// point is one run of the grid: its index and one value a key.
type point struct {
	run    int
	values []string
}

// grid is the cartesian product of the values, the first key varying
// slowest.
func (s *sweepSpec) grid() []point {
	pts := []point{{}}
	for _, vs := range s.Values {
		var next []point
		for _, p := range pts {
			for _, v := range vs {
				next = append(next, point{values: append(slices.Clone(p.values), v)})
			}
		}
		pts = next
	}
	for i := range pts {
		pts[i].run = i
	}
	return pts
}

// splitTop splits s at commas that are not inside brackets, braces or
// quotes, so YAML values can be varied: events=[],[{at: 5m, drain: [1, 2]}].
func splitTop(s string) []string {
	var out []string
	depth, quote, start := 0, byte(0), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func parseVary(vary []string) (keys []string, values [][]string, err error) {
	for _, v := range vary {
		k, list, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || list == "" {
			return nil, nil, usageError{fmt.Errorf("--vary %q: want key=v1,v2,...", v)}
		}
		if slices.Contains(keys, k) {
			return nil, nil, usageError{fmt.Errorf("--vary %q: key %s given twice", v, k)}
		}
		keys = append(keys, k)
		values = append(values, splitTop(list))
	}
	return keys, values, nil
}

// parseShard reads "I/N" (1 <= I <= N).
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, usageError{fmt.Errorf("--shard %q: want I/N with 1 <= I <= N", s)}
	}
	return i, n, nil
}

type sweepFlags struct {
	vary  []string
	sets  []string
	jobs  int
	out   string
	shard string
	force bool
}

func newSweep() *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep SCENARIO --vary key=v1,v2 [--vary ...] -o DIR",
		Short: "Run the cartesian grid of scenario variations, in parallel, into one table",
		Long: "sweep runs SCENARIO once for every combination of the --vary values (the first key\n" +
			"varies slowest), each run independent and deterministic, -j at a time. Each run's\n" +
			"report goes to DIR/runs/run-NNN; DIR/sweep.parquet has one row a run: the varied\n" +
			"values, the summary metrics and the digest. --shard I/N runs only the runs whose\n" +
			"index is I-1 modulo N, so a large grid can be split across machines; 'kvsim sweep\n" +
			"merge' joins the parts.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sweep(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.vary, "vary", nil, "a key and its values: --vary router.policy=kv_aware,least_loaded (repeatable)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario key in every run (repeatable)")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.NumCPU(), "runs at a time")
	fl.StringVarP(&f.out, "out", "o", "", "output directory (required)")
	fl.StringVar(&f.shard, "shard", "", "run only part I of N: I/N")
	fl.BoolVar(&f.force, "force", false, "replace an existing output directory once the sweep succeeds")
	cmd.MarkFlagRequired("out")
	cmd.AddCommand(newSweepMerge())
	return cmd
}

func sweep(cmd *cobra.Command, scenario string, f sweepFlags) error {
	keys, values, err := parseVary(f.vary)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return usageError{fmt.Errorf("sweep needs at least one --vary")}
	}
	if f.jobs < 1 {
		return usageError{fmt.Errorf("-j %d: want at least 1", f.jobs)}
	}
	spec := &sweepSpec{Scenario: scenario, Sets: f.sets, Keys: keys, Values: values, Shard: f.shard}
	pts := spec.grid()
	spec.Runs = len(pts)
	if f.shard != "" {
		i, n, err := parseShard(f.shard)
		if err != nil {
			return err
		}
		pts = slices.DeleteFunc(pts, func(p point) bool { return p.run%n != i-1 })
	}
	// Load every variation first: bad input fails before anything runs.
	scs := make([]*scenarios.Scenario, len(pts))
	for i, p := range pts {
		if scs[i], err = scenarios.Load(scenario, spec.sets(p)); err != nil {
			return err
		}
	}
	out, err := report.Create(f.out, f.force)
	if err != nil {
		return usageError{err}
	}
	defer out.Abort() // no-op after Commit
	rows := make([]report.SweepRow, len(pts))
	errs := make([]error, len(pts))
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(f.jobs, len(pts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if ctx.Err() != nil {
					continue // a run failed or the sweep was interrupted: start no more
				}
				rows[i], errs[i] = runPoint(ctx, out.Path(filepath.Join("runs", fmt.Sprintf("run-%03d", pts[i].run))), scs[i], pts[i])
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	for i := range pts {
		work <- i
	}
	close(work)
	wg.Wait()
	// A failed run cancels the others: report its error, not theirs.
	var cancelled error
	for i, e := range errs {
		if e == nil {
			continue
		}
		e = fmt.Errorf("run %d (%s): %w", pts[i].run, strings.Join(spec.sets(pts[i])[len(f.sets):], " "), e)
		if !errors.Is(e, context.Canceled) {
			return e
		}
		cancelled = cmp.Or(cancelled, e)
	}
	if err := cmp.Or(cancelled, cmd.Context().Err()); err != nil {
		return err // interrupted, perhaps between runs
	}
	return finishSweep(cmd.OutOrStdout(), out, spec, keys, rows)
}

// finishSweep writes sweep.parquet and sweep.json into out, commits it and
// prints the table.
func finishSweep(w io.Writer, out *report.OutDir, spec *sweepSpec, keys []string, rows []report.SweepRow) error {
	if err := report.WriteSweep(out.Path("sweep.parquet"), keys, rows); err != nil {
		return err
	}
	if err := report.WriteJSON(out.Path("sweep.json"), spec); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	printSweep(w, keys, rows)
	return nil
}

// sets are a point's overrides: the sweep's --set, then one a varied key.
func (s *sweepSpec) sets(p point) []string {
	out := slices.Clone(s.Sets)
	for i, k := range s.Keys {
		out = append(out, k+"="+p.values[i])
	}
	return out
}

// runPoint runs one scenario of the grid into dir and returns its row.
func runPoint(ctx context.Context, dir string, sc *scenarios.Scenario, p point) (report.SweepRow, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return report.SweepRow{}, err
	}
	sum, err := runTo(ctx, func(n string) string { return filepath.Join(dir, n) }, sc, sim.Options{})
	if err != nil {
		return report.SweepRow{}, err
	}
	return sweepRow(p, sum), nil
}

func sweepRow(p point, s *sim.Summary) report.SweepRow {
	c := s.Counters
	return report.SweepRow{
		Run: int64(p.run), Params: p.values,
		Completed: s.Requests.Completed, Rejected: s.Requests.Rejected, Failed: s.Requests.Failed,
		Unfinished: s.Requests.Unfinished,
		TTFTP50:    s.TTFT.P50, TTFTP90: s.TTFT.P90, TTFTP99: s.TTFT.P99, TPOTP50: s.TPOT.P50, TPOTP99: s.TPOT.P99,
		ITLP99: s.ITL.P99, E2EP50: s.E2E.P50, E2EP99: s.E2E.P99,
		HitG1: s.HitRatio.G1, HitG2: s.HitRatio.G2, HitPulled: s.HitRatio.Pulled,
		RequestsPerS: s.Throughput.RequestsPerS, OutputTokensPerS: s.Throughput.OutputTokensPerS,
		PullsStaged: c["pulls_staged"], PullsSuccess: c["pulls_success"], PullsPartial: c["pulls_partial"],
		PullsFailed: c["pulls_failed"], PullsExpired: c["pulls_expired"], PullsSuperseded: c["pulls_superseded"],
		PullsRejected: pullsRejected(c),
		PullsParked:   c["pulls_parked"], BytesPulled: c["bytes_pulled"], Rerouted: c["requests_rerouted"],
		WorkersRemoved: c["workers_removed"], MakespanNs: s.MakespanNs, Digest: s.Digest,
	}
}

func printSweep(w io.Writer, keys []string, rows []report.SweepRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\tdone\tTTFT p50\tTTFT p99\tE2E p99\thit G1/G2/pull\tpulls ok/part/fail/exp/rej\tdigest\n", strings.Join(keys, "\t"))
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.3f/%.3f/%.3f\t%d/%d/%d/%d/%d\t%s\n", r.Run,
			strings.Join(r.Params, "\t"), r.Completed, r.TTFTP50, r.TTFTP99, r.E2EP99, r.HitG1, r.HitG2, r.HitPulled,
			r.PullsSuccess, r.PullsPartial, r.PullsFailed, r.PullsExpired, r.PullsRejected, r.Digest[:12])
	}
	tw.Flush()
}

func newSweepMerge() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "merge DIR... -o OUT",
		Short: "Join the parts of a sharded sweep into one sweep.parquet",
		Long: "merge reads DIR/sweep.json and DIR/sweep.parquet of every part, checks they are parts of\n" +
			"the same sweep and together hold each run exactly once, and writes OUT/sweep.parquet\n" +
			"(rows in run order) and OUT/sweep.json.",
		Args: positional(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return merge(cmd.OutOrStdout(), args, out, force)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing output directory")
	cmd.MarkFlagRequired("out")
	return cmd
}

func merge(w io.Writer, dirs []string, outDir string, force bool) (err error) {
	var spec *sweepSpec
	var keys []string
	var rows []report.SweepRow
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "sweep.json"))
		if err != nil {
			return usageError{fmt.Errorf("%s is not a sweep directory: %w", d, err)}
		}
		var s sweepSpec
		if err := json.Unmarshal(raw, &s); err != nil {
			return usageError{fmt.Errorf("%s: %w", filepath.Join(d, "sweep.json"), err)}
		}
		shard := s.Shard
		s.Shard = ""
		if spec == nil {
			spec = &s
		} else if !reflect.DeepEqual(*spec, s) {
			return usageError{fmt.Errorf("%s (shard %s) is part of another sweep than %s", d, shard, dirs[0])}
		}
		k, r, err := report.ReadSweep(filepath.Join(d, "sweep.parquet"))
		if err != nil {
			return err
		}
		keys, rows = k, append(rows, r...)
	}
	slices.SortFunc(rows, func(a, b report.SweepRow) int { return int(a.Run - b.Run) })
	for i, r := range rows {
		if r.Run != int64(i) {
			return usageError{fmt.Errorf("the parts hold runs %s; the sweep has runs 0-%d, each exactly once", runList(rows), spec.Runs-1)}
		}
	}
	if len(rows) != spec.Runs {
		return usageError{fmt.Errorf("the parts hold %d of the sweep's %d runs", len(rows), spec.Runs)}
	}
	out, err := report.Create(outDir, force)
	if err != nil {
		return usageError{err}
	}
	defer out.Abort() // no-op after Commit
	return finishSweep(w, out, spec, keys, rows)
}

func runList(rows []report.SweepRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, strconv.FormatInt(r.Run, 10))
	}
	return strings.Join(s, ",")
}
