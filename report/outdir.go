package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
)

// tmpSeq numbers the temporary directories of this process, so parallel
// runs of a sweep never share one.
var tmpSeq atomic.Uint64

// OutDir is a run's output directory, written atomically: files go to a
// temporary sibling directory, which Commit renames to the final name. A
// failed run calls Abort and leaves no partial output. The usual pattern:
//
//	out, err := report.Create(dir, force)
//	...
//	defer out.Abort() // no-op after Commit
//	... write files at out.Path("requests.parquet") ...
//	return out.Commit()
type OutDir struct {
	final string
	tmp   string
	force bool
	done  bool // committed or aborted
}

// Create makes the temporary directory for final, creating final's parent
// directories as needed. It refuses if final exists, unless force.
func Create(final string, force bool) (*OutDir, error) {
	final = filepath.Clean(final)
	if err := checkAbsent(final, force); err != nil {
		return nil, err
	}
	parent, base := filepath.Split(final)
	if err := os.MkdirAll(filepath.Join(parent, "."), 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for {
		tmp := filepath.Join(parent, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), tmpSeq.Add(1)))
		err := os.Mkdir(tmp, 0o755)
		if err == nil {
			return &OutDir{final: final, tmp: tmp, force: force}, nil
		}
		if !errors.Is(err, fs.ErrExist) { // else a leftover of an earlier process: next name
			return nil, fmt.Errorf("report: %w", err)
		}
	}
}

// checkAbsent returns an error if final exists and force is false.
func checkAbsent(final string, force bool) error {
	_, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("report: %w", err)
	case !force:
		return fmt.Errorf("output %s already exists; use --force to replace it", final)
	}
	return nil
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
		return fmt.Errorf("report: %w", err)
	}
	d.done = true
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("report: removing replaced output: %w", err)
		}
	}
	return nil
}

// Abort removes the temporary directory and everything in it. It does
// nothing after Commit or a previous Abort.
func (d *OutDir) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	if err := os.RemoveAll(d.tmp); err != nil {
		return fmt.Errorf("report: %w", err)
	}
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
