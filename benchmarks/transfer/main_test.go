package main

import (
	"io"
	"testing"
)

// TestFigures: every published figure of docs/fidelity.md's "KV transfer"
// table is reproduced within 20 % by its stack's knobs, as the docs claim.
func TestFigures(t *testing.T) {
	worst, err := table(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if worst > 0.2 {
		t.Errorf("worst error %.1f %%, want at most 20 %%", 100*worst)
	}
}
