package block

import (
	"slices"
	"testing"
)

// TestSpansFind: spans [2,5) [5,7) [9,12). The first span ending after an
// offset: 0-4 give 0 ([2,5) ends at 5), 5-6 give 1, 7-11 give 2 (7 and 8
// lie in the gap before [9,12), where a span holding them would go), 12
// and past give 3. Holding finds the span only where it holds the
// offset: -1 at 0, 1, 7, 8 and 12.
func TestSpansFind(t *testing.T) {
	s := Spans[struct{}]{{Lo: 2, Hi: 5}, {Lo: 5, Hi: 7}, {Lo: 9, Hi: 12}}
	wantFind := []int{0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 3, 3}
	wantHolding := []int{-1, -1, 0, 0, 0, 1, 1, -1, -1, 2, 2, 2, -1, -1}
	for x := range int32(14) {
		if got := s.Find(x); got != wantFind[x] {
			t.Errorf("Find(%d) = %d, want %d", x, got, wantFind[x])
		}
		if got := s.Holding(x); got != wantHolding[x] {
			t.Errorf("Holding(%d) = %d, want %d", x, got, wantHolding[x])
		}
	}
	if got := (Spans[int]{}).Find(3); got != 0 {
		t.Errorf("Find on no spans = %d, want 0", got)
	}
}

// TestSpansCut: cutting [2,9) with value 7 at 4, then its upper part
// [4,9) at 6, leaves [2,4) [4,6) [6,9), all with value 7, and the span
// after them, [10,11) with value 8, in place.
func TestSpansCut(t *testing.T) {
	s := Spans[int]{{V: 7, Lo: 2, Hi: 9}, {V: 8, Lo: 10, Hi: 11}}
	s.Cut(0, 4)
	s.Cut(1, 6)
	want := Spans[int]{{V: 7, Lo: 2, Hi: 4}, {V: 7, Lo: 4, Hi: 6}, {V: 7, Lo: 6, Hi: 9}, {V: 8, Lo: 10, Hi: 11}}
	if !slices.Equal(s, want) {
		t.Errorf("got %v, want %v", s, want)
	}
}

// TestSegMap: segments 3, 70 and 5 get entries 0, 1 and 2. Deleting 70
// frees entry 1, which the next segment added, 9, takes over with the
// value 70 left there (a slice keeps its capacity: 4). Each shows 3, 9, 5
// in entry order. Get of a segment never added or deleted is nil, also
// when the deleted one was the last found; Each then shows 3 and 9.
// Deleting 9 while 3 is the last found leaves 3 found, and 11, added
// next, takes 9's entry (the last freed) with its value.
func TestSegMap(t *testing.T) {
	var m SegMap[[]int]
	if m.Get(3) != nil || m.Len() != 0 {
		t.Fatal("an empty map holds segment 3")
	}
	*m.Add(3) = []int{3}
	*m.Add(70) = make([]int, 1, 4)
	*m.Add(5) = []int{5}
	if v := m.Add(3); len(*v) != 1 || (*v)[0] != 3 {
		t.Errorf("Add of segment 3 again gives %v, want its value [3]", *v)
	}
	if v := m.Get(70); v == nil || len(*v) != 1 {
		t.Fatalf("segment 70: %v", v)
	}
	*m.Get(70) = (*m.Get(70))[:0] // emptied, as Delete asks
	m.Delete(70)
	if m.Get(70) != nil || m.Len() != 2 {
		t.Fatalf("segment 70 deleted: Get %v, Len %d; want nil, 2", m.Get(70), m.Len())
	}
	v := m.Add(9)
	if len(*v) != 0 || cap(*v) != 4 {
		t.Errorf("segment 9 in 70's entry: len %d cap %d, want 0 and 4", len(*v), cap(*v))
	}
	*v = append(*v, 9)
	var segs []int32
	var firsts []int
	m.Each(func(s int32, v *[]int) {
		segs = append(segs, s)
		firsts = append(firsts, (*v)[0])
	})
	if !slices.Equal(segs, []int32{3, 9, 5}) || !slices.Equal(firsts, []int{3, 9, 5}) {
		t.Errorf("Each: segments %v with values %v, want [3 9 5] twice", segs, firsts)
	}
	m.Get(5)
	if m.Get(70) != nil || m.Get(4) != nil {
		t.Error("a segment never added or deleted is found")
	}
	m.Delete(5) // the last found: Get must not answer from the cache
	if m.Get(5) != nil {
		t.Error("segment 5 found after Delete")
	}
	segs = segs[:0]
	m.Each(func(s int32, _ *[]int) { segs = append(segs, s) })
	if !slices.Equal(segs, []int32{3, 9}) {
		t.Errorf("Each after deleting 5: %v, want [3 9]", segs)
	}
	if got := *m.Get(3); got[0] != 3 {
		t.Errorf("segment 3: %v", got)
	}
	m.Delete(9) // not the last found (3): found by lookup, and 3 stays found
	if m.Get(9) != nil || m.Len() != 1 {
		t.Errorf("segment 9 deleted: Get %v, Len %d; want nil, 1", m.Get(9), m.Len())
	}
	if got := *m.Get(3); got[0] != 3 {
		t.Errorf("segment 3 after deleting 9: %v", got)
	}
	if v := m.Add(11); len(*v) != 1 || (*v)[0] != 9 { // the entry 9 left, the last freed
		t.Errorf("segment 11: %v, want the [9] segment 9 left", *v)
	}
}
