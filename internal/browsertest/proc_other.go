//go:build !unix

package browsertest

import "os/exec"

// ownGroup leaves cmd as it is: a cancelled cmd kills Chromium alone.
func ownGroup(cmd *exec.Cmd) {}
