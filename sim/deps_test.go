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

// TestLayers: the import rules that hold whatever docs/architecture.md's
// table says, over each package's imports, direct and transitive (go list's
// Deps; what only tests import is not linked and not counted). A package
// is held to every rule that names it, and every package but the tools on
// top to at least one, so a new package falls under the model's by
// default. The model is des, block, lifecycle, workload, engine, kvcr and
// scheduler.
func TestLayers(t *testing.T) {
	const mod = "github.com/kvsim/kvsim/"
	// in reports whether path is one of the kvsim folders dirs or under one.
	in := func(path string, dirs ...string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return path == mod+d || strings.HasPrefix(path, mod+d+"/") })
	}
	ours := func(path string) bool { return strings.HasPrefix(path, mod) }
	short := func(path string) string { return strings.TrimPrefix(path, mod) }
	// format reports whether path is a file-format library's (Arrow's or
	// any Parquet one's).
	format := func(path string) bool {
		return !ours(path) && (strings.Contains(path, "arrow") || strings.Contains(path, "parquet"))
	}
	top := []string{"calibrate", "study", "cmd", "benchmarks"} // the tools, held to no rule here
	rules := []layerRule{
		{func(p string) bool { return p == mod+"report" }, func(d string) bool { return ours(d) || format(d) },
			"report is a leaf: it links no kvsim package and no file format"},
		{func(p string) bool { return in(p, "report") && p != mod+"report" }, func(d string) bool { return ours(d) && !in(d, "report") },
			"report's file and chart packages link no model: the model's names reach them from their callers and the files"},
		{func(p string) bool { return p == mod+"sim" },
			func(d string) bool { return format(d) || in(d, "report/parquetio", "report/chart") || in(d, top...) },
			"sim streams rows into report but links no file format, chart or tool"},
		{func(p string) bool { return in(p, "results") },
			func(d string) bool {
				return format(d) || in(d, "sim", "report/parquetio", "report/chart") || in(d, top...)
			},
			"results summarises a run in the report's rows: it links no simulator (sim), file format, chart or tool"},
		{func(p string) bool { return in(p, "internal/atomicfile") }, func(d string) bool { return format(d) || ours(d) && !in(d, "report") },
			"internal/atomicfile writes a file whole for the studies and the CLI: it links no kvsim package but report, for the error of an output that cannot be written"},
		{func(p string) bool {
			return !in(p, top...) && !in(p, "report", "sim", "results", "internal/atomicfile")
		},
			func(d string) bool { return format(d) || in(d, "report", "sim") || in(d, top...) },
			"the model (and all below results) writes no files and names its own outcomes and modes: it links no report, file format, sim or tool"},
		{func(p string) bool { return in(p, "des", "block", "lifecycle") }, ours,
			"des, block and lifecycle are the foundations everything builds on: they link no kvsim package"},
		{func(p string) bool { return p == mod+"engine" }, func(d string) bool { return in(d, "kvcr", "scheduler") },
			"the worker knows KVCR only through engine.HostKV and the router only through engine.Observer: engine links neither kvcr nor scheduler"},
		{ours, func(d string) bool {
			return strings.HasSuffix(d, "/parquet/pqarrow") || strings.Contains(d, "/arrow/flight") || strings.HasPrefix(d, "google.golang.org/grpc")
		},
			"no kvsim package links Arrow's pqarrow, whose Arrow Flight import brings gRPC and protobuf and 6-9 ms of package initialisation to every command's start: report/parquetio makes pqarrow's calls itself"},
	}
	out := goList(t, "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, mod+"...")
	imports, deps := map[string][]string{}, map[string][]string{}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		pkgs = append(pkgs, f[0])
		imports[f[0]], deps[f[0]] = strings.Fields(f[1]), strings.Fields(f[2])
	}
	for _, p := range []string{"des", "block", "lifecycle", "workload", "engine", "kvcr", "scheduler", "scenarios", "results", "sim", "report"} {
		if !slices.Contains(pkgs, mod+p) {
			t.Fatalf("go list did not list %s", p)
		}
	}
	for _, pkg := range pkgs {
		for _, r := range rules {
			if !r.pkgs(pkg) {
				continue
			}
			formatSeen := false
			for _, dep := range deps[pkg] {
				if !r.bans(dep) || format(dep) && formatSeen {
					continue // one line for the file formats, not one a package of theirs
				}
				formatSeen = formatSeen || format(dep)
				through := ""
				if !slices.Contains(imports[pkg], dep) {
					via := slices.IndexFunc(imports[pkg], func(i string) bool { return slices.Contains(deps[i], dep) })
					through = " through " + short(imports[pkg][via])
				}
				t.Errorf("%s links %s%s: %s", short(pkg), short(dep), through, r.why)
			}
		}
	}
}

// layerRule is one rule of TestLayers: every package its pkgs holds for
// links nothing it bans.
type layerRule struct {
	pkgs func(pkg string) bool // the packages it holds for (import paths)
	bans func(dep string) bool // the import paths they may not link
	why  string
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
