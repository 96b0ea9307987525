package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCommand: replay --report writes the run's page; kvsim report
// rewrites the same bytes; replay --force replaces a directory holding it
// (kvsim wrote it); a directory of none of kvsim's, or a bad --slo, is bad
// input (exit 2) and writes nothing; sweep --slo needs --report and an SLO
// that parses before anything runs.
func TestReportCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := kvsim(t, "replay", "-q", "-o", dir, "--set", small, "--report")
	if code != exitOK {
		t.Fatalf("replay --report: exit %d: %s", code, stderr)
	}
	page := filepath.Join(dir, "report.html")
	first, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("replay --report wrote no page: %v", err)
	}
	if !strings.Contains(stderr, page) {
		t.Errorf("replay --report did not say where the page is: %s", stderr)
	}
	code, out, stderr := kvsim(t, "report", dir)
	if code != exitOK || strings.TrimSpace(out) != page {
		t.Fatalf("report: exit %d, stdout %q: %s", code, out, stderr)
	}
	if again, _ := os.ReadFile(page); !bytes.Equal(first, again) {
		t.Error("kvsim report wrote other bytes than replay --report")
	}
	if code, _, stderr := kvsim(t, "replay", "-q", "-o", dir, "--set", small, "--force"); code != exitOK {
		t.Errorf("replay --force over a run with its page: exit %d: %s", code, stderr)
	}

	empty := t.TempDir()
	if code, _, stderr := kvsim(t, "report", empty); code != exitBadInput || !strings.Contains(stderr, "not a run, sweep or search directory") {
		t.Errorf("report of an empty directory: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, "report.html")); err == nil {
		t.Error("a failed report left a page")
	}
	sweep := filepath.Join(t.TempDir(), "sweep")
	if code, _, stderr := kvsim(t, "sweep", "../../scenarios/default.yaml", "-q", "-o", sweep, "--set", small, "--vary", "cluster.workers=2,3"); code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"--slo", "ttft_p99_ms < 1"}, {"--report", "--slo", "ttft_p99_ms <"}} {
		out := filepath.Join(t.TempDir(), "bad")
		code, _, stderr := kvsim(t, append([]string{"sweep", "../../scenarios/default.yaml", "-q", "-o", out, "--vary", "cluster.workers=2,3"}, args...)...)
		if _, err := os.Stat(out); code != exitBadInput || err == nil {
			t.Errorf("sweep %v: exit %d, output %v: %s", args, code, err, stderr)
		}
	}
	if code, _, stderr := kvsim(t, "report", sweep, "--slo", "no_such_metric < 1"); code != exitBadInput || !strings.Contains(stderr, "--slo") {
		t.Errorf("report --slo of no metric: exit %d: %s", code, stderr)
	}
	if code, _, stderr := kvsim(t, "report", sweep, "--slo", "ttft_p99_ms < 100000"); code != exitOK {
		t.Errorf("report --slo: exit %d: %s", code, stderr)
	}
	// --slo marks a sweep's points: of a run's directory (replayed again
	// above, without its page) it is refused, writing no page
	if code, _, stderr := kvsim(t, "report", dir, "--slo", "nope < 1"); code != exitBadInput || !strings.Contains(stderr, "is not a sweep's directory") {
		t.Errorf("report --slo of a run: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(page); err == nil {
		t.Error("a refused report wrote the run's page")
	}
}

// TestStudyReports: sweep --report (with --slo) and search --report write
// their pages as they end.
func TestStudyReports(t *testing.T) {
	sweep, search := filepath.Join(t.TempDir(), "sweep"), filepath.Join(t.TempDir(), "search")
	code, _, stderr := kvsim(t, "sweep", "../../scenarios/default.yaml", "-q", "-o", sweep, "--set", small,
		"--vary", "cluster.workers=2,3", "--report", "--slo", "ttft_p99_ms < 100000")
	if page, err := os.ReadFile(filepath.Join(sweep, "report.html")); code != exitOK || err != nil || !strings.Contains(string(page), "meets the SLOs") {
		t.Errorf("sweep --report --slo: exit %d, %v: %s", code, err, stderr)
	}
	code, _, stderr = kvsim(t, "search", "../../scenarios/default.yaml", "-q", "-o", search, "--set", small,
		"--key", "cluster.workers", "--range", "1:3", "--slo", "ttft_p99_ms < 100000", "--report")
	if page, err := os.ReadFile(filepath.Join(search, "report.html")); code != exitOK || err != nil || !strings.Contains(string(page), "is the largest value meeting the SLOs") {
		t.Errorf("search --report: exit %d, %v: %s", code, err, stderr)
	}
}
