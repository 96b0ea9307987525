package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

type log struct {
	events  []string
	stored  int
	removed int
}

func (l *log) BlocksStored(_ int32, h []block.Run)  { l.stored += block.Blocks(h) }
func (l *log) BlocksRemoved(_ int32, h []block.Run) { l.removed += block.Blocks(h) }
func (l *log) FirstToken(now des.Time, s *Seq) {
	l.events = append(l.events, fmt.Sprintf("%v first %d", now, s.Req.ID))
}
func (l *log) Token(now des.Time, s *Seq, gap des.Time) {
	l.events = append(l.events, fmt.Sprintf("%v token %d gap %v", now, s.Req.ID, gap))
}
func (l *log) Tokens(ends []des.Time, n int) {
	for j := 1; j < len(ends); j++ {
		l.events = append(l.events, fmt.Sprintf("%v %d tokens gap %v", ends[j], n, ends[j]-ends[j-1]))
	}
}
func (l *log) Finished(now des.Time, s *Seq) {
	l.events = append(l.events, fmt.Sprintf("%v done %d", now, s.Req.ID))
}
func (l *log) Ignored(now des.Time, s *Seq) {
	l.events = append(l.events, fmt.Sprintf("%v ignored %d", now, s.Req.ID))
}

// run drives one worker without KVCR through arrivals (sorted by time)
// until it is idle, checking its invariants after every step, and returns
// the sequences.
func run(t *testing.T, w *Worker, reqs []*workload.Request) []*Seq {
	t.Helper()
	return runKV(t, w, &hostKV{}, reqs)
}

// req is a request of in prompt tokens and out output tokens arriving at
// at, whose chain of 16-token blocks is chain's.
func req(id int64, at des.Time, in, out int, chain uint64) *workload.Request {
	return chainOf(id, at, in, out, chain, 16)
}

// chainOf is req for blocks of blockSize tokens.
func chainOf(id int64, at des.Time, in, out int, chain uint64, blockSize int) *workload.Request {
	blocks := make([]uint64, in/blockSize)
	for i := range blocks {
		blocks[i] = block.ChainHash(chain, uint64(i), 0)
	}
	ch := block.Hashed(blocks)
	return &workload.Request{ID: id, Arrival: at, InputTokens: in, OutputTokens: out, Blocks: ch, Path: testChains.Intern(ch, nil)}
}

// testChains is the chain store of the tests' requests and workers, as the
// simulator keeps one per run; the tests never collect it.
var testChains = &block.Chains{}

func cfg() Config {
	return Config{BlockSize: 16, GPUBlocks: 100, MaxNumSeqs: 8, MaxBatchedTokens: 8192, ChunkedPrefill: true, PrefixCaching: true, Chains: testChains}
}

var fixed = Fixed{Prefill: 10 * des.Millisecond, Decode: 5 * des.Millisecond}

func newWorker(t *testing.T, c Config, tm Timing) (*Worker, *log) {
	l := &log{}
	w, err := New(c, tm, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w, l
}

// TestSingleRequest: 100-token prompt, 3 output tokens, fixed 10 ms prefill
// and 5 ms decode. Pass 1 computes the prompt and emits token 1 at 10 ms;
// passes 2 and 3 decode tokens 2 and 3 at 15 and 20 ms. The prompt has
// 100/16 = 6 full blocks, all stored; 7 blocks are held and then freed.
func TestSingleRequest(t *testing.T) {
	w, l := newWorker(t, cfg(), fixed)
	s := run(t, w, []*workload.Request{req(0, 0, 100, 3, 1)})[0]
	want := []string{"10ms first 0", "15ms token 0 gap 5ms", "20ms token 0 gap 5ms", "20ms done 0"}
	if !slices.Equal(l.events, want) {
		t.Errorf("events %v\nwant %v", l.events, want)
	}
	if s.FirstTokenAt != 10*des.Millisecond || s.FinishedAt != 20*des.Millisecond || s.ComputedPromptTokens != 100 {
		t.Errorf("seq %+v", s)
	}
	if l.stored != 6 || w.G1Used() != 0 || w.Passes() != 3 || w.BusyTime() != 20*des.Millisecond {
		t.Errorf("stored %d used %d passes %d busy %v", l.stored, w.G1Used(), w.Passes(), w.BusyTime())
	}
}

// TestChunkedPrefill: budget 64 tokens, 150-token prompt: chunks of 64, 64
// and 22 tokens end at 10, 20 and 30 ms; the third emits token 1, a decode
// pass emits token 2 at 35 ms. Without chunked prefill the prompt does not
// fit the budget and the worker refuses it.
func TestChunkedPrefill(t *testing.T) {
	c := cfg()
	c.MaxBatchedTokens = 64
	w, l := newWorker(t, c, fixed)
	run(t, w, []*workload.Request{req(0, 0, 150, 2, 1)})
	want := []string{"30ms first 0", "35ms token 0 gap 5ms", "35ms done 0"}
	if !slices.Equal(l.events, want) {
		t.Errorf("events %v\nwant %v", l.events, want)
	}
	c.ChunkedPrefill = false
	w, _ = newWorker(t, c, fixed)
	if w.Fits(req(0, 0, 150, 2, 1)) || !w.Fits(req(0, 0, 64, 2, 1)) {
		t.Error("Fits without chunked prefill")
	}
}

// TestPrefixHitSkipsCompute: linear timing 1 ms + 0.1 ms per prefill token.
// A (100 tokens) takes 1 + 10 = 11 ms. B has the same chain and arrives at
// 20 ms: it hits A's 6 cached blocks (96 tokens) and computes 4 tokens: 1.4
// ms, first token at 21.4 ms. C differs from block 3 on (its chain salt
// differs, so it shares nothing) and computes all 100 tokens.
func TestPrefixHitSkipsCompute(t *testing.T) {
	lin := Linear{Base: 1e6, PerPrefillToken: 1e5}
	w, _ := newWorker(t, cfg(), lin)
	seqs := run(t, w, []*workload.Request{req(0, 0, 100, 1, 1), req(1, 20*des.Millisecond, 100, 1, 1), req(2, 40*des.Millisecond, 100, 1, 2)})
	a, b, c := seqs[0], seqs[1], seqs[2]
	if a.FinishedAt != 11*des.Millisecond || a.G1HitTokens != 0 || a.ComputedPromptTokens != 100 {
		t.Errorf("A %+v", a)
	}
	if b.FirstTokenAt != 21_400_000 || b.G1HitTokens != 96 || b.ComputedPromptTokens != 4 {
		t.Errorf("B %+v", b)
	}
	if c.G1HitTokens != 0 || c.FirstTokenAt != 51*des.Millisecond {
		t.Errorf("C %+v", c)
	}
	// A fully cached prompt still recomputes its last token: a 96-token
	// prompt of 6 cached blocks hits 5 (80 tokens) and computes 16.
	w, _ = newWorker(t, cfg(), lin)
	seqs = run(t, w, []*workload.Request{req(0, 0, 96, 1, 1), req(1, 20*des.Millisecond, 96, 1, 1)})
	if seqs[1].G1HitTokens != 80 || seqs[1].ComputedPromptTokens != 16 {
		t.Errorf("full hit %+v", seqs[1])
	}
	c0 := cfg()
	c0.PrefixCaching = false
	w, l := newWorker(t, c0, lin)
	seqs = run(t, w, []*workload.Request{req(0, 0, 100, 1, 1), req(1, 20*des.Millisecond, 100, 1, 1)})
	if seqs[1].G1HitTokens != 0 || l.stored != 0 {
		t.Errorf("prefix_caching off: hit %d stored %d", seqs[1].G1HitTokens, l.stored)
	}
}

// TestPreemption: block size 4, G1 of 4 blocks, fixed timing. A and B: 4
// prompt tokens, 6 output tokens each. Pass 1 (0-10 ms) prefills both (one
// block each) and emits their first tokens. Passes 2-5 decode (15, 20, 25,
// 30 ms); pass 2 takes each a second block, so G1 is full. At 30 ms A needs
// a third block for its 9th token: B, admitted last, is preempted (frees 2
// blocks, to the waiting front) and A decodes alone, finishing at 35 ms. At
// 35 ms B (9 tokens now) hits its cached prompt block (4 tokens) and
// recomputes 5 tokens in a prefill pass: its 6th token at 45 ms, 15 ms after
// its 5th at 30 ms.
func TestPreemption(t *testing.T) {
	c := Config{BlockSize: 4, GPUBlocks: 4, MaxNumSeqs: 8, MaxBatchedTokens: 64, ChunkedPrefill: true, PrefixCaching: true, Chains: testChains}
	w, l := newWorker(t, c, fixed)
	mk := func(id int64) *workload.Request {
		ch := block.Hashed([]uint64{uint64(100 + id)})
		return &workload.Request{ID: id, InputTokens: 4, OutputTokens: 6, Blocks: ch, Path: testChains.Intern(ch, nil)}
	}
	seqs := run(t, w, []*workload.Request{mk(0), mk(1)})
	a, b := seqs[0], seqs[1]
	if a.FinishedAt != 35*des.Millisecond || a.Preemptions != 0 {
		t.Errorf("A %+v", a)
	}
	if b.FinishedAt != 45*des.Millisecond || b.Preemptions != 1 || b.FirstTokenAt != 10*des.Millisecond ||
		b.G1HitTokens != 0 || b.ComputedPromptTokens != 4 {
		t.Errorf("B %+v", b)
	}
	if last := l.events[len(l.events)-2]; last != "45ms token 1 gap 15ms" {
		t.Errorf("B's last token: %q", last)
	}
}

// TestMaxNumSeqs: one sequence at a time, so the second request waits for
// the first to finish (10 ms prefill + 5 ms decode) and ends at 30 ms.
func TestMaxNumSeqs(t *testing.T) {
	c := cfg()
	c.MaxNumSeqs = 1
	w, _ := newWorker(t, c, fixed)
	seqs := run(t, w, []*workload.Request{req(0, 0, 32, 2, 1), req(1, 0, 32, 2, 2)})
	if seqs[0].FinishedAt != 15*des.Millisecond || seqs[1].FinishedAt != 30*des.Millisecond {
		t.Errorf("finish %v %v, want 15ms 30ms", seqs[0].FinishedAt, seqs[1].FinishedAt)
	}
}

// TestLRUEviction: G1 of 3 blocks of 16 tokens. A (32 tokens, 1 output)
// caches 2 blocks and frees them. B (32 tokens, other chain) needs 2 blocks:
// it takes the never-used block and the least recently freed, A's block 1
// (freed first since blocks free last-first), evicting it; A's block 0
// survives. C (A's chain, 40 tokens) hits block 0 only (16 tokens) and takes
// the 2 blocks B freed, evicting both: 3 evictions in all.
func TestLRUEviction(t *testing.T) {
	c := cfg()
	c.GPUBlocks = 3
	w, l := newWorker(t, c, fixed)
	seqs := run(t, w, []*workload.Request{req(0, 0, 32, 1, 1), req(1, 20*des.Millisecond, 32, 1, 2), req(2, 40*des.Millisecond, 40, 1, 1)})
	if l.removed != 3 || seqs[2].G1HitTokens != 16 {
		t.Errorf("removed %d, C hit %d; want 3 and 16", l.removed, seqs[2].G1HitTokens)
	}
}

// TestCheckFindsCorruption: a reference count that no longer matches the
// requests holding the block is reported, naming the worker and the block.
// The 100-token prompt holds ceil(100/16) = 7 blocks, the 6 full ones cached
// after its first pass; one extra reference on block 3, then 5 more on the
// pool's sum, make the pool count 7+1+5 = 13 against the 7 the running
// request holds.
func TestCheckFindsCorruption(t *testing.T) {
	w, _ := newWorker(t, cfg(), fixed)
	s := w.Enqueue(req(0, 0, 100, 3, 1), false)
	end, ok := w.StartPass(0)
	if !ok {
		t.Fatal("no pass")
	}
	w.FinishPass(end)
	if err := w.Check(); err != nil {
		t.Fatal(err)
	}
	seg := s.Req.Path[0].Seg
	sps := *w.pool.segs.Get(seg)
	if len(sps) != 1 || sps[0] != (span{V: cached{refs: 1}, Lo: 0, Hi: 6}) {
		t.Fatalf("spans %v; want blocks 0-5 with one reference", sps)
	}
	*w.pool.segs.Get(seg) = spans{{V: cached{refs: 1}, Lo: 0, Hi: 3}, {V: cached{refs: 2}, Lo: 3, Hi: 4}, {V: cached{refs: 1}, Lo: 4, Hi: 6}}
	w.pool.refsum++
	if err := w.Check(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("worker 0: block (%d, 3) has 2 references, 1 holders", seg)) {
		t.Errorf("got %v", err)
	}
	w.pool.refsum += 5
	if err := w.CheckQuick(); err == nil || !strings.Contains(err.Error(), "requests hold 7 block references, the pool counts 13") {
		t.Errorf("quick: %v", err)
	}
}

// TestDropCutsBusy: a pass Drop abandons is busy only up to the drop. A
// 32-token request, 2 output, fixed timing: the prefill pass 0-10 ms ends,
// the decode pass begins at 10 ms (to end at 15) and is dropped at 12 ms:
// busy 10 + 2 = 12 ms over 2 passes. After Restart, a pass 20-30 ms runs to
// its end: 22 ms over 3. A Drop with no pass in progress changes nothing.
func TestDropCutsBusy(t *testing.T) {
	w, _ := newWorker(t, cfg(), fixed)
	w.Enqueue(req(0, 0, 32, 2, 1), false)
	end, _ := w.StartPass(0)
	w.FinishPass(end)
	if _, ok := w.StartPass(end); !ok {
		t.Fatal("no decode pass")
	}
	w.Drop(12 * des.Millisecond)
	if w.BusyTime() != 12*des.Millisecond || w.Passes() != 2 {
		t.Errorf("after the drop: busy %v over %d passes, want 12ms over 2", w.BusyTime(), w.Passes())
	}
	w.Restart()
	w.Enqueue(req(1, 20*des.Millisecond, 32, 1, 2), false)
	end, _ = w.StartPass(20 * des.Millisecond)
	w.FinishPass(end)
	w.Drop(40 * des.Millisecond)
	if w.BusyTime() != 22*des.Millisecond || w.Passes() != 3 {
		t.Errorf("after the restart: busy %v over %d passes, want 22ms over 3", w.BusyTime(), w.Passes())
	}
}

// TestG1Cached: a new worker caches nothing; one 100-token request commits
// its 6 full blocks, which stay cached (free, still to be hit) after it
// finishes; Drop evicts them.
func TestG1Cached(t *testing.T) {
	w, _ := newWorker(t, cfg(), fixed)
	if w.G1Cached() {
		t.Error("a new worker caches blocks")
	}
	run(t, w, []*workload.Request{req(0, 0, 100, 2, 1)})
	if !w.G1Cached() || w.G1Used() != 0 {
		t.Errorf("after its request: cached %v, used %d", w.G1Cached(), w.G1Used())
	}
	w.Drop(0)
	if w.G1Cached() {
		t.Error("a dropped worker caches blocks")
	}
}
