package sim

import (
	"os"
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
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]int{}
	in := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "| folder | layer |"):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			in = false
		case in && !strings.HasPrefix(line, "|---"):
			cells := strings.Split(line, "|")
			n, err := strconv.Atoi(strings.Fields(cells[2])[0])
			if err != nil {
				t.Fatalf("layout row %q: %v", line, err)
			}
			layer[strings.Trim(strings.TrimSpace(cells[1]), "`")] = n
		}
	}
	if len(layer) == 0 {
		t.Fatal("docs/architecture.md has no layout table")
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
