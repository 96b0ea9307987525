//go:build unix

package browsertest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own and has a cancelled
// cmd kill the whole group: Chromium starts helpers of its own, and the
// Debian command is a shell script around the browser.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
