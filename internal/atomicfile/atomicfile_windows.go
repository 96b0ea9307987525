package atomicfile

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/kvsim/kvsim/report"
)

// Write writes path through write into a temporary file beside
// it, renamed over path once write returns nil; a failed write leaves
// neither. renameio, which the other systems use (atomicfile.go), does not
// build on Windows, whose rename replaces an existing file all the same.
// A folder that takes no file is a *report.UnwritableError naming path.
func Write(path string, write func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return report.Unwritable(path, err)
	}
	tmp := f.Name()
	if err := f.Close(); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	if err := write(tmp); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return report.Unwritable(path, errors.Join(err, os.Remove(tmp)))
	}
	return nil
}
