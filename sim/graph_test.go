package sim

import (
	"slices"
	"strings"
	"testing"
)

// TestPackageGraph: docs/architecture.md's package graph lists every
// kvsim package (but the benchmark tools and the test-only ones) with
// exactly the kvsim packages it imports, so the table a newcomer reads is
// the graph as it is.
func TestPackageGraph(t *testing.T) {
	const mod = "github.com/kvsim/kvsim/"
	out := goList(t, "-f", `{{if .GoFiles}}{{.ImportPath}} {{join .Imports " "}}{{end}}`, mod+"...")
	actual := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		if strings.HasPrefix(pkg, "benchmarks/") {
			continue
		}
		imports := []string{}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod) {
				imports = append(imports, strings.TrimPrefix(imp, mod))
			}
		}
		actual[pkg] = imports
	}
	documented := map[string][]string{}
	for _, cells := range docTable(t, "architecture.md", "| package | imports | rule |") {
		imports := []string{}
		for _, imp := range strings.Split(cells[1], ",") {
			if imp = strings.Trim(strings.TrimSpace(imp), "`"); imp != "" {
				imports = append(imports, imp)
			}
		}
		documented[strings.Trim(cells[0], "`")] = imports
	}
	for pkg, imports := range actual {
		doc, ok := documented[pkg]
		switch {
		case !ok:
			t.Errorf("%s is missing from docs/architecture.md's package graph", pkg)
		case !slices.Equal(doc, imports):
			t.Errorf("%s imports %q; docs/architecture.md says %q", pkg, imports, doc)
		}
	}
	for pkg := range documented {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/architecture.md's package graph lists %s, which is no package", pkg)
		}
	}
}
