package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDequeAgainstSlice applies random pushes at both ends, pops, and
// insertions and removals at random positions to a deque and to a slice, through many
// wrap-arounds and growths, and compares their contents after each step.
func TestDequeAgainstSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var d deque
	var want []*Seq
	for step := range 5000 {
		switch op := r.IntN(5); {
		case op == 0 || len(want) == 0:
			s := &Seq{}
			d.pushBack(s)
			want = append(want, s)
		case op == 1:
			s := &Seq{}
			d.pushFront(s)
			want = slices.Insert(want, 0, s)
		case op == 2:
			if d.popFront() != want[0] {
				t.Fatalf("step %d: popFront", step)
			}
			want = want[1:]
		case op == 3:
			s, i := &Seq{}, r.IntN(len(want)+1)
			d.insertAt(i, s)
			want = slices.Insert(want, i, s)
		default:
			i := r.IntN(len(want))
			d.removeAt(i)
			want = slices.Delete(want, i, i+1)
		}
		if d.len() != len(want) {
			t.Fatalf("step %d: len %d want %d", step, d.len(), len(want))
		}
		for i, s := range want {
			if d.at(i) != s {
				t.Fatalf("step %d: position %d differs", step, i)
			}
		}
	}
}
