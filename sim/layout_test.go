package sim

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayout: docs/architecture.md's layout table gives every package its
// layer, every import points to a lower layer, and no folder imports a
// package nested in it (a nested package builds on its parent or serves
// its tests). Packages holding only tests are left out; benchmarks/X
// counts as the benchmarks folder's layer.
func TestLayout(t *testing.T) {
	const mod = "github.com/kvsim/kvsim/"
	layer := map[string]int{}
	for _, cells := range docTable(t, "architecture.md", "| folder | layer |") {
		n, err := strconv.Atoi(strings.Fields(cells[1])[0])
		if err != nil {
			t.Fatalf("layout row %q: %v", cells, err)
		}
		layer[strings.Trim(cells[0], "`")] = n
	}
	out := goList(t, "-f", `{{if .GoFiles}}{{.ImportPath}} {{join .Imports " "}}{{end}}`, mod+"...")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		lp, ok := layerOf(layer, pkg)
		if !ok {
			t.Errorf("%s is not in docs/architecture.md's layout table", pkg)
			continue
		}
		for _, imp := range f[1:] {
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours {
				continue
			}
			if strings.HasPrefix(dep, pkg+"/") {
				t.Errorf("%s imports %s, nested in its folder: a nested package must build on its parent, not under it", pkg, dep)
			}
			if ld, ok := layerOf(layer, dep); ok && ld >= lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point to lower layers", pkg, lp, dep, ld)
			}
		}
	}
}

// layerOf is pkg's layer in the table, a benchmark program taking the
// benchmarks folder's.
func layerOf(layer map[string]int, pkg string) (int, bool) {
	if strings.HasPrefix(pkg, "benchmarks/") {
		pkg = "benchmarks"
	}
	n, ok := layer[pkg]
	return n, ok
}

// docTable returns the rows of the table in docs/name whose header line
// starts with header, each as its cells trimmed of space; it fails the test
// when there is none.
func docTable(t *testing.T, name, header string) [][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	in := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			in = false
		case in && !strings.HasPrefix(line, "|---"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("docs/%s has no table headed %q", name, header)
	}
	return rows
}

// TestPackageDocs: every package's doc comment ("// Package x ...", or
// "// Command x ..." for a program) is in one file, the one named after the
// package (main.go for a program), so a reader finds it where go doc's
// source is.
func TestPackageDocs(t *testing.T) {
	out := goList(t, "-f", `{{if .GoFiles}}{{.Dir}} {{.Name}} {{join .GoFiles " "}}{{end}}`, "github.com/kvsim/kvsim/...")
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		dir, name, files := f[0], f[1], f[2:]
		var docs []string
		for _, file := range files {
			pf, err := parser.ParseFile(fset, filepath.Join(dir, file), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if pf.Doc != nil {
				docs = append(docs, file)
			}
		}
		if want := name + ".go"; len(docs) != 1 || docs[0] != want {
			t.Errorf("package %s (%s): doc comment in %q, want it in %s alone", name, dir, docs, want)
		}
	}
}
