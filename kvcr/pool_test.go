package kvcr

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// r is block h as a ref with a place and name of its own (offset h of
// segment 0).
func r(h uint64) block.Ref { return block.Ref{Hash: h, Place: uint32(h), Off: int32(h)} }

// hashes lists refs' hashes.
func hashes(rs []block.Ref) []uint64 {
	var out []uint64
	for _, x := range rs {
		out = append(out, x.Hash)
	}
	return out
}

// TestPoolEviction: a pool of 4 with blocks 1-4 stored in order (1 least
// recently used). 1 is pinned; 2 is pinned and moved (pending). Filling 5
// and 6 evicts the least recent unpinned ready blocks, 3 then 4. With the
// slots holding 1 (pinned), 2 (pending), 5 and 6 (filling) there is no room;
// once 6 is ready there is.
func TestPoolEviction(t *testing.T) {
	p := NewPool(4, nil)
	for h := uint64(1); h <= 4; h++ {
		p.MakeReady(p.Fill(r(h)))
	}
	p.Pin(p.slot(r(1)))
	p.Pin(p.slot(r(2)))
	if p.MarkPending(p.slot(r(2))) || p.Ready(r(2)) || !p.Has(r(2)) {
		t.Fatal("pinned block removed at once, or still readable")
	}
	p.Fill(r(5)) // evicts 3: 1 pinned, 2 pending
	f6 := p.Fill(r(6))
	if !slices.Equal(hashes(p.evicted), []uint64{3, 4}) {
		t.Errorf("evicted %v, want [3 4]", hashes(p.evicted))
	}
	if p.Room(1) {
		t.Error("room with every block pinned, pending or filling")
	}
	p.MakeReady(f6)
	if !p.Room(1) {
		t.Error("no room with block 6 ready and unpinned")
	}
	if !p.Unpin(p.slot(r(2)), false) || p.Has(r(2)) {
		t.Error("pending block kept after its last pin")
	}
	if p.Peak() != 4 || p.Used() != 3 {
		t.Errorf("peak %d used %d", p.Peak(), p.Used())
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
}

// TestPoolRefresh: unpinning with refresh moves a block to the most recent
// end; without, it keeps its place.
func TestPoolRefresh(t *testing.T) {
	p := NewPool(3, nil)
	for h := uint64(1); h <= 3; h++ {
		p.MakeReady(p.Fill(r(h)))
	}
	p.Pin(p.slot(r(1)))
	p.Unpin(p.slot(r(1)), true) // 1 is now most recent
	p.Pin(p.slot(r(2)))
	p.Unpin(p.slot(r(2)), false) // 2 stays least recent
	p.Fill(r(4))
	p.Fill(r(5))
	if !slices.Equal(hashes(p.evicted), []uint64{2, 3}) {
		t.Errorf("evicted %v, want [2 3]", hashes(p.evicted))
	}
}

// BenchmarkG2Pool measures the G2 pool's LRU work: a full pool of 4096
// ready blocks in steady churn. Each step loads a block from somewhere in
// the list (a pin, then an unpin with refresh: unlink and push to the tail)
// and stores a new block (the fill evicts the head; the new block becomes
// ready at the tail).
func BenchmarkG2Pool(b *testing.B) {
	const n = 4096
	p := NewPool(n, nil)
	ref := func(h uint64) block.Ref { // chains of 64 blocks, one segment each
		return block.Ref{Hash: h, Place: uint32(block.Mix(h)), Seg: int32(h / 64), Off: int32(h % 64)}
	}
	h := uint64(0)
	for range n {
		h++
		p.MakeReady(p.Fill(ref(h)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := int32(uint32(i) * 2654435761 % n) // ready, at a scattered place in the list
		p.Pin(s)
		p.Unpin(s, true)
		h++
		p.MakeReady(p.Fill(ref(h)))
		p.evicted = p.evicted[:0]
	}
	b.StopTimer()
	if p.Used() != n || p.evictable != n {
		b.Fatalf("%d used, %d evictable; want %d", p.Used(), p.evictable, n)
	}
}
