package u64map

import (
	"math/rand/v2"
	"testing"
)

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
			m.Delete(k)
			delete(ref, k)
		} else {
			m.Put(k, step)
			ref[k] = step
		}
		if m.Len() != len(ref) {
			t.Fatalf("step %d: len %d want %d", step, m.Len(), len(ref))
		}
		if step%97 == 0 {
			for k := uint64(1); k <= 300; k++ {
				got, ok := m.Get(k)
				want, wok := ref[k]
				if ok != wok || got != want {
					t.Fatalf("step %d key %d: %d,%v want %d,%v", step, k, got, ok, want, wok)
				}
			}
		}
	}
}

func TestInsertAndPtr(t *testing.T) {
	var m Map[[]int32]
	if m.Ptr(5) != nil {
		t.Error("empty map has key")
	}
	p := m.Insert(5)
	*p = append(*p, 7)
	if got := *m.Ptr(5); len(got) != 1 || got[0] != 7 {
		t.Errorf("got %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("zero key accepted")
		}
	}()
	m.Put(0, nil)
}

// BenchmarkChurn: a cache of 100k keys where every step evicts one key and
// inserts a new one, then looks one up: the prefix-cache pattern.
func BenchmarkChurn(b *testing.B) {
	var m Map[int32]
	for i := range uint64(100000) {
		m.Put(i*0x9e3779b97f4a7c15|1, int32(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		old := uint64(i)*0x9e3779b97f4a7c15 | 1
		m.Delete(old)
		m.Put(uint64(i+100000)*0x9e3779b97f4a7c15|1, int32(i))
		m.Get(uint64(i+50000)*0x9e3779b97f4a7c15 | 1)
	}
}

func BenchmarkChurnBuiltin(b *testing.B) {
	m := map[uint64]int32{}
	for i := range uint64(100000) {
		m[i*0x9e3779b97f4a7c15|1] = int32(i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		delete(m, uint64(i)*0x9e3779b97f4a7c15|1)
		m[uint64(i+100000)*0x9e3779b97f4a7c15|1] = int32(i)
		_ = m[uint64(i+50000)*0x9e3779b97f4a7c15|1]
	}
}
