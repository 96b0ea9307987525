package kvcr

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// hashes lists the hashes of the blocks of runs in testChains, each run's
// in ascending order.
func hashes(runs []block.Run) []uint64 {
	var out []uint64
	for _, r := range runs {
		out = append(out, testChains.Hashes(r.Seg)[r.Lo:r.Hi]...)
	}
	return out
}

// blockRun is block h of the chain 1, 2, ... (hash h) as a run of one.
func blockRun(h uint64) block.Run { return runOf(at(chain(1, 16), int(h-1))) }

// storeRun fills blocks [from, to] of the chain 1, 2, ... in p as one run
// and makes them ready.
func storeRun(p *Pool, from, to uint64) {
	r := blockRun(from)
	r.Hi = r.Lo + int32(to-from+1)
	p.fill(r)
	p.makeReady(r)
}

// TestPoolEviction: a pool of 4 with blocks 1-4 stored in order, as one
// run (1 least recently used). 1 is pinned; 2 is pinned and moved
// (pending). Filling 5 and 6 evicts the least recent unpinned ready blocks,
// 3 then 4. With the pool holding 1 (pinned), 2 (pending), 5 and 6
// (filling) there is no room; once 6 is ready there is.
func TestPoolEviction(t *testing.T) {
	p := NewPool(4, testChains)
	storeRun(p, 1, 4)
	p.pin(blockRun(1))
	p.pin(blockRun(2))
	if _, gone, ready := p.markPending(blockRun(2), nil); gone != 0 || ready != 1 || p.Ready(at(chain(1, 2), 1)) || !p.Has(at(chain(1, 2), 1)) {
		t.Fatal("pinned block removed at once, not counted as ready when marked, or still readable")
	}
	p.fill(blockRun(5)) // evicts 3: 1 pinned, 2 pending
	p.fill(blockRun(6))
	if !slices.Equal(hashes(p.evicted), []uint64{3, 4}) {
		t.Errorf("evicted %v, want [3 4]", hashes(p.evicted))
	}
	if p.Room(1) {
		t.Error("room with every block pinned, pending or filling")
	}
	p.makeReady(blockRun(6))
	if !p.Room(1) {
		t.Error("no room with block 6 ready and unpinned")
	}
	if removed, gone := p.unpin(blockRun(2), false, nil); gone != 1 || !slices.Equal(hashes(removed), []uint64{2}) || p.Has(at(chain(1, 2), 1)) {
		t.Error("pending block kept after its last pin")
	}
	if p.Peak() != 4 || p.Used() != 3 {
		t.Errorf("peak %d used %d", p.Peak(), p.Used())
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
}

// TestPoolFlows: a pool counts what came in and went out by cause, and
// its check holds them to its used count. A pool of 4: a store of blocks
// 1-3 (3 stored), made ready; a pull's 4-5 reserved (2 pulled in), which
// evicts the least recent, 1 (1 evicted): 4-5 are filling. The pull lands
// nothing and 4-5 are dropped (2 dropped). A move takes 2 away at once (1
// moved) and 3, pinned, pending: 1 unreadable, pending. Its last pin
// drops and it goes (2 moved): 3 + 2 - 1 - 2 - 2 = 0 used. Miscounting a
// store breaks the check.
func TestPoolFlows(t *testing.T) {
	p := NewPool(4, testChains)
	r := blockRun(1)
	r.Hi = r.Lo + 3
	p.store(r, nil)
	p.makeReady(r)
	pulled := blockRun(4)
	pulled.Hi++
	p.fill(pulled)
	if fills, pends := p.Unreadable(); fills != 2 || pends != 0 || !slices.Equal(hashes(p.evicted), []uint64{1}) {
		t.Errorf("%d filling, %d pending, evicted %v; want 2, 0, [1]", fills, pends, hashes(p.evicted))
	}
	p.drop(pulled)
	p.pin(blockRun(3))
	p.markPending(blockRun(2), nil)
	p.markPending(blockRun(3), nil)
	if fills, pends := p.Unreadable(); fills != 0 || pends != 1 {
		t.Errorf("%d filling, %d pending; want 0, 1", fills, pends)
	}
	p.unpin(blockRun(3), false, nil)
	if f := p.Flows(); f != (Flows{Stored: 3, Pulled: 2, Evicted: 1, Dropped: 2, Moved: 2}) || p.Used() != 0 {
		t.Errorf("flows %+v, used %d", f, p.Used())
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
	p.flows.Stored++
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "used 0, but 4 stored + 2 pulled in - 1 evicted - 2 dropped - 2 moved away = 1") {
		t.Errorf("a miscounted store: %v", err)
	}
}

// TestPoolStoreTakesOverDiscarded (rule: a store takes over a block whose
// slot a pull's target gave up on; a block filling for a live write or a
// store is skipped). A pool of 8: a store of blocks 1-2, ready (2 stored).
// Pull A reserves 3-6 and pull B 7 (5 pulled in): 7 held. A's target
// gives up while A's write runs: 3-6 discarded, still held and unreadable
// (5 filling or discarded). A store of 1-4, the blocks the request
// recomputed: 1-2 ready, skipped; 3-4 taken over in place (2 stored, and
// 2 of A's reservation dropped): no slot taken, nothing evicted, none
// dropped, 7 held. A store of 7-8: 7 fills for B, a live write that will
// land it: skipped; 8 is free: reserved (1 stored), 8 held. The stores
// land: LRU 1 2 3 4 8. A's write ends: it frees what it still holds, 3-6
// less the 3-4 taken over, so 5-6 (2 dropped): 6 held. B lands: LRU 1 2 3
// 4 8 7. Flows: 5 stored + 5 pulled in - 4 dropped = 6 held. (Before, the
// store skipped 3-4 and A's end freed them: 1-4 never became ready.)
func TestPoolStoreTakesOverDiscarded(t *testing.T) {
	p := NewPool(8, testChains)
	run := func(from, to uint64) block.Run {
		r := blockRun(from)
		r.Hi = r.Lo + int32(to-from+1)
		return r
	}
	p.store(run(1, 2), nil)
	p.makeReady(run(1, 2))
	a, b := run(3, 6), run(7, 7)
	p.fill(a)
	p.fill(b)
	p.discard(a)
	if fills, _ := p.Unreadable(); fills != 5 || p.Ready(at(chain(1, 16), 2)) {
		t.Errorf("%d filling or discarded, block 3 ready %v; want 5, false", fills, p.Ready(at(chain(1, 16), 2)))
	}
	filled, dropped := p.store(run(1, 4), nil)
	if !slices.Equal(hashes(filled), []uint64{3, 4}) || dropped != 0 || !slices.Equal(hashes(p.taken), []uint64{3, 4}) || p.Used() != 7 {
		t.Errorf("store 1-4: filled %v, dropped %d, taken over %v, used %d; want [3 4], 0, [3 4], 7",
			hashes(filled), dropped, hashes(p.taken), p.Used())
	}
	left := cut([]block.Run{a}, p.taken[0])
	p.taken = p.taken[:0]
	filled2, dropped := p.store(run(7, 8), nil)
	if !slices.Equal(hashes(filled2), []uint64{8}) || dropped != 0 || len(p.taken) != 0 || p.Used() != 8 {
		t.Errorf("store 7-8: filled %v, dropped %d, taken over %v, used %d; want [8], 0, [], 8",
			hashes(filled2), dropped, hashes(p.taken), p.Used())
	}
	for _, r := range append(filled, filled2...) {
		p.makeReady(r)
	}
	if got := lruHashes(p); !slices.Equal(got, []uint64{1, 2, 3, 4, 8}) {
		t.Errorf("LRU %v, want [1 2 3 4 8]", got)
	}
	if !slices.Equal(hashes(left), []uint64{5, 6}) {
		t.Fatalf("A still holds %v, want [5 6]", hashes(left))
	}
	for _, r := range left {
		p.drop(r)
	}
	p.makeReady(b)
	if got := lruHashes(p); !slices.Equal(got, []uint64{1, 2, 3, 4, 8, 7}) || p.Has(at(chain(1, 16), 4)) || p.Has(at(chain(1, 16), 5)) {
		t.Errorf("LRU %v, want [1 2 3 4 8 7]; 5 held %v, 6 held %v", got, p.Has(at(chain(1, 16), 4)), p.Has(at(chain(1, 16), 5)))
	}
	if f := p.Flows(); f != (Flows{Stored: 5, Pulled: 5, Dropped: 4}) || p.Used() != 6 || len(p.evicted) != 0 {
		t.Errorf("flows %+v, used %d, evicted %v; want 5 stored, 5 pulled, 4 dropped, 6 used, none", f, p.Used(), hashes(p.evicted))
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
}

// TestCut: cut takes a run's blocks out of a list of runs, splitting the
// one it falls inside and leaving other segments alone.
func TestCut(t *testing.T) {
	r := func(seg, lo, hi int32) block.Run { return block.Run{Seg: seg, Lo: lo, Hi: hi} }
	for _, c := range []struct {
		runs []block.Run
		t    block.Run
		want []block.Run
	}{
		{[]block.Run{r(1, 0, 8)}, r(1, 2, 4), []block.Run{r(1, 0, 2), r(1, 4, 8)}},
		{[]block.Run{r(1, 0, 4), r(2, 0, 4)}, r(2, 0, 4), []block.Run{r(1, 0, 4)}},
		{[]block.Run{r(1, 0, 4), r(2, 0, 4)}, r(3, 0, 4), []block.Run{r(1, 0, 4), r(2, 0, 4)}},
		{[]block.Run{r(1, 0, 4), r(1, 6, 9)}, r(1, 3, 7), []block.Run{r(1, 0, 3), r(1, 7, 9)}},
		{[]block.Run{r(1, 0, 4)}, r(1, 0, 4), nil},
	} {
		if got := cut(slices.Clone(c.runs), c.t); !slices.Equal(got, c.want) {
			t.Errorf("cut(%v, %v) = %v, want %v", c.runs, c.t, got, c.want)
		}
	}
}

// TestPoolCheckFindsCorruption: blocks 1-4 stored as one ready run in a
// pool of 8 (the check passes); then, each on a fresh pool, the used count
// one too many, a pin the evictable count never heard of, the run made
// pending while still on the LRU list, and a pin on block 5 while it is
// filling. Check reports each, and sim reports what it reports as the
// invariant "G2 pool accounting balances".
func TestPoolCheckFindsCorruption(t *testing.T) {
	for _, c := range []struct {
		plant func(p *Pool, e int32)
		want  string
	}{
		{func(p *Pool, _ int32) { p.used++ }, "used 4 / counted 5"},
		{func(p *Pool, e int32) { p.ext[e].V.pins++ }, "evictable 0 / counted 4"},
		{func(p *Pool, e int32) { p.ext[e].V.st = pending }, "on the LRU list is not ready"},
		{func(p *Pool, _ int32) { // a pin on a block still filling: nothing reads it before it lands
			p.fill(blockRun(5))
			p.ext[p.find(blockRun(5).Seg, blockRun(5).Lo)].V.pins++
		}, "1 blocks, state 1, 1 pins"},
	} {
		p := NewPool(8, testChains)
		storeRun(p, 1, 4)
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
		e := p.find(blockRun(1).Seg, blockRun(1).Lo)
		c.plant(p, e)
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestPoolRefresh: unpinning with refresh moves a block to the most recent
// end; without, it keeps its place. Blocks 1-3 are one run; 1 refreshed
// leaves 2 3 1; filling 4 and 5 evicts 2 and 3.
func TestPoolRefresh(t *testing.T) {
	p := NewPool(3, testChains)
	storeRun(p, 1, 3)
	p.pin(blockRun(1))
	p.unpin(blockRun(1), true, nil) // 1 is now most recent
	p.pin(blockRun(2))
	p.unpin(blockRun(2), false, nil) // 2 stays least recent
	p.fill(blockRun(4))
	p.fill(blockRun(5))
	if !slices.Equal(hashes(p.evicted), []uint64{2, 3}) {
		t.Errorf("evicted %v, want [2 3]", hashes(p.evicted))
	}
}

// TestPoolRuns: blocks 1-8 stored as one run are one extent. Pinning 3-5
// splits it in three (1-2, 3-5 pinned, 6-8); unpinning 3-5 without refresh
// joins them again. Pinning 4 and unpinning it with refresh leaves 1-3,
// 5-8, 4 on the LRU list (three extents); filling 9-13 with a pool of 10
// evicts the three least recent unpinned blocks: 1, 2, 3. The pool is then
// full, with 5 ready blocks (5-8, 4) to evict. Storing 2-6 fills 2 and 3,
// evicting 5 and 6; skips 4; and, as a store goes block by block, finds 5
// and 6 gone and fills them too, evicting 7 and 8.
func TestPoolRuns(t *testing.T) {
	p := NewPool(10, testChains)
	storeRun(p, 1, 8)
	extents := func() int { return len(p.ext) - len(p.spare) }
	if extents() != 1 {
		t.Fatalf("%d extents after one block.Run, want 1", extents())
	}
	r := blockRun(3)
	r.Hi = r.Lo + 3
	p.pin(r)
	if extents() != 3 || p.evictable != 5 {
		t.Errorf("%d extents, %d evictable after a pin in the middle; want 3, 5", extents(), p.evictable)
	}
	p.unpin(r, false, nil)
	if extents() != 1 || p.evictable != 8 {
		t.Errorf("%d extents, %d evictable after the unpin; want 1, 8", extents(), p.evictable)
	}
	p.pin(blockRun(4))
	p.unpin(blockRun(4), true, nil)
	if extents() != 3 {
		t.Errorf("%d extents after a refresh in the middle, want 3", extents())
	}
	r = blockRun(9)
	r.Hi = r.Lo + 5
	p.fill(r) // 8 held + 5 = 13: evicts 3
	if !slices.Equal(hashes(p.evicted), []uint64{1, 2, 3}) || p.Used() != 10 {
		t.Errorf("evicted %v, used %d; want [1 2 3], 10", hashes(p.evicted), p.Used())
	}
	p.evicted = p.evicted[:0]
	r = blockRun(2)
	r.Hi = r.Lo + 5
	filled, dropped := p.store(r, nil)
	if seg := blockRun(2).Seg; !slices.Equal(filled, []block.Run{{Seg: seg, Lo: 1, Hi: 3}, {Seg: seg, Lo: 4, Hi: 6}}) || dropped != 0 || !slices.Equal(hashes(p.evicted), []uint64{5, 6, 7, 8}) {
		t.Errorf("filled %v, dropped %d, evicted %v; want 2-3 and 5-6 filled, 5-8 evicted", filled, dropped, hashes(p.evicted))
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
}

// lruHashes lists the hashes of p's ready blocks, least recently used
// first.
func lruHashes(p *Pool) []uint64 {
	var rs []block.Run
	for e := p.lru.Head(); e >= 0; e = p.ext[e].Next() {
		rs = append(rs, p.ext[e].V.Run)
	}
	return hashes(rs)
}

// TestPoolSourceRefresh: a pool of 8 holds blocks 1-6 (one run, 1 least
// recent). A pull's source pins 2-5; another pull pins 4 and a move marks
// it pending. The first pull ends, refreshing its blocks as one cohort in
// chain order: 4 keeps a pin and stays pending, 2, 3 and 5 go to the tail
// in that order, so the LRU list is 1 6 2 3 5. The second pull's unpin
// then removes 4. With 5 blocks held, filling 6 more evicts the 3 least
// recent: 1, 6, 2.
func TestPoolSourceRefresh(t *testing.T) {
	p := NewPool(8, testChains)
	storeRun(p, 1, 6)
	pull := blockRun(2)
	pull.Hi = pull.Lo + 4 // blocks 2-5
	p.pin(pull)
	p.pin(blockRun(4))
	p.markPending(blockRun(4), nil)
	removed, gone := p.unpin(pull, true, nil)
	if gone != 0 || len(removed) != 0 || !slices.Equal(lruHashes(p), []uint64{1, 6, 2, 3, 5}) {
		t.Errorf("removed %v, LRU %v; want none, [1 6 2 3 5]", hashes(removed), lruHashes(p))
	}
	if removed, gone = p.unpin(blockRun(4), false, nil); gone != 1 || !slices.Equal(hashes(removed), []uint64{4}) {
		t.Errorf("removed %v, want [4]", hashes(removed))
	}
	r := blockRun(7)
	r.Hi = r.Lo + 6
	p.fill(r)
	if !slices.Equal(hashes(p.evicted), []uint64{1, 6, 2}) || p.Used() != 8 || p.Peak() != 8 {
		t.Errorf("evicted %v, used %d, peak %d; want [1 6 2], 8, 8", hashes(p.evicted), p.Used(), p.Peak())
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
}

// BenchmarkG2Pool measures the G2 pool's LRU work: a full pool of 4096
// ready blocks in steady churn. Each step loads a block from somewhere in
// the pool (a pin, then an unpin with refresh: the block's extent splits
// and the block moves to the tail) and stores a new block (the fill evicts
// the head; the new block becomes ready at the tail, joining the block
// before it when that was stored last), in the pool kept by runs and in
// the slot-by-slot pool it replaced: single blocks, the case runs cannot
// help. Blocks come from a ring of names, long evicted when they come
// round again.
func BenchmarkG2Pool(b *testing.B) {
	const n, ring = 4096, 4 * 4096
	chains := &block.Chains{}
	for i := range ring / 64 { // chains of 64 blocks, one segment each
		c := make([]uint64, 64)
		for k := range c {
			c[k] = uint64(i*64 + k + 1)
		}
		chains.Intern(block.Hashed(c), nil)
	}
	name := func(h int) block.Run {
		return block.Run{Seg: int32(h % ring / 64), Lo: int32(h % 64), Hi: int32(h%64) + 1}
	}
	ref := func(r block.Run) block.Ref { return block.Ref{Seg: r.Seg, Off: r.Lo} }
	b.Run("runs", func(b *testing.B) {
		p := NewPool(n, chains)
		h := 0
		for ; h < n; h++ {
			p.fill(name(h))
			p.makeReady(name(h))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := name(h - 1 - int(uint32(i)*2654435761%n)) // at a scattered place in the list, when still held
			if p.Ready(ref(r)) {
				p.pin(r)
				p.unpin(r, true, nil)
			}
			p.fill(name(h))
			p.makeReady(name(h))
			h++
			p.evicted = p.evicted[:0]
		}
	})
	b.Run("slots", func(b *testing.B) {
		o := newSlotPool(n, chains)
		h := 0
		for ; h < n; h++ {
			o.MakeReady(o.Fill(ref(name(h))))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := ref(name(h - 1 - int(uint32(i)*2654435761%n)))
			if o.Ready(r) {
				s := o.slot(r)
				o.Pin(s)
				o.Unpin(s, true)
			}
			o.MakeReady(o.Fill(ref(name(h))))
			h++
			o.evicted = o.evicted[:0]
		}
	})
}

// BenchmarkG2PoolRuns measures run-shaped churn, as a conversation's turns
// make it, in the pool kept by runs and in the slot-by-slot pool it
// replaced: a full pool of 4096 ready blocks, each step storing a run of
// 32 new blocks (evicting as many from the head; they become ready at the
// tail) and loading 16 blocks of one of the last 128 runs stored, when
// still held (a pin, then an unpin with refresh). ns/op is per step.
func BenchmarkG2PoolRuns(b *testing.B) {
	const n, store, load, ring = 4096, 32, 16, 2048
	chains := &block.Chains{}
	for i := range ring / 2 { // a ring of names, two runs to a chain of 64 blocks: a run is long evicted when its name comes round again
		c := make([]uint64, 64)
		for k := range c {
			c[k] = uint64(i*64 + k + 1)
		}
		chains.Intern(block.Hashed(c), nil)
	}
	stored := 0
	var runs []block.Run // the runs stored
	newRun := func() block.Run {
		runs = append(runs, block.Run{Seg: int32(stored % ring / 2), Lo: int32(stored % 2 * store), Hi: int32(stored%2*store) + store})
		stored++
		return runs[len(runs)-1]
	}
	for _, kind := range []string{"runs", "slots"} {
		b.Run(kind, func(b *testing.B) {
			p, o := NewPool(n, chains), newSlotPool(n, chains)
			runs, stored = runs[:0], 0
			step := func(i int) {
				if len(runs) == ring {
					runs = append(runs[:0], runs[ring-n/store:]...)
				}
				r := newRun()
				lr := runs[len(runs)-1-int(uint32(i)*2654435761%uint32(min(len(runs), n/store)))]
				lr.Lo += 8
				lr.Hi = lr.Lo + load
				if kind == "runs" {
					p.fill(r)
					p.makeReady(r)
					if p.notReady(lr) < 0 {
						p.pin(lr)
						p.unpin(lr, true, nil)
					}
					p.evicted = p.evicted[:0]
					return
				}
				var ss [store]int32
				for off := r.Lo; off < r.Hi; off++ {
					ss[off-r.Lo] = o.Fill(block.Ref{Seg: r.Seg, Off: off})
				}
				for _, s := range ss {
					o.MakeReady(s)
				}
				if o.Prefix([]block.Piece{{Seg: lr.Seg, N: lr.Hi}}, int(lr.Lo), int(lr.Hi)) == load {
					for off := lr.Lo; off < lr.Hi; off++ {
						o.Pin(o.slot(block.Ref{Seg: lr.Seg, Off: off}))
					}
					for off := lr.Lo; off < lr.Hi; off++ {
						o.Unpin(o.slot(block.Ref{Seg: lr.Seg, Off: off}), true)
					}
				}
				o.evicted = o.evicted[:0]
			}
			for i := range n / store {
				step(i)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step(i)
			}
		})
	}
}
