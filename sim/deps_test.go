package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestKVCRUsesOnlyStaging: kvcr imports engine only for the answer a
// staging gives the worker (engine.Staging and its values), defined once
// beside engine.HostKV; the worker itself stays behind that interface.
func TestKVCRUsesOnlyStaging(t *testing.T) {
	allowed := []string{"Staging", "StageProceed", "StageWait", "StageParked"}
	files, err := filepath.Glob("../kvcr/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/kvsim/kvsim/engine"` {
				local = "engine"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := s.X.(*ast.Ident); ok && x.Name == local && !slices.Contains(allowed, s.Sel.Name) {
					t.Errorf("%s: kvcr uses engine.%s; it may use only %q", fset.Position(s.Pos()), s.Sel.Name, allowed)
				}
			}
			return true
		})
	}
}
