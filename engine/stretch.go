package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
)

// A stretch is a run of quiet decode passes that a worker goes through as
// one: the caller schedules one event at the end of its last pass instead of
// an end and a drive scan per pass. Pass 1 is the pass StartPass began. A
// stretch of k passes is quiet when, pass by pass, each pass boundary before
// the last would change nothing but the decode progress:
//
//   - every running request is in the batch and decodes one token (its
//     prompt is computed and committed, its first token emitted);
//   - no request needs a new block before pass k starts, and none emits its
//     last token before pass k ends;
//   - admission at the start of passes 2..k does nothing: running is at
//     max_num_seqs, or the batch uses the whole token budget, or every
//     waiting request waits for a pull or a G2 load.
//
// At a boundary, then, every request emits one token, computed and
// generated advance by one, the blocks in use stay the same, and the next
// pass's batch differs from the one before only in its context: N more
// prior tokens and N more attention pairs, N the batch size. The stretch
// keeps each pass's end, computed with the timing model exactly as
// StartPass would, pass by pass.
type stretch struct {
	ends  []des.Time // ends[j] is the end of pass j+1; empty when no stretch
	batch Batch      // scratch: the batch of the pass being timed (a local would escape through the timing interface)
}

// MaxStretch is the most passes one stretch covers.
const MaxStretch = 256

// Stretching reports whether the pass in progress is a stretch.
func (w *Worker) Stretching() bool { return len(w.ff.ends) > 0 }

// Stretch extends the pass StartPass has just begun, ending at end, into a
// stretch of at most limit passes (see stretch) when the next passes are
// quiet. It returns the end of the stretch's last pass, or end when fewer
// than two passes are quiet. The caller answers for what the worker cannot
// see: no stored blocks wait for the pass end to go to G2, and nothing
// outside the worker acts at the pass boundaries (no parked pull is
// rescanned there).
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
	// token is out and its prompt blocks are committed.
	k, bs := limit, w.cfg.BlockSize
	for _, s := range w.batch {
		// Pass j starts with s.computed+j-1 tokens computed and needs room
		// for one more; pass j < k must not emit s's last token.
		k = min(k, s.blocks.n*bs-s.computed, s.output-s.generated)
	}
	if k < 2 {
		return end
	}
	w.ff.batch = w.stats
	b := &w.ff.batch
	ends := append(w.ff.ends[:0], end)
	for range k - 1 {
		b.PriorContext += int64(n)
		b.AttnPairs += int64(n)
		end += w.slowed(max(w.timing.PassTime(b), 1))
		ends = append(ends, end)
	}
	w.ff.ends = ends
	return end
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
	for j := 1; j < m; j++ {
		w.obs.Tokens(ends[j], n, ends[j]-ends[j-1])
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
