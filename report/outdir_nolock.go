//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package report

import (
	"errors"
	"os"
)

// lockDir is errors.ErrUnsupported where kvsim takes no file locks: a
// temporary directory is then never taken for a leftover.
func lockDir(string) (*os.File, error) { return nil, errors.ErrUnsupported }
