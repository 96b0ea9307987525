package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// tmpSeq numbers the temporary directories of this process, so parallel
// runs of a sweep never share one.
var tmpSeq atomic.Uint64

// OutDir is a run's output directory, written atomically: files go to a
// temporary sibling directory, which Commit renames to the final name. A
// failed run calls Abort and leaves nothing it created: no partial output
// and none of the parent directories Create made for it. The usual pattern:
//
//	out, err := report.Create(dir, force)
//	...
//	defer out.Abort() // no-op after Commit
//	... write files at out.Path(report.RequestsFile) ...
//	return out.Commit()
//
// While it writes, the process holds a lock on its temporary directory
// (where the system has file locks), which the system drops when the
// process ends however it ends: Create removes the temporary directories
// of the same output whose lock it can take, the leftovers of a killed run.
type OutDir struct {
	final   string
	tmp     string
	lock    *os.File // the temporary directory, locked; nil without file locks
	created []string // the parents Create made, deepest first
	force   bool
	done    bool // committed or aborted
}

// Create makes the temporary directory for final, creating final's parent
// directories as needed, and removes the temporary directories of final
// left by runs that were killed. It refuses (a *RefusedError) if final
// exists, unless force and final is a directory kvsim wrote or an empty one
// (see Replaceable); a final it cannot make is an *UnwritableError.
func Create(final string, force bool) (*OutDir, error) {
	final = filepath.Clean(final)
	if err := checkAbsent(final, force); err != nil {
		return nil, err
	}
	parent, base := filepath.Split(final)
	parent = filepath.Join(parent, ".")
	created, err := mkdirAll(parent)
	if err != nil {
		return nil, Unwritable(final, err)
	}
	d := &OutDir{final: final, force: force, created: created}
	removeStale(parent, base)
	for {
		tmp := filepath.Join(parent, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), tmpSeq.Add(1)))
		err := os.Mkdir(tmp, 0o755)
		if errors.Is(err, fs.ErrExist) { // a leftover of an earlier process: next name
			continue
		}
		if err != nil {
			d.removeCreated()
			return nil, Unwritable(final, err)
		}
		lock, err := lockDir(tmp)
		switch {
		case err == nil && isDir(lock, tmp):
			d.tmp, d.lock = tmp, lock
			return d, nil
		case errors.Is(err, errors.ErrUnsupported):
			d.tmp = tmp
			return d, nil
		case err == nil, errors.Is(err, errLocked), errors.Is(err, fs.ErrNotExist):
			lock.Close() // another Create took it for a leftover before it was locked: next name
		default:
			os.Remove(tmp)
			d.removeCreated()
			return nil, Unwritable(final, err)
		}
	}
}

// errLocked is lockDir's error for a directory another open file has
// locked.
var errLocked = errors.New("locked by another process")

// mkdirAll is os.MkdirAll, and returns the directories it made, deepest
// first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// removeCreated removes the parents Create made, deepest first, as long as
// they are empty: one that now holds something else stays, with its own
// parents.
func (d *OutDir) removeCreated() {
	for _, p := range d.created {
		if os.Remove(p) != nil {
			return
		}
	}
}

// removeStale removes the temporary directories of base in parent whose
// lock it can take: their process is gone. A directory it cannot lock (its
// run goes on, or the system has no file locks) stays.
func removeStale(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp-"
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if lock, err := lockDir(path); err == nil {
			if isDir(lock, path) {
				os.RemoveAll(path)
			}
			lock.Close()
		}
	}
}

// isDir reports whether path is still the directory f has open.
func isDir(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// checkAbsent returns an error if final exists, unless force and final is
// replaceable.
func checkAbsent(final string, force bool) error {
	_, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil: // a path through a file, a folder that cannot be read
		return Unwritable(final, err)
	case !force:
		if err := checkNotWorkDir(final); err != nil {
			return err
		}
		return refused("output %s already exists; use --force to replace it", final)
	}
	return Replaceable(final)
}

// Path returns the path of the file name inside the temporary directory.
func (d *OutDir) Path(name string) string { return filepath.Join(d.tmp, name) }

// Commit renames the temporary directory to the final name. With force, an
// existing final directory is first renamed aside, then removed once the
// new one is in place, so old output is replaced only by a complete run.
func (d *OutDir) Commit() error {
	if d.done {
		return fmt.Errorf("report: %s: output already committed or aborted", d.final)
	}
	if err := checkAbsent(d.final, d.force); err != nil {
		return err
	}
	old := filepath.Join(filepath.Dir(d.final), fmt.Sprintf(".%s.old-%d-%d", filepath.Base(d.final), os.Getpid(), tmpSeq.Add(1)))
	err := os.Rename(d.final, old)
	if errors.Is(err, fs.ErrNotExist) {
		old = ""
	} else if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(d.tmp, d.final); err != nil {
		if old != "" {
			err = errors.Join(err, os.Rename(old, d.final))
		}
		return Unwritable(d.final, err)
	}
	d.done = true
	d.lock.Close()
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("report: removing replaced output: %w", err)
		}
	}
	return nil
}

// Abort removes the temporary directory and everything in it, then the
// parent directories Create made if they are empty. It does nothing after
// Commit or a previous Abort.
func (d *OutDir) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	err := os.RemoveAll(d.tmp)
	d.lock.Close()
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	d.removeCreated()
	return nil
}

// WriteJSON writes v to path as JSON indented by two spaces, with a
// trailing newline (summary.json).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// UnwritableError is an output kvsim could not write: its folder is not
// writable (a read-only disk, a folder of another user), a path through it
// is a file, or the system failed to write. Its message names the output
// the user gave and the folder at fault, never a temporary name beside it.
type UnwritableError struct {
	Output string // the output as the user named it
	why    string
	Err    error // the system's error
}

func (e *UnwritableError) Error() string { return "cannot write the output " + e.Output + ": " + e.why }

func (e *UnwritableError) Unwrap() error { return e.Err }

// Unwritable is err, met making output (a directory or file the user
// named, or a temporary entry beside it, or a folder on the way to it), as
// an *UnwritableError that says why in the user's words, from what the
// file system holds on the way to output: the deepest folder of it that
// exists is not writable, or that path is a file. An error that is one
// already is returned as it is.
func Unwritable(output string, err error) error {
	var ue *UnwritableError
	if errors.As(err, &ue) {
		return err
	}
	reason := err
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		reason = pe.Err
	case errors.As(err, &le):
		reason = le.Err
	}
	folder := filepath.Dir(filepath.Clean(output))
	at := folder
	st, serr := os.Stat(at)
	for serr != nil && filepath.Dir(at) != at {
		at = filepath.Dir(at)
		st, serr = os.Stat(at)
	}
	why := reason.Error()
	switch {
	case serr == nil && !st.IsDir():
		why = at + " is a file, not a folder"
	case !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS):
	case at == folder:
		why = fmt.Sprintf("its folder %s is not writable (%v)", folder, reason)
	default:
		why = fmt.Sprintf("its folder %s cannot be made: %s is not writable (%v)", folder, at, reason)
	}
	return &UnwritableError{Output: output, why: why, Err: err}
}

// RefusedError is an output kvsim will not write: it exists and was not
// asked to be replaced, or replacing it could lose files kvsim did not
// write.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

func refused(format string, a ...any) error {
	return &RefusedError{fmt.Sprintf(format, a...)}
}

// The files and folders of a run's and a sweep's output directories
// (docs/outputs.md). The names are a public contract: never rename one.
const (
	RequestsFile   = "requests.parquet"
	PullsFile      = "pulls.parquet"
	WorkersFile    = "workers.parquet"
	CountersFile   = "counters.parquet"
	TimeseriesFile = "timeseries.parquet"
	EventsFile     = "events.parquet"  // one row a lifecycle event of the scenario
	PlannerFile    = "planner.parquet" // one row a decision of the planner
	SummaryFile    = "summary.json"    // the run's summary and manifest
	ScenarioFile   = "scenario.yaml"   // the scenario as it ran, resolved
	SweepFile      = "sweep.parquet"   // a sweep's table, one row a run
	SweepSpecFile  = "sweep.json"      // a sweep's grid and manifest
	SearchFile     = "search.json"     // a search's probes and answer
	PageFile       = "report.html"     // kvsim report's page
	ChartsDir      = "charts"          // kvsim plot's charts
	RunsDir        = "runs"            // a sweep's runs, each in SweepRunDir
)

// PointsFile is a sweep's replicates summarised, one row a grid point
// (docs/outputs.md).
const PointsFile = "points.parquet"

// runPrefix begins the name of each run's folder in a sweep's RunsDir.
const runPrefix = "run-"

// SweepRunDir is the folder of a sweep's run, relative to the sweep's
// directory: runs/run-007.
func SweepRunDir(run int64) string {
	return filepath.Join(RunsDir, fmt.Sprintf("%s%03d", runPrefix, run))
}

// The files kvsim writes into an output directory, and its charts'
// extensions; any other entry belongs to the user.
var (
	outputFiles = []string{RequestsFile, PullsFile, WorkersFile, CountersFile, TimeseriesFile, EventsFile, PlannerFile,
		SummaryFile, ScenarioFile, SweepFile, PointsFile, SweepSpecFile, SearchFile, PageFile}
	chartExts = []string{".png", ".svg"}
)

// Replaceable returns nil if dir may be removed to make way for new output:
// it is neither the working directory nor one of its parents, and it is
// empty (nothing to lose) or a directory kvsim wrote (its summary.json or
// sweep.json carries kvsim's manifest) holding only files kvsim writes
// (tables, summaries, charts, a sweep's runs). Otherwise a *RefusedError
// says why.
func Replaceable(dir string) error {
	if err := checkNotWorkDir(dir); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if !st.IsDir() {
		return refused("refusing to replace %s: it is not a directory kvsim wrote", dir)
	}
	if empty, err := isEmpty(dir); err != nil {
		return fmt.Errorf("report: %w", err)
	} else if empty {
		return nil
	}
	owned := false
	for _, name := range []string{SummaryFile, SweepSpecFile} {
		if m, err := ReadManifest(filepath.Join(dir, name)); err == nil && m != nil && m.Tool == Tool {
			owned = true
		}
	}
	if !owned {
		return refused("refusing to replace %s: kvsim did not write it (no kvsim manifest in its summary.json or sweep.json; output of a kvsim older than the manifest has none either); remove it yourself or choose another output", dir)
	}
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if path == dir || kvsimWrote(path, e) {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		return refused("refusing to replace %s: it holds %s, which kvsim did not write; move it out or choose another output", dir, rel)
	})
}

// isEmpty reports whether the directory dir holds nothing.
func isEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// kvsimWrote reports whether an entry of an output directory is one kvsim
// writes: a table or summary, a chart in charts/, a sweep's runs/ and its
// run-NNN directories, or a run's temporary directory left by an
// interrupted sweep.
func kvsimWrote(path string, e fs.DirEntry) bool {
	name := e.Name()
	parent := filepath.Base(filepath.Dir(path))
	switch {
	case e.IsDir():
		return name == ChartsDir || name == RunsDir || (parent == RunsDir && (isRunName(name) || isTempOf(name)))
	case !e.Type().IsRegular():
		return false
	case parent == ChartsDir:
		return slices.Contains(chartExts, filepath.Ext(name))
	}
	return slices.Contains(outputFiles, name)
}

// isRunName reports whether name is a sweep run's directory: run-NNN.
func isRunName(name string) bool {
	n, ok := strings.CutPrefix(name, runPrefix)
	if !ok || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isTempOf reports whether name is one of Create's temporary directories.
func isTempOf(name string) bool {
	return strings.HasPrefix(name, ".") && (strings.Contains(name, ".tmp-") || strings.Contains(name, ".old-"))
}

// checkNotWorkDir refuses dir when it is the working directory, one of its
// parents, or the root: replacing it would take the user's files with it.
func checkNotWorkDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	if abs == filepath.Dir(abs) || abs == wd || strings.HasPrefix(wd, abs+string(filepath.Separator)) {
		return refused("refusing to use %s as an output directory: it is the working directory or contains it", dir)
	}
	return nil
}
