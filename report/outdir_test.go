package report

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// entries returns the names in dir, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOutDirCommit(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "a", "b") // created by Create
	final := filepath.Join(parent, "run")
	d, err := Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Path("summary.json")
	if filepath.Dir(filepath.Dir(p)) != parent || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), ".run.tmp-") {
		t.Errorf("Path = %s, want a file in %s/.run.tmp-*", p, parent)
	}
	writeFile(t, p, "new")
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Errorf("final exists before Commit: %v", err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(final, "summary.json")); got != "new" {
		t.Errorf("committed file %q, want new", got)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"run"}) {
		t.Errorf("parent holds %q, want only run", got)
	}
	if err := d.Abort(); err != nil || readFile(t, filepath.Join(final, "summary.json")) != "new" {
		t.Errorf("Abort after Commit = %v or removed the output", err)
	}
	if err := d.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
}

func TestOutDirAbort(t *testing.T) {
	parent := t.TempDir()
	d, err := Create(filepath.Join(parent, "run"), false)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("requests.parquet"), "partial")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, parent); len(got) != 0 {
		t.Errorf("parent holds %q after Abort, want nothing", got)
	}
	if err := d.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

// TestOutDirAbortRemovesParents: an aborted run removes the parents Create
// made for it, and no directory that was there before; a parent that came
// to hold something else meanwhile stays, and so do its own parents.
func TestOutDirAbortRemovesParents(t *testing.T) {
	top := t.TempDir()
	d, err := Create(filepath.Join(top, "a", "b", "c"), false)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("requests.parquet"), "partial")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, top); len(got) != 0 {
		t.Errorf("%s holds %q after Abort, want nothing", top, got)
	}
	d, err = Create(filepath.Join(top, "a", "b", "c"), false)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(top, "a", "mine"), "mine")
	d.Abort()
	if got := entries(t, filepath.Join(top, "a")); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("a holds %q after Abort, want [mine]", got)
	}
}

// TestOutDirForceEmpty: an empty directory holds nothing to lose: --force
// replaces it; without --force it is refused as any existing output is.
func TestOutDirForceEmpty(t *testing.T) {
	final := filepath.Join(t.TempDir(), "run")
	os.Mkdir(final, 0o755)
	if _, err := Create(final, false); err == nil {
		t.Error("Create over an empty directory without force succeeded")
	}
	d, err := Create(final, true)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("summary.json"), "new")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, final); !slices.Equal(got, []string{"summary.json"}) {
		t.Errorf("final holds %q, want [summary.json]", got)
	}
}

// TestOutDirRemovesStale: Create removes a temporary directory of the same
// output that no process holds locked (a killed run's: the system dropped
// its lock), and keeps one a live run holds and those of other outputs.
func TestOutDirRemovesStale(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "run")
	live, err := Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	writeFile(t, live.Path("requests.parquet"), "live")
	for _, name := range []string{".run.tmp-999-1", ".run2.tmp-999-1"} {
		os.Mkdir(filepath.Join(parent, name), 0o755)
		writeFile(t, filepath.Join(parent, name, "requests.parquet"), "stale")
	}
	d, err := Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	want := []string{filepath.Base(d.Path("")), filepath.Base(live.Path("")), ".run2.tmp-999-1"}
	slices.Sort(want)
	if got := entries(t, parent); !slices.Equal(got, want) {
		t.Errorf("parent holds %q, want %q", got, want)
	}
	if got := readFile(t, live.Path("requests.parquet")); got != "live" {
		t.Errorf("the live run's file is %q", got)
	}
}

func TestOutDirRefuses(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "run")
	if err := os.Mkdir(final, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(final, "old"), "old")
	_, err := Create(final, false)
	if err == nil || !strings.Contains(err.Error(), final) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Create over existing = %v, want an error naming %s and --force", err, final)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"run"}) {
		t.Errorf("parent holds %q, want only run", got)
	}
	if got := readFile(t, filepath.Join(final, "old")); got != "old" {
		t.Errorf("old output changed to %q", got)
	}
}

// TestOutDirRefusesAtCommit: another run committed the same name meanwhile.
func TestOutDirRefusesAtCommit(t *testing.T) {
	final := filepath.Join(t.TempDir(), "run")
	d, err := Create(final, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if err := os.Mkdir(final, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("Commit over a new directory = %v, want a --force error", err)
	}
}

// kvsimManifest is a summary.json that marks a directory as kvsim's.
const kvsimManifest = `{"digest": "x", "manifest": {"tool": "kvsim"}}`

func TestOutDirForce(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "run")
	if err := os.Mkdir(final, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(final, "summary.json"), kvsimManifest)

	// A forced run that fails leaves the old output alone.
	d, err := Create(final, true)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("new"), "new")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, final); !slices.Equal(got, []string{"summary.json"}) {
		t.Errorf("after aborted forced run final holds %q, want the old summary.json", got)
	}

	// A forced run that succeeds replaces it whole.
	d, err = Create(final, true)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("new"), "new")
	if got := readFile(t, filepath.Join(final, "summary.json")); got != kvsimManifest {
		t.Errorf("before Commit final holds %q, want the old summary.json", got)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, final); !slices.Equal(got, []string{"new"}) {
		t.Errorf("after Commit final holds %q, want [new]", got)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"run"}) {
		t.Errorf("parent holds %q, want only run", got)
	}
}

// TestForceKeepsUserFiles: --force replaces only a directory kvsim wrote
// and holding nothing else; a folder of the user's files, a kvsim run the
// user added a note to, the working directory and its parents are refused
// and left exactly as they were.
func TestForceKeepsUserFiles(t *testing.T) {
	parent := t.TempDir()
	notes := filepath.Join(parent, "notes")
	os.MkdirAll(filepath.Join(notes, "data"), 0o755)
	writeFile(t, filepath.Join(notes, "todo.md"), "keep me")
	writeFile(t, filepath.Join(notes, "data", "x.csv"), "1,2")
	// A kvsim run the user added a file to, deep in a sweep.
	run := filepath.Join(parent, "sweep", "runs", "run-000")
	os.MkdirAll(filepath.Join(run, "charts"), 0o755)
	writeFile(t, filepath.Join(parent, "sweep", "sweep.json"), `{"manifest": {"tool": "kvsim"}}`)
	writeFile(t, filepath.Join(run, "summary.json"), kvsimManifest)
	writeFile(t, filepath.Join(run, "charts", "ttft.png"), "png")
	writeFile(t, filepath.Join(run, "charts", "analysis.txt"), "mine")
	// A file kvsim would write, but in a directory without a manifest.
	plain := filepath.Join(parent, "plain")
	os.Mkdir(plain, 0o755)
	writeFile(t, filepath.Join(plain, "summary.json"), `{"digest": "x"}`)

	work := filepath.Join(parent, "work")
	os.Mkdir(work, 0o755)
	t.Chdir(work)
	for _, c := range []struct{ dir, want string }{
		{notes, "kvsim did not write it"},
		{filepath.Join(parent, "sweep"), "it holds runs/run-000/charts/analysis.txt, which kvsim did not write"},
		{plain, "kvsim did not write it"},
		{".", "working directory"},
		{"..", "working directory"},
		{"/", "working directory"},
	} {
		for _, force := range []bool{false, true} {
			_, err := Create(c.dir, force)
			var re *RefusedError
			if !errors.As(err, &re) || (force && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Create(%s, force %v) = %v, want a refusal saying %q", c.dir, force, err, c.want)
			}
		}
	}
	if got := readFile(t, filepath.Join(notes, "todo.md")) + readFile(t, filepath.Join(notes, "data", "x.csv")) +
		readFile(t, filepath.Join(run, "charts", "analysis.txt")); got != "keep me1,2mine" {
		t.Errorf("user files now %q", got)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"notes", "plain", "sweep", "work"}) {
		t.Errorf("parent holds %q", got)
	}
	// Without the user's file the sweep is kvsim's and may be replaced.
	os.Remove(filepath.Join(run, "charts", "analysis.txt"))
	if err := Replaceable(filepath.Join(parent, "sweep")); err != nil {
		t.Errorf("kvsim's own sweep: %v", err)
	}
}

// TestOutDirParallel: two runs of one process writing different outputs in
// one parent get distinct temporary directories.
func TestOutDirParallel(t *testing.T) {
	parent := t.TempDir()
	a, err := Create(filepath.Join(parent, "a"), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(filepath.Join(parent, "a2"), false)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(a.Path("x")) == filepath.Dir(b.Path("x")) {
		t.Errorf("both runs write to %s", filepath.Dir(a.Path("x")))
	}
	for _, d := range []*OutDir{a, b} {
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"a", "a2"}) {
		t.Errorf("parent holds %q, want [a a2]", got)
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	v := struct {
		Name string      `json:"name"`
		TTFT Percentiles `json:"ttft"`
	}{"demo", Percentiles{P50: 1.5, P90: 2, P95: 2.25, P99: 3, Max: 10}}
	if err := WriteJSON(path, v); err != nil {
		t.Fatal(err)
	}
	want := `{
  "name": "demo",
  "ttft": {
    "p50_ms": 1.5,
    "p90_ms": 2,
    "p95_ms": 2.25,
    "p99_ms": 3,
    "max_ms": 10
  }
}
`
	if got := readFile(t, path); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestSameRun: a run is the same only with the same executable, scenario,
// overrides and trace; the command line may differ.
func TestSameRun(t *testing.T) {
	base := func() *Manifest {
		return &Manifest{Tool: Tool, Build: Build{Version: "v", ExecutableSHA256: "e1"}, Command: []string{"kvsim", "sweep"},
			Scenario: "s.yaml", Sets: []string{"a=1"}, Trace: &FileID{Path: "t", Bytes: 1, SHA256: "x"}}
	}
	other := base()
	other.Command = []string{"kvsim", "sweep", "--resume"}
	if !base().SameRun(other) {
		t.Error("another command line made a different run")
	}
	for name, change := range map[string]func(*Manifest){
		"executable": func(m *Manifest) { m.Build.ExecutableSHA256 = "e2" },
		"scenario":   func(m *Manifest) { m.Scenario = "t.yaml" },
		"sets":       func(m *Manifest) { m.Sets = []string{"a=2"} },
		"trace":      func(m *Manifest) { m.Trace = &FileID{Path: "t", Bytes: 1, SHA256: "y"} },
		"no trace":   func(m *Manifest) { m.Trace = nil },
	} {
		m := base()
		change(m)
		if base().SameRun(m) {
			t.Errorf("another %s made the same run", name)
		}
	}
}

// TestFileNamesDefinedOnce: the output files' names are written once, as
// report's constants; no other Go file of the module spells one out
// (tests may, to pin the public names). internal/scengen's scenario.yaml
// names a generated case's input, not an output.
func TestFileNamesDefinedOnce(t *testing.T) {
	literals := []string{`"run-%03d"`} // the folders' names, "runs" and "charts", are words too
	for _, name := range outputFiles {
		literals = append(literals, `"`+name+`"`)
	}
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && strings.HasPrefix(e.Name(), ".") && path != "..":
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			path == filepath.Join("..", "report", "outdir.go") || path == filepath.Join("..", "internal", "scengen", "scengen.go"):
			return nil
		}
		b, err := os.ReadFile(path)
		for _, l := range literals {
			if bytes.Contains(b, []byte(l)) {
				t.Errorf("%s spells out %s: use report's constant", path, l)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnwritable: the error of an output that could not be made names the
// output and what is at fault on the way to it, whatever temporary name
// the system's error carries: a file in the way, a folder that refuses
// writes (permission, a read-only disk: "not writable"), or the system's
// reason alone when the folder is not at fault (a full disk). An
// UnwritableError is kept as it is.
func TestUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	tmp := func(errno error) error {
		return &fs.PathError{Op: "mkdir", Path: filepath.Join(dir, ".x.tmp-1-1"), Err: errno}
	}
	for _, c := range []struct {
		output string
		err    error
		want   string
	}{
		{filepath.Join(dir, "x"), tmp(fs.ErrPermission), "its folder " + dir + " is not writable (permission denied)"},
		{filepath.Join(dir, "x"), tmp(syscall.EROFS), "its folder " + dir + " is not writable (read-only file system)"},
		{filepath.Join(dir, "a", "x"), tmp(syscall.EACCES), "its folder " + filepath.Join(dir, "a") + " cannot be made: " + dir + " is not writable (permission denied)"},
		{filepath.Join(dir, "x"), tmp(syscall.ENOSPC), "no space left on device"},
		{filepath.Join(file, "a", "x"), tmp(syscall.ENOTDIR), file + " is a file, not a folder"},
		{filepath.Join(dir, "x"), &os.LinkError{Op: "rename", Old: filepath.Join(dir, ".x.tmp-1-1"), New: filepath.Join(dir, "x"), Err: syscall.EIO}, "input/output error"},
	} {
		err := Unwritable(c.output, c.err)
		var ue *UnwritableError
		if want := "cannot write the output " + c.output + ": " + c.want; err.Error() != want || !errors.As(err, &ue) || !errors.Is(err, c.err) {
			t.Errorf("%s, %v: %v\nwant %s", c.output, c.err, err, want)
		}
		if again := Unwritable("other", err); again != err {
			t.Errorf("an UnwritableError made again: %v", again)
		}
	}
}
