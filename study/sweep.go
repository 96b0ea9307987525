package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/sim"
)

// Dir is where a sweep or a search writes, and what it does with a
// directory that exists.
type Dir struct {
	Path string
	// Force removes an existing directory kvsim wrote first; Resume keeps
	// the runs an existing one holds of the same grid and runs only the
	// rest. At most one of them.
	Force, Resume bool
	Jobs          int // runs at a time, at least 1
}

// Sweep is a sweep: Spec's grid run into Dir, each run in a directory of
// its own (Dir/runs/run-NNN), then Dir/sweep.parquet and points.parquet.
type Sweep struct {
	Env
	Spec *Spec // its Seed is set from the scenario with replicates, its Runs and Manifest by Run
	Dir  Dir
}

// Run runs the sweep: it prepares every run of the grid (of its shard)
// and reads each of their traces first, so that bad input fails before
// anything is written (all but a run stopped as a runaway, sim.RunawayError,
// which only running finds), then runs those the directory does not hold yet,
// Jobs at a time, and writes the sweep's tables. It returns the rows of
// sweep.parquet, in run order. An interrupt (ctx) keeps the runs finished
// (an Interrupted error); a failed run stops the others.
func (s *Sweep) Run(ctx context.Context) ([]report.SweepRow, error) {
	spec := s.Spec
	spec.Twins = s.Env.Twins
	i, n, err := spec.check()
	if err != nil {
		return nil, err
	}
	if spec.Replicates > 1 {
		sc, err := LoadScenario(spec.Scenario, spec.Sets)
		if err != nil {
			return nil, err
		}
		spec.Seed = sc.Seed
	}
	pts := spec.Grid()
	spec.Runs = len(pts)
	if spec.Shard != "" {
		pts = slices.DeleteFunc(pts, func(p Point) bool { return p.Point%n != i-1 })
	}
	runs := make([]*run, len(pts))
	prep := newPreparer(&s.Env, spec, s.Dir.Path, min(s.Dir.Jobs, len(pts)), "--vary")
	for i, p := range pts {
		if runs[i], err = prep.run(p); err != nil {
			return nil, err
		}
	}
	s.warn(prep.warnings)
	spec.Manifest = s.commandManifest(spec.Scenario, spec.Sets)
	if err := startDir(s.Dir.Path, s.Dir.Force, s.Dir.Resume, spec); err != nil {
		return nil, err
	}
	todo, err := s.toRun(runs, s.Dir.Resume)
	if err != nil {
		return nil, err
	}
	if err := s.runAll(ctx, todo, s.Dir); err != nil {
		return nil, err
	}
	rows := s.gather(spec, runs)
	return rows, finishSweep(s.Dir.Path, spec, rows)
}

// run is one run of a sweep: its grid point, plan and manifest, and its
// row and its summary's warnings once it has run or was found done.
type run struct {
	Point
	plan     *sim.Plan
	m        *report.Manifest
	dir      string
	row      *report.SweepRow
	warnings []string
}

// gather returns the rows of runs, which have run, in their order, and
// warns of the runs' warnings, each once after the runs that gave it, and
// of replicates with identical digests (Spec.InertSeeds).
func (e *Env) gather(spec *Spec, runs []*run) []report.SweepRow {
	rows := make([]report.SweepRow, len(runs))
	warnings := make([][]string, len(runs))
	for i, r := range runs {
		rows[i], warnings[i] = *r.row, r.warnings
	}
	e.warn(RunWarnings(rows, warnings))
	e.warn(spec.InertSeeds(rows))
	return rows
}

// RunWarnings are the warnings of a sweep's runs (warnings[i] those of
// rows[i]), each once, after the runs that gave it: "run 0-2, 5: only 14
// requests are in flight ...", as kvsim sweep prints them.
func RunWarnings(rows []report.SweepRow, warnings [][]string) []string {
	var found reasons
	for i, ws := range warnings {
		for _, w := range ws {
			found.add(w, int(rows[i].Run))
		}
	}
	out := make([]string, len(found))
	for i, d := range found {
		out[i] = spans(d.runs) + ": " + d.why
	}
	return out
}

// toRun returns the runs to run: all of them, or with resume those whose
// directory holds no finished run of their grid point (doneRow gives the
// others their rows). It warns of the finished runs it runs again, and
// why, and refuses a stale run's directory kvsim may not replace, before
// anything runs.
func (e *Env) toRun(runs []*run, resume bool) ([]*run, error) {
	var todo []*run
	var again reasons
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
				again.add(why, r.Run)
			}
		}
		if r.row == nil {
			todo = append(todo, r)
		}
	}
	for _, d := range again {
		n := fmt.Sprintf("%d finished runs are", len(d.runs))
		if len(d.runs) == 1 {
			n = "1 finished run is"
		}
		e.warn([]string{fmt.Sprintf("--resume: %s run again (%s): %s", n, spans(d.runs), d.why)})
	}
	return todo, nil
}

// exists reports whether path names a file or folder.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
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
	env      *Env
	spec     *Spec
	out      string
	atOnce   int              // the runs that share the memory (Prepare)
	flag     scenarios.Option // names the flag of the values past spec.Sets in errors
	flagName string           // that flag: --vary, or a search's --key
	read     map[traceKey]bool
	warnings []string
}

func newPreparer(env *Env, spec *Spec, out string, atOnce int, flag string) *preparer {
	return &preparer{env: env, spec: spec, out: out, atOnce: atOnce,
		flag: scenarios.FlagFrom(flag, len(spec.Sets)), flagName: flag, read: map[traceKey]bool{}}
}

// atPoint names grid point p's values in err, an error of its scenario's
// keys that is not already one of the varied key's (which the flag names),
// nor a trace's, nor the scenario's without them: a value another key
// refuses ("--key
// workload.trace.limit=2: --set: workload.trace.skip: ..."), which a
// search finds only when it probes the value.
func (pr *preparer) atPoint(p Point, err error) error {
	ie, ok := errors.AsType[*scenarios.InputError](err)
	if !ok || ie.File != "--set" && ie.File != scenarios.DisplayName(pr.spec.Scenario) {
		return err
	}
	if _, base := Prepare(pr.spec.Scenario, pr.spec.Sets, pr.atOnce, pr.spec.Twins); base != nil {
		return err // the scenario fails without the point's values too: not the point's
	}
	keys, _ := pr.spec.Dims()
	at := make([]string, len(keys))
	for i, k := range keys {
		at[i] = k + "=" + p.Values[i]
	}
	return &pointError{at: pr.flagName + " " + strings.Join(at, " "), err: err}
}

// pointError is an error of a grid point's scenario, each of its lines
// (one an error of a key) led by the point's values.
type pointError struct {
	at  string
	err error
}

func (e *pointError) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i, l := range lines {
		lines[i] = e.at + ": " + l
	}
	return strings.Join(lines, "\n")
}

func (e *pointError) Unwrap() error { return e.err }

// run prepares the run of grid point p into out/runs/run-NNN, reading its
// trace when no run prepared before read it.
func (pr *preparer) run(p Point) (*run, error) {
	sets := pr.spec.setsOf(p)
	plan, err := Prepare(pr.spec.Scenario, sets, pr.atOnce, pr.spec.Twins, pr.flag)
	if err != nil {
		return nil, pr.atPoint(p, err)
	}
	sc := plan.Scenario
	if t := sc.Workload.Trace; t != nil && !pr.read[traceKey{*t, sc.Cluster.Engine.BlockSize}] {
		pr.read[traceKey{*t, sc.Cluster.Engine.BlockSize}] = true
		if _, err := plan.ReadWorkload(); err != nil {
			return nil, err
		}
	}
	m, err := pr.env.Manifest(pr.spec.Scenario, sets, sc)
	if err != nil {
		return nil, err
	}
	if err := complete(m, sc); err != nil { // doneRow compares it
		return nil, err
	}
	for _, w := range sc.Warnings() {
		if !slices.Contains(pr.warnings, w) {
			pr.warnings = append(pr.warnings, w)
		}
	}
	return &run{Point: p, plan: plan, m: m, dir: filepath.Join(pr.out, report.SweepRunDir(int64(p.Run)))}, nil
}

// doneRow returns the row and the warnings of a run its directory already
// holds, or nil and why the run must be done again: a run counts as done
// when its summary.json's manifest describes this grid point (same build,
// scenario, --set values, trace and model_config) and its scenario.yaml is
// this point's scenario, resolved.
func doneRow(r *run) (*report.SweepRow, []string, string, error) {
	s, err := ReadRunSummary(r.dir)
	switch {
	case err != nil || s.Manifest == nil:
		return nil, nil, "their summary.json is missing or holds no manifest", nil
	case s.Manifest.Build != r.m.Build:
		return nil, nil, fmt.Sprintf("another kvsim build made them (executable sha256 %.12s…, this one %.12s…)",
			s.Manifest.Build.ExecutableSHA256, r.m.Build.ExecutableSHA256), nil
	case !s.Manifest.Trace.Equal(r.m.Trace):
		return nil, nil, "the trace changed since they ran (its size or SHA-256 differs)", nil
	case !s.Manifest.ModelConfig.Equal(r.m.ModelConfig):
		return nil, nil, "the engine's model_config changed since they ran (its size or SHA-256 differs)", nil
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
	row := results.SweepRow(int64(r.Run), r.Values, s.Summary)
	return &row, s.Warnings, "", nil
}

// reasons collects the runs that share a text (a warning, or why --resume
// runs them again), by text, in the order the texts first came.
type reasons []reason

// reason is one text and the runs that gave it.
type reason struct {
	why  string
	runs []int
}

func (r *reasons) add(why string, run int) {
	i := slices.IndexFunc(*r, func(d reason) bool { return d.why == why })
	if i < 0 {
		*r, i = append(*r, reason{why: why}), len(*r)
	}
	(*r)[i].runs = append((*r)[i].runs, run)
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

// Interrupted is a sweep or a search stopped by its context (an interrupt):
// Kept says which runs it kept, and how to finish it.
type Interrupted struct{ Kept string }

func (e *Interrupted) Error() string { return "interrupted: " + e.Kept }

// Is makes an Interrupted a context.Canceled, as the interrupt was.
func (e *Interrupted) Is(target error) bool { return target == context.Canceled }

// runAll runs the runs, dir.Jobs at a time, each into its directory. The
// first failure or an interrupt stops the others; the runs finished by
// then stay.
func (e *Env) runAll(ctx context.Context, todo []*run, dir Dir) error {
	if e.Progress != nil && len(todo) > 0 {
		e.Progress.Start(len(todo))
		defer e.Progress.End() // before the caller prints its table
	}
	// The first error cancels the other runs, and is the one Wait returns:
	// a failed run's, not the cancellations it caused.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(dir.Jobs)
	for _, r := range todo {
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // a run failed or the study was interrupted: start no more
			}
			sum, err := e.runPoint(gctx, r)
			if err != nil {
				varied := r.m.Sets[len(r.m.Sets)-len(r.Values):] // its sets end with one a key of the grid
				return fmt.Errorf("run %d (%s): %w", r.Run, strings.Join(varied, " "), err)
			}
			row := results.SweepRow(int64(r.Run), r.Values, sum)
			r.row, r.warnings = &row, sum.Warnings
			if e.Progress != nil {
				e.Progress.Done()
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
	kept := fmt.Sprintf("%d of the %s to do finished and are kept in %s; add --resume to the same command to run the rest",
		finished, results.Count(len(todo), "run", "runs"), dir.Path)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		return fmt.Errorf("%w\n%s", err, kept)
	case err != nil || ctx.Err() != nil:
		return &Interrupted{kept}
	}
	return nil
}

// runPoint runs one run of the grid into its directory, atomically, and
// returns its summary. It runs in a goroutine of its own: a panic is its
// error.
func (e *Env) runPoint(ctx context.Context, r *run) (_ *results.Summary, err error) {
	defer sim.CatchPanic(&err)
	out, err := report.Create(r.dir, true) // a run not done may replace a stale one
	if err != nil {
		return nil, err
	}
	defer out.Abort() // no-op after Commit
	sum, err := e.RunTo(ctx, out.Path, r.plan, sim.Options{Twins: e.Twins}, r.m)
	if err != nil {
		return nil, err
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	return sum.Summary, nil
}

// InertSeeds warns when the runs of a sweep that differ only in their
// seed (the replicates of a grid point, or the runs of --vary seed with
// the same other values) have identical digests: nothing in the scenario
// draws from the seed, and the runs are not replicates.
func (s *Spec) InertSeeds(rows []report.SweepRow) []string {
	flag := fmt.Sprintf("--replicates %d", s.Replicates)
	seedAt := len(s.Keys) // with replicates, the last of Dims
	if s.Replicates <= 1 {
		if seedAt = slices.Index(s.Keys, seedKey); seedAt < 0 {
			return nil
		}
		flag = "--vary seed"
	}
	// Runs are grouped by their other values, groups in the order of their
	// first run.
	var groups [][]report.SweepRow
	group := map[string]int{} // by the other values, quoted: the group's index
	for _, r := range rows {
		others := fmt.Sprintf("%q", append(slices.Clone(r.Params[:seedAt]), r.Params[seedAt+1:]...))
		i, ok := group[others]
		if !ok {
			i, group[others] = len(groups), len(groups)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	var inert []string
	for _, g := range groups {
		if len(g) > 1 && !slices.ContainsFunc(g, func(r report.SweepRow) bool { return r.Digest != g[0].Digest }) {
			runs := make([]int, len(g))
			for i, r := range g {
				runs[i] = int(r.Run)
			}
			inert = append(inert, "runs "+strings.TrimPrefix(spans(runs), "run "))
		}
	}
	if len(inert) == 0 {
		return nil
	}
	which := inert[0] + " have identical digests"
	if len(inert) > 1 {
		which = "the runs of each grid point have identical digests (" + strings.Join(inert, "; ") + ")"
	}
	return []string{flag + ": " + which + ": nothing in this scenario draws from the seed " +
		"(a trace with router.temperature 0 and no arrival_jitter); they are not replicates. " +
		"Set router.temperature or workload.trace.arrival_jitter"}
}
