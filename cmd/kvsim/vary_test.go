package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestVaryErrorsNameVary: a bad --vary value's error names --vary, not
// --set, which a bad --set value's error still names (exit 2, nothing
// written).
func TestVaryErrorsNameVary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--vary", "cluster.workers=1,0"}, "kvsim: --vary: cluster.workers: must be at least 1, got 0\n"},
		{[]string{"--set", "cluster.workers=0", "--vary", "seed=1,2"}, "kvsim: --set: cluster.workers: must be at least 1, got 0\n"},
	} {
		code, _, stderr := kvsim(t, append([]string{"sweep", "../../scenarios/default.yaml", "-q", "-o", out}, c.args...)...)
		if code != exitBadInput || stderr != c.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, stderr, exitBadInput, c.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}
