package engine

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// A stretch is a run of quiet decode passes that a worker goes through as
// one: the caller schedules one event at the end of its last pass instead of
// an end and a drive scan per pass. Pass 1 is the pass StartPass began. A
// stretch of k passes is quiet when, pass by pass, each pass boundary before
// the last would change nothing but the decode progress and the blocks
// decoding requests take as they cross into a new block:
//
//   - every running request is in the batch and decodes one token (its
//     prompt is computed and committed, its first token emitted);
//   - none emits its last token before pass k ends;
//   - G1 has a free block for every block the requests cross into before
//     pass k starts (so none is preempted);
//   - admission at the start of passes 2..k does nothing: running is at
//     max_num_seqs, or the batch uses the whole token budget, or every
//     waiting request waits for a pull or a G2 load.
//
// At a boundary, then, every request emits one token, computed and
// generated advance by one, and the next pass's batch differs from the one
// before only in its context (N more prior tokens and N more attention
// pairs, N the batch size) and in the blocks in use. The stretch keeps
// each pass's end, computed with the timing model exactly as StartPass
// would, pass by pass. A request crosses into a new block at the start of
// a pass when its tokens computed by then, plus the one the pass computes,
// no longer fit its blocks: the drive scan of passes one by one would take
// the block then, evicting a free cached block when no fresh or anonymous
// one heads the free queue, which the router hears of at that instant. So
// the stretch keeps its crossings by pass (cross), and the caller has the
// worker take them at those instants, or later but before anything sees
// the difference (NextCross, CrossTo): a crossing costs the requests that
// cross, not the batch.
type stretch struct {
	ends  []des.Time // ends[j] is the end of pass j+1; empty when no stretch
	batch Batch      // scratch: the batch of the pass being timed through the Timing interface (a local would escape through it)
	// cross lists the crossings of passes 2..k in the order the drive scan
	// would take their blocks: by pass, then batch order. next is the
	// first not yet taken.
	cross []crossing
	next  int
	count []int32 // by pass: its crossings, then (crossings) those up to it
}

// A crossing is batch request seq taking a new block at the start of pass
// pass of a stretch.
type crossing struct{ pass, seq int32 }

// MaxStretch is the most passes one stretch covers.
const MaxStretch = 256

// Stretching reports whether the pass in progress is a stretch.
func (w *Worker) Stretching() bool { return len(w.ff.ends) > 0 }

// PassEndsAt reports whether a pass of the stretch in progress other than
// its last ends at t: a pass end the stretch stands for, with no event of
// its own.
func (w *Worker) PassEndsAt(t des.Time) bool {
	_, found := slices.BinarySearch(w.ff.starts(), t)
	return found
}

// Stretch extends the pass StartPass has just begun, ending at end, into a
// stretch of at most limit passes (see stretch) when the next passes are
// quiet. It returns the end of the stretch's last pass, or end when fewer
// than two passes are quiet. The caller answers for what the worker cannot
// see: no stored blocks wait for the pass end to go to G2, and nothing
// outside the worker acts at the pass boundaries (no rescan there stages
// a parked pull again).
func (w *Worker) Stretch(end des.Time, limit int) des.Time {
	if !w.busy || w.Stretching() {
		panic(fmt.Sprintf("worker %d: Stretch without a plain pass in progress", w.cfg.ID))
	}
	n := len(w.batch)
	if n != len(w.running) || w.stats.PrefillTokens != 0 {
		return end
	}
	if len(w.running) < w.cfg.MaxNumSeqs && n < w.cfg.MaxBatchedTokens {
		for i := range w.waiting.len() {
			if st := w.waiting.at(i).state; st != seqPulling && st != seqLoading {
				return end // the next pass may admit it
			}
		}
	}
	// With no prefill token in the batch, every request in it schedules one
	// token, the one after all it has computed, past its prompt: its first
	// token is out and its prompt blocks are committed. Pass j < k must
	// not emit a request's last token.
	k := limit
	for _, s := range w.batch {
		k = min(k, s.output-s.generated)
	}
	if k < 2 {
		return end
	}
	k = w.crossings(k)
	if k < 2 {
		return end
	}
	ends := append(w.ff.ends[:0], end)
	if r, ok := w.timing.(*rooflinePass); ok {
		ends = w.roofEnds(r, ends, k)
	} else {
		w.ff.batch = w.stats
		b := &w.ff.batch
		for j := 2; j <= k; j++ {
			b.PriorContext += int64(n)
			b.AttnPairs += int64(n)
			b.UsedBlocks = w.stats.UsedBlocks + int(w.ff.count[j]) // the crossings of passes 2..j
			end += w.slowed(max(w.timing.PassTime(b), 1))
			ends = append(ends, end)
		}
	}
	w.ff.ends = ends
	return ends[len(ends)-1]
}

// roofEnds is Stretch's loop over passes 2..k for the roofline timing of a
// dense model, which reads only the batch's tokens, attention pairs and
// prior context: the same operations as PassTime, pass by pass, with the
// timing's methods inlined on a batch of its own, so that the CPU overlaps
// the passes' divisions (the loop through the Timing interface was 18 % of
// the event loop at 128 workers).
//
// It appends the ends of passes 2..k after the end of pass 1, ends' last.
//
// A pass's time is the larger of its compute and memory times, and across
// a stretch both grow linearly with the pass number (N more attention
// pairs and N more context tokens a pass). So when one is below the other
// at passes 2 and k (bounds), it is below it at every pass between, and
// the loop computes only the larger: max returns it bit for bit.
func (w *Worker) roofEnds(r *rooflinePass, ends []des.Time, k int) []des.Time {
	b, n := w.stats, int64(len(w.batch))
	end := ends[len(ends)-1]
	first, last := b, b
	first.PriorContext, first.AttnPairs = b.PriorContext+n, b.AttnPairs+n
	last.PriorContext, last.AttnPairs = b.PriorContext+int64(k-1)*n, b.AttnPairs+int64(k-1)*n
	memoryBound := bounds(r.memory(&first), r.compute(&first), r.memory(&last), r.compute(&last))
	computeBound := bounds(r.compute(&first), r.memory(&first), r.compute(&last), r.memory(&last))
	for j := 2; j <= k; j++ {
		b.PriorContext += n
		b.AttnPairs += n
		var ns float64
		switch {
		case memoryBound:
			ns = r.memory(&b) * 1e9
		case computeBound:
			ns = r.compute(&b) * 1e9
		default:
			ns = r.nanos(&b)
		}
		d, ok := des.FromNanos(ns)
		if !ok {
			des.MustFromNanos(ns) // panics, as PassTime would
		}
		end += w.slowed(max(r.overhead+d, 1))
		ends = append(ends, end)
	}
	return ends
}

// bounds reports whether a term that is y0 at a stretch's first pass and
// y1 at its last is the larger of a pass's two times at every pass, the
// other being x0 and x1 there: y is positive at both ends and the other
// below it by a margin (2^-20 relative, far past the terms' rounding of a
// few ulps). Both are affine in the pass number, so y·(1-2^-20) - x is
// positive between the ends as at them, and y positive: x < y throughout.
func bounds(y0, x0, y1, x1 float64) bool {
	const margin = 1 - 1.0/(1<<20)
	return y0 > 0 && y1 > 0 && x0 < margin*y0 && x1 < margin*y1
}

// crossings lists in w.ff.cross the blocks the batch's requests cross into
// at the starts of passes 2..k, by pass and then in batch order, leaves in
// w.ff.count[j] the crossings of passes 2..j, and returns k cut to the last
// pass before G1 would run out of free blocks.
// Pass j starts with s.computed+j-1 tokens of request s computed and
// computes one more, so s crosses at passes d+1, d+1+bs, ..., d the room
// its blocks leave after its computed tokens (at least 1: pass 1 fits).
func (w *Worker) crossings(k int) int {
	bs := int32(w.cfg.BlockSize)
	count := append(w.ff.count[:0], make([]int32, k+2)...)
	for _, s := range w.batch {
		for j := int32(s.blocks.n)*bs - int32(s.computed) + 1; j <= int32(k); j += bs {
			count[j]++
		}
	}
	free, taken := int32(w.pool.free()), int32(0)
	for j := 2; j <= k; j++ {
		if taken+count[j] > free {
			k = j - 1
			break
		}
		taken += count[j]
	}
	// Counting sort: start[j] is the first index of pass j's crossings.
	start := int32(0)
	for j := 2; j <= k; j++ {
		start, count[j] = start+count[j], start
	}
	cross := slices.Grow(w.ff.cross[:0], int(start))[:start]
	for i, s := range w.batch {
		for j := int32(s.blocks.n)*bs - int32(s.computed) + 1; j <= int32(k); j += bs {
			cross[count[j]] = crossing{pass: j, seq: int32(i)}
			count[j]++
		}
	}
	w.ff.cross, w.ff.next, w.ff.count = cross, 0, count
	return k
}

// starts is the ends of every pass but the last: pass j starts at
// starts[j-2], and each is a pass end the stretch stands for.
func (ff *stretch) starts() []des.Time { return ff.ends[:max(len(ff.ends)-1, 0)] }

// startedBy is n when passes 2..n+1 of the stretch have started by now:
// pass j starts at the end of pass j-1, before now, or at now when started
// (the current event comes after that pass's drive scan). The last pass's
// end starts none.
func (ff *stretch) startedBy(now des.Time, started bool) int {
	starts := ff.starts()
	n, _ := slices.BinarySearch(starts, now)
	if started && n < len(starts) && starts[n] == now {
		n++
	}
	return n
}

// NextCross returns the start of the next stretch pass at which requests
// cross into a new block, and false when none is left.
func (w *Worker) NextCross() (des.Time, bool) {
	if w.ff.next == len(w.ff.cross) {
		return 0, false
	}
	return w.ff.ends[w.ff.cross[w.ff.next].pass-2], true
}

// CrossTo takes the blocks of the stretch passes whose requests cross into
// a new block and that start before now, or at now when started (the
// current event comes after that pass's drive scan), those not taken yet:
// in pass and batch order, evicting as allocation does, as the drive scans
// starting them would. It reports the cache changes once, for all of them,
// and whether it took any. The caller calls it before anything sees the
// worker's G1 or the router's view of it: at the instant NextCross gave,
// at the drive scan's place in the event order, or later, before the first
// event that looks at them, and before Settle.
func (w *Worker) CrossTo(now des.Time, started bool) bool {
	n := w.ff.startedBy(now, started)
	c, first := w.ff.cross, w.ff.next // take passes 2..n+1's
	for ; w.ff.next < len(c) && int(c[w.ff.next].pass) <= n+1; w.ff.next++ {
		w.grow(w.batch[c[w.ff.next].seq], 1)
	}
	if w.ff.next == first {
		return false
	}
	w.reportKV()
	return true
}

// Settle ends the stretch at the current event, at now, leaving the worker
// as passes one by one would have left it. The pass boundaries before the
// current event are applied: those before now, and one at now if the
// current event comes after the end of the pass (ended) and after the drive
// scan that starts the next one (started). It returns the end of the pass
// in progress and true; or false when the current event falls between a
// pass end at now and the next pass's start: that pass has ended, the
// worker is idle, and the caller schedules the drive scan passes one by one
// would have. The caller has had the crossings of the passes started taken
// (CrossTo): Settle panics when one is left, or one after them was taken.
// The last pass of a stretch ends as a plain pass, FinishPass.
func (w *Worker) Settle(now des.Time, ended, started bool) (des.Time, bool) {
	if !w.Stretching() {
		panic(fmt.Sprintf("worker %d: Settle without a stretch", w.cfg.ID))
	}
	ends := w.ff.ends
	last, m := len(ends)-1, w.ff.startedBy(now, started)
	w.advance(m)
	end := ends[m]
	w.ff.ends = ends[:0]
	if c := w.ff.cross; w.ff.next < len(c) && int(c[w.ff.next].pass) <= m+1 || w.ff.next > 0 && int(c[w.ff.next-1].pass) > m+1 {
		panic(fmt.Sprintf("worker %d: settled after pass %d with crossings taken to pass %d", w.cfg.ID, m+1, c[max(w.ff.next-1, 0)].pass))
	}
	w.ff.cross, w.ff.next = w.ff.cross[:0], 0
	if m < last && end == now && ended {
		w.FinishPass(now)
		return 0, false
	}
	w.passEnd = end // advance counted busy time to it
	return end, true
}

// advance applies the stretch's first m pass boundaries: every request
// emits m tokens, and passes 2..m+1 start.
func (w *Worker) advance(m int) {
	if m == 0 {
		return
	}
	ends, n := w.ff.ends, len(w.batch)
	for _, s := range w.batch {
		w.obs.Token(ends[0], s, ends[0]-s.lastToken)
		s.computed += m
		s.generated += m
		s.lastToken = ends[m-1]
	}
	if m > 1 {
		w.obs.Tokens(ends[:m], n)
	}
	w.passes += int64(m)
	w.busyNs += ends[m] - ends[0]
}

// notStretching panics when a stretch is in progress: whatever acts on the
// worker must Settle it first.
func (w *Worker) notStretching(op string) {
	if w.Stretching() {
		panic(fmt.Sprintf("worker %d: %s during a stretch", w.cfg.ID, op))
	}
}
