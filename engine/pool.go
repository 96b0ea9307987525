package engine

import "github.com/kvsim/kvsim/block"

// blockPool is the G1 block pool: reference-counted blocks, a prefix cache
// from chained hash to block, and an LRU free list. A freed block keeps its
// hash and can still be hit until allocation reuses it (vLLM V1's
// BlockPool and FreeKVCacheBlockQueue). vLLM's queue starts with every
// block in id order, and a block never used has no hash, so it never
// leaves the queue but from the head: the queue is always the blocks never
// used, in id order, then the released ones. Blocks are therefore made on
// first use, and memory follows the blocks a run touches, not the
// capacity.
type blockPool struct {
	blocks []g1Block // the blocks used so far; ids len(blocks)..size-1 are fresh
	size   int
	head   int32 // released blocks, least recently first; head is the next victim once no block is fresh
	tail   int32
	nfree  int              // fresh and released blocks
	refsum int              // sum of refs, kept for the cheap invariant check
	cached block.Map[int32] // hash -> block + 1 (0: absent)
	// evicted collects the cached blocks that allocation reused: they left
	// the prefix cache. The worker reports and clears it.
	evicted []block.Ref
}

// g1Block is one G1 block; its fields share a cache line.
type g1Block struct {
	hash       uint64 // 0: not in the prefix cache
	place      uint32 // the hash's place (block.Ref)
	refs       int32
	prev, next int32 // free-list links; -1 none
}

func newBlockPool(n int) *blockPool {
	return &blockPool{size: n, nfree: n, head: -1, tail: -1}
}

func (p *blockPool) capacity() int { return p.size }
func (p *blockPool) free() int     { return p.nfree }
func (p *blockPool) used() int     { return p.size - p.nfree }

func (p *blockPool) pushTail(b int32) {
	p.blocks[b].prev, p.blocks[b].next = p.tail, -1
	if p.tail >= 0 {
		p.blocks[p.tail].next = b
	} else {
		p.head = b
	}
	p.tail = b
	p.nfree++
}

func (p *blockPool) unlink(b int32) {
	blk := &p.blocks[b]
	if blk.prev >= 0 {
		p.blocks[blk.prev].next = blk.next
	} else {
		p.head = blk.next
	}
	if blk.next >= 0 {
		p.blocks[blk.next].prev = blk.prev
	} else {
		p.tail = blk.prev
	}
	p.nfree--
}

// lookup returns the block caching r, or -1.
func (p *blockPool) lookup(r block.Ref) int32 {
	b, _ := p.cached.Get(r.Hash, r.Place)
	return b - 1
}

// touch takes a reference on a cached block, taking it off the free list
// when it was free.
func (p *blockPool) touch(b int32) {
	if p.blocks[b].refs == 0 {
		p.unlink(b)
	}
	p.blocks[b].refs++
	p.refsum++
}

// alloc takes the next fresh block, or else the least recently freed one,
// evicting its cached hash. The caller has checked free() > 0.
func (p *blockPool) alloc() int32 {
	if len(p.blocks) < p.size {
		p.blocks = append(p.blocks, g1Block{refs: 1, prev: -1, next: -1})
		p.nfree--
		p.refsum++
		return int32(len(p.blocks) - 1)
	}
	b := p.head
	p.unlink(b)
	blk := &p.blocks[b]
	if h := blk.hash; h != 0 {
		p.cached.Delete(h, blk.place)
		blk.hash = 0
		p.evicted = append(p.evicted, block.Ref{Hash: h, Place: blk.place})
	}
	blk.refs = 1
	p.refsum++
	return b
}

// release drops one reference; a block whose count reaches zero goes to the
// tail of the free list, keeping its hash.
func (p *blockPool) release(b int32) {
	p.blocks[b].refs--
	p.refsum--
	if p.blocks[b].refs == 0 {
		p.pushTail(b)
	}
}

// commit enters a full block into the prefix cache under r. It reports
// false when another block already caches that hash (vLLM keeps the first).
func (p *blockPool) commit(b int32, r block.Ref) bool {
	slot := p.cached.Insert(r.Hash, r.Place)
	if *slot != 0 {
		return false
	}
	*slot = b + 1
	p.blocks[b].hash, p.blocks[b].place = r.Hash, r.Place
	return true
}
