package kvcr

// The G2 pool as it was kept slot by slot, before it was kept by runs: the
// oracle of TestPoolAgainstSlots. It is kept as it was, bar its names, its
// index (a built-in map by segment and offset instead of the slot index by
// hash) and the discarded slots of writes given up (Discard, TakeOver),
// added with them.

import (
	"errors"
	"fmt"

	"github.com/kvsim/kvsim/block"
)

// slotPool is one worker's G2 host pool of fixed capacity in blocks. Ready
// blocks sit on an LRU list, least recently used first; eviction takes the
// first unpinned one. Filling and pending blocks are never victims. Slots
// are made on first use, so memory follows the blocks a run stores, not the
// capacity.
type slotPool struct {
	names     map[[2]int32]int32  // block name (segment, offset) -> slot
	slots     []block.Node[oslot] // the slots used so far; up to size
	size      int
	lru       block.List[oslot] // the ready blocks, least recently used first
	freeSlots []int32           // released slots, taken before fresh ones, the last first
	evictable int               // ready and unpinned
	peak      int
	// evicted collects the blocks eviction took; KVCR reports and clears it.
	evicted []block.Ref
	chains  *block.Chains // holds a reference on the segment of every slot's block
}

// oslot is one G2 block; its node in slots holds its LRU links beside it.
type oslot struct {
	hash     uint64
	place    uint32 // the hash's place (block.Ref)
	pins     int32
	seg, off int32 // the hash's segment and offset (block.Ref)
	st       state
}

// newSlotPool returns an empty pool of capacity blocks. It holds a reference
// in chains (nil: none) on the segment of each block it holds.
func newSlotPool(capacity int, chains *block.Chains) *slotPool {
	return &slotPool{names: map[[2]int32]int32{}, size: capacity, lru: block.NewList[oslot](), chains: chains}
}

// Used is the number of slots taken (filling, ready or pending).
func (p *slotPool) Used() int { return len(p.slots) - len(p.freeSlots) }

// Peak is the largest Used seen.
func (p *slotPool) Peak() int { return p.peak }

// slot returns r's slot, or -1. The pool keys blocks by name (segment and
// offset in the chain store), which stands for the hash while the pool
// holds the block.
func (p *slotPool) slot(r block.Ref) int32 { return p.get(r.Seg, r.Off) }

// get is the slot of block (seg, off), or -1.
func (p *slotPool) get(seg, off int32) int32 {
	if s, ok := p.names[[2]int32{seg, off}]; ok {
		return s
	}
	return -1
}

// Ready reports whether r is readable.
func (p *slotPool) Ready(r block.Ref) bool {
	s := p.slot(r)
	return s >= 0 && p.slots[s].V.st == ready
}

// Has reports whether r has a slot in any state.
func (p *slotPool) Has(r block.Ref) bool { return p.slot(r) >= 0 }

// ref is slot s's block.
func (p *slotPool) ref(s int32) block.Ref {
	b := &p.slots[s].V
	return block.Ref{Hash: b.hash, Place: b.place, Seg: b.seg, Off: b.off}
}

// Prefix counts the readable blocks of the chain whose path is given from
// index from on, up to index limit or the first that is not readable.
func (p *slotPool) Prefix(path []block.Piece, from, limit int) int {
	n, k := 0, 0
	for _, pc := range path {
		for off := int32(0); off < pc.N; off, k = off+1, k+1 {
			if k < from {
				continue
			}
			if k >= limit {
				return n
			}
			if s := p.get(pc.Seg, off); s < 0 || p.slots[s].V.st != ready {
				return n
			}
			n++
		}
	}
	return n
}

// Room reports whether n slots can be had, counting free slots and
// evictable blocks.
func (p *slotPool) Room(n int) bool { return n <= p.size-len(p.slots)+len(p.freeSlots)+p.evictable }

// take returns a released slot, else a fresh one, else evicts the least
// recently used unpinned ready block (its hash goes to p.evicted) and
// returns its slot. The caller has checked Room.
func (p *slotPool) take() int32 {
	if len(p.freeSlots) == 0 && len(p.slots) < p.size {
		p.slots = block.Grow(p.slots, p.size)
		return int32(len(p.slots) - 1)
	}
	if len(p.freeSlots) == 0 {
		v := p.lru.Head()
		for p.slots[v].V.pins > 0 {
			v = p.slots[v].Next()
		}
		p.evicted = append(p.evicted, p.ref(v))
		p.remove(v)
	}
	s := p.freeSlots[len(p.freeSlots)-1]
	p.freeSlots = p.freeSlots[:len(p.freeSlots)-1]
	return s
}

// Fill reserves a slot for r, which must not be in the pool, in the
// filling state, evicting when full.
func (p *slotPool) Fill(r block.Ref) int32 {
	s := p.take()
	p.peak = max(p.peak, p.Used())
	p.slots[s].V = oslot{hash: r.Hash, place: r.Place, seg: r.Seg, off: r.Off, st: filling}
	p.chains.Acquire(r.Seg)
	p.names[[2]int32{r.Seg, r.Off}] = s
	return s
}

// MakeReady turns a filling slot readable, most recently used.
func (p *slotPool) MakeReady(s int32) {
	p.slots[s].V.st = ready
	p.lru.PushTail(p.slots, s)
	p.evictable++
}

// remove frees a slot in any state.
func (p *slotPool) remove(s int32) {
	if p.slots[s].V.st == ready {
		p.lru.Unlink(p.slots, s)
		if p.slots[s].V.pins == 0 {
			p.evictable--
		}
	}
	delete(p.names, [2]int32{p.slots[s].V.seg, p.slots[s].V.off})
	p.chains.Drop(p.slots[s].V.seg)
	p.slots[s].V = oslot{}
	p.freeSlots = append(p.freeSlots, s)
}

// Drop frees a filling or discarded slot whose data never arrived.
func (p *slotPool) Drop(s int32) { p.remove(s) }

// Discard marks a filling slot of a pull's write as given up.
func (p *slotPool) Discard(s int32) { p.slots[s].V.st = discarded }

// TakeOver gives a discarded slot to a store: filling, for the store.
func (p *slotPool) TakeOver(s int32) { p.slots[s].V.st = filling }

// evictableSlot reports whether eviction may take slot s: ready and
// unpinned.
func (p *slotPool) evictableSlot(s int32) bool {
	return p.slots[s].V.st == ready && p.slots[s].V.pins == 0
}

// Pin keeps a ready or pending block from eviction and removal.
func (p *slotPool) Pin(s int32) {
	if p.evictableSlot(s) {
		p.evictable--
	}
	p.slots[s].V.pins++
}

// Unpin drops a pin; refresh moves a ready block to the most recent end. It
// reports whether the block was removed: a pending block goes with its last
// pin.
func (p *slotPool) Unpin(s int32, refresh bool) bool {
	b := &p.slots[s].V
	b.pins--
	switch {
	case b.st == pending && b.pins == 0:
		p.remove(s)
		return true
	case b.st == ready:
		if b.pins == 0 {
			p.evictable++
		}
		if refresh {
			p.lru.Unlink(p.slots, s)
			p.lru.PushTail(p.slots, s)
		}
	}
	return false
}

// MarkPending makes a ready block absent to readers; it is removed now when
// unpinned, else when its last pin drops. It reports whether it was removed
// now.
func (p *slotPool) MarkPending(s int32) bool {
	if p.slots[s].V.st != ready {
		return false
	}
	if p.slots[s].V.pins == 0 {
		p.remove(s)
		return true
	}
	p.lru.Unlink(p.slots, s)
	p.slots[s].V.st = pending
	return false
}

// Pinned is the total of pins on the pool's blocks.
func (p *slotPool) Pinned() int {
	n := 0
	for _, b := range p.slots {
		n += int(b.V.pins)
	}
	return n
}

// Check verifies the pool's bookkeeping: the index maps each used slot's
// name to it, the LRU list holds exactly the ready blocks, and the
// evictable count matches. O(capacity).
func (p *slotPool) Check() error {
	var errs []error
	readyN, evictable, used := 0, 0, 0
	for s, nd := range p.slots {
		b := nd.V
		if b.st == free {
			continue
		}
		used++
		if p.slot(p.ref(int32(s))) != int32(s) {
			errs = append(errs, fmt.Errorf("slot %d holds %x, which the index maps elsewhere", s, b.hash))
		}
		if b.st == ready {
			readyN++
			if b.pins == 0 {
				evictable++
			}
		}
		if b.pins < 0 {
			errs = append(errs, fmt.Errorf("slot %d has %d pins", s, b.pins))
		}
	}
	listed := 0
	for s := p.lru.Head(); s >= 0; s = p.slots[s].Next() {
		if p.slots[s].V.st != ready {
			errs = append(errs, fmt.Errorf("slot %d on the LRU list is not ready", s))
		}
		listed++
	}
	if listed != readyN || evictable != p.evictable || used != p.Used() || len(p.names) != used {
		errs = append(errs, fmt.Errorf("LRU %d / ready %d, evictable %d / counted %d, used %d / %d, index %d",
			listed, readyN, evictable, p.evictable, used, p.Used(), len(p.names)))
	}
	return errors.Join(errs...)
}

// Visible calls f with every block the router should see in the pool, in
// slot order: the ready ones and those pending removal (announced removed
// only once removed).
func (p *slotPool) Visible(f func(block.Ref)) {
	for s, b := range p.slots {
		if b.V.st == ready || b.V.st == pending {
			f(p.ref(int32(s)))
		}
	}
}
