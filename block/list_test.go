package block

import (
	"slices"
	"testing"
)

// walk returns l's nodes head to tail by the next links, and fails t when
// walking the prev links from the tail does not give the same nodes in
// reverse.
func walk(t *testing.T, l *List[string], s []Node[string]) []string {
	t.Helper()
	var fwd, back []string
	for i := l.Head(); i >= 0; i = s[i].Next() {
		fwd = append(fwd, s[i].V)
	}
	for i := l.Tail(); i >= 0; i = s[i].Prev() {
		back = append(back, s[i].V)
	}
	slices.Reverse(back)
	if !slices.Equal(fwd, back) {
		t.Fatalf("forward %v, backward reversed %v", fwd, back)
	}
	return fwd
}

// TestList: five nodes a..e pushed in the order c a e b d, then unlinked
// from the head, the middle and the tail, pushed again, inserted after the
// tail and in the middle, and emptied; each row is the order after its
// step.
func TestList(t *testing.T) {
	s := []Node[string]{{V: "a"}, {V: "b"}, {V: "c"}, {V: "d"}, {V: "e"}}
	const a, b, c, d, e = 0, 1, 2, 3, 4
	l := NewList[string]()
	if got := walk(t, &l, s); got != nil || l.Head() != -1 {
		t.Fatalf("new list holds %v, head %d", got, l.Head())
	}
	for _, step := range []struct {
		name string
		do   func()
		want []string
	}{
		{"push c", func() { l.PushTail(s, c) }, []string{"c"}},
		{"push a e b d", func() {
			for _, i := range []int32{a, e, b, d} {
				l.PushTail(s, i)
			}
		}, []string{"c", "a", "e", "b", "d"}},
		{"unlink head c", func() { l.Unlink(s, c) }, []string{"a", "e", "b", "d"}},
		{"unlink middle e", func() { l.Unlink(s, e) }, []string{"a", "b", "d"}},
		{"unlink tail d", func() { l.Unlink(s, d) }, []string{"a", "b"}},
		{"push c, then move a to the tail", func() {
			l.PushTail(s, c)
			l.Unlink(s, a)
			l.PushTail(s, a)
		}, []string{"b", "c", "a"}},
		{"unlink all but c", func() {
			l.Unlink(s, b)
			l.Unlink(s, a)
		}, []string{"c"}},
		{"insert a after c, the tail", func() { l.InsertAfter(s, c, a) }, []string{"c", "a"}},
		{"insert b after c, before a", func() { l.InsertAfter(s, c, b) }, []string{"c", "b", "a"}},
		{"unlink b and a", func() {
			l.Unlink(s, b)
			l.Unlink(s, a)
		}, []string{"c"}},
		{"unlink the last, c", func() { l.Unlink(s, c) }, nil},
		{"push e into the emptied list", func() { l.PushTail(s, e) }, []string{"e"}},
	} {
		step.do()
		if got := walk(t, &l, s); !slices.Equal(got, step.want) {
			t.Errorf("%s: %v, want %v", step.name, got, step.want)
		}
	}
	if l.Head() != e || s[e].Next() != -1 {
		t.Errorf("head %d, its next %d; want %d, -1", l.Head(), s[e].Next(), e)
	}
}

// TestListGrownSlice: nodes keep their links when the slice holding them
// grows between calls, as a pool's slice does when it makes a block.
func TestListGrownSlice(t *testing.T) {
	s := []Node[string]{{V: "a"}}
	l := NewList[string]()
	l.PushTail(s, 0)
	s = append(s, Node[string]{V: "b"})
	l.PushTail(s, 1)
	s = append(s, Node[string]{V: "c"})
	l.PushTail(s, 2)
	l.Unlink(s, 1)
	if got := walk(t, &l, s); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("%v, want [a c]", got)
	}
}

// TestGrow: a pool's nodes double their capacity when full, never past
// the limit, and new nodes are zero. With limit 100 the capacity after n
// nodes is the least power of two at or above n up to 64 (1, 2, 4, 4, 8,
// ...), then 100 from the 65th node on (min(2 x 64, 100)).
func TestGrow(t *testing.T) {
	var s []Node[int]
	for i := range 100 {
		s = Grow(s, 100)
		want := 100
		if i < 64 {
			want = 1
			for want < i+1 {
				want *= 2
			}
		}
		if len(s) != i+1 || s[i].V != 0 || cap(s) != want {
			t.Fatalf("after %d: len %d cap %d (want %d) value %d", i+1, len(s), cap(s), want, s[i].V)
		}
		s[i].V = i + 1
	}
	if s[99].V != 100 || s[0].V != 1 {
		t.Fatalf("values lost: %d %d", s[0].V, s[99].V)
	}
}
