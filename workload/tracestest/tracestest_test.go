package tracestest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSharedFolders says, in one line on the terminal, when the shared
// folders are missing: the tests that read them then skip, and go test
// ./... prints nothing of a passing package but its ok line (a skip shows
// only with -v, where this line goes to the test log instead). It is the
// one place that says so, so go test ./... says it once.
func TestSharedFolders(t *testing.T) {
	note := missing(moduleRoot())
	if note == "" {
		return
	}
	if testing.Verbose() {
		t.Log(note)
		return
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprintln(tty, note)
		tty.Close()
	}
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
