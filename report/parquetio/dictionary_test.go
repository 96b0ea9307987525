package parquetio

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
)

// TestDictionary: a dictionary column's values come back in the order the
// table was written with, not sorted and not only those used: three values
// z, a, m, two rows of one group each, both a.
func TestDictionary(t *testing.T) {
	type row struct {
		n int64
		v string
	}
	cols := []report.Column[row]{
		{Name: "n", Int64: func(r *row) int64 { return r.n }},
		{Name: "v", Dict: func(r *row) string { return r.v }, Values: []string{"z", "a", "m"}},
	}
	write := func(rows ...row) string {
		path := filepath.Join(t.TempDir(), "t.parquet")
		writeTable(t, path, cols, rows, 1)
		return path
	}
	path := write(row{1, "a"}, row{2, "a"})
	if got, err := Dictionary(path, "v"); err != nil || !slices.Equal(got, []string{"z", "a", "m"}) {
		t.Errorf("Dictionary = %q, %v; want [z a m]", got, err)
	}
	if got, err := Dictionary(write(), "v"); err != nil || got != nil {
		t.Errorf("Dictionary of a table without rows = %q, %v; want none", got, err)
	}
	for _, c := range []struct{ column, want string }{{"n", "not a dictionary"}, {"w", "no column"}} {
		if _, err := Dictionary(path, c.column); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dictionary(%s) = %v, want an error containing %q", c.column, err, c.want)
		}
	}
}
