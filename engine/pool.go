package engine

import "github.com/kvsim/kvsim/sim/u64map"

// blockPool is the G1 block pool: reference-counted blocks, a prefix cache
// from chained hash to block, and an LRU free list. A freed block keeps its
// hash and can still be hit until allocation reuses it (vLLM V1's
// BlockPool and FreeKVCacheBlockQueue).
type blockPool struct {
	refs   []int32
	hash   []uint64 // 0: not in the prefix cache
	prev   []int32  // free-list links; nil index -1
	next   []int32
	head   int32 // least recently freed: the next victim
	tail   int32
	nfree  int
	refsum int               // sum of refs, kept for the cheap invariant check
	cached u64map.Map[int32] // hash -> block + 1 (0: absent)
	// evicted is called with the hash of a cached block that allocation
	// reuses; the block leaves the prefix cache.
	evicted func(hash uint64)
}

func newBlockPool(n int, evicted func(uint64)) *blockPool {
	p := &blockPool{
		refs:    make([]int32, n),
		hash:    make([]uint64, n),
		prev:    make([]int32, n),
		next:    make([]int32, n),
		head:    -1,
		tail:    -1,
		evicted: evicted,
	}
	for i := range n {
		p.pushTail(int32(i))
	}
	return p
}

func (p *blockPool) capacity() int { return len(p.refs) }
func (p *blockPool) free() int     { return p.nfree }
func (p *blockPool) used() int     { return len(p.refs) - p.nfree }

func (p *blockPool) pushTail(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.nfree++
}

func (p *blockPool) unlink(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.nfree--
}

// lookup returns the block caching hash, or -1.
func (p *blockPool) lookup(hash uint64) int32 {
	b, _ := p.cached.Get(hash)
	return b - 1
}

// touch takes a reference on a cached block, taking it off the free list
// when it was free.
func (p *blockPool) touch(b int32) {
	if p.refs[b] == 0 {
		p.unlink(b)
	}
	p.refs[b]++
	p.refsum++
}

// alloc takes the least recently freed block, evicting its cached hash. The
// caller has checked free() > 0.
func (p *blockPool) alloc() int32 {
	b := p.head
	p.unlink(b)
	if h := p.hash[b]; h != 0 {
		p.cached.Delete(h)
		p.hash[b] = 0
		p.evicted(h)
	}
	p.refs[b] = 1
	p.refsum++
	return b
}

// release drops one reference; a block whose count reaches zero goes to the
// tail of the free list, keeping its hash.
func (p *blockPool) release(b int32) {
	p.refs[b]--
	p.refsum--
	if p.refs[b] == 0 {
		p.pushTail(b)
	}
}

// commit enters a full block into the prefix cache under hash. It reports
// false when another block already caches that hash (vLLM keeps the first).
func (p *blockPool) commit(b int32, hash uint64) bool {
	slot := p.cached.Insert(hash)
	if *slot != 0 {
		return false
	}
	*slot = b + 1
	p.hash[b] = hash
	return true
}
