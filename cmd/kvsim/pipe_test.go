//go:build linux || darwin

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTracePipe: a trace given as a pipe (here a named one, as
// /dev/stdin is when a trace is piped in) is read once. trace stats tells
// its format from its name, not its contents, which reading would use up:
// pipe.jsonl reads its two requests (before, its head went to the format
// and stats printed "requests 0"), a pipe without an extension asks for
// --format. A run, which reads its trace more than once, refuses one at
// validation, naming the key, without opening it.
func TestTracePipe(t *testing.T) {
	dir := t.TempDir()
	named, bare := filepath.Join(dir, "pipe.jsonl"), filepath.Join(dir, "pipe")
	for _, p := range []string{named, bare} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	go func() { // the writer; opening blocks until stats opens the other end
		f, err := os.OpenFile(named, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString(`{"timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [1]}` + "\n" +
			`{"timestamp": 10, "input_length": 16, "output_length": 1, "hash_ids": [2]}` + "\n")
		f.Close()
	}()
	code, out, stderr := kvsim(t, "trace", "stats", named)
	if code != exitOK || !strings.Contains(out, "requests     2") {
		t.Errorf("stats of pipe.jsonl: exit %d, stdout %q, stderr %q; want 2 requests", code, out, stderr)
	}
	code, _, stderr = kvsim(t, "trace", "stats", bare)
	if want := bare + ": a pipe or a device, whose format cannot be told from its name"; code != exitBadInput || !strings.Contains(stderr, want) {
		t.Errorf("stats of a bare pipe: exit %d, stderr %q; want %q", code, stderr, want)
	}
	code, _, stderr = kvsim(t, "replay", "-o", filepath.Join(dir, "out"), "--set", "workload={trace: {path: "+bare+", format: mooncake}}")
	if want := "workload.trace.path: " + bare + " is a pipe or a device"; code != exitBadInput || !strings.Contains(stderr, want) {
		t.Errorf("replay of a pipe: exit %d, stderr %q; want %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("replay of a pipe wrote its output (%v)", err)
	}
}
