package lifecycle

import (
	"slices"
	"testing"
)

// TestTable: two workers added (0 starting, 1 ready), 0 made ready, 1
// drained then removed: a view sees each status as set, and two watchers
// hear every change, in the order they watch.
func TestTable(t *testing.T) {
	var tab Table
	v := tab.View()
	var heard []string
	v.Watch(func(w int32) { heard = append(heard, "a"+v.Of(w).String()) })
	v.Watch(func(w int32) { heard = append(heard, "b"+v.Of(w).String()) })
	if w := tab.Add(Starting); w != 0 {
		t.Fatalf("first worker id %d", w)
	}
	if w := tab.Add(Ready); w != 1 {
		t.Fatalf("second worker id %d", w)
	}
	tab.Set(0, Ready)
	tab.Set(1, Draining)
	tab.Set(1, Removed)
	if v.Len() != 2 || v.Of(0) != Ready || v.Of(1) != Removed || tab.Of(1) != Removed {
		t.Errorf("statuses %v %v, len %d", v.Of(0), v.Of(1), v.Len())
	}
	want := []string{"astarting", "bstarting", "aready", "bready", "aready", "bready", "adraining", "bdraining", "aremoved", "bremoved"}
	if !slices.Equal(heard, want) {
		t.Errorf("watchers heard %q, want %q", heard, want)
	}
}
