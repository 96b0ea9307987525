package engine

import "github.com/kvsim/kvsim/block"

// The per-block G1 pool the run pool replaced, kept as the oracle of its
// differential test (pool_test.go): vLLM V1's BlockPool block by block.

// oraclePool is the G1 block pool block by block: reference-counted blocks, a prefix cache
// from block name (segment and offset in the chain store, which stands for
// the chained hash) to block, and an LRU free list. A freed block keeps its
// hash and can still be hit until allocation reuses it (vLLM V1's
// BlockPool and FreeKVCacheBlockQueue). vLLM's queue starts with every
// block in id order, and a block never used has no hash, so it never
// leaves the queue but from the head: the queue is always the blocks never
// used, in id order, then the released ones. Blocks are therefore made on
// first use, and memory follows the blocks a run touches, not the
// capacity.
type oraclePool struct {
	blocks []block.Node[oracleBlock] // the blocks used so far; ids len(blocks)..size-1 are fresh
	size   int
	// queue holds the released blocks, least recently first; its head is
	// the next victim once no block is fresh.
	queue  block.List[oracleBlock]
	nfree  int                // fresh and released blocks
	refsum int                // sum of refs, kept for the cheap invariant check
	cached map[[2]int32]int32 // block name (segment, offset) -> block
	// evicted collects the cached blocks that allocation reused: they left
	// the prefix cache. The worker reports and clears it.
	evicted []block.Ref
	chains  *block.Chains // holds a reference on the segment of every cached block
}

// oracleBlock is one G1 block; its node in blocks holds its free-queue links
// beside it.
type oracleBlock struct {
	hash     uint64 // 0: not in the prefix cache
	place    uint32 // the hash's place (block.Ref)
	refs     int32
	seg, off int32 // the hash's segment and offset (block.Ref)
}

// ref is the cached block's Ref.
func (b *oracleBlock) ref() block.Ref {
	return block.Ref{Hash: b.hash, Place: b.place, Seg: b.seg, Off: b.off}
}

func newOraclePool(n int, chains *block.Chains) *oraclePool {
	return &oraclePool{size: n, nfree: n, queue: block.NewList[oracleBlock](), cached: map[[2]int32]int32{}, chains: chains}
}

func (p *oraclePool) free() int { return p.nfree }

// hitPrefix appends to hits the blocks caching the leading blocks of the
// chain whose path is given, up to limit blocks or the first not cached.
func (p *oraclePool) hitPrefix(path []block.Piece, limit int, hits []int32) []int32 {
	for _, pc := range path {
		for off := int32(0); off < pc.N; off++ {
			if len(hits) == limit {
				return hits
			}
			b, ok := p.cached[[2]int32{pc.Seg, off}]
			if !ok {
				return hits
			}
			hits = append(hits, b)
		}
	}
	return hits
}

// touch takes a reference on a cached block, taking it off the free list
// when it was free.
func (p *oraclePool) touch(b int32) {
	if p.blocks[b].V.refs == 0 {
		p.queue.Unlink(p.blocks, b)
		p.nfree--
	}
	p.blocks[b].V.refs++
	p.refsum++
}

// alloc takes the next fresh block, or else the least recently freed one,
// evicting its cached hash. The caller has checked free() > 0.
func (p *oraclePool) alloc() int32 {
	if len(p.blocks) < p.size {
		p.blocks = block.Grow(p.blocks, p.size)
		p.blocks[len(p.blocks)-1].V.refs = 1
		p.nfree--
		p.refsum++
		return int32(len(p.blocks) - 1)
	}
	b := p.queue.Head()
	p.queue.Unlink(p.blocks, b)
	p.nfree--
	blk := &p.blocks[b].V
	if blk.hash != 0 {
		delete(p.cached, [2]int32{blk.seg, blk.off})
		p.evicted = append(p.evicted, blk.ref())
		p.chains.Drop(blk.seg)
		blk.hash = 0
	}
	blk.refs = 1
	p.refsum++
	return b
}

// release drops one reference; a block whose count reaches zero goes to the
// tail of the free list, keeping its hash.
func (p *oraclePool) release(b int32) {
	p.blocks[b].V.refs--
	p.refsum--
	if p.blocks[b].V.refs == 0 {
		p.queue.PushTail(p.blocks, b)
		p.nfree++
	}
}

// commit enters a full block into the prefix cache under r. It reports
// false when another block already caches that hash (vLLM keeps the first).
func (p *oraclePool) commit(b int32, r block.Ref) bool {
	if _, held := p.cached[[2]int32{r.Seg, r.Off}]; held {
		return false
	}
	p.cached[[2]int32{r.Seg, r.Off}] = b
	blk := &p.blocks[b].V
	blk.hash, blk.place, blk.seg, blk.off = r.Hash, r.Place, r.Seg, r.Off
	p.chains.Acquire(r.Seg)
	return true
}
