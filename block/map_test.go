package block

import (
	"math/rand/v2"
	"testing"
)

// place gives keys places in groups: keys k and k+1 share a group when
// they differ only in their low three bits, as consecutive blocks do.
func place(k uint64) uint32 {
	g := (k >> 3) * 0x9e3779b97f4a7c15
	return uint32(g>>32)&^7 | uint32(k&7)
}

// TestAgainstBuiltin applies a random mix of puts and deletes to a Map and a
// built-in map, with keys from a small range so that probe runs collide,
// wrap around and shift back, and compares every key after each step.
func TestAgainstBuiltin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var m Map[int]
	ref := map[uint64]int{}
	for step := range 20000 {
		k := uint64(1 + r.IntN(300))
		if r.IntN(3) == 0 {
			m.Delete(k, place(k))
			delete(ref, k)
		} else {
			m.Put(k, place(k), step)
			ref[k] = step
		}
		if m.Len() != len(ref) {
			t.Fatalf("step %d: len %d want %d", step, m.Len(), len(ref))
		}
		if step%97 == 0 {
			for k := uint64(1); k <= 300; k++ {
				got, ok := m.Get(k, place(k))
				want, wok := ref[k]
				if ok != wok || got != want {
					t.Fatalf("step %d key %d: %d,%v want %d,%v", step, k, got, ok, want, wok)
				}
			}
		}
	}
}

// TestGroupsShareLines: eight keys of one group occupy one aligned group
// of slots when nothing collides.
func TestGroupsShareLines(t *testing.T) {
	var m Map[int32]
	for k := uint64(64); k < 72; k++ {
		m.Put(k, place(k), 1)
	}
	first := -1
	for i, s := range m.slots {
		if s.key != 0 {
			if first < 0 {
				first = i
			}
			if i-first >= Group || first%Group != 0 {
				t.Fatalf("key %d at slot %d, group starts at %d", s.key, i, first)
			}
		}
	}
}

func TestInsertAndPtr(t *testing.T) {
	var m Map[[]int32]
	if m.Ptr(5, 5) != nil {
		t.Error("empty map has key")
	}
	p := m.Insert(5, 5)
	*p = append(*p, 7)
	if got := *m.Ptr(5, 5); len(got) != 1 || got[0] != 7 {
		t.Errorf("got %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("zero key accepted")
		}
	}()
	m.Put(0, 0, nil)
}

// BenchmarkChurn: a cache of 100k keys where every step evicts one key and
// inserts a new one, then looks one up: the prefix-cache pattern, with
// consecutive keys in groups as consecutive blocks are.
func BenchmarkChurn(b *testing.B) {
	var m Map[int32]
	for i := range uint64(100000) {
		m.Put(i+1, place(i+1), int32(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		old := uint64(i) + 1
		m.Delete(old, place(old))
		k := uint64(i+100000) + 1
		m.Put(k, place(k), int32(i))
		q := uint64(i+50000) + 1
		m.Get(q, place(q))
	}
}

// BenchmarkChurnBuiltin is BenchmarkChurn on Go's built-in map, the
// reference Map must beat to earn its place: compare the two with
// benchstat.
func BenchmarkChurnBuiltin(b *testing.B) {
	m := map[uint64]int32{}
	for i := range uint64(100000) {
		m[i+1] = int32(i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		old := uint64(i) + 1
		delete(m, old)
		m[uint64(i+100000)+1] = int32(i)
		_ = m[uint64(i+50000)+1]
	}
}
