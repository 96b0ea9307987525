package engine

import (
	"errors"
	"fmt"

	"github.com/kvsim/kvsim/block"
)

// CheckQuick is the O(running requests) part of Check: the references held
// by running requests and by waiting ones that loaded blocks add up to the
// pool's reference count.
func (w *Worker) CheckQuick() error {
	held := w.waitingHeld
	for _, s := range w.running {
		held += len(s.blocks)
	}
	if held != w.pool.refsum {
		return fmt.Errorf("worker %d: requests hold %d block references, the pool counts %d", w.cfg.ID, held, w.pool.refsum)
	}
	return nil
}

// Check verifies the worker's block accounting: every block's reference
// count equals the number of requests holding it, the free list holds
// exactly the unreferenced blocks, and the prefix cache maps each hash to a
// block carrying it. It costs O(blocks) and is meant for tests and --check.
func (w *Worker) Check() error {
	p := w.pool
	holders := make([]int32, len(p.blocks))
	each := func(s *Seq) {
		for _, b := range s.blocks {
			holders[b]++
		}
	}
	for _, s := range w.running {
		each(s)
	}
	waitingHeld := 0
	for i := range w.waiting.len() {
		s := w.waiting.at(i)
		each(s)
		waitingHeld += len(s.blocks)
	}
	var errs []error
	if waitingHeld != w.waitingHeld {
		errs = append(errs, fmt.Errorf("worker %d: waiting requests hold %d blocks, the worker counts %d", w.cfg.ID, waitingHeld, w.waitingHeld))
	}
	free := 0
	for b := range holders {
		if holders[b] != p.blocks[b].V.refs {
			errs = append(errs, fmt.Errorf("worker %d: block %d has %d references, %d holders", w.cfg.ID, b, p.blocks[b].V.refs, holders[b]))
		}
		if p.blocks[b].V.refs == 0 {
			free++
		}
	}
	n := 0
	for b := p.queue.Head(); b >= 0; b = p.blocks[b].Next() {
		if p.blocks[b].V.refs != 0 {
			errs = append(errs, fmt.Errorf("worker %d: referenced block %d on the free list", w.cfg.ID, b))
		}
		n++
	}
	if fresh := p.size - len(p.blocks); n != free || n+fresh != p.nfree {
		errs = append(errs, fmt.Errorf("worker %d: free list has %d blocks and %d are fresh, counter %d, unreferenced %d", w.cfg.ID, n, fresh, p.nfree, free))
	}
	hashed := 0
	for b, nd := range p.blocks {
		blk := nd.V
		h := blk.hash
		if h == 0 {
			continue
		}
		hashed++
		if got := p.lookup(blk.seg, blk.off); got != int32(b) {
			errs = append(errs, fmt.Errorf("worker %d: block %d holds %x, which the cache maps to block %d", w.cfg.ID, b, h, got))
		}
	}
	if hashed != p.cached.Len() {
		errs = append(errs, fmt.Errorf("worker %d: %d hashed blocks, %d cache entries", w.cfg.ID, hashed, p.cached.Len()))
	}
	return errors.Join(errs...)
}

// Cached calls f with every block in the worker's prefix cache, in block id
// order: the blocks its KV events have announced and not withdrawn.
func (w *Worker) Cached(f func(block.Ref)) {
	for _, n := range w.pool.blocks {
		if b := n.V; b.hash != 0 {
			f(b.ref())
		}
	}
}
