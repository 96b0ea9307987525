//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package report

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir opens the directory dir and takes an exclusive lock on it
// without waiting: errLocked when another open file holds one,
// errors.ErrUnsupported when its file system takes no locks. The system
// drops the lock when the file is closed or its process ends.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return f, nil
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, errLocked
	}
	return nil, fmt.Errorf("%s: %w (%w)", dir, errors.ErrUnsupported, err)
}
