package engine

import (
	"slices"

	"github.com/kvsim/kvsim/block"
)

// blockPool is the G1 block pool of vLLM V1 (BlockPool and
// FreeKVCacheBlockQueue), kept by runs of blocks instead of block by block.
//
// The model it keeps: blocks are reference counted; a full prompt block
// enters the prefix cache under its name (segment and offset in the chain
// store, standing for the chained hash) unless another block caches that
// name already (vLLM keeps the first); a block whose count drops to zero
// goes to the tail of the free queue keeping its name, and can still be
// hit (touch takes it off the queue wherever it is) until allocation takes
// it from the queue head, evicting its name. vLLM's queue starts with every
// block in id order and a never-used block leaves it only from the head,
// so the queue is the blocks never used, then the released ones, least
// recently released first.
//
// Block ids are not observable, so the pool keeps none. A block is named or
// anonymous (never committed, or its name was cached first by another
// block); anonymous blocks are interchangeable, and a named block is its
// name. So:
//
//   - the cached names of each segment are spans of offsets with one
//     reference count each (spans: a shared prefix held by several
//     sequences is one span per distinct count, not one entry per block);
//   - a sequence holds a holding: runs of named blocks (a segment's offset
//     range) and counts of anonymous ones, in token order;
//   - the free queue is a list of runs after a count of fresh blocks: n
//     anonymous blocks, or a segment's offsets [lo, hi) in descending order,
//     as a sequence releasing its blocks last first leaves them. Each free
//     span is exactly one queue run, so a hit finds a free block's place in
//     the queue through its span.
//
// These runs are exact, not an approximation: releasing a holding pushes
// its blocks in the order the per-block pool would (a block still
// referenced elsewhere just ends a run); a hit touches the leading blocks
// of its chain, so it takes the low end of a queue run, which is the run's
// end in queue order, and never splits one; allocation takes blocks from
// the queue head in order. The pool then costs per run, not per block, and
// so do its reports to the observer: the names evicted and stored, as runs.
// The pool holds one chain-store reference per cached block, taken and
// returned a run at a time.
type blockPool struct {
	size   int
	fresh  int // never-used blocks, at the head of the queue
	nfree  int // fresh and queued blocks
	refsum int // sum of references, kept for the cheap invariant check
	// segs holds the cached offsets of each segment with any, as spans.
	segs block.SegMap[spans]
	// queue holds the released blocks by runs, least recently first: a
	// run is offsets Hi-1 down to Lo of segment Seg, or, Seg -1, Hi-Lo
	// anonymous blocks (Lo 0).
	queue block.List[block.Run]
	runs  []block.Node[block.Run]
	spare []int32 // ids of runs free for reuse
	// evicted collects the cached names that allocation reused, as runs:
	// they left the prefix cache. The worker reports and clears it.
	evicted []block.Run
	pieces  []block.Run   // scratch: the runs commit enters
	chains  *block.Chains // holds a reference on the segment of every cached block
}

// spans is a segment's cached offsets.
type spans = block.Spans[cached]

// span is offsets [Lo, Hi) of a segment, cached in G1.
type span = block.Span[cached]

// cached is what a span's blocks share: refs references each; a free span
// (refs 0) is queue run q.
type cached struct{ refs, q int32 }

// holding is the blocks a sequence holds, in token order: runs, n blocks
// in all. A run is offsets [Lo, Hi) of segment Seg, or, Seg -1, Hi-Lo
// anonymous blocks (Lo 0); blocks not yet committed are anonymous runs at
// its end.
type holding struct {
	runs []block.Run
	n    int
}

// push appends run r, merging it into the last run when it continues it.
func (h *holding) push(r block.Run) {
	if r.Hi == r.Lo {
		return
	}
	if k := len(h.runs) - 1; k >= 0 {
		l := &h.runs[k]
		if l.Seg < 0 && r.Seg < 0 {
			l.Hi += r.Hi - r.Lo
			return
		}
		if l.Seg == r.Seg && l.Hi == r.Lo {
			l.Hi = r.Hi
			return
		}
	}
	h.runs = append(h.runs, r)
}

func newBlockPool(n int, chains *block.Chains) *blockPool {
	return &blockPool{size: n, fresh: n, nfree: n, queue: block.NewList[block.Run](), chains: chains}
}

func (p *blockPool) capacity() int { return p.size }
func (p *blockPool) free() int     { return p.nfree }
func (p *blockPool) used() int     { return p.size - p.nfree }

// hitPrefix counts the leading blocks of the chain whose path is given that
// are cached, up to limit or the first not cached, and how many of them are
// free (allocation cannot use those once they are hit).
func (p *blockPool) hitPrefix(path []block.Piece, limit int) (n, free int) {
	for _, pc := range path {
		end := min(pc.N, int32(limit-n))
		got := int32(0)
		var sps spans
		if l := p.segs.Get(pc.Seg); l != nil {
			sps = *l
		}
		for _, sp := range sps {
			if sp.Lo != got || got >= end {
				break
			}
			hi := min(sp.Hi, end)
			if sp.V.refs == 0 {
				free += int(hi - got)
			}
			got = hi
		}
		n += int(got)
		if got < pc.N || n >= limit {
			break
		}
	}
	return n, free
}

// touch takes a reference on each of the first n blocks of the chain whose
// path is given, all cached (hitPrefix), taking free ones off the queue,
// and appends them to h.
func (p *blockPool) touch(h *holding, path []block.Piece, n int) {
	for _, pc := range path {
		if n == 0 {
			break
		}
		end := min(pc.N, int32(n))
		n -= int(end)
		l := p.segs.Get(pc.Seg)
		sps := *l
		for i := 0; i < len(sps) && sps[i].Lo < end; i++ {
			straddles := sps[i].Hi > end
			if straddles { // split it at the hit's end
				sps.Cut(i, end)
			}
			sp := &sps[i]
			if sp.V.refs == 0 {
				if straddles { // the upper part stays free, as the queue run's head
					p.runs[sp.V.q].V.Lo = end
				} else {
					p.unqueue(sp.V.q)
				}
				p.nfree -= int(sp.Hi - sp.Lo)
			}
			sp.V.refs++
			p.refsum += int(sp.Hi - sp.Lo)
		}
		*l = tidy(sps)
		h.push(block.Run{Seg: pc.Seg, Lo: 0, Hi: end})
		h.n += int(end)
	}
}

// alloc appends n anonymous blocks to h: fresh ones first, then from the
// queue head, evicting the names cached there. The caller has checked
// free() >= n. Most passes of a decoding request need no block: alloc of
// none is inlined and does nothing.
func (p *blockPool) alloc(h *holding, n int) {
	if n > 0 {
		p.allocSome(h, n)
	}
}

// allocSome is alloc of n > 0 blocks.
func (p *blockPool) allocSome(h *holding, n int) {
	p.nfree -= n
	p.refsum += n
	h.push(block.Run{Seg: -1, Lo: 0, Hi: int32(n)})
	h.n += n
	k := min(n, p.fresh)
	p.fresh -= k
	for n -= k; n > 0; {
		q := p.queue.Head()
		r := &p.runs[q].V
		t := min(int32(n), r.Hi-r.Lo)
		if r.Seg >= 0 {
			p.evict(block.Run{Seg: r.Seg, Lo: r.Hi - t, Hi: r.Hi})
			p.chains.DropN(r.Seg, int(t))
			l := p.segs.Get(r.Seg)
			i := l.Find(r.Lo)
			if sp := &(*l)[i]; sp.Hi-t == sp.Lo {
				if *l = slices.Delete(*l, i, i+1); len(*l) == 0 {
					p.segs.Delete(r.Seg)
				}
			} else {
				sp.Hi -= t
			}
		}
		r.Hi -= t
		n -= int(t)
		if r.Hi == r.Lo {
			p.unqueue(q)
		}
	}
}

// evict lists run r in evicted, joining it to the last run listed when the
// two meet: allocation takes a queue run from its highest offset down, and
// the next queue run often continues below it.
func (p *blockPool) evict(r block.Run) {
	if n := len(p.evicted); n > 0 && p.evicted[n-1].Seg == r.Seg && p.evicted[n-1].Lo == r.Hi {
		p.evicted[n-1].Lo = r.Lo
		return
	}
	p.evicted = append(p.evicted, r)
}

// commit enters blocks [from, to) of h, which h holds anonymous at its end,
// into the prefix cache under their names in the chain whose path is
// given. A name another block caches already stays with that block (vLLM
// keeps the first) and h's block stays anonymous. It appends the names it
// entered to stored, as runs in ascending order (block.AppendRun).
func (p *blockPool) commit(h *holding, path []block.Piece, from, to int, stored []block.Run) []block.Run {
	last := h.runs[len(h.runs)-1]
	anon := last.Len()
	if last.Seg >= 0 || h.n-anon > from || to > h.n {
		panic("engine: commit of blocks not held anonymous at the end")
	}
	h.runs = h.runs[:len(h.runs)-1]
	h.push(block.Run{Seg: -1, Lo: 0, Hi: int32(from - (h.n - anon))})
	p.pieces = block.AppendPath(p.pieces[:0], path, from, to)
	for _, r := range p.pieces {
		stored = p.commitRun(h, r.Seg, r.Lo, r.Hi, stored)
	}
	h.push(block.Run{Seg: -1, Lo: 0, Hi: int32(h.n - to)})
	return stored
}

// commitRun commits offsets [lo, hi) of segment s, for commit.
func (p *blockPool) commitRun(h *holding, s, lo, hi int32, stored []block.Run) []block.Run {
	l := p.segs.Add(s)
	sps := *l
	i := sps.Find(lo)
	for off := lo; off < hi; {
		if i < len(sps) && sps[i].Lo <= off { // cached by another block
			end := min(sps[i].Hi, hi)
			h.push(block.Run{Seg: -1, Lo: 0, Hi: end - off})
			off = end
			i++
			continue
		}
		end := hi
		if i < len(sps) {
			end = min(end, sps[i].Lo)
		}
		sps = slices.Insert(sps, i, span{V: cached{refs: 1}, Lo: off, Hi: end})
		i++
		p.chains.AcquireN(s, int(end-off))
		h.push(block.Run{Seg: s, Lo: off, Hi: end})
		stored = block.AppendRun(stored, block.Run{Seg: s, Lo: off, Hi: end})
		off = end
	}
	*l = tidy(sps)
	return stored
}

// release drops h's references, last block first, so the tail of its chain
// is evicted before its head: blocks left unreferenced go to the queue
// tail, keeping their names. h ends empty.
func (p *blockPool) release(h *holding) {
	for i := len(h.runs) - 1; i >= 0; i-- {
		r := h.runs[i]
		n := r.Len()
		p.refsum -= n
		if r.Seg >= 0 {
			p.releaseRun(r)
			continue
		}
		p.nfree += n
		if t := p.queue.Tail(); t >= 0 && p.runs[t].V.Seg < 0 {
			p.runs[t].V.Hi += int32(n)
		} else {
			p.enqueue(block.Run{Seg: -1, Lo: 0, Hi: int32(n)})
		}
	}
	h.runs, h.n = h.runs[:0], 0
}

// releaseRun drops a reference on each block of named run r, highest
// offset first.
func (p *blockPool) releaseRun(r block.Run) {
	l := p.segs.Get(r.Seg)
	sps := split(*l, r.Hi)
	sps = split(sps, r.Lo)
	for i := sps.Find(r.Hi - 1); i >= 0 && sps[i].Lo >= r.Lo; i-- {
		sp := &sps[i]
		if sp.V.refs--; sp.V.refs > 0 {
			continue
		}
		p.nfree += int(sp.Hi - sp.Lo)
		if t := p.queue.Tail(); t >= 0 && p.runs[t].V.Seg == r.Seg && p.runs[t].V.Lo == sp.Hi {
			// continues the queue's last run, whose span is the next one
			p.runs[t].V.Lo = sp.Lo
			sps[i+1].Lo = sp.Lo
			sps = slices.Delete(sps, i, i+1)
			continue
		}
		sp.V.q = p.enqueue(block.Run{Seg: r.Seg, Lo: sp.Lo, Hi: sp.Hi})
	}
	*l = tidy(sps)
}

// enqueue pushes run r to the queue tail and returns its id.
func (p *blockPool) enqueue(r block.Run) int32 {
	var q int32
	if n := len(p.spare); n > 0 {
		q, p.spare = p.spare[n-1], p.spare[:n-1]
	} else {
		q = int32(len(p.runs))
		p.runs = append(p.runs, block.Node[block.Run]{})
	}
	p.runs[q].V = r
	p.queue.PushTail(p.runs, q)
	return q
}

// unqueue takes run q off the queue.
func (p *blockPool) unqueue(q int32) {
	p.queue.Unlink(p.runs, q)
	p.spare = append(p.spare, q)
}

// evictAll reports every cached name evicted and returns the pool's chain
// references, for a worker that is dropped; the pool must not be used
// again.
func (p *blockPool) evictAll() {
	p.segs.Each(func(s int32, sps *spans) {
		for _, sp := range *sps {
			p.evicted = append(p.evicted, block.Run{Seg: s, Lo: sp.Lo, Hi: sp.Hi})
			p.chains.DropN(s, int(sp.Hi-sp.Lo))
		}
	})
	p.segs, p.chains = block.SegMap[spans]{}, nil
}

// split cuts the referenced span holding offsets x-1 and x at x.
func split(sps spans, x int32) spans {
	i := sps.Find(x)
	if i == len(sps) || sps[i].Lo >= x {
		return sps
	}
	if sps[i].V.refs == 0 {
		panic("engine: split of a free span")
	}
	sps.Cut(i, x)
	return sps
}

// tidy merges neighbouring referenced spans with the same count.
func tidy(sps spans) spans {
	k := 0
	for i := 1; i < len(sps); i++ {
		if sps[i].V.refs > 0 && sps[i].V.refs == sps[k].V.refs && sps[i].Lo == sps[k].Hi {
			sps[k].Hi = sps[i].Hi
			continue
		}
		k++
		sps[k] = sps[i]
	}
	if len(sps) == 0 {
		return sps
	}
	return sps[:k+1]
}
