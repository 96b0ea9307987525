package lifecycle

import (
	"fmt"
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
	// The counts: one ready (0), one removed (1), none of the others.
	for st, want := range []int{Starting: 0, Ready: 1, Draining: 0, Removed: 1, Down: 0, Restarting: 0} {
		if got := tab.Count(Status(st)); got != want {
			t.Errorf("%d %v, want %d", got, Status(st), want)
		}
	}
	want := []string{"astarting", "bstarting", "aready", "bready", "aready", "bready", "adraining", "bdraining", "aremoved", "bremoved"}
	if !slices.Equal(heard, want) {
		t.Errorf("watchers heard %q, want %q", heard, want)
	}
}

// TestTransitions checks every (from, to) pair of statuses against the
// table of changes a worker makes, spelled out here (s starting, r ready,
// d draining, x removed, o down, t restarting; 1 legal):
//
//	from \ to   s r d x o t
//	starting    0 1 1 1 1 0
//	ready       0 0 1 1 1 0
//	draining    0 0 0 1 1 0
//	removed     0 0 0 0 0 0
//	down        1 1 1 1 0 1
//	restarting  0 1 1 1 1 0
//
// A legal change is made and heard by the watcher; an illegal one panics
// with a TransitionError naming the worker and both statuses, and leaves
// the status as it was, unheard.
func TestTransitions(t *testing.T) {
	want := [6][6]bool{
		Starting:   {Ready: true, Draining: true, Removed: true, Down: true},
		Ready:      {Draining: true, Removed: true, Down: true},
		Draining:   {Removed: true, Down: true},
		Down:       {Starting: true, Ready: true, Draining: true, Removed: true, Restarting: true},
		Restarting: {Ready: true, Draining: true, Removed: true, Down: true},
	}
	for from := Starting; from <= Restarting; from++ {
		for to := Starting; to <= Restarting; to++ {
			if got := legal(from, to); got != want[from][to] {
				t.Errorf("legal(%v, %v) = %v, want %v", from, to, got, want[from][to])
			}
			var tab Table
			tab.Add(Ready) // worker 0, so the error must name worker 1
			w := tab.Add(from)
			heard := 0
			tab.View().Watch(func(int32) { heard++ })
			func() {
				defer func() {
					r := recover()
					if want[from][to] {
						if r != nil || tab.Of(w) != to || heard != 1 {
							t.Errorf("%v -> %v: panic %v, status %v, heard %d", from, to, r, tab.Of(w), heard)
						}
						return
					}
					te, ok := r.(TransitionError)
					if !ok || te != (TransitionError{Worker: 1, State: from.String(), To: to.String()}) || tab.Of(w) != from || heard != 0 {
						t.Errorf("%v -> %v: recovered %v, status %v, heard %d", from, to, r, tab.Of(w), heard)
					}
					if msg := fmt.Sprintf("worker 1: to %v while %v: no transition allows it", to, from); ok && te.Error() != msg {
						t.Errorf("%v -> %v: error %q, want %q", from, to, te.Error(), msg)
					}
				}()
				tab.Set(w, to)
			}()
		}
	}
}
