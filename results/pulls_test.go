package results

import (
	"slices"
	"testing"
)

// TestPullDictionaries: pulls.parquet's mode, outcome and kind columns hold
// KVCR's names, in the order the files have always listed them: the
// strings are a public contract (docs/outputs.md), and KVCR owns them.
func TestPullDictionaries(t *testing.T) {
	want := map[string][]string{
		"mode":    {"copy", "move"},
		"outcome": {"success", "partial", "failed", "expired", "rejected", "superseded"},
		"kind":    {"request", "move", "prefetch"},
	}
	for _, c := range PullColumns {
		if c.Dict == nil {
			continue
		}
		if !slices.Equal(c.Values, want[c.Name]) {
			t.Errorf("pulls.parquet's %s column: dictionary %q, want %q", c.Name, c.Values, want[c.Name])
		}
		delete(want, c.Name)
	}
	for name := range want {
		t.Errorf("pulls.parquet has no dictionary column %s", name)
	}
}
