package main

import (
	"bytes"
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
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// sweepSpec is a sweep's grid, written to DIR/sweep.json when the sweep
// starts, so that an interrupted sweep can be resumed and the parts of a
// sharded sweep can be checked and merged.
type sweepSpec struct {
	Scenario string     `json:"scenario"`
	Sets     []string   `json:"sets"`
	Keys     []string   `json:"keys"`
	Values   [][]string `json:"values"` // by key
	Runs     int        `json:"runs"`
	Shard    string     `json:"shard,omitempty"` // "I/N"
	// Replicates is the runs of each grid point, with the seeds Seed,
	// Seed+1, ... (dims); 1: each point once, at the scenario's seed.
	Replicates int    `json:"replicates"`
	Seed       uint64 `json:"seed,omitempty"` // the first replicate's, with replicates
	// Manifest records the command that started the sweep; each run's
	// summary.json holds its own.
	Manifest *report.Manifest `json:"manifest,omitempty"`
}

// sameGrid reports whether two specs describe the same runs: they differ at
// most in their manifests.
func (s *sweepSpec) sameGrid(o *sweepSpec) bool {
	a, b := *s, *o
	a.Manifest, b.Manifest = nil, nil
	return reflect.DeepEqual(a, b)
}

// point is one run of the grid: its index, its grid point's index and one
// value a key of dims.
type point struct {
	run    int
	point  int
	values []string
}

// grid is every run of the cartesian product of the values of dims, in
// run order (at).
func (s *sweepSpec) grid() []point {
	_, values := s.dims()
	n := 1
	for _, vs := range values {
		n *= len(vs)
	}
	pts := make([]point, n)
	for i := range pts {
		pts[i] = s.at(values, i)
	}
	return pts
}

// at is run i of the cartesian product of values, dims' values, the first
// key varying slowest.
func (s *sweepSpec) at(values [][]string, i int) point {
	p := point{run: i, point: i / s.Replicates, values: make([]string, len(values))}
	for k := len(values) - 1; k >= 0; k-- {
		p.values[k], i = values[k][i%len(values[k])], i/len(values[k])
	}
	return p
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
	gridFlags
	vary  []string
	shard string
	json  bool
	// replicates is --replicates: the runs of each grid point.
	replicates int
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
}

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

// start starts the directory -o for spec's grid (startSweepDir), or with
// --resume checks that it holds that grid (checkResumable).
func (f *gridFlags) start(spec *sweepSpec) error {
	if f.resume {
		return checkResumable(f.out, spec)
	}
	return startSweepDir(f.out, f.force, spec)
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
	cmd.AddCommand(newSweepMerge(cmdline))
	return cmd
}

// sweepRun is one run of a sweep: its grid point, scenario and manifest,
// and its row and its summary's warnings once it has run or was found
// done.
type sweepRun struct {
	point
	plan     *sim.Plan
	m        *report.Manifest
	dir      string
	row      *report.SweepRow
	warnings []string
}

func sweep(cmd *cobra.Command, cmdline []string, scenario string, f sweepFlags) error {
	if f.out == "" {
		return usageError{fmt.Errorf("sweep needs -o DIR")}
	}
	keys, values, err := parseVary(f.vary)
	if err != nil {
		return err
	}
	if err := checkReplicates(keys, f.replicates); err != nil {
		return err
	}
	if len(keys) == 0 && f.replicates == 1 {
		return usageError{fmt.Errorf("sweep needs at least one --vary, or --replicates above 1")}
	}
	if err := f.check(); err != nil {
		return err
	}
	spec := &sweepSpec{Scenario: scenario, Sets: f.sets, Keys: keys, Values: values, Replicates: f.replicates, Shard: f.shard}
	if f.replicates > 1 {
		sc, err := loadScenario(scenario, f.sets)
		if err != nil {
			return err
		}
		spec.Seed = sc.Seed
	}
	pts := spec.grid()
	spec.Runs = len(pts)
	if f.shard != "" {
		i, n, err := parseShard(f.shard)
		if err != nil {
			return err
		}
		pts = slices.DeleteFunc(pts, func(p point) bool { return p.point%n != i-1 })
	}
	// Prepare every variation and read each of their workloads first: bad
	// input fails before anything runs.
	runs := make([]*sweepRun, len(pts))
	prep := newPreparer(cmdline, spec, f.out, min(f.jobs, len(pts)), "--vary")
	for i, p := range pts {
		if runs[i], err = prep.run(p); err != nil {
			return err
		}
	}
	warn(cmd.ErrOrStderr(), prep.warnings)
	spec.Manifest = commandManifest(cmdline, scenario, f.sets)
	if err := f.start(spec); err != nil {
		return err
	}
	todo, err := toRun(cmd.ErrOrStderr(), runs, f.resume)
	if err != nil {
		return err
	}
	if err := runAll(cmd, todo, f.gridFlags); err != nil {
		return err
	}
	rows := gather(cmd.ErrOrStderr(), spec, runs)
	if err := finishSweep(f.out, spec, rows); err != nil {
		return err
	}
	return printSweep(cmd.OutOrStdout(), spec, rows, f.json)
}

// gather returns the rows of runs, which have run, in their order, and
// warns on w of the runs' warnings, each once after the runs that gave it,
// and of replicates with identical digests (inertSeeds).
func gather(w io.Writer, spec *sweepSpec, runs []*sweepRun) []report.SweepRow {
	rows := make([]report.SweepRow, len(runs))
	var found runWarnings
	for i, r := range runs {
		rows[i] = *r.row
		for _, s := range r.warnings {
			found.add(s, r.run)
		}
	}
	warn(w, found.lines())
	warn(w, inertSeeds(spec, rows))
	return rows
}

// toRun returns the runs to run: all of them, or with resume those whose
// directory holds no finished run of their grid point (doneRow gives the
// others their rows). It warns on w of the finished runs it runs again,
// and why, and refuses a stale run's directory kvsim may not replace,
// before anything runs.
func toRun(w io.Writer, runs []*sweepRun, resume bool) ([]*sweepRun, error) {
	var todo []*sweepRun
	var again redoReasons
	for _, r := range runs {
		if resume && exists(r.dir) {
			row, warnings, why, err := doneRow(r)
			if err != nil {
				return nil, err
			}
			if r.row, r.warnings = row, warnings; row == nil {
				if err := report.Replaceable(r.dir); err != nil {
					return nil, err
				}
				again.add(why, r.run)
			}
		}
		if r.row == nil {
			todo = append(todo, r)
		}
	}
	warn(w, again.lines())
	return todo, nil
}

// traceKey is what a run reads its trace with: runs of the same key read
// the same requests, so a sweep reads each key's trace once.
type traceKey struct {
	trace     scenarios.Trace
	blockSize int
}

// preparer prepares the runs of a sweep's grid (a search's too), reading
// each trace they read once, and gathers their scenarios' warnings, each
// once, in the order they first came.
type preparer struct {
	cmdline  []string
	spec     *sweepSpec
	out      string
	atOnce   int              // the runs that share the memory (prepare)
	flag     scenarios.Option // names the flag of the values past spec.Sets in errors
	read     map[traceKey]bool
	warnings []string
}

func newPreparer(cmdline []string, spec *sweepSpec, out string, atOnce int, flag string) *preparer {
	return &preparer{cmdline: cmdline, spec: spec, out: out, atOnce: atOnce,
		flag: scenarios.FlagFrom(flag, len(spec.Sets)), read: map[traceKey]bool{}}
}

// run prepares the run of grid point p into out/runs/run-NNN, reading its
// trace when no run prepared before read it.
func (pr *preparer) run(p point) (*sweepRun, error) {
	sets := pr.spec.sets(p)
	plan, err := prepare(pr.spec.Scenario, sets, pr.atOnce, pr.flag)
	if err != nil {
		return nil, err
	}
	sc := plan.Scenario
	if t := sc.Workload.Trace; t != nil && !pr.read[traceKey{*t, sc.Cluster.Engine.BlockSize}] {
		pr.read[traceKey{*t, sc.Cluster.Engine.BlockSize}] = true
		if _, err := plan.ReadWorkload(); err != nil {
			return nil, err
		}
	}
	m, err := newManifest(pr.cmdline, pr.spec.Scenario, sets, sc)
	if err != nil {
		return nil, err
	}
	if err := completeManifest(m, sc); err != nil { // doneRow compares it
		return nil, err
	}
	for _, w := range sc.Warnings() {
		if !slices.Contains(pr.warnings, w) {
			pr.warnings = append(pr.warnings, w)
		}
	}
	return &sweepRun{point: p, plan: plan, m: m, dir: filepath.Join(pr.out, report.SweepRunDir(int64(p.run)))}, nil
}

// startSweepDir creates dir with the sweep's spec in dir/sweep.json and an
// empty dir/runs. An existing dir is refused unless force and kvsim wrote
// it, when it is removed first.
func startSweepDir(dir string, force bool, spec *sweepSpec) error {
	if _, err := os.Lstat(dir); err == nil {
		if !force {
			return usageError{fmt.Errorf("output %s already exists: add --resume to finish the sweep it holds, or --force to replace it", dir)}
		}
		if err := report.Replaceable(dir); err != nil {
			return err
		}
		if err := os.RemoveAll(dir); err != nil {
			return report.Unwritable(dir, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, report.RunsDir), 0o755); err != nil {
		return report.Unwritable(dir, err)
	}
	return writeAtomically(filepath.Join(dir, report.SweepSpecFile), func(path string) error { return report.WriteJSON(path, spec) })
}

// checkResumable checks that dir holds a sweep of the same grid.
func checkResumable(dir string, spec *sweepSpec) error {
	old, err := readSweepSpec(dir)
	if err != nil {
		return err
	}
	if !old.sameGrid(spec) {
		return usageError{fmt.Errorf("--resume: %s holds another sweep (its sweep.json has another scenario, --set, --vary, --replicates or --shard); give the command that started it, or another -o", dir)}
	}
	return nil
}

// doneRow returns the row and the warnings of a run its directory already
// holds, or nil and why the run must be done again: a run counts as done
// when its summary.json's manifest describes this grid point (same build,
// scenario, --set values and trace) and its scenario.yaml is this point's
// scenario, resolved.
func doneRow(r *sweepRun) (*report.SweepRow, []string, string, error) {
	s, err := readRunSummary(r.dir)
	switch {
	case err != nil || s.Manifest == nil:
		return nil, nil, "their summary.json is missing or holds no manifest", nil
	case s.Manifest.Build != r.m.Build:
		return nil, nil, fmt.Sprintf("another kvsim build made them (executable sha256 %.12s…, this one %.12s…)",
			s.Manifest.Build.ExecutableSHA256, r.m.Build.ExecutableSHA256), nil
	case !s.Manifest.Trace.Equal(r.m.Trace):
		return nil, nil, "the trace changed since they ran (its size or SHA-256 differs)", nil
	case !s.Manifest.SameRun(r.m):
		return nil, nil, "their manifest names another scenario or --set values", nil
	}
	want, err := r.plan.Scenario.YAML()
	if err != nil {
		return nil, nil, "", err
	}
	if got, err := os.ReadFile(filepath.Join(r.dir, report.ScenarioFile)); err != nil || !bytes.Equal(got, want) {
		return nil, nil, "their scenario.yaml is not their grid point's scenario, resolved", nil
	}
	row := sim.SweepRow(int64(r.run), r.values, s.Summary)
	return &row, s.Warnings, "", nil
}

// runWarnings collects the runs' warnings, each with the runs that gave
// it, in the order they first came.
type runWarnings []redo

func (r *runWarnings) add(w string, run int) { (*redoReasons)(r).add(w, run) }

// lines are the warnings, each after its runs: "run 0-2, 5: ...".
func (r runWarnings) lines() []string {
	var out []string
	for _, d := range r {
		out = append(out, spans(d.runs)+": "+d.why)
	}
	return out
}

// redoReasons collects, for --resume, the finished runs that are run again,
// by why, in the order the reasons first came.
type redoReasons []redo

// redo is one reason finished runs are run again, and those runs.
type redo struct {
	why  string
	runs []int
}

func (r *redoReasons) add(why string, run int) {
	i := slices.IndexFunc(*r, func(d redo) bool { return d.why == why })
	if i < 0 {
		*r, i = append(*r, redo{why: why}), len(*r)
	}
	(*r)[i].runs = append((*r)[i].runs, run)
}

// lines says, one line a reason, which runs are run again and why.
func (r redoReasons) lines() []string {
	var out []string
	for _, d := range r {
		n := fmt.Sprintf("%d finished runs are", len(d.runs))
		if len(d.runs) == 1 {
			n = "1 finished run is"
		}
		out = append(out, fmt.Sprintf("--resume: %s run again (%s): %s", n, spans(d.runs), d.why))
	}
	return out
}

// spans writes increasing run numbers as ranges: "run 0-2, 5".
func spans(runs []int) string {
	var parts []string
	for i := 0; i < len(runs); {
		j := i
		for j+1 < len(runs) && runs[j+1] == runs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", runs[i], runs[j]))
		} else {
			parts = append(parts, strconv.Itoa(runs[i]))
		}
		i = j + 1
	}
	return "run " + strings.Join(parts, ", ")
}

// testHookRunDone, when set by a test, is called after each run of a sweep
// has finished, in the goroutine that ran it.
var testHookRunDone func()

// runAll runs the runs, -j at a time, each into its directory. The first
// failure or an interrupt stops the sweep; the runs finished by then stay.
func runAll(cmd *cobra.Command, todo []*sweepRun, f gridFlags) error {
	var bar *progressbar.ProgressBar
	if stderr := cmd.ErrOrStderr(); showProgress(stderr, f.quiet) && len(todo) > 0 {
		bar = newBar(stderr, int64(len(todo)), "runs")
		defer bar.Clear() // before the table is printed
	}
	// The first error cancels the other runs, and is the one Wait returns:
	// a failed run's, not the cancellations it caused.
	g, ctx := errgroup.WithContext(cmd.Context())
	g.SetLimit(f.jobs)
	for _, r := range todo {
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil // a run failed or the sweep was interrupted: start no more
			}
			sum, err := runPoint(ctx, r)
			if err != nil {
				return fmt.Errorf("run %d (%s): %w", r.run, strings.Join(r.m.Sets[len(f.sets):], " "), err)
			}
			row := sim.SweepRow(int64(r.run), r.values, sum)
			r.row, r.warnings = &row, sum.Warnings
			if bar != nil {
				bar.Add(1)
			}
			if testHookRunDone != nil {
				testHookRunDone()
			}
			return nil
		})
	}
	err := g.Wait()
	finished := 0
	for _, r := range todo {
		if r.row != nil {
			finished++
		}
	}
	kept := fmt.Sprintf("%d of the %d runs to do finished and are kept in %s; add --resume to the same command to run the rest", finished, len(todo), f.out)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		return fmt.Errorf("%w\n%s", err, kept)
	case err != nil || cmd.Context().Err() != nil:
		return &interruptedError{kept}
	}
	return nil
}

// finishSweep writes dir/points.parquet and dir/sweep.parquet, last and
// atomically (its presence says the sweep is complete).
func finishSweep(dir string, spec *sweepSpec, rows []report.SweepRow) error {
	return writeSweep(spec, rows, func(name string, fill func(path string) error) error {
		return writeAtomically(filepath.Join(dir, name), fill)
	})
}

// sets are a point's overrides: the sweep's --set, then one a key of dims.
func (s *sweepSpec) sets(p point) []string {
	out := slices.Clone(s.Sets)
	keys, _ := s.dims()
	for i, k := range keys {
		out = append(out, k+"="+p.values[i])
	}
	return out
}

// runPoint runs one run of the grid into its directory, atomically, and
// returns its summary. It runs in a goroutine of its own: a panic is its
// error.
func runPoint(ctx context.Context, r *sweepRun) (_ *sim.Summary, err error) {
	defer catchPanic(&err)
	out, err := report.Create(r.dir, true) // a run not done may replace a stale one
	if err != nil {
		return nil, err
	}
	defer out.Abort() // no-op after Commit
	sum, err := runTo(ctx, out.Path, r.plan, sim.Options{}, r.m)
	if err != nil {
		return nil, err
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	return sum.Summary, nil
}

// printSweep prints the rows as a table (with replicates, the grid points'
// table), or as JSON objects named by sweep.parquet's columns.
func printSweep(w io.Writer, spec *sweepSpec, rows []report.SweepRow, asJSON bool) error {
	keys, _ := spec.dims()
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
		fmt.Fprintf(&evHead, "event %d gone after\tevent %d TTFT p50/p99 before → after\t", k, k)
	}
	fmt.Fprintf(tw, "run\t%s\tdone\tTTFT p50\tTTFT p99\tE2E p99\thit G1/G2/pull\tpulls ok/part/fail/exp/rej\t%sdigest\n",
		strings.Join(keys, "\t"), evHead.String())
	for _, r := range rows {
		var ev strings.Builder
		for k := range events {
			if k >= len(r.Events) {
				ev.WriteString("—\t—\t")
				continue
			}
			e := &r.Events[k]
			gone := "—"
			if e.RemovedAfterNs >= 0 {
				gone = roundMs(e.RemovedAfterNs).String()
			}
			fmt.Fprintf(&ev, "%s\t%.1f/%.1f → %.1f/%.1f\t", gone, e.Before.TTFTP50Ms, e.Before.TTFTP99Ms, e.After.TTFTP50Ms, e.After.TTFTP99Ms)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.3f/%.3f/%.3f\t%d/%d/%d/%d/%d\t%s%s\n", r.Run,
			strings.Join(r.Params, "\t"), r.Completed, r.TTFTP50, r.TTFTP99, r.E2EP99, r.HitG1, r.HitG2, r.HitPulled,
			r.PullsSuccess, r.PullsPartial, r.PullsFailed, r.PullsExpired, r.PullsRejected, ev.String(), r.Digest[:shortDigest])
	}
	return tw.Flush()
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
			return merge(cmd.OutOrStdout(), cmd.ErrOrStderr(), cmdline, args, out, force, asJSON)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output directory (required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an output directory kvsim wrote")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON on stdout instead of the table")
	return cmd
}

// readSweepSpec reads dir/sweep.json.
func readSweepSpec(dir string) (*sweepSpec, error) {
	raw, err := os.ReadFile(filepath.Join(dir, report.SweepSpecFile))
	if err != nil {
		return nil, usageError{fmt.Errorf("%s is not a sweep directory: %w", dir, err)}
	}
	var s sweepSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", filepath.Join(dir, report.SweepSpecFile), err)}
	}
	s.Replicates = max(s.Replicates, 1) // absent from the sweeps of builds before --replicates
	return &s, nil
}

func merge(w, errw io.Writer, cmdline, dirs []string, outDir string, force, asJSON bool) (err error) {
	var spec *sweepSpec
	var rows []report.SweepRow
	for _, d := range dirs {
		s, err := readSweepSpec(d)
		if err != nil {
			return err
		}
		shard := s.Shard
		s.Shard = ""
		if spec == nil {
			spec = s
		} else if !spec.sameGrid(s) {
			return usageError{fmt.Errorf("%s (shard %s) is part of another sweep than %s", d, shard, dirs[0])}
		}
		if !exists(filepath.Join(d, report.SweepFile)) {
			return usageError{fmt.Errorf("%s is an unfinished sweep (no sweep.parquet): finish it with the command that started it and --resume", d)}
		}
		k, r, err := parquetio.ReadSweep(filepath.Join(d, report.SweepFile))
		if err != nil {
			return err
		}
		if keys, _ := spec.dims(); !slices.Equal(k, keys) {
			return usageError{fmt.Errorf("%s: its sweep.parquet varies %s, its sweep.json %s", d, strings.Join(k, ", "), strings.Join(keys, ", "))}
		}
		rows = append(rows, r...)
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
		return err
	}
	defer out.Abort() // no-op after Commit
	spec.Manifest = commandManifest(cmdline, spec.Scenario, spec.Sets)
	if err := report.WriteJSON(out.Path(report.SweepSpecFile), spec); err != nil {
		return err
	}
	err = writeSweep(spec, rows, func(name string, fill func(path string) error) error { return fill(out.Path(name)) })
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	warn(errw, inertSeeds(spec, rows))
	return printSweep(w, spec, rows, asJSON)
}

func runList(rows []report.SweepRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, strconv.FormatInt(r.Run, 10))
	}
	return strings.Join(s, ",")
}
