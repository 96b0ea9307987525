package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/study"
	"github.com/kvsim/kvsim/study/page"
)

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

type sweepFlags struct {
	gridFlags
	vary  []string
	shard string
	json  bool
	// replicates is --replicates: the runs of each grid point.
	replicates int
	slos       []string // --slo, for the page's grid points
}

// gridFlags are the flags sweep and search share: the --set every run
// gets, the runs at a time, the directory they go to and how an existing
// one is treated, and the progress bar.
type gridFlags struct {
	sets   []string
	jobs   int
	out    string
	force  bool
	resume bool
	quiet  bool
	twins  bool
	report bool
}

// add declares the flags on cmd: what names the directory --force
// removes, resume is --resume's help.
func (f *gridFlags) add(cmd *cobra.Command, what, resume string) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario key in every run (repeatable)")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.NumCPU(), "runs at a time")
	fl.StringVarP(&f.out, "out", "o", "", "output directory (required)")
	fl.BoolVar(&f.force, "force", false, "remove an existing "+what+" directory kvsim wrote before starting")
	fl.BoolVar(&f.resume, "resume", false, resume)
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.BoolVar(&f.twins, "twins", true, twinsHelp)
	fl.BoolVar(&f.report, "report", false, "write DIR/report.html, the "+what+"'s page (kvsim report), once it ends")
}

// twinsHelp is --twins' help, in replay, sweep and search.
const twinsHelp = "run each scenario event's twin (the run without it) beside the run, for its effect in events.parquet; --twins=false skips them"

// check refuses -j below 1, and --resume with --force, and cleans -o:
// "link/" is the symlink link, not the folder it names.
func (f *gridFlags) check() error {
	switch {
	case f.jobs < 1:
		return usageError{fmt.Errorf("-j %d: want at least 1", f.jobs)}
	case f.resume && f.force:
		return usageError{fmt.Errorf("--resume keeps the finished runs and --force removes them: give one")}
	}
	f.out = filepath.Clean(f.out)
	return nil
}

func newSweep(cmdline []string) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep SCENARIO --vary key=v1,v2 [--vary ...] -o DIR",
		Short: "Run the cartesian grid of scenario variations, in parallel, into one table",
		Long: "sweep runs SCENARIO once for every combination of the --vary values (the first key\n" +
			"varies slowest), each run independent and deterministic, -j at a time. Each run's\n" +
			"report goes to DIR/runs/run-NNN as it finishes; DIR/sweep.parquet, written at the\n" +
			"end, has one row a run: the varied values, the summary metrics and the digest. An\n" +
			"interrupted or failed sweep keeps its finished runs, and --resume runs only the rest.\n" +
			"--replicates N runs each grid point N times, at the scenario's seed +0 ... +N-1, and\n" +
			"DIR/points.parquet summarises each point's runs (mean, SD, 95% interval of each metric).\n" +
			"--shard I/N runs only the grid points whose index is I-1 modulo N, so a large grid can\n" +
			"be split across machines; 'kvsim sweep merge' joins the parts.",
		Args: positional(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sweep(cmd, cmdline, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.vary, "vary", nil, "a key and its values: --vary router.policy=kv_aware,least_loaded (repeatable)")
	fl.IntVar(&f.replicates, "replicates", 1, "runs of each grid point, at the scenario's seed +0, +1, ...")
	fl.StringVar(&f.shard, "shard", "", "run only part I of N: I/N")
	f.add(cmd, "sweep", "finish the sweep in DIR: run only the runs it does not hold yet")
	fl.BoolVar(&f.json, "json", false, "print the sweep's rows as JSON on stdout instead of the table")
	fl.StringArrayVar(&f.slos, "slo", nil, "with --report: a condition a grid point's runs must all meet, marked on the page (repeatable)")
	cmd.AddCommand(newSweepMerge(cmdline))
	return cmd
}

// printSweep prints the rows as a table (with replicates, the grid points'
// table), or as JSON objects named by sweep.parquet's columns.
func printSweep(w io.Writer, spec *study.Spec, rows []report.SweepRow, asJSON bool) error {
	keys, _ := spec.Dims()
	events := report.SweepEvents(rows)
	if !asJSON && spec.Replicates > 1 {
		return printPoints(w, spec, rows, events)
	}
	if asJSON {
		cols := report.SweepColumns(keys, events)
		out := make([]json.RawMessage, len(rows))
		for i := range rows {
			out[i] = report.RowJSON(cols, &rows[i])
		}
		return printJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var evHead strings.Builder
	for k := range events {
		fmt.Fprintf(&evHead, "event %d gone after\tevent %d TTFT p99 effect (with/without)\tevent %d ITL p99 effect\t", k, k, k)
	}
	goodHead, goodput := "", report.HasGoodput(rows)
	if goodput {
		goodHead = "goodput/s (share)\t"
	}
	fmt.Fprintf(tw, "run\t%s\tdone\tTTFT p50\tTTFT p99\tE2E p99\tworker-s\t%shit G1/G2/pull\tpulls ok/part/fail/exp/rej\t%sdigest\n",
		strings.Join(keys, "\t"), goodHead, evHead.String())
	for _, r := range rows {
		good := ""
		switch {
		case goodput && r.GoodputRequests < 0:
			good = "—\t" // a run without planner.slo
		case goodput:
			good = fmt.Sprintf("%.2f (%.1f%%)\t", r.GoodputRequestsPerS, 100*r.GoodputShare)
		}
		var ev strings.Builder
		for k := range events {
			if k >= len(r.Events) {
				ev.WriteString("—\t—\t—\t")
				continue
			}
			e := &r.Events[k]
			gone := "—"
			if e.RemovedAfterNs >= 0 {
				gone = results.RoundMs(e.RemovedAfterNs).String()
			}
			if !e.Twinned {
				fmt.Fprintf(&ev, "%s\tno twin\tno twin\t", gone)
				continue
			}
			fmt.Fprintf(&ev, "%s\t%s (%.1f/%.1f)\t%s\t", gone, results.Signed(e.Delta.TTFTP99Ms, "ms"), e.After.TTFTP99Ms, e.Twin.TTFTP99Ms,
				results.Signed(e.Delta.ITLP99Ms, "ms"))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%.1f\t%s%s/%s/%s\t%d/%d/%d/%d/%d\t%s%s\n", r.Run,
			strings.Join(r.Params, "\t"), r.Completed, orDash("%.1f", r.TTFTP50), orDash("%.1f", r.TTFTP99), orDash("%.1f", r.E2EP99),
			r.WorkerSeconds, good, orDash("%.3f", r.HitG1), orDash("%.3f", r.HitG2), orDash("%.3f", r.HitPulled),
			r.PullsSuccess, r.PullsPartial, r.PullsFailed, r.PullsExpired, r.PullsRejected, ev.String(), r.Digest[:shortDigest])
	}
	return tw.Flush()
}

// orDash is v in format, or "—" for NaN (a statistic of nothing: a run
// that completed no request).
func orDash(format string, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

func newSweepMerge(cmdline []string) *cobra.Command {
	var out string
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "merge DIR... -o OUT",
		Short: "Join the parts of a sharded sweep into one sweep.parquet",
		Long: "merge reads DIR/sweep.json and DIR/sweep.parquet of every part, checks they are parts of\n" +
			"the same sweep and together hold each run exactly once, and writes OUT/sweep.parquet\n" +
			"(rows in run order), OUT/points.parquet and OUT/sweep.json.",
		Args: positional(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("sweep merge needs -o OUT")}
			}
			env := newEnv(cmd, cmdline, true)
			spec, rows, err := env.Merge(args, out, force)
			if err != nil {
				return err
			}
			return printSweep(cmd.OutOrStdout(), spec, rows, asJSON)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an output directory kvsim wrote")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON on stdout instead of the table")
	return cmd
}

// sweep runs kvsim sweep: the grid of its --vary and --replicates
// (study.Sweep), then its table.
func sweep(cmd *cobra.Command, cmdline []string, scenario string, f sweepFlags) error {
	if f.out == "" {
		return usageError{fmt.Errorf("sweep needs -o DIR")}
	}
	if f.shard == "" && cmd.Flags().Changed("shard") { // --shard "$SHARD" with SHARD unset would run every shard's runs
		return usageError{fmt.Errorf(`--shard "": want I/N with 1 <= I <= N, or omit --shard to run the whole grid`)}
	}
	keys, values, err := parseVary(f.vary)
	if err != nil {
		return err
	}
	if len(keys) == 0 && f.replicates == 1 {
		return usageError{fmt.Errorf("sweep needs at least one --vary, or --replicates above 1")}
	}
	if err := f.check(); err != nil {
		return err
	}
	if len(f.slos) > 0 && !f.report {
		return usageError{fmt.Errorf("--slo marks the grid points of the sweep's page: add --report")}
	}
	for _, slo := range f.slos { // its metric is checked once the runs say how many events they have
		if _, err := scenarios.ParseExpectation(slo); err != nil {
			return usageError{fmt.Errorf("--slo %q: %w", slo, err)}
		}
	}
	env := newEnv(cmd, cmdline, f.quiet)
	env.Twins = f.twins
	s := &study.Sweep{Env: env, Dir: f.dir(),
		Spec: &study.Spec{Scenario: scenario, Sets: f.sets, Keys: keys, Values: values, Replicates: f.replicates, Shard: f.shard}}
	rows, err := s.Run(cmd.Context())
	if err != nil {
		return err
	}
	if err := printSweep(cmd.OutOrStdout(), s.Spec, rows, f.json); err != nil {
		return err
	}
	if f.report {
		return writeReport(cmd.ErrOrStderr(), f.out, page.Options{SLOs: f.slos})
	}
	return nil
}

// dir is the flags' output directory for a study.
func (f *gridFlags) dir() study.Dir {
	return study.Dir{Path: f.out, Force: f.force, Resume: f.resume, Jobs: f.jobs}
}

// newEnv is the study environment of the command: its command line and
// build in the manifests, its warnings on stderr, a progress bar of the
// runs on stderr when it is a terminal (and not quiet), and the tests'
// hooks.
func newEnv(cmd *cobra.Command, cmdline []string, quiet bool) study.Env {
	stderr := cmd.ErrOrStderr()
	return study.Env{Command: cmdline, Build: report.ReadBuild(version),
		Warn:     func(s string) { warn(stderr, []string{s}) },
		Started:  testHookRunning,
		Progress: &runsBar{w: stderr, show: showProgress(stderr, quiet)}}
}

// testHookRunning, when set by a test, is called as each run starts, its
// tables open, in the goroutine that runs it.
var testHookRunning func(*scenarios.Scenario)

// testHookRunDone, when set by a test, is called after each run of a sweep
// or a search has finished, in the goroutine that ran it.
var testHookRunDone func()

// runsBar is a progress bar of a study's runs (study.Progress), drawn on
// w when show.
type runsBar struct {
	w    io.Writer
	show bool
	bar  *progressbar.ProgressBar
}

func (b *runsBar) Start(n int) {
	if b.show {
		b.bar = newBar(b.w, int64(n), "runs")
	}
}

func (b *runsBar) Done() {
	if b.bar != nil {
		b.bar.Add(1)
	}
	if testHookRunDone != nil {
		testHookRunDone()
	}
}

// End clears the bar, before the table is printed.
func (b *runsBar) End() {
	if b.bar != nil {
		b.bar.Clear()
		b.bar = nil
	}
}
