package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kvsim/kvsim/block"
)

// CheckTransitions reports the first change of a request's state that
// seqNext does not allow, a *TransitionError, or nil. It costs nothing: the
// worker records the change when it happens.
func (w *Worker) CheckTransitions() error {
	if w.illegal == nil {
		return nil // not a nil *TransitionError in an error
	}
	return w.illegal
}

// CheckQuick is the O(running requests) part of Check: no request changed
// state along a transition seqNext does not allow (the first that did is
// the error, a *TransitionError), and the references held by running
// requests and by waiting ones that loaded blocks add up to the pool's
// reference count.
func (w *Worker) CheckQuick() error {
	if err := w.CheckTransitions(); err != nil {
		return err
	}
	held := w.waitingHeld
	for _, s := range w.running {
		held += s.blocks.n
	}
	if held != w.pool.refsum {
		return fmt.Errorf("worker %d: requests hold %d block references, the pool counts %d", w.cfg.ID, held, w.pool.refsum)
	}
	return nil
}

// Check verifies that no request changed state along a transition seqNext
// does not allow (the first that did is the error, a *TransitionError),
// that each request's state is one of its queue's (running, or a waiting
// state) and it holds blocks while waiting only when loading or loaded,
// and the worker's block accounting: every cached block's
// reference count equals the number of requests holding it, the free queue
// holds exactly the unreferenced blocks, each free span being one queue
// run, and the blocks held, queued and fresh add up to the capacity; the
// waiting requests' held blocks and their needs add up to the worker's
// counts, and under AdmitCurrent every waiting request that holds blocks or
// waits for a pull or a load is among the skipped ones at the queue's front.
// It costs O(blocks) and is meant for tests and --check.
func (w *Worker) Check() error {
	if err := w.CheckTransitions(); err != nil {
		return err
	}
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
		if !w.v011 && i >= w.skipped && (s.blocks.n > 0 || s.state == seqPulling || s.state == seqLoading) {
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
	segs := 0
	for i, e := range p.segs {
		s, sps := e.seg, e.sps
		if len(sps) == 0 {
			continue
		}
		segs++
		if j, _ := p.segIdx.Get(block.SegKey(s)); j != int32(i)+1 {
			errs = append(errs, fmt.Errorf("segment %d is entry %d, its index says %d", s, i, j-1))
		}
		end := int32(-1)
		for _, sp := range sps {
			if sp.lo <= end || sp.hi <= sp.lo {
				errs = append(errs, fmt.Errorf("segment %d: spans out of order at [%d, %d)", s, sp.lo, sp.hi))
			}
			end = sp.hi - 1
			if sp.refs == 0 {
				freeSpans++
				if r := p.runs[sp.q].V; r != (block.Run{Seg: s, Lo: sp.lo, Hi: sp.hi}) {
					errs = append(errs, fmt.Errorf("free span (%d, [%d, %d)) has queue run %v", s, sp.lo, sp.hi, r))
				}
			} else {
				heldNamed += int(sp.hi - sp.lo)
			}
			refsum += int(sp.refs) * int(sp.hi-sp.lo)
			for off := sp.lo; off < sp.hi; off++ {
				got := int32(0)
				if int(off) < len(holders[s]) {
					got, holders[s][off] = holders[s][off], 0
				}
				if got != sp.refs {
					errs = append(errs, fmt.Errorf("block (%d, %d) has %d references, %d holders", s, off, sp.refs, got))
					break
				}
			}
		}
	}
	if segs != p.segIdx.Len() {
		errs = append(errs, fmt.Errorf("%d segments with spans, %d indexed", segs, p.segIdx.Len()))
	}
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
			var sps []span
			if l := p.spansOf(r.Seg); l != nil {
				sps = *l
			}
			if i := findSpan(sps, r.Lo); i == len(sps) || sps[i].q != q || sps[i].refs != 0 {
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
	for _, e := range w.pool.segs {
		for _, sp := range e.sps {
			for off := sp.lo; off < sp.hi; off++ {
				f(w.pool.chains.Ref(e.seg, off))
			}
		}
	}
}
