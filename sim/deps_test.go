package sim

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelLinksNoFileFormat: the model's packages link neither Arrow nor
// Parquet; only the CLI wires in report/parquetio. (go list -deps of
// github.com/kvsim/kvsim/sim was 444 packages with report's Parquet writer
// in it, 145 without.)
func TestModelLinksNoFileFormat(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	pkgs := []string{"./", "../engine", "../kvcr", "../scheduler", "../workload", "../block", "../report"}
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "arrow") || strings.Contains(dep, "parquet") {
			t.Errorf("the model links %s", dep)
		}
	}
}
