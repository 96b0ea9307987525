package scengen

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/kvsim/kvsim/scenarios"
)

// TestValid loads many cases with the project's loader: every one passes
// validation, and a seed gives the same bytes twice.
func TestValid(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(500) {
		c := Generate(seed)
		if again := Generate(seed); !bytes.Equal(c.Scenario, again.Scenario) || !bytes.Equal(c.Trace, again.Trace) {
			t.Fatalf("seed %d: two different cases", seed)
		}
		path, err := c.Write(filepath.Join(dir, "case"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Load(path, nil); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, c.Scenario)
		}
	}
}
