package sim

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

// TestInvariantCatalogue: docs/invariants.md's table is complete. An
// invariant is a constant declared in a Go file of the module that is not
// a test, in any package (a new one too), whose name is inv or Inv followed
// by a capital letter, with a string literal for its value: the name a
// violation reports. Every such string has one row, whose constant cell
// names the constant as folder.Name; every row is such a string; and every
// row names at least one test, as folder.TestName, declared in that
// folder's test files.
func TestInvariantCatalogue(t *testing.T) {
	consts, tests := invariantSources(t)
	if len(consts) == 0 {
		t.Fatal("no invariant constants found in the module's sources")
	}
	const doc = "docs/invariants.md"
	seen := map[string]bool{}
	for _, cells := range docTable(t, "invariants.md", "| invariant | constant |") {
		if len(cells) != 5 {
			t.Errorf("%s: row %q has %d cells, want 5", doc, cells, len(cells))
			continue
		}
		inv, name := strings.Trim(cells[0], "`"), strings.Trim(cells[1], "`")
		if seen[inv] {
			t.Errorf("%s: two rows for %q", doc, inv)
		}
		seen[inv] = true
		switch c, ok := consts[inv]; {
		case !ok:
			t.Errorf("%s: row %q: no invariant constant has this string (a removed or reworded invariant?)", doc, inv)
		case c.name != name:
			t.Errorf("%s: row %q names the constant %s; the code's is %s (%s)", doc, inv, name, c.name, c.pos)
		}
		named := 0
		for _, test := range strings.Split(cells[4], ",") {
			test = strings.Trim(strings.TrimSpace(test), "`")
			if test == "" {
				continue
			}
			named++
			dir, fn, ok := strings.Cut(test, ".")
			if !ok || !strings.HasPrefix(fn, "Test") || !tests[dir][fn] {
				t.Errorf("%s: row %q names the test %s, which no test file of %s declares", doc, inv, test, dir)
			}
		}
		if named == 0 {
			t.Errorf("%s: row %q names no test that plants a violation", doc, inv)
		}
	}
	for _, inv := range slices.Sorted(maps.Keys(consts)) {
		if !seen[inv] {
			c := consts[inv]
			t.Errorf("%s has no row for %q, the invariant %s (%s)", doc, inv, c.name, c.pos)
		}
	}
}

// invConst is an invariant constant: folder.Name, and where it is declared.
type invConst struct{ name, pos string }

// invName is the form of an invariant constant's name.
var invName = regexp.MustCompile(`^[iI]nv[A-Z]`)

// invariantSources parses the module's Go files: the invariant constants
// of its non-test files, by their strings, and the test functions of its
// test files, by folder (relative to the module's root, with slashes). A
// folder Go ignores (testdata, or one whose name starts with . or _) is
// skipped.
func invariantSources(t *testing.T) (map[string]invConst, map[string]map[string]bool) {
	t.Helper()
	consts, tests := map[string]invConst{}, map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", filepath.Dir(path))
		dir := filepath.ToSlash(rel)
		if strings.HasSuffix(path, "_test.go") {
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
					if tests[dir] == nil {
						tests[dir] = map[string]bool{}
					}
					tests[dir][fn.Name.Name] = true
				}
			}
			return nil
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !invName.MatchString(id.Name) {
						continue
					}
					c := invConst{dir + "." + id.Name, fset.Position(id.Pos()).String()}
					var lit *ast.BasicLit
					if i < len(vs.Values) {
						lit, _ = vs.Values[i].(*ast.BasicLit)
					}
					if lit == nil || lit.Kind != token.STRING {
						t.Errorf("%s: the invariant constant %s is not a string literal", c.pos, c.name)
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if d, dup := consts[s]; dup {
						t.Errorf("%s and %s both name the invariant %q", d.name, c.name, s)
					}
					consts[s] = c
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return consts, tests
}

// plantBody is the scenario of the planted violations below: 40 requests
// of 200 prompt tokens and about 20 output tokens at 50 a second on kvBody's
// three workers, so some are running at 100 ms.
const plantBody = "name: p\nseed: 3\nworkload: {synthetic: {requests: 40, rate: 50, input: {mean: 200}, output: {mean: 20}}}\n" + kvBody

// broken lists the invariants err names, one an InvariantError it joins, in
// its order.
func broken(err error) []string {
	var names []string
	for _, e := range unjoin(err) {
		var ie *InvariantError
		if errors.As(e, &ie) {
			names = append(names, ie.Invariant)
		}
	}
	return names
}

// TestPastEventFailsRun: an event planted at 100 ms that schedules another
// at 50 ms (a model bug: des.Queue panics with a PastError) fails the run
// as "virtual time never goes back" at 100 ms, with or without --check,
// and the run returns no result.
func TestPastEventFailsRun(t *testing.T) {
	for _, check := range []bool{true, false} {
		c := checkedCluster(t, plantBody)
		c.opt.Check = check
		plant(c, 100*des.Millisecond, fireFunc(func(des.Time) {
			plant(c, 50*des.Millisecond, fireFunc(func(des.Time) {}))
		}))
		res, err := c.run(context.Background())
		var ie *InvariantError
		if got := broken(err); !slices.Equal(got, []string{invTimeMonotonic}) || !errors.As(err, &ie) || ie.At != 100*des.Millisecond || res != nil {
			t.Errorf("check %v: %v (result %v), want only %q at 100ms", check, err, res, invTimeMonotonic)
		}
	}
}

// TestCausalCheck: at 100 ms the lowest-numbered request that arrived
// after 0 and has been scheduled is given a first scheduling 1 ns before
// its arrival (at 0 it would read as never scheduled). When it
// ends, its row breaks "a request arrives, then emits its first token, then
// finishes", and the run stops with that invariant alone, naming the
// request.
func TestCausalCheck(t *testing.T) {
	c := checkedCluster(t, plantBody)
	planted := int64(-1)
	plant(c, 100*des.Millisecond, fireFunc(func(des.Time) {
		for _, id := range slices.Sorted(maps.Keys(c.active)) {
			if r := c.active[id]; r.req.Arrival > 0 && r.seq != nil && r.seq.ScheduledAt >= 0 {
				r.seq.ScheduledAt = r.req.Arrival - 1
				planted = id
				return
			}
		}
	}))
	_, err := c.run(context.Background())
	if planted < 0 {
		t.Fatal("no request was scheduled at 100ms")
	}
	if got := broken(err); !slices.Equal(got, []string{invCausal}) || !strings.Contains(err.Error(), "not between its arrival") {
		t.Errorf("request %d scheduled before its arrival: %v", planted, err)
	}
}

// TestEndChecks runs the scenario to its end (the checks pass), then
// breaks the end state one way at a time and sees checkEnd name that
// invariant alone: a request left waiting on worker 0 ("workers end
// empty"), and one more arrival than requests ended ("every request ends
// exactly once").
func TestEndChecks(t *testing.T) {
	for _, c := range []struct {
		inv   string
		plant func(c *Cluster)
	}{
		{invWorkersEmpty, func(c *Cluster) {
			c.workers[0].w.Enqueue(&workload.Request{ID: 99, InputTokens: 16, OutputTokens: 1}, false)
		}},
		{invRequestsOnce, func(c *Cluster) { c.stats.Arrived(c.q.Now()) }},
	} {
		cl := checkedCluster(t, plantBody)
		if _, err := cl.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.plant(cl)
		if got := broken(cl.checkEnd()); !slices.Equal(got, []string{c.inv}) {
			t.Errorf("planted %q: checkEnd found %q", c.inv, got)
		}
	}
}
