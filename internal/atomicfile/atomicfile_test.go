package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// names lists the folder's entries by their paths.
func names(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	return append(paths, hidden...)
}

// TestWrite: a write that fails leaves neither the file nor its
// temporary; one that succeeds replaces the file whole, readable by all
// (0644 under the usual umask 022).
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sweep.json")
	os.WriteFile(path, []byte("old"), 0o644)
	err := Write(path, func(tmp string) error {
		os.WriteFile(tmp, []byte("partial"), 0o644)
		return errors.New("disk full")
	})
	if b, _ := os.ReadFile(path); err == nil || string(b) != "old" || !slices.Equal(names(dir), []string{path}) {
		t.Errorf("failed write: %v; file %q; folder %v", err, b, names(dir))
	}
	if err := Write(path, func(tmp string) error { return os.WriteFile(tmp, []byte("\"new\"\n"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "\"new\"\n" || !slices.Equal(names(dir), []string{path}) || st.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("write: file %q, mode %v; folder %v", b, st.Mode(), names(dir))
	}
}
