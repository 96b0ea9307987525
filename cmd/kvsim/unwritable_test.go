//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestUnwritableOutput: every command that writes an output says, in one
// line naming the output the user gave (never a temporary name beside
// it), why it could not, exits 1 (an output that could not be written,
// docs/cli.md) and leaves nothing behind: a folder it may not write to,
// or a path through a file. The tests run as root, whom permissions do
// not stop, so the read-only cases run the test binary as kvsim (TestMain)
// in a child process as the user nobody (65534); as another user, chmod
// 0555 stops kvsim in process.
func TestUnwritableOutput(t *testing.T) {
	base, err := os.MkdirTemp("", "kvsim-unwritable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	for _, args := range [][]string{
		{"replay", "-q", "--set", small, "-o", filepath.Join(file, "x")},
		{"sweep", "../../scenarios/default.yaml", "-q", "--set", small, "--vary", "seed=1,2", "-o", filepath.Join(file, "a", "s")},
	} {
		out := args[len(args)-1]
		code, _, stderr := kvsim(t, args...)
		if want := "kvsim: cannot write the output " + out + ": " + file + " is a file, not a folder\n"; code != exitFailed || stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", args, code, stderr, exitFailed, want)
		}
	}

	// The folder ro (and the run in it, which plot draws into) may be
	// read, not written; the sweep merge reads is beside it.
	ro, run, sw := filepath.Join(base, "ro"), filepath.Join(base, "ro", "run"), filepath.Join(base, "sw")
	if code, _, stderr := kvsim(t, "replay", "-q", "--set", small, "-o", run); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr := kvsim(t, "sweep", "../../scenarios/default.yaml", "-q", "--set", small, "--vary", "seed=1,2", "-o", sw); code != exitOK {
		t.Fatal(stderr)
	}
	runFiles := names(t, run)
	for _, d := range []string{run, ro} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(d, 0o755) }) // before RemoveAll: cleanups run last first
	}
	as := unprivileged(t, base, ro)
	notWritable := func(dir string) string { return "its folder " + dir + " is not writable (permission denied)" }
	for _, c := range []struct {
		args        []string
		output, why string
	}{
		{[]string{"replay", "-q", "--set", small}, filepath.Join(ro, "x"), notWritable(ro)},
		{[]string{"replay", "-q", "--set", small}, filepath.Join(ro, "a", "b", "x"),
			"its folder " + filepath.Join(ro, "a", "b") + " cannot be made: " + ro + " is not writable (permission denied)"},
		{[]string{"sweep", "../../scenarios/default.yaml", "-q", "--set", small, "--vary", "seed=1,2"}, filepath.Join(ro, "s"), notWritable(ro)},
		{[]string{"search", "../../scenarios/default.yaml", "-q", "--set", small, "--key", "cluster.workers", "--range", "1:2",
			"--slo", "ttft_p99_ms < 1000"}, filepath.Join(ro, "q"), notWritable(ro)},
		{[]string{"sweep", "merge", sw}, filepath.Join(ro, "m"), notWritable(ro)},
		{[]string{"trace", "gen", "--set", small}, filepath.Join(ro, "t.jsonl"), notWritable(ro)},
		{[]string{"plot", run}, filepath.Join(run, "charts"), notWritable(run)},
	} {
		args := c.args
		if args[0] != "plot" {
			args = append(slices.Clone(args), "-o", c.output)
		}
		code, stderr := as(args...)
		if want := "kvsim: cannot write the output " + c.output + ": " + c.why + "\n"; code != exitFailed || stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", args, code, stderr, exitFailed, want)
		}
	}
	if got := names(t, ro); !slices.Equal(got, []string{"run"}) {
		t.Errorf("left in %s: %v", ro, got)
	}
	if got := names(t, run); !slices.Equal(got, runFiles) {
		t.Errorf("%s holds %v, held %v", run, got, runFiles)
	}
}

// unprivileged returns the function running kvsim with args as a user
// whom the folder ro (0555) stops, returning the exit code and stderr: in
// process when this user is not root, else as nobody in a child process,
// the test binary copied into base (made traversable) for nobody to run.
// It skips the test when neither can be done.
func unprivileged(t *testing.T, base, ro string) func(args ...string) (int, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if f, err := os.CreateTemp(ro, "probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
			t.Skip("this user may write into a 0555 folder (and is not root, so cannot run kvsim as another): no folder stops it")
		}
		return func(args ...string) (int, string) {
			code, _, stderr := kvsim(t, args...)
			return code, stderr
		}
	}
	bin := filepath.Join(base, "kvsim.test")
	if err := copyFile(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	probe := exec.Command(bin, "version")
	probe.Env, probe.SysProcAttr = append(os.Environ(), "KVSIM_TEST_MAIN=1", "KVSIM_CACHE=off"), nobody
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("running as root, and cannot run kvsim as nobody (uid 65534) to be stopped by a 0555 folder: %v %s", err, out)
	}
	return func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.SysProcAttr = probe.Env, nobody
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%v: %v", args, err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
}

// copyFile copies the file src to dst, executable by anyone.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
