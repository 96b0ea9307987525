package block

import (
	"math/rand/v2"
	"testing"
)

// TestNamesAgainstBuiltin applies random puts, adds and deletes over a few
// segments to Names and to a built-in map of names, in patterns a pool
// makes (runs put in order, deleted from either end, holes in the middle,
// puts before a span's start), and compares every name after each step.
func TestNamesAgainstBuiltin(t *testing.T) {
	type name struct{ seg, off int32 }
	r := rand.New(rand.NewPCG(5, 6))
	tab := NewNames()
	ref := map[name]int32{}
	for step := range 30000 {
		seg, off := int32(r.IntN(6)), int32(r.IntN(40))
		n := name{seg, off}
		_, held := ref[n]
		switch {
		case held && r.IntN(4) == 0:
			if tab.Add(seg, off, int32(step)) {
				t.Fatalf("step %d: Add(%d, %d) of a held name reported absent", step, seg, off)
			}
		case held:
			tab.Delete(seg, off)
			delete(ref, n)
		case r.IntN(2) == 0:
			tab.Put(seg, off, int32(step))
			ref[n] = int32(step)
		default:
			if !tab.Add(seg, off, int32(step)) {
				t.Fatalf("step %d: Add(%d, %d) of an absent name reported held", step, seg, off)
			}
			ref[n] = int32(step)
		}
		if tab.Len() != len(ref) {
			t.Fatalf("step %d: len %d want %d", step, tab.Len(), len(ref))
		}
		if step%53 == 0 {
			for s := int32(-1); s < 7; s++ {
				for o := int32(-2); o < 43; o++ {
					want, ok := ref[name{s, o}]
					if !ok {
						want = -1
					}
					if got := tab.Get(s, o); got != want {
						t.Fatalf("step %d: Get(%d, %d) = %d, want %d", step, s, o, got, want)
					}
				}
			}
		}
	}
}

// TestNamesSpans: a run put in order is one span; deleting from its ends
// trims it, a hole stays inside it, and an emptied segment leaves the
// table, its span reused by the next segment.
func TestNamesSpans(t *testing.T) {
	tab := NewNames()
	for off := int32(3); off < 8; off++ {
		tab.Put(9, off, 100+off)
	}
	if sp := tab.spans[tab.span(9)]; sp.lo != 3 || len(sp.vals) != 5 {
		t.Fatalf("span lo %d len %d, want 3, 5", sp.lo, len(sp.vals))
	}
	tab.Delete(9, 7) // tail first, as a released run is evicted
	tab.Delete(9, 3)
	tab.Delete(9, 5)
	if sp := tab.spans[tab.span(9)]; sp.lo != 4 || len(sp.vals) != 3 || tab.Get(9, 5) != -1 || tab.Get(9, 6) != 106 {
		t.Fatalf("span lo %d len %d, Get(9,5) %d Get(9,6) %d", sp.lo, len(sp.vals), tab.Get(9, 5), tab.Get(9, 6))
	}
	tab.Put(9, 1, 1) // before the span
	if tab.Get(9, 1) != 1 || tab.Get(9, 4) != 104 || tab.Get(9, 2) != -1 {
		t.Fatalf("front growth lost a value")
	}
	for _, off := range []int32{1, 4, 6} {
		tab.Delete(9, off)
	}
	if tab.Len() != 0 || tab.segs.Len() != 0 || len(tab.spare) != 1 || tab.Get(9, 6) != -1 {
		t.Fatalf("len %d, segments %d, spare %d", tab.Len(), tab.segs.Len(), len(tab.spare))
	}
	tab.Put(2, 0, 7)
	if len(tab.spans) != 1 || tab.Get(2, 0) != 7 {
		t.Fatalf("spans %d, want the freed one reused", len(tab.spans))
	}
}

// churnName is block i of a run of chains of 64 blocks, one segment each.
func churnName(i int) (int32, int32) { return int32(i / 64), int32(i % 64) }

// BenchmarkNamesChurn is a pool's index in steady churn, as
// BenchmarkChurn: 100,000 blocks of chains of 64, each step forgetting
// the oldest block, adding a new one and looking one up in the middle.
func BenchmarkNamesChurn(b *testing.B) {
	t := NewNames()
	for i := range 100000 {
		s, o := churnName(i)
		t.Put(s, o, int32(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, o := churnName(i)
		t.Delete(s, o)
		s, o = churnName(i + 100000)
		t.Put(s, o, int32(i))
		s, o = churnName(i + 50000)
		t.Get(s, o)
	}
}

// BenchmarkNamesChurnHashed is BenchmarkNamesChurn on a Map keyed by block
// hash, as the pools were indexed before Names.
func BenchmarkNamesChurnHashed(b *testing.B) {
	var m Map[int32]
	key := func(i int) (uint64, uint32) { k := Mix(uint64(i) + 1); return k, place(uint64(i) + 1) }
	for i := range 100000 {
		k, p := key(i)
		m.Put(k, p, int32(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k, p := key(i)
		m.Delete(k, p)
		k, p = key(i + 100000)
		m.Put(k, p, int32(i))
		k, p = key(i + 50000)
		m.Get(k, p)
	}
}

// BenchmarkNamesChurnBuiltin is BenchmarkNamesChurn on Go's built-in map
// keyed by name, the reference Names must beat to earn its place.
func BenchmarkNamesChurnBuiltin(b *testing.B) {
	type name struct{ seg, off int32 }
	m := map[name]int32{}
	for i := range 100000 {
		s, o := churnName(i)
		m[name{s, o}] = int32(i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, o := churnName(i)
		delete(m, name{s, o})
		s, o = churnName(i + 100000)
		m[name{s, o}] = int32(i)
		s, o = churnName(i + 50000)
		_ = m[name{s, o}]
	}
}
