package engine

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

// Config holds one worker's scheduler and cache knobs.
type Config struct {
	ID               int32
	BlockSize        int  // tokens per KV block
	GPUBlocks        int  // G1 capacity, blocks
	MaxNumSeqs       int  // running requests at most
	MaxBatchedTokens int  // token budget of one pass
	ChunkedPrefill   bool // split prompts across passes
	PrefixCaching    bool // reuse cached prompt blocks
	// Admission is the rule for waiting requests whose G2 hits load
	// asynchronously; "" is AdmitCurrent.
	Admission Admission
	// Chains is the run's chain store, which the requests' paths name: G1
	// finds a cached block by its name there and holds a reference on its
	// segment. Requests must come with their paths (workload.Request.Path).
	Chains *block.Chains
}

// Validate reports the first knob out of range.
func (c Config) Validate() error {
	switch {
	case c.BlockSize < MinBlockSize:
		return fmt.Errorf("block_size must be at least %d", MinBlockSize)
	case c.GPUBlocks < MinGPUBlocks:
		return fmt.Errorf("gpu_blocks must be at least %d", MinGPUBlocks)
	case c.MaxNumSeqs < MinMaxNumSeqs:
		return fmt.Errorf("max_num_seqs must be at least %d", MinMaxNumSeqs)
	case c.MaxBatchedTokens < MinMaxBatchedTokens:
		return fmt.Errorf("max_batched_tokens must be at least %d", MinMaxBatchedTokens)
	case c.Admission != "" && !slices.Contains(Admissions, c.Admission):
		return fmt.Errorf("unknown admission rule %q", c.Admission)
	}
	return nil
}

// Admission names how a worker admits waiting requests while some of
// them wait for a KVCR pull or load their G2 hits to G1 asynchronously,
// holding the G1 blocks the load fills: the value of the scenario key
// cluster.engine.admission (docs/model.md, "Admission around asynchronous
// loads").
type Admission string

// The admission rules.
const (
	// AdmitCurrent is vLLM's admission since its fixes of the deadlock
	// with asynchronous KV loads. The requests the scan has skipped (those
	// waiting for a pull or whose pull has ended, parked, loading or
	// loaded, or held back from a load) stay ahead of the other waiting
	// requests, and a preempted request goes behind them, not to the
	// front; a load starts only when its blocks leave free what every
	// in-flight prefill still needs for its whole length; no load starts
	// behind a skipped request that holds no blocks; and a pass whose
	// running requests were all preempted admits at once.
	AdmitCurrent Admission = "current"
	// AdmitV011 is vLLM 0.11's: a preempted request at the front of the
	// queue, a load admitted whenever its blocks are free. Waiting requests
	// whose loads finished can hold the blocks the head of the queue needs
	// while nothing runs, and the worker stops.
	AdmitV011 Admission = "vllm-0.11"
)

// Admissions lists the admission rules, in the order errors name them.
var Admissions = []Admission{AdmitCurrent, AdmitV011}

// Observer hears what a worker does. Calls happen inside StartPass,
// FinishPass, Settle, LoadDone and Drop, in a deterministic order. Cache changes
// come in batches at the end of each call, removals first; the slices are
// only valid during the call.
type Observer interface {
	// BlocksStored: full prompt blocks entered the worker's prefix cache,
	// as runs in the order they entered (ascending within a request's
	// commit, requests in the order they committed).
	BlocksStored(worker int32, blocks []block.Run)
	// BlocksRemoved: cached blocks were evicted for reuse (or the worker
	// was dropped), as runs in no particular order.
	BlocksRemoved(worker int32, blocks []block.Run)
	// FirstToken: the pass ending now finished s's prompt.
	FirstToken(now des.Time, s *Seq)
	// Token: a later output token of s, gap after the one before it.
	Token(now des.Time, s *Seq, gap des.Time)
	// Tokens: n later output tokens at each of ends[1:], one from each
	// request of a stretch's pass (see Stretch), each ends[j]-ends[j-1]
	// after the one before it. It stands for n Token calls at each, in an
	// order of its own. ends is the worker's: it is not kept.
	Tokens(ends []des.Time, n int)
	// Finished: s emitted its last token; its blocks are freed.
	Finished(now des.Time, s *Seq)
	// Ignored: s can never be scheduled again and leaves the worker (see
	// Worker.ignore); its blocks are freed.
	Ignored(now des.Time, s *Seq)
}

// Worker is one simulated vLLM engine.
type Worker struct {
	cfg    Config
	timing Timing
	obs    Observer
	kv     HostKV // nil without KVCR
	pool   *blockPool

	waiting     deque
	running     []*Seq        // admission order; preemption takes the last
	batch       []*Seq        // scheduled in the pass in progress
	touched     int           // the sink of touch's loads, read by nothing
	spare       [][]block.Run // finished requests' emptied holdings, for Enqueue to reuse: growing one a request cost most of the loop's allocations
	stored      []block.Run   // blocks committed in the current call, reported at its end
	waitingHeld int           // blocks held by waiting requests (their G2 hits, loading or loaded)
	waitingNeed int           // blocks those requests need for their whole length, held ones included
	skipped     int           // AdmitCurrent: the waiting requests the scan has skipped, at the queue's front
	busy        bool
	passEnd     des.Time // while busy and not stretching: the end of the pass in progress, up to which busyNs counts it
	ff          stretch
	v011        bool    // cfg.Admission is AdmitV011
	slow        float64 // a slow fault's factor on the passes it starts; 0 or 1: none

	passes int64
	busyNs des.Time
	stats  Batch
}

// New returns an idle worker with an empty G1. kv is its KVCR, nil for none.
func New(cfg Config, timing Timing, obs Observer, kv HostKV) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("worker %d: %w", cfg.ID, err)
	}
	w := &Worker{cfg: cfg, timing: compiled(timing), obs: obs, kv: kv, v011: cfg.Admission == AdmitV011}
	w.pool = newBlockPool(cfg.GPUBlocks, cfg.Chains)
	return w, nil
}

// Busy reports whether a pass is in progress.
func (w *Worker) Busy() bool { return w.busy }

// HasWork reports whether any request is waiting or running.
func (w *Worker) HasWork() bool { return w.waiting.len() > 0 || len(w.running) > 0 }

// Requests is the number of requests waiting or running.
func (w *Worker) Requests() int { return w.waiting.len() + len(w.running) }

// Running and Waiting are the queue lengths.
func (w *Worker) Running() int { return len(w.running) }

// Waiting is the number of requests not admitted.
func (w *Worker) Waiting() int { return w.waiting.len() }

// Passes is the number of passes started; BusyTime their total duration.
func (w *Worker) Passes() int64 { return w.passes }

// BusyTime is the total duration of the passes started, a pass in
// progress to its end, and one Drop abandoned up to its drop.
func (w *Worker) BusyTime() des.Time { return w.busyNs }

// G1Used is the number of G1 blocks referenced by requests.
func (w *Worker) G1Used() int { return w.pool.used() }

// G1Cached reports whether the worker's prefix cache holds any block
// (referenced or free, still to be hit).
func (w *Worker) G1Cached() bool { return w.pool.segs.Len() > 0 }

// G1Capacity is the G1 size in blocks.
func (w *Worker) G1Capacity() int { return w.pool.capacity() }

// Fits reports whether a request could ever run on this worker: its KV
// fits in G1 at once, and without chunked prefill its prompt fits in one
// pass. Its KV is every token but the last output token, which is sampled
// and never computed: a pass computes the token sampled before it.
func (w *Worker) Fits(r *workload.Request) bool {
	if !w.cfg.ChunkedPrefill && r.InputTokens > w.cfg.MaxBatchedTokens {
		return false
	}
	return ceilDiv(r.InputTokens+r.OutputTokens-1, w.cfg.BlockSize) <= w.cfg.GPUBlocks
}

// Enqueue adds a request at the back of the waiting queue. hinted says it
// carries a kv.fetch hint, staged when the scheduler first reaches it. The
// request must fit the worker (Fits).
func (w *Worker) Enqueue(r *workload.Request, hinted bool) *Seq {
	w.notStretching("Enqueue")
	s := &Seq{Req: r, input: r.InputTokens, output: r.OutputTokens, chain: r.Blocks.Len(), Worker: w.cfg.ID, ScheduledAt: -1, FirstTokenAt: -1, FinishedAt: -1, state: seqWaiting}
	if k := len(w.spare) - 1; k >= 0 {
		s.blocks.runs, w.spare = w.spare[k], w.spare[:k]
	}
	if hinted && w.kv != nil {
		s.state = seqHinted
	}
	w.waiting.pushBack(s)
	return s
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// StartPass schedules one pass at now and returns its end time. It reports
// false, changing nothing, when there is nothing to schedule.
func (w *Worker) StartPass(now des.Time) (des.Time, bool) {
	if w.busy {
		panic(fmt.Sprintf("worker %d: pass started while busy", w.cfg.ID))
	}
	w.batch = w.batch[:0]
	budget, preempted := w.scheduleRunning(w.cfg.MaxBatchedTokens)
	if !preempted {
		w.admitWaiting(now, budget)
	}
	w.reportKV()
	if len(w.batch) == 0 {
		return 0, false
	}
	w.stats = Batch{Seqs: len(w.batch), UsedBlocks: w.pool.used(), TotalBlocks: w.pool.capacity()}
	for _, s := range w.batch {
		if s.computed < s.input || s.computed+s.sched < s.tokens() || s.sched > 1 {
			w.stats.PrefillTokens += s.sched
		} else {
			w.stats.DecodeTokens += s.sched
		}
		w.stats.PriorContext += int64(s.computed)
		w.stats.AttnPairs += int64(s.sched) * int64(2*s.computed+s.sched+1) / 2
	}
	d := w.slowed(max(w.timing.PassTime(&w.stats), 1))
	w.busy = true
	w.passes++
	w.busyNs += d
	w.passEnd = now + d
	return now + d, true
}

// touch reads a field of each of seqs before a loop over them does more:
// the loads are independent, so the processor fetches the sequences' first
// cache lines together, where the loop would wait for each in turn (with
// thousands of workers a sequence is out of the cache by its worker's next
// pass). It changes nothing.
func (w *Worker) touch(seqs []*Seq) {
	t := 0
	for _, s := range seqs {
		t |= s.sched
	}
	w.touched = t
}

// scheduleRunning is a pass's first half: the running requests, in
// admission order, each given its next tokens out of budget, preempting
// the most recently admitted (LIFO) while G1 has too few free blocks. It
// returns the budget left and whether a preemption keeps the waiting queue
// out of this pass.
func (w *Worker) scheduleRunning(budget int) (int, bool) {
	preempted := false
	w.touch(w.running)
	for i := 0; i < len(w.running); i++ {
		s := w.running[i]
		n := min(s.tokens()-s.computed, budget)
		if n == 0 {
			continue
		}
		need := ceilDiv(s.computed+n, w.cfg.BlockSize) - s.blocks.n
		for need > w.pool.free() {
			victim := w.running[len(w.running)-1]
			w.running = w.running[:len(w.running)-1]
			w.preempt(victim)
			preempted = true
			if victim == s {
				break
			}
		}
		if len(w.running) <= i {
			break // s itself was preempted
		}
		w.grow(s, need)
		s.sched = n
		budget -= n
		w.batch = append(w.batch, s)
	}
	if preempted && len(w.batch) == 0 && !w.v011 {
		// Every running request was preempted (each one with budget left
		// is scheduled or preempted): vLLM's engine schedules its next step
		// at once, and that step admits from the waiting queue, the budget
		// whole.
		preempted = false
	}
	return budget, preempted
}

// admitWaiting is a pass's second half: the waiting requests, first come
// first served, admitted while budget and max_num_seqs allow. A request
// waiting for its pull or load is skipped, not a blocker; a hinted or
// parked one is staged first.
func (w *Worker) admitWaiting(now des.Time, budget int) {
	blockless := false // the scan has skipped a waiting request holding no blocks
	for i := 0; budget > 0 && len(w.running) < w.cfg.MaxNumSeqs && i < w.waiting.len(); {
		s := w.waiting.at(i)
		switch s.state {
		case seqPulling, seqLoading:
			w.skip(i, &blockless) // waits for its pull or load: skipped, not a blocker
			i++
			continue
		case seqHinted, seqParked:
			switch w.kv.Stage(now, s, w.g1Prefix(s), w.reusable(s)) {
			case StageWait:
				w.to(s, seqPulling)
				w.skip(i, &blockless)
				i++
				continue
			case StageParked:
				w.to(s, seqParked)
				w.skip(i, &blockless) // staged again at the next scan
				i++
				continue
			}
			w.to(s, seqWaiting)
		}
		n, res := w.admit(now, s, budget, blockless)
		if res == admitNoRoom {
			break
		}
		if res == admitTooLong {
			w.ignore(now, i)
			continue
		}
		if res == admitWaits {
			w.skip(i, &blockless)
			i++
			continue
		}
		w.unqueue(i)
		w.to(s, seqRunning)
		w.running = append(w.running, s)
		if s.ScheduledAt < 0 {
			s.ScheduledAt = now
		}
		s.sched = n
		budget -= n
		w.batch = append(w.batch, s)
	}
}

// reusable is how many leading blocks of s's chain a hit may cover: vLLM
// computes at least the last token, so hits stop one token short.
func (w *Worker) reusable(s *Seq) int {
	return min(s.chain, (s.tokens()-1)/w.cfg.BlockSize)
}

// G1Prefix counts the leading blocks, at most limit, of the chain whose
// path is given that w's G1 caches. It changes nothing.
func (w *Worker) G1Prefix(path []block.Piece, limit int) int {
	n, _ := w.pool.hitPrefix(path, limit)
	return n
}

// g1Prefix counts the leading blocks of s's reusable chain cached in G1.
func (w *Worker) g1Prefix(s *Seq) int { return w.G1Prefix(s.Req.Path, w.reusable(s)) }

// admitResult says how an admission attempt went.
type admitResult uint8

const (
	admitRun     admitResult = iota // admitted: runs this pass
	admitNoRoom                     // not enough budget or free blocks: admission stops
	admitWaits                      // skipped: loading its G2 hits into blocks it holds, or (AdmitCurrent) held back from its load, holding none
	admitTooLong                    // without chunked prefill, more tokens than any pass takes
)

// skip passes over waiting request i, which stays where it is. Under
// AdmitCurrent it joins the skipped requests at the queue's front: the
// scan reaches i only past every request in front of it, all skipped. If
// it holds no blocks, skip sets *blockless, the scan's note that it has
// skipped such a request.
func (w *Worker) skip(i int, blockless *bool) {
	w.skipped = max(w.skipped, i+1)
	if w.waiting.at(i).blocks.n == 0 {
		*blockless = true
	}
}

// unqueue takes waiting request i out of the queue.
func (w *Worker) unqueue(i int) {
	w.waiting.removeAt(i)
	if i < w.skipped {
		w.skipped--
	}
}

// reserved is what AdmitCurrent keeps free when a load starts: the blocks
// the in-flight prefills still need to hold their whole length (vLLM's
// reservation). Those are the waiting requests whose G2 hits are loading or
// have loaded, and the running requests whose chunk in this pass leaves part
// of their length to compute; but such a chunk took the rest of the budget,
// and no admission follows it in the pass, so only the waiting ones count.
func (w *Worker) reserved() int { return w.waitingNeed - w.waitingHeld }

// ignore ends waiting request i, which can never run again: without
// chunked prefill a pass must take all its remaining tokens, and after a
// preemption it has to recompute its prompt and every token it generated,
// more than the budget. (Its prompt alone fits, or it would have been
// rejected at arrival; with its prompt blocks still cached it would
// recompute only the rest.) vLLM V0 finishes such a request as ignored at
// that point, the scheduler's prompt limit being the budget without
// chunked prefill; vLLM V1 cannot meet it, as it refuses a max_model_len
// above the budget without chunked prefill. It holds no blocks: only a
// preempted request meets the case (seqNext).
func (w *Worker) ignore(now des.Time, i int) {
	s := w.waiting.at(i)
	w.unqueue(i)
	w.to(s, seqIgnored)
	s.FinishedAt = now
	w.obs.Ignored(now, s)
}

// admit tries to start a waiting request: the longest prefix cached in G1,
// then its continuation in the worker's G2 (loaded to G1 first), then the
// blocks for the tokens it computes this pass. It changes nothing when the
// request does not fit the budget or the free blocks. blockless says the
// scan has skipped a waiting request holding no blocks.
func (w *Worker) admit(now des.Time, s *Seq, budget int, blockless bool) (int, admitResult) {
	bs := w.cfg.BlockSize
	loaded := s.state == seqLoaded // a finished load left it holding its hits
	hits, freeHits, g2 := 0, 0, 0  // freeHits: hit blocks on the free list, which allocation cannot use
	if !loaded && w.cfg.PrefixCaching {
		limit := w.reusable(s)
		hits, freeHits = w.pool.hitPrefix(s.Req.Path, limit)
		if w.kv != nil {
			g2 = w.kv.HostPrefix(s, hits, limit)
		}
	}
	have := s.blocks.n + hits + g2 // blocks held once admitted, before new ones
	done := s.computed
	if !loaded {
		done = (hits + g2) * bs
	}
	n := s.tokens() - done
	if n > w.cfg.MaxBatchedTokens && !w.cfg.ChunkedPrefill {
		return 0, admitTooLong
	}
	if n > budget && !w.cfg.ChunkedPrefill {
		return 0, admitNoRoom
	}
	n = min(n, budget)
	need := ceilDiv(done+n, bs) - have // new blocks for this pass's tokens
	free := w.pool.free() - freeHits
	if g2 > 0 && !w.v011 && w.kv.AsyncLoads() {
		if blockless {
			return 0, admitWaits // no load behind a skipped request holding nothing
		}
		free -= w.reserved()
	}
	if g2+need > free {
		return 0, admitNoRoom
	}
	if !loaded {
		w.pool.touch(&s.blocks, s.Req.Path, hits)
		s.computed, s.committed = hits*bs, hits
		if s.state == seqWaiting { // its first admission: the hits are its record
			s.G1HitTokens = hits * bs
			pulled := 0
			if s.pullLanded > 0 {
				pulled = min(max(hits+g2-s.pullFrom, 0), s.pullLanded, g2)
			}
			s.G2HitTokens, s.PulledTokens = (g2-pulled)*bs, pulled*bs
		}
		if g2 > 0 {
			w.grow(s, g2)
			s.loadFrom, s.loadN = hits, g2
			if !w.kv.Load(now, s, hits, g2) {
				w.to(s, seqLoading)
				w.waitingHeld += s.blocks.n
				w.waitingNeed += ceilDiv(s.tokens(), bs)
				return 0, admitWaits
			}
			w.landLoad(s)
		}
	} else {
		w.waitingHeld -= s.blocks.n // running from now on
		w.waitingNeed -= ceilDiv(s.tokens(), bs)
	}
	w.grow(s, need)
	return n, admitRun
}

// LoadDone ends the G2 load of a waiting request: its loaded blocks enter
// the prefix cache as computed, and it may be admitted.
func (w *Worker) LoadDone(s *Seq) {
	w.notStretching("LoadDone")
	w.landLoad(s)
	w.to(s, seqLoaded)
	w.reportKV()
}

// reportKV hands the cache changes of the current call to the observer,
// removals first.
func (w *Worker) reportKV() {
	if len(w.pool.evicted) > 0 {
		w.obs.BlocksRemoved(w.cfg.ID, w.pool.evicted)
		w.pool.evicted = w.pool.evicted[:0]
	}
	if len(w.stored) > 0 {
		w.obs.BlocksStored(w.cfg.ID, w.stored)
		w.stored = w.stored[:0]
	}
}

// landLoad commits loaded blocks to the prefix cache.
func (w *Worker) landLoad(s *Seq) {
	end := s.loadFrom + s.loadN
	w.stored = w.pool.commit(&s.blocks, s.Req.Path, s.loadFrom, end, w.stored)
	s.computed, s.committed = end*w.cfg.BlockSize, end
	s.loadN = 0
}

// PullDone ends a waiting request's pull, in flight or parked: landed
// blocks from block from on are in the worker's G2 (zero when the pull
// brought nothing).
func (w *Worker) PullDone(s *Seq, from, landed int) {
	w.notStretching("PullDone")
	w.to(s, seqWaiting)
	s.pullFrom, s.pullLanded = from, landed
}

// grow gives s n new blocks.
func (w *Worker) grow(s *Seq, n int) { w.pool.alloc(&s.blocks, n) }

// freeBlocks releases s's blocks, last first, so the tail of its chain is
// evicted before its head.
func (w *Worker) freeBlocks(s *Seq) { w.pool.release(&s.blocks) }

// preempt frees a running request's blocks and puts it back in the waiting
// queue: under AdmitCurrent behind the skipped requests at its front, under
// AdmitV011 at the very front. It recomputes everything when admitted again.
func (w *Worker) preempt(s *Seq) {
	w.to(s, seqPreempted)
	w.freeBlocks(s)
	s.computed, s.committed, s.sched = 0, 0, 0
	s.Preemptions++
	at := w.skipped
	if w.v011 {
		at = 0
	}
	w.waiting.insertAt(at, s)
}

// FinishPass ends the pass in progress at now: tokens advance, full prompt
// blocks enter the prefix cache, tokens are emitted and finished requests
// free their blocks.
func (w *Worker) FinishPass(now des.Time) {
	if !w.busy {
		panic(fmt.Sprintf("worker %d: no pass to finish", w.cfg.ID))
	}
	w.notStretching("FinishPass")
	w.busy = false
	bs := w.cfg.BlockSize
	finished := false
	w.touch(w.batch)
	for _, s := range w.batch {
		if s.computed < s.input {
			s.ComputedPromptTokens += min(s.computed+s.sched, s.input) - s.computed
		}
		s.computed += s.sched
		s.sched = 0
		if w.cfg.PrefixCaching {
			if full := min(s.chain, s.computed/bs); s.committed < full {
				w.stored = w.pool.commit(&s.blocks, s.Req.Path, s.committed, full, w.stored)
				s.committed = full
			}
		}
		if s.computed < s.tokens() {
			continue // prompt chunk: no token yet
		}
		s.generated++
		if s.FirstTokenAt < 0 {
			s.FirstTokenAt = now
			w.obs.FirstToken(now, s)
		} else {
			w.obs.Token(now, s, now-s.lastToken)
		}
		s.lastToken = now
		if s.generated == s.output {
			w.to(s, seqFinished)
			s.FinishedAt = now
			w.freeBlocks(s)
			w.spare, s.blocks.runs = append(w.spare, s.blocks.runs), nil // for the next request's
			finished = true
		}
	}
	if finished {
		kept := w.running[:0]
		for _, s := range w.running {
			if s.state != seqFinished {
				kept = append(kept, s)
			}
		}
		clear(w.running[len(kept):])
		w.running = kept
		for _, s := range w.batch {
			if s.state == seqFinished {
				w.obs.Finished(now, s)
			}
		}
	}
	clear(w.batch)
	w.batch = w.batch[:0]
	w.reportKV()
}

// Drop empties a removed worker at now: every request leaves (running
// ones in admission order, then waiting ones in queue order, as
// returned), every block is freed and every cached block reported
// removed. A pass in progress is abandoned: its busy time ends at now. The
// worker must not be used again, but after Restart.
func (w *Worker) Drop(now des.Time) []*Seq {
	w.notStretching("Drop")
	if w.busy && now < w.passEnd {
		w.busyNs -= w.passEnd - now // StartPass (and Settle) counted it to its end
	}
	out := slices.Clone(w.running)
	for i := range w.waiting.len() {
		out = append(out, w.waiting.at(i))
	}
	for _, s := range out {
		w.to(s, seqDropped)
		w.freeBlocks(s)
	}
	w.pool.evictAll()
	w.reportKV()
	w.running, w.batch, w.waiting, w.waitingHeld, w.waitingNeed, w.skipped = nil, nil, deque{}, 0, 0, 0
	w.busy = false
	return out
}

// Restart gives a worker that Drop emptied a new, empty G1, for its engine
// to restart (a down fault, DESIGN.md section 12): unlike a removed
// worker's, it is used again. Its passes and busy time go on.
func (w *Worker) Restart() {
	w.pool = newBlockPool(w.cfg.GPUBlocks, w.cfg.Chains)
}
