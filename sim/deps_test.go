package sim

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelLinksNoFileFormat: the model's packages link neither Arrow nor
// Parquet; only the CLI wires in report/parquetio. (go list -deps of
// github.com/kvsim/kvsim/sim was 444 packages with report's Parquet writer
// in it, 146 without.)
func TestModelLinksNoFileFormat(t *testing.T) {
	out := goList(t, "-deps", "./", "../engine", "../kvcr", "../scheduler", "../workload", "../block", "../report")
	for _, dep := range strings.Fields(out) {
		if strings.Contains(dep, "arrow") || strings.Contains(dep, "parquet") {
			t.Errorf("the model links %s", dep)
		}
	}
}

// goList is the output of go list with args; the test is skipped without a
// go command.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return string(out)
}
