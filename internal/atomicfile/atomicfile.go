//go:build !windows

// Package atomicfile writes a file whole or not at all: into a temporary
// file beside it, renamed over it once written. The model never links it
// (renameio, which it uses, does not build on Windows); the CLI and the
// studies write their files through it.
package atomicfile

import (
	"path/filepath"

	"github.com/google/renameio/v2"

	"github.com/kvsim/kvsim/report"
)

// Write writes path through write into a temporary file beside
// it (renameio's pending file), synced and renamed over path once write
// returns nil; a failed write leaves neither. write is given the temporary
// file's path and writes it whole (os.Create on it truncates the file the
// pending file holds open). A folder that takes no file is a
// *report.UnwritableError naming path.
func Write(path string, write func(tmp string) error) error {
	f, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(0o644))
	if err != nil {
		return report.Unwritable(path, err)
	}
	defer f.Cleanup() // no-op once replaced
	if err := write(f.Name()); err != nil {
		return err
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return report.Unwritable(path, err)
	}
	return nil
}
