package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kvsim/kvsim/block"
)

// CheckQuick is the O(running requests) part of Check: the references
// held by running requests and by waiting ones that loaded blocks add up to
// the pool's reference count.
func (w *Worker) CheckQuick() error {
	held := w.waitingHeld
	for _, s := range w.running {
		held += s.blocks.n
	}
	if held != w.pool.refsum {
		return fmt.Errorf("worker %d: requests hold %d block references, the pool counts %d", w.cfg.ID, held, w.pool.refsum)
	}
	return nil
}

// Check verifies that each request's state is one of its queue's (running,
// or a waiting state) and it holds blocks while waiting only when loading
// or loaded, and the worker's block accounting: every cached block's
// reference count equals the number of requests holding it, the free queue
// holds exactly the unreferenced blocks, each free span being one queue
// run, and the blocks held, queued and fresh add up to the capacity; the
// waiting requests' held blocks and their needs add up to the worker's
// counts, and under AdmitCurrent every waiting request that holds blocks
// (loading or loaded), waits for a pull or has its pull parked is among the
// skipped ones at the queue's front. It costs O(blocks) and is meant for
// tests and --check.
func (w *Worker) Check() error {
	var errs []error
	var held []*holding
	for _, s := range w.running {
		held = append(held, &s.blocks)
		if s.state != seqRunning {
			errs = append(errs, fmt.Errorf("request %d runs while %v", s.Req.ID, s.state))
		}
	}
	waitingHeld, waitingNeed := 0, 0
	var outside []int64 // AdmitCurrent: waiting requests that must be among the skipped, and are not
	for i := range w.waiting.len() {
		s := w.waiting.at(i)
		held = append(held, &s.blocks)
		waitingHeld += s.blocks.n
		if s.blocks.n > 0 {
			waitingNeed += ceilDiv(s.tokens(), w.cfg.BlockSize)
		}
		loads := s.state == seqLoading || s.state == seqLoaded
		switch {
		case s.state == seqRunning || s.state >= seqFinished: // finished, ignored and dropped are past the queues
			errs = append(errs, fmt.Errorf("request %d waits while %v", s.Req.ID, s.state))
		case loads != (s.blocks.n > 0):
			errs = append(errs, fmt.Errorf("request %d waits %v holding %d blocks", s.Req.ID, s.state, s.blocks.n))
		}
		if !w.v011 && i >= w.skipped && (s.blocks.n > 0 || s.state == seqPulling || s.state == seqParked) { // loading ones hold blocks
			outside = append(outside, s.Req.ID)
		}
	}
	if len(outside) > 0 {
		errs = append(errs, fmt.Errorf("waiting requests %v hold blocks or wait but are behind the %d skipped ones", outside, w.skipped))
	}
	if waitingHeld != w.waitingHeld {
		errs = append(errs, fmt.Errorf("waiting requests hold %d blocks, the worker counts %d", waitingHeld, w.waitingHeld))
	}
	if waitingNeed != w.waitingNeed {
		errs = append(errs, fmt.Errorf("waiting requests holding blocks need %d for their lengths, the worker counts %d", waitingNeed, w.waitingNeed))
	}
	if w.skipped > w.waiting.len() {
		errs = append(errs, fmt.Errorf("%d skipped requests, %d waiting", w.skipped, w.waiting.len()))
	}
	errs = append(errs, w.pool.check(held)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worker %d: %w", w.cfg.ID, err)
	}
	return nil
}

// check verifies the pool against the holdings of all its requests (see
// Worker.Check).
func (p *blockPool) check(held []*holding) []error {
	var errs []error
	holders := map[int32][]int32{} // by segment, offset: the requests holding it
	anon := 0                      // anonymous blocks held
	for _, h := range held {
		n := 0
		for _, r := range h.runs {
			n += r.Len()
			if r.Seg < 0 {
				anon += r.Len()
				continue
			}
			hs := holders[r.Seg]
			for len(hs) < int(r.Hi) {
				hs = append(hs, 0)
			}
			for off := r.Lo; off < r.Hi; off++ {
				hs[off]++
			}
			holders[r.Seg] = hs
		}
		if n != h.n {
			errs = append(errs, fmt.Errorf("a request's runs hold %d blocks, its count %d", n, h.n))
		}
	}
	refsum, heldNamed, freeSpans := anon, 0, 0
	p.segs.Each(func(s int32, l *spans) {
		sps := *l
		if len(sps) == 0 {
			errs = append(errs, fmt.Errorf("segment %d has no spans", s))
		}
		end := int32(-1)
		for _, sp := range sps {
			if sp.Lo <= end || sp.Hi <= sp.Lo {
				errs = append(errs, fmt.Errorf("segment %d: spans out of order at [%d, %d)", s, sp.Lo, sp.Hi))
			}
			end = sp.Hi - 1
			if sp.V.refs == 0 {
				freeSpans++
				if r := p.runs[sp.V.q].V; r != (block.Run{Seg: s, Lo: sp.Lo, Hi: sp.Hi}) {
					errs = append(errs, fmt.Errorf("free span (%d, [%d, %d)) has queue run %v", s, sp.Lo, sp.Hi, r))
				}
			} else {
				heldNamed += int(sp.Hi - sp.Lo)
			}
			refsum += int(sp.V.refs) * int(sp.Hi-sp.Lo)
			for off := sp.Lo; off < sp.Hi; off++ {
				got := int32(0)
				if int(off) < len(holders[s]) {
					got, holders[s][off] = holders[s][off], 0
				}
				if got != sp.V.refs {
					errs = append(errs, fmt.Errorf("block (%d, %d) has %d references, %d holders", s, off, sp.V.refs, got))
					break
				}
			}
		}
	})
	for _, s := range slices.Sorted(maps.Keys(holders)) { // in segment order, so the errors are too
		for off, n := range holders[s] {
			if n != 0 {
				errs = append(errs, fmt.Errorf("%d requests hold block (%d, %d), which is not cached", n, s, off))
			}
		}
	}
	queued, namedRuns := 0, 0
	for q := p.queue.Head(); q >= 0; q = p.runs[q].Next() {
		r := p.runs[q].V
		if r.Hi <= r.Lo {
			errs = append(errs, fmt.Errorf("empty queue run %v", r))
		}
		queued += r.Len()
		if r.Seg >= 0 {
			namedRuns++
			var sps spans
			if l := p.segs.Get(r.Seg); l != nil {
				sps = *l
			}
			if i := sps.Find(r.Lo); i == len(sps) || sps[i].V.q != q || sps[i].V.refs != 0 {
				errs = append(errs, fmt.Errorf("queue run %v has no free span", r))
			}
		}
	}
	if namedRuns != freeSpans {
		errs = append(errs, fmt.Errorf("%d named queue runs, %d free spans", namedRuns, freeSpans))
	}
	if p.fresh+queued != p.nfree || p.nfree+heldNamed+anon != p.size {
		errs = append(errs, fmt.Errorf("%d fresh and %d queued blocks, free count %d; %d held, capacity %d", p.fresh, queued, p.nfree, heldNamed+anon, p.size))
	}
	if refsum != p.refsum {
		errs = append(errs, fmt.Errorf("references add up to %d, the pool counts %d", refsum, p.refsum))
	}
	return errs
}

// Cached calls f with every block in the worker's prefix cache, by segment
// and offset: the blocks its KV events have announced and not withdrawn.
func (w *Worker) Cached(f func(block.Ref)) {
	var refs []block.Ref
	w.pool.segs.Each(func(s int32, sps *spans) {
		for _, sp := range *sps {
			refs = w.pool.chains.AppendRefs(refs[:0], s, sp.Lo, sp.Hi)
			for _, r := range refs {
				f(r)
			}
		}
	})
}
