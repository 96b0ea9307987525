package engine

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/des"
)

// A stretch is a run of quiet decode passes that a worker goes through as
// one: the caller schedules one event at the end of its last pass instead of
// an end and a drive scan per pass. Pass 1 is the pass StartPass began. A
// stretch's passes are quiet when, pass by pass, each pass boundary would
// change nothing but the decode progress, the blocks decoding requests take
// as they cross into a new block, and the requests that emit their last
// token leaving:
//
//   - every running request is in the batch and decodes one token (its
//     prompt is computed and committed, its first token emitted);
//   - G1 has a free block for every block the requests cross into (so
//     none is preempted);
//   - admission at the start of passes 2, 3, ... does nothing: running is
//     at max_num_seqs, or the batch uses the whole token budget, or every
//     waiting request waits for a pull or a G2 load; once a request has
//     left, only the last holds.
//
// At a boundary, then, every request emits one token, computed and
// generated advance by one, and the next pass's batch differs from the one
// before only in its context (N more prior tokens and N more attention
// pairs, N the batch size), in the blocks in use and in the requests that
// left. The stretch keeps each pass's end, computed with the timing model
// exactly as StartPass would, pass by pass.
//
// A request crosses into a new block at the start of a pass when its
// tokens computed by then, plus the one the pass computes, no longer fit
// its blocks: the drive scan of passes one by one would take the block
// then, evicting a free cached block when no fresh or anonymous one heads
// the free queue, which the router hears of at that instant. A request
// leaves at the end of the pass that emits its last token, freeing its
// blocks, and the router, the report and the planner hear of it then. So
// the caller has the worker act at those instants: it takes a pass's
// crossings at the pass's start (NextCross, Cross), and a stretch is timed
// a segment at a time, to the next pass at which requests leave, whose end
// is the stretch's end until the worker lets them go there and times the
// next segment (Extend). A crossing costs the requests that cross, a
// departure the requests that leave: neither visits the batch.
//
// A request whose blocks leave room for d more tokens after its computed
// ones (1 <= d <= the block size after StartPass gave pass 1 its room)
// crosses at passes d+1, d+1+bs, ..., bs the block size: always at the same
// pass number modulo bs. So the stretch keeps the requests in bs rings by
// that residue, in batch order, and pass j's crossers are ring j mod bs.
type stretch struct {
	ends  []des.Time // ends[j] is the end of pass j+1; empty when no stretch
	batch Batch      // the batch of the last pass timed (a local would escape through the timing interface)
	rings [][]*Seq   // rings[j % bs]: the requests that cross at pass j, in batch order
	// leave is the batch by the pass whose end emits its last token (its
	// output left when the stretch began), ascending, and in batch order
	// among equals; gone counts those that have left.
	leave []*Seq
	gone  int
	// crossed is the last pass whose crossings were taken: every pass
	// from 2 to crossed whose ring has requests has had them cross.
	crossed int
	// extra[j] - extra[j-1] is how many more tokens than the batch's the
	// boundary at ends[j] emits: those of the requests that left later,
	// reported when the stretch settles (a difference array).
	extra []int32
	used  int // G1 blocks in use when the segment being timed began
}

// MaxStretch is the most passes one segment of a stretch covers.
const MaxStretch = 256

// Stretching reports whether the pass in progress is a stretch.
func (w *Worker) Stretching() bool { return len(w.ff.ends) > 0 }

// Stretch extends the pass StartPass has just begun, ending at end, into a
// stretch (see stretch) whose first segment has at most limit passes, when
// the next passes are quiet. It returns the end of the segment's last pass,
// or end when fewer than two passes are quiet. The caller answers for what
// the worker cannot see: no stored blocks wait for the pass end to go to
// G2, and nothing outside the worker acts at the pass boundaries (no parked
// pull is rescanned there).
func (w *Worker) Stretch(end des.Time, limit int) des.Time {
	if !w.busy || w.Stretching() {
		panic(fmt.Sprintf("worker %d: Stretch without a plain pass in progress", w.cfg.ID))
	}
	n := len(w.batch)
	if n != len(w.running) || w.stats.PrefillTokens != 0 {
		return end
	}
	if len(w.running) < w.cfg.MaxNumSeqs && n < w.cfg.MaxBatchedTokens && !w.admitsNone() {
		return end // the next pass may admit one
	}
	// With no prefill token in the batch, every request in it schedules one
	// token, the one after all it has computed, past its prompt: its first
	// token is out and its prompt blocks are committed.
	bs := w.cfg.BlockSize
	first := limit // the first pass at whose end a request leaves
	for _, s := range w.batch {
		first = min(first, s.output-s.generated)
		if d := s.blocks.n*bs - s.computed; d < 1 || d > bs {
			return end // room for less than pass 1, or for more than a block: not a decode step's
		}
	}
	if first < 2 {
		return end
	}
	if cap(w.ff.rings) < bs {
		w.ff.rings = make([][]*Seq, bs)
	}
	w.ff.rings = w.ff.rings[:bs]
	for r := range w.ff.rings {
		w.ff.rings[r] = w.ff.rings[r][:0]
	}
	for _, s := range w.batch {
		r := (s.blocks.n*bs - s.computed + 1) % bs
		w.ff.rings[r] = append(w.ff.rings[r], s)
	}
	w.ff.leave = append(w.ff.leave[:0], w.batch...)
	slices.SortStableFunc(w.ff.leave, func(a, b *Seq) int { return (a.output - a.generated) - (b.output - b.generated) })
	w.ff.gone, w.ff.crossed = 0, 1
	w.ff.batch = w.stats
	w.ff.ends = append(w.ff.ends[:0], end)
	w.ff.extra = append(w.ff.extra[:0], 0)
	if w.segment(limit) < 2 {
		w.ff.ends = w.ff.ends[:0]
		return end
	}
	return w.ff.ends[len(w.ff.ends)-1]
}

// admitsNone reports whether no waiting request can be admitted at a drive
// scan: each waits for its pull or its G2 load.
func (w *Worker) admitsNone() bool {
	for i := range w.waiting.len() {
		if st := w.waiting.at(i).state; st != seqPulling && st != seqLoading {
			return false
		}
	}
	return true
}

// segment times the stretch's passes after those timed, up to the first
// at whose end a request leaves, pass last, or the last before G1 would
// have no free block for a crossing, whichever comes first, and returns
// the number of passes the stretch then has. Pass j's batch has the
// requests that have not left, each with its computed tokens j-1 past its
// count when the stretch began, and the blocks in use grow by each pass's
// crossings.
func (w *Worker) segment(last int) int {
	from := len(w.ff.ends) + 1
	s0 := w.ff.leave[w.ff.gone]
	k := min(last, s0.output-s0.generated)
	b := &w.ff.batch
	n := int64(len(w.batch))
	free, used, bs := w.pool.free(), w.pool.used(), w.cfg.BlockSize
	w.ff.used = used
	end := w.ff.ends[from-2]
	for j := from; j <= k; j++ {
		c := len(w.ff.rings[j%bs])
		if c > free {
			break
		}
		free -= c
		used += c
		b.PriorContext += n
		b.AttnPairs += n
		b.UsedBlocks = used
		end += w.slowed(max(w.timing.PassTime(b), 1))
		w.ff.ends = append(w.ff.ends, end)
		w.ff.extra = append(w.ff.extra, 0)
	}
	return len(w.ff.ends)
}

// NextCross returns the start of the next stretch pass at which requests
// cross into a new block, and false when none is left in the timed
// segment.
func (w *Worker) NextCross() (des.Time, bool) {
	if j := w.nextCross(); j > 0 {
		return w.ff.ends[j-2], true
	}
	return 0, false
}

// nextCross is the next pass, after those taken and at most the last
// timed, whose ring has requests; 0 when none.
func (w *Worker) nextCross() int {
	bs := w.cfg.BlockSize
	for j := w.ff.crossed + 1; j <= len(w.ff.ends) && j <= w.ff.crossed+bs; j++ {
		if len(w.ff.rings[j%bs]) > 0 {
			return j
		}
	}
	return 0
}

// Cross takes the blocks of the next stretch pass whose requests cross
// into a new block, as the drive scan starting that pass would (in batch
// order, evicting as allocation does), and reports the cache changes. The
// caller calls it at the instant NextCross gave, at the drive scan's place
// in the event order.
func (w *Worker) Cross() {
	j := w.nextCross()
	if j == 0 {
		panic(fmt.Sprintf("worker %d: Cross with no crossing left", w.cfg.ID))
	}
	for _, s := range w.ff.rings[j%w.cfg.BlockSize] {
		w.grow(s, 1)
	}
	w.ff.crossed = j
	w.reportKV()
}

// Extend lets the requests that emitted their last token in the pass ending
// now, the last of the stretch's timed segment, leave, as FinishPass would
// (in batch order), and times the next segment of at most limit passes,
// returning the end of its last pass. It returns false when the stretch
// ends there: no request leaves (the segment ended at its limit or before
// G1 runs out), none stays, a waiting request may be admitted once one has
// left, or G1 has no free block for the next pass's crossings once they
// have left (then they have). The caller calls it at the pass end's place
// in the event order; on false it settles the stretch as usual, Settle
// then FinishPass.
func (w *Worker) Extend(now des.Time, limit int) (des.Time, bool) {
	ends, f := w.ff.ends, len(w.ff.ends)
	if ends[f-1] != now || w.nextCross() != 0 {
		panic(fmt.Sprintf("worker %d: Extend at %v, the stretch's pass ends at %v, crossings taken to pass %d", w.cfg.ID, now, ends[f-1], w.ff.crossed))
	}
	leave, gone := w.ff.leave, w.ff.gone
	k := gone
	for k < len(leave) && leave[k].output-leave[k].generated == f {
		k++
	}
	if k == gone || k == len(leave) || !w.admitsNone() {
		return 0, false
	}
	b := &w.ff.batch
	bs := w.cfg.BlockSize
	for _, s := range leave[gone:k] {
		ring := &w.ff.rings[(s.blocks.n*bs-s.computed+1)%bs] // before its counts move on
		*ring = slices.DeleteFunc(*ring, func(r *Seq) bool { return r == s })
		// Its tokens: the first boundary's gap is its own; the boundaries
		// strictly between are reported with the batch's at the settle;
		// its last, now, here.
		w.obs.Token(ends[0], s, ends[0]-s.lastToken)
		if f > 2 {
			w.ff.extra[1]++
			w.ff.extra[f-1]--
		}
		w.obs.Token(now, s, now-ends[f-2])
		b.PriorContext -= int64(s.computed + f - 1)
		b.AttnPairs -= int64(s.computed + f)
		b.Seqs--
		b.DecodeTokens--
		s.computed += f
		s.generated += f
		s.lastToken = now
		w.to(s, seqFinished)
		s.FinishedAt = now
		w.freeBlocks(s)
	}
	w.ff.gone = k
	w.running = slices.DeleteFunc(w.running, func(s *Seq) bool { return s.state == seqFinished })
	w.batch = slices.DeleteFunc(w.batch, func(s *Seq) bool { return s.state == seqFinished })
	for _, s := range leave[gone:k] {
		w.obs.Finished(now, s)
	}
	w.reportKV()
	if w.segment(f+limit) == f {
		return 0, false
	}
	return w.ff.ends[len(w.ff.ends)-1], true
}

// Settle ends the stretch at the current event, at now, leaving the worker
// as passes one by one would have left it. The pass boundaries before the
// current event are applied: those before now, and one at now if the
// current event comes after the end of the pass (ended) and after the drive
// scan that starts the next one (started). It returns the end of the pass
// in progress and true; or false when the current event falls between a
// pass end at now and the next pass's start: that pass has ended, the
// worker is idle, and the caller schedules the drive scan passes one by one
// would have. The last pass of a stretch ends as a plain pass, FinishPass.
func (w *Worker) Settle(now des.Time, ended, started bool) (des.Time, bool) {
	if !w.Stretching() {
		panic(fmt.Sprintf("worker %d: Settle without a stretch", w.cfg.ID))
	}
	ends := w.ff.ends
	last, m := len(ends)-1, 0
	for m < last && (ends[m] < now || ends[m] == now && started) {
		m++
	}
	if j := w.nextCross(); w.ff.crossed > m+1 || j > 0 && j <= m+1 {
		panic(fmt.Sprintf("worker %d: settled after pass %d with crossings taken to pass %d", w.cfg.ID, m+1, w.ff.crossed))
	}
	w.advance(m)
	end := ends[m]
	w.ff.ends = ends[:0]
	if m < last && end == now && ended {
		w.FinishPass(now)
		return 0, false
	}
	return end, true
}

// advance applies the stretch's first m pass boundaries: every request
// emits m tokens, and passes 2..m+1 start; the boundaries also emit the
// tokens of the requests that left since, not reported when they left.
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
	extra := 0
	for j := 1; j < m; j++ {
		extra += int(w.ff.extra[j])
		w.obs.Tokens(ends[j], n+extra, ends[j]-ends[j-1])
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
