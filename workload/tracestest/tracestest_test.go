package tracestest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSharedFolders: a shared folder its variable names must exist, and a
// folder no variable names may be absent. CI names both (.ci/run), so
// there a missing folder fails this test, with one line naming the
// variable and the folder, in the log that shows only the packages' lines
// and the failures; the tests that read the folder fail too, rather than
// skip. Run without the variables (go test ./... on a checkout without
// ../shared), an absent folder makes its tests skip, and this test skips
// too, saying so in one line: in the log with -v (where go test -v ./... |
// grep SKIP lists it with the others), and on the terminal without -v,
// where go test ./... shows a package that skips as its ok line alone. It
// is the one place that says so, so go test ./... says it once.
func TestSharedFolders(t *testing.T) {
	root := moduleRoot()
	for _, f := range shared {
		if dir, set, err := find(root, f.env, f.name); set && err != nil {
			t.Errorf("%s=%s: no folder %s: the tests that read it fail; name the folder, or unset %s to skip them",
				f.env, os.Getenv(f.env), dir, f.env)
		}
	}
	note := missing(root)
	if note == "" {
		return
	}
	if !testing.Verbose() {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprintln(tty, note)
			tty.Close()
		}
	}
	t.Skip(note)
}

// TestMissing: the line names each absent folder that no variable names,
// with its variable, and nothing when both are there or named.
func TestMissing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "kvsim")
	t.Setenv("KVSIM_TRACES", "")
	t.Setenv("KVSIM_VLLM_TRACES", "")
	both := "kvsim: no ../shared/traces or ../shared/vllm-traces beside the module: the tests of real traces skip; " +
		"set KVSIM_TRACES and KVSIM_VLLM_TRACES to run them"
	if got := missing(root); got != both {
		t.Errorf("neither folder: %q, want %q", got, both)
	}
	os.MkdirAll(filepath.Join(root, "..", "shared", "traces"), 0o755)
	vllm := "kvsim: no ../shared/vllm-traces beside the module: the tests of real traces skip; set KVSIM_VLLM_TRACES to run them"
	if got := missing(root); got != vllm {
		t.Errorf("no vllm-traces: %q, want %q", got, vllm)
	}
	t.Setenv("KVSIM_VLLM_TRACES", "/nonexistent") // named: the tests fail, they do not skip
	if got := missing(root); got != "" {
		t.Errorf("vllm-traces named: %q", got)
	}
}
