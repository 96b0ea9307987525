package engine

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

const ms = des.Millisecond

// threeDecoding returns a worker (fixed timing: 10 ms prefill, 5 ms
// decode) whose three requests of 20 prompt tokens and 10 output tokens
// have had their prompt pass, 0 to 10 ms (first tokens at 10 ms), and
// whose first decode pass, from 10 ms, is extended into a stretch. Each
// request holds 2 blocks of 16 (room for 32 tokens, 20 computed) and has
// 9 tokens to go, so the stretch has min(32-20, 10-1) = 9 passes ending at
// 15, 20, ..., 55 ms; the last emits the last tokens.
func threeDecoding(t *testing.T) (*Worker, *log, []*Seq) {
	t.Helper()
	w, l := newWorker(t, cfg(), fixed)
	var seqs []*Seq
	for i := range int64(3) {
		seqs = append(seqs, w.Enqueue(req(i, 0, 20, 10, uint64(i+1)), false))
	}
	end, _ := w.StartPass(0)
	w.FinishPass(end)
	end, _ = w.StartPass(10 * ms)
	if end != 15*ms {
		t.Fatalf("first decode pass ends at %v", end)
	}
	if last := w.Stretch(end, MaxStretch); last != 55*ms || !w.Stretching() {
		t.Fatalf("stretch ends at %v, stretching %v; want 55ms true", last, w.Stretching())
	}
	return w, l, seqs
}

// TestPassEndsAt: threeDecoding's stretch stands for the pass ends at 15,
// 20, ..., 50 ms; its last, 55 ms, is its own event, and 10 ms (its
// start), 17 ms and 60 ms end no pass. No stretch: none.
func TestPassEndsAt(t *testing.T) {
	w, _, _ := threeDecoding(t)
	for at := des.Time(0); at <= 60*ms; at += ms {
		want := at >= 15*ms && at <= 50*ms && at%(5*ms) == 0
		if got := w.PassEndsAt(at); got != want {
			t.Errorf("PassEndsAt(%v) %v, want %v", at, got, want)
		}
	}
	w.Settle(55*ms, true, false)
	if w.PassEndsAt(50 * ms) {
		t.Error("PassEndsAt(50ms) true after the stretch ended")
	}
}

// TestSettle settles the stretch of threeDecoding at events placed among
// its boundaries. Passes and busy time count every pass started: the
// prompt pass (10 ms) and the decode passes (5 ms each) begun by then.
func TestSettle(t *testing.T) {
	for _, c := range []struct {
		name           string
		at             des.Time
		ended, started bool
		wantEnd        des.Time // 0: idle
		gen            int      // tokens each request has emitted
		passes         int64
		busy           des.Time
		lastTokens     string // the last line logged
	}{
		// An arrival at 27 ms: the boundaries at 15, 20 and 25 ms are
		// past; tokens 2-4 at 15, 20, 25 ms; pass 5 runs 25-30 ms.
		{"arrival 27ms", 27 * ms, true, true, 30 * ms, 4, 5, 30 * ms, "25ms 3 tokens gap 5ms"},
		// An arrival at 25 ms comes after the pass end and drive scan at
		// 25 ms: the same.
		{"arrival 25ms", 25 * ms, true, true, 30 * ms, 4, 5, 30 * ms, "25ms 3 tokens gap 5ms"},
		// A lifecycle event at 25 ms comes after the pass end but before
		// the drive scan: the worker is idle after its token at 25 ms,
		// with 4 passes started (to 25 ms).
		{"lifecycle 25ms", 25 * ms, true, false, 0, 4, 4, 25 * ms, "25ms token 2 gap 5ms"},
		// A transfer at 25 ms comes before the pass end: pass 4 (20-25
		// ms) is still in progress.
		{"transfer 25ms", 25 * ms, false, false, 25 * ms, 3, 4, 25 * ms, "20ms 3 tokens gap 5ms"},
		// A G2 load landing at 12 ms, in the first decode pass: nothing
		// is applied.
		{"load 12ms", 12 * ms, true, true, 15 * ms, 1, 2, 15 * ms, "10ms first 2"},
		// The stretch's own end at 55 ms: boundaries 15-50 ms are
		// applied, the last pass ends by FinishPass.
		{"end 55ms", 55 * ms, false, false, 55 * ms, 9, 10, 55 * ms, "50ms 3 tokens gap 5ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, l, seqs := threeDecoding(t)
			end, busy := w.Settle(c.at, c.ended, c.started)
			if busy != (c.wantEnd != 0) || end != c.wantEnd || w.Busy() != busy || w.Stretching() {
				t.Errorf("Settle: %v %v, Busy %v; want %v", end, busy, w.Busy(), c.wantEnd)
			}
			for _, s := range seqs {
				if s.Generated() != c.gen {
					t.Errorf("request %d generated %d, want %d", s.Req.ID, s.Generated(), c.gen)
				}
			}
			if w.Passes() != c.passes || w.BusyTime() != c.busy {
				t.Errorf("passes %d busy %v, want %d %v", w.Passes(), w.BusyTime(), c.passes, c.busy)
			}
			if got := l.events[len(l.events)-1]; got != c.lastTokens {
				t.Errorf("last event %q, want %q", got, c.lastTokens)
			}
		})
	}
}

// TestStretchInterrupted runs threeDecoding's worker with a fourth request
// (16 prompt tokens, 2 output tokens) arriving at 27 ms, settling the
// stretch then, and checks it against the same requests pass by pass:
//
//	 0-10 ms  prompts of 0-2; first tokens at 10 ms
//	10-30 ms  stretch settled at 27 ms: tokens at 15, 20, 25 ms; pass 25-30 ms runs on
//	30-45 ms  token 5 of 0-2 at 30 ms ends the pass; 3's prompt and 0-2's decode: 15 ms
//	45-50 ms  3 takes a block for its second token, its last: no stretch
//	50-65 ms  stretch of min(32-26, 10-7) = 3 passes: tokens at 55, 60, 65 ms, 0-2 done
//
// Ten passes, busy all 65 ms; 3 has its first token at 45 ms and ends at
// 50 ms.
func TestStretchInterrupted(t *testing.T) {
	w, l, seqs := threeDecoding(t)
	late := req(3, 27*ms, 16, 2, 4)
	end, busy := w.Settle(27*ms, true, true)
	if !busy || end != 30*ms {
		t.Fatalf("Settle at 27 ms: %v %v", end, busy)
	}
	seqs = append(seqs, w.Enqueue(late, false))
	ends := finishToIdle(t, w, end)
	if want := []des.Time{30 * ms, 45 * ms, 50 * ms, 55 * ms, 65 * ms}; !slices.Equal(ends, want) {
		t.Errorf("pass ends seen %v, want %v", ends, want)
	}
	ref, rl := newWorker(t, cfg(), fixed)
	refSeqs := run(t, ref, []*workload.Request{req(0, 0, 20, 10, 1), req(1, 0, 20, 10, 2), req(2, 0, 20, 10, 3), late})
	for i, s := range seqs {
		r := refSeqs[i]
		if s.FirstTokenAt != r.FirstTokenAt || s.FinishedAt != r.FinishedAt {
			t.Errorf("request %d: first %v done %v; pass by pass %v %v", i, s.FirstTokenAt, s.FinishedAt, r.FirstTokenAt, r.FinishedAt)
		}
	}
	if seqs[0].FinishedAt != 65*ms || seqs[3].FirstTokenAt != 45*ms || seqs[3].FinishedAt != 50*ms {
		t.Errorf("0 done at %v, 3 first at %v done at %v; want 65, 45, 50 ms", seqs[0].FinishedAt, seqs[3].FirstTokenAt, seqs[3].FinishedAt)
	}
	if w.Passes() != 10 || ref.Passes() != 10 || w.BusyTime() != 65*ms || ref.BusyTime() != 65*ms {
		t.Errorf("passes %d and %d, busy %v and %v; want 10, 65 ms", w.Passes(), ref.Passes(), w.BusyTime(), ref.BusyTime())
	}
	// The same inter-token gaps: 9 for each of 0-2 and one for 3, all 5
	// ms but 0-2's at 45 ms (15 ms).
	if g, r := gaps(l.events), gaps(rl.events); !maps.Equal(g, r) || g["5ms"] != 25 || g["15ms"] != 3 {
		t.Errorf("gaps %v, pass by pass %v", g, r)
	}
}

// finishToIdle finishes the pass ending at end and goes on pass by pass
// until the worker has no work, returning the pass ends it saw; a pass
// that becomes a stretch is settled at the stretch's end, both ends seen.
func finishToIdle(t *testing.T, w *Worker, end des.Time) []des.Time {
	t.Helper()
	ends := []des.Time{end}
	for {
		w.FinishPass(end)
		if !w.HasWork() {
			return ends
		}
		var ok bool
		if end, ok = w.StartPass(end); !ok {
			t.Fatal("no pass with work left")
		}
		if last := w.Stretch(end, MaxStretch); last != end {
			ends = append(ends, end)
			end, _ = w.Settle(last, false, false)
		}
		ends = append(ends, end)
	}
}

// gaps counts the inter-token gaps in a log's token lines, by gap.
func gaps(events []string) map[string]int {
	out := map[string]int{}
	for _, e := range events {
		f := strings.Fields(e) // "15ms token 0 gap 5ms" or "20ms 3 tokens gap 5ms"
		switch {
		case len(f) == 5 && f[1] == "token":
			out[f[4]]++
		case len(f) == 5 && f[2] == "tokens":
			n, _ := strconv.Atoi(f[1])
			out[f[4]] += n
		}
	}
	return out
}

// TestSlowed: a slow fault's pass time is factor x the timing model's,
// rounded to the nearest nanosecond, half away from zero: 3 ns x 1.5 = 4.5
// ns is 5 ns; 5 ms x 3 is 15 ms; 1 ns x 1.2 = 1.2 ns is 1 ns; factor 1
// changes nothing.
func TestSlowed(t *testing.T) {
	w := &Worker{}
	for _, c := range []struct {
		factor  float64
		d, want des.Time
	}{{1.5, 3, 5}, {3, 5 * des.Millisecond, 15 * des.Millisecond}, {1, 7, 7}, {1.2, 1, 1},
		// a million-fold: 1 s lasts 1e15 ns; 3 hours (1.08e19 ns, past int64) and 1 hour (3.6e18 ns) last a quarter of virtual time (2.3e18)
		{1e6, 10800 * des.Second, des.MaxTime / 4}, {1e6, des.Second, 1e15}, {1e6, 3600 * des.Second, des.MaxTime / 4}} {
		w.slow = c.factor
		if got := w.slowed(c.d); got != c.want {
			t.Errorf("%v x %g = %v, want %v", c.d, c.factor, got, c.want)
		}
	}
}

// TestStretchCrosses: a stretch runs on past the passes at which its
// requests cross into new blocks, taking them at those passes' starts,
// and stops before the pass that would find G1 without a free block.
// Blocks of 4 tokens, G1 of 7 blocks, fixed timing (10 ms prefill, 5 ms
// decode). A has a 4-token prompt, B a 6-token one, 10 output tokens
// each. Pass 1 (0-10 ms) computes both prompts (1 and 2 blocks) and emits
// their first tokens. Pass 2 (10-15 ms) takes A a second block: 4 used, 3
// free. Pass j of the stretch begun at 10 ms starts with 4+j-1 (A) and
// 6+j-1 (B) tokens computed and computes one more, so A crosses at passes
// 5 and 9 (its 9th and 13th token) and B at 3 and 7: one block each at 20
// (B), 30 (A) and 40 ms (B), the starts of passes 3, 5 and 7; the fourth,
// at pass 9, would find none free, so the stretch is passes 1-8, to 50 ms.
// Passes one by one do the same: at 50 ms A needs its fourth block with
// none free and B, admitted last, is preempted; A emits its last token at
// 55 ms; B hits its cached prompt block (4 tokens), recomputes its other 11
// in a prefill pass and emits its last token at 65 ms. Eleven passes, busy
// 65 ms.
func TestStretchCrosses(t *testing.T) {
	w, l, seqs := crossingStretch(t)
	var crossed []string
	for {
		at, ok := w.NextCross()
		if !ok {
			break
		}
		if !w.CrossTo(at, true) {
			t.Fatalf("CrossTo(%v) took nothing at the crossing NextCross gave", at)
		}
		crossed = append(crossed, fmt.Sprintf("%v:%d", at, w.G1Used()))
		if err := w.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"20ms:5", "30ms:6", "40ms:7"}; !slices.Equal(crossed, want) {
		t.Errorf("crossings (time:blocks used) %v, want %v", crossed, want)
	}
	end, _ := w.Settle(50*ms, false, false)
	if ends, want := finishToIdle(t, w, end), []des.Time{50 * ms, 55 * ms, 65 * ms}; !slices.Equal(ends, want) {
		t.Errorf("pass ends from 50 ms %v, want %v (no stretch)", ends, want)
	}
	ref, rl := newWorker(t, crossingConfig(), fixed)
	refSeqs := run(t, ref, crossingRequests())
	for i, s := range seqs {
		r := refSeqs[i]
		if s.FinishedAt != r.FinishedAt || s.Preemptions != r.Preemptions {
			t.Errorf("request %d: done %v after %d preemptions; pass by pass %v, %d", i, s.FinishedAt, s.Preemptions, r.FinishedAt, r.Preemptions)
		}
	}
	if seqs[0].FinishedAt != 55*ms || seqs[1].FinishedAt != 65*ms || seqs[1].Preemptions != 1 {
		t.Errorf("A done at %v, B at %v after %d preemptions; want 55 ms, 65 ms, 1", seqs[0].FinishedAt, seqs[1].FinishedAt, seqs[1].Preemptions)
	}
	if w.Passes() != 11 || ref.Passes() != 11 || w.BusyTime() != 65*ms || ref.BusyTime() != 65*ms {
		t.Errorf("passes %d and %d, busy %v and %v; want 11, 65 ms", w.Passes(), ref.Passes(), w.BusyTime(), ref.BusyTime())
	}
	if g, r := gaps(l.events), gaps(rl.events); !maps.Equal(g, r) {
		t.Errorf("gaps %v, pass by pass %v", g, r)
	}
}

// crossingConfig, crossingRequests and crossingStretch are
// TestStretchCrosses's worker: blocks of 4 tokens, G1 of 7 blocks, fixed
// timing; A with a 4-token prompt and B with a 6-token one, 10 output
// tokens each; the prompts' pass ended at 10 ms and the stretch begun
// then, to 50 ms.
func crossingConfig() Config {
	c := cfg()
	c.BlockSize, c.GPUBlocks = 4, 7
	return c
}

func crossingRequests() []*workload.Request {
	return []*workload.Request{chainOf(0, 0, 4, 10, 1, 4), chainOf(1, 0, 6, 10, 2, 4)}
}

func crossingStretch(t *testing.T) (*Worker, *log, []*Seq) {
	t.Helper()
	w, l := newWorker(t, crossingConfig(), fixed)
	var seqs []*Seq
	for _, r := range crossingRequests() {
		seqs = append(seqs, w.Enqueue(r, false))
	}
	end, _ := w.StartPass(0)
	w.FinishPass(end)
	end, _ = w.StartPass(10 * ms)
	if last := w.Stretch(end, MaxStretch); last != 50*ms {
		t.Fatalf("stretch ends at %v, want 50ms", last)
	}
	return w, l, seqs
}

// TestCrossTo: TestStretchCrosses's stretch, its crossings at 20, 30 and
// 40 ms (5, 6 and 7 blocks in use after each), taken late. By 35 ms, the
// 20 and 30 ms ones: 6 blocks. At 40 ms, before the drive scan (not
// started), none; after it, the last: 7. Once more, none. Then Settle at
// the stretch's end leaves the worker as TestStretchCrosses's. In a second
// run the three are taken at once by CrossTo at 50 ms (each pass but the
// last starts before), and it goes as in the first; in a third, Settle at
// 50 ms with the crossings not taken panics.
func TestCrossTo(t *testing.T) {
	for _, way := range []string{"late", "at the end", "never"} {
		w, _, _ := crossingStretch(t)
		if way == "late" {
			for i, step := range []struct {
				at      des.Time
				started bool
				took    bool
				used    int
			}{
				{35 * ms, true, true, 6},
				{40 * ms, false, false, 6},
				{40 * ms, true, true, 7},
				{45 * ms, true, false, 7},
			} {
				if took := w.CrossTo(step.at, step.started); took != step.took || w.G1Used() != step.used {
					t.Errorf("step %d: CrossTo(%v, %v) took %v, %d blocks used; want %v, %d", i, step.at, step.started, took, w.G1Used(), step.took, step.used)
				}
			}
			if _, ok := w.NextCross(); ok {
				t.Error("a crossing is left after the last")
			}
		} else if way == "never" {
			func() {
				defer func() {
					if recover() == nil {
						t.Error("Settle with three crossings not taken: no panic")
					}
				}()
				w.Settle(50*ms, false, false)
			}()
			continue // the worker is left broken
		} else if w.G1Used() != 4 || !w.CrossTo(50*ms, false) {
			t.Fatalf("%d blocks used before CrossTo, want 4, and CrossTo to take the crossings", w.G1Used())
		}
		end, _ := w.Settle(50*ms, false, false)
		if w.G1Used() != 7 || end != 50*ms {
			t.Errorf("%s: settled with %d blocks used, the pass ending at %v; want 7, 50ms", way, w.G1Used(), end)
		}
		if err := w.Check(); err != nil {
			t.Fatal(err)
		}
		if ends, want := finishToIdle(t, w, end), []des.Time{50 * ms, 55 * ms, 65 * ms}; !slices.Equal(ends, want) {
			t.Errorf("%s: pass ends from 50 ms %v, want %v", way, ends, want)
		}
	}
}

// opaque hides a timing's type, so that Stretch times its passes through
// the Timing interface.
type opaque struct{ Timing }

// denseModels lists the model presets the roofline compiles (those whose
// weights read do not depend on the batch).
func denseModels() []Model {
	var dense []Model
	for _, m := range Models {
		if m.readsAll() {
			dense = append(dense, m)
		}
	}
	return dense
}

// TestRoofEndsExact: a stretch timed by the roofline fast path (roofEnds)
// ends every pass where the same stretch timed through the Timing
// interface, pass by pass, does: random dense models and GPUs, overheads,
// memory- and compute-bound passes, slow factors and batches of decoding
// requests, run to idle through every stretch they make, crossings taken.
func TestRoofEndsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dense := denseModels()
	stretches, passes := 0, 0
	for trial := range 150 {
		r := &Roofline{GPU: GPUs[rng.IntN(len(GPUs))], Model: dense[rng.IntN(len(dense))], TP: 1 + rng.IntN(4),
			MFU: []float64{0.5, 0.01, 0.001}[rng.IntN(3)] * (1 - rng.Float64()/2), MBU: 1 - rng.Float64()/2,
			Overhead: des.Time(rng.IntN(2_000_000))} // a low MFU makes passes compute bound
		c := cfg()
		c.GPUBlocks, c.MaxNumSeqs = 300+rng.IntN(3000), 1+rng.IntN(64)
		fast, _ := newWorker(t, c, r)
		slow, _ := newWorker(t, c, opaque{compiled(r)})
		if _, ok := fast.timing.(*rooflinePass); !ok {
			t.Fatalf("%s: timing %T", r.Model.Name, fast.timing)
		}
		if rng.IntN(3) == 0 {
			f := 1 + 2*rng.Float64()
			fast.SetSlow(f)
			slow.SetSlow(f)
		}
		for i := range 1 + rng.IntN(40) {
			in, out, chain := 16+rng.IntN(600), 2+rng.IntN(400), uint64(trial*1000+i)
			fast.Enqueue(req(int64(i), 0, in, out, chain), false)
			slow.Enqueue(req(int64(i), 0, in, out, chain), false)
		}
		now := des.Time(0)
		for fast.HasWork() {
			e1, ok1 := fast.StartPass(now)
			e2, ok2 := slow.StartPass(now)
			if !ok1 || !ok2 || e1 != e2 {
				t.Fatalf("trial %d at %v: passes end at %v %v and %v %v", trial, now, e1, ok1, e2, ok2)
			}
			l1, l2 := fast.Stretch(e1, MaxStretch), slow.Stretch(e2, MaxStretch)
			if l1 != l2 || !slices.Equal(fast.ff.ends, slow.ff.ends) {
				t.Fatalf("trial %d at %v: stretch ends %v, through the interface %v", trial, now, fast.ff.ends, slow.ff.ends)
			}
			if fast.Stretching() {
				stretches++
				passes += len(fast.ff.ends)
				for _, w := range []*Worker{fast, slow} {
					w.CrossTo(l1, false) // every crossing: every pass but the last starts before l1
					w.Settle(l1, false, false)
				}
			}
			fast.FinishPass(l1)
			slow.FinishPass(l1)
			now = l1
		}
	}
	if stretches < 300 || passes < 20*stretches {
		t.Fatalf("%d stretches of %d passes: too few to test", stretches, passes)
	}
	t.Logf("%d stretches of %d passes", stretches, passes)
}

// TestRoofEndsBounds: roofEnds's three ways (memory bound throughout,
// compute bound throughout, and crossing from one to the other, where it
// computes both terms) end every pass where PassTime, pass by pass, does:
// random dense models and GPUs, decode batches of 1 to 512 requests and
// stretches of 2 to MaxStretch passes. In two trials of three the MFU is
// set so that compute and memory times meet at the stretch's second pass,
// its last or one between, scaled by 1 ± 2^-e (e from 18 to 54): from just
// past the margin to within rounding of it, so that deciding the bound on
// the wrong passes or with a wrong margin moves a pass end.
func TestRoofEndsBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dense := denseModels()
	var bound [3]int // memory bound, compute bound, crossing
	for range 6000 {
		n, k := 1+rng.IntN(512), 2+rng.IntN(MaxStretch-1)
		ctx := int64(n) * (1 + rng.Int64N(4000))
		b := Batch{DecodeTokens: n, PriorContext: ctx, AttnPairs: ctx + int64(n)}
		at := func(j int) Batch { // pass j's batch
			c := b
			c.PriorContext += int64(j-1) * int64(n)
			c.AttnPairs += int64(j-1) * int64(n)
			return c
		}
		rf := &Roofline{GPU: GPUs[rng.IntN(len(GPUs))], Model: dense[rng.IntN(len(dense))], TP: 1 + rng.IntN(4),
			MFU: 1, MBU: 1 - rng.Float64()/2, Overhead: des.Time(rng.IntN(2_000_000))}
		r := compiled(rf).(*rooflinePass)
		if rng.IntN(3) == 0 {
			rf.MFU = []float64{0.5, 0.05, 0.005}[rng.IntN(3)]
		} else {
			meet := at([]int{2, k, 2 + rng.IntN(k-1)}[rng.IntN(3)])
			scale := math.Ldexp(1, -18-rng.IntN(37))
			if rng.IntN(2) == 0 {
				scale = -scale
			}
			rf.MFU = min(1, r.compute(&meet)/r.memory(&meet)*(1+scale)) // compute and memory meet there, or nearly
		}
		r = compiled(rf).(*rooflinePass)
		first, last := at(2), at(k)
		switch {
		case bounds(r.memory(&first), r.compute(&first), r.memory(&last), r.compute(&last)):
			bound[0]++
		case bounds(r.compute(&first), r.memory(&first), r.compute(&last), r.memory(&last)):
			bound[1]++
		default:
			bound[2]++
		}
		w := &Worker{stats: b, batch: make([]*Seq, n)}
		if rng.IntN(3) == 0 {
			w.slow = 1 + 2*rng.Float64()
		}
		start := des.Time(rng.Int64N(1e12))
		got := w.roofEnds(r, []des.Time{start}, k)
		want := []des.Time{start}
		for j := 2; j <= k; j++ {
			p := at(j)
			want = append(want, want[len(want)-1]+w.slowed(max(r.PassTime(&p), 1)))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s on %d x %s, MFU %g, %d requests, %d passes: roofEnds %v, PassTime %v", rf.Model.Name, rf.TP, rf.GPU.Name, rf.MFU, n, k, got, want)
		}
	}
	if min(bound[0], bound[1], bound[2]) < 100 {
		t.Fatalf("memory bound, compute bound, crossing: %v stretches: too few of one", bound)
	}
	t.Logf("memory bound, compute bound, crossing: %v stretches", bound)
}

// TestBounds: a term bounds a stretch when it is positive at both ends
// and the other is below it by more than 2^-20 at both: 1 against 0.5 does;
// 1 against 1-2^-21 does not (within the margin); a term negative at an end
// does not, whatever the other (-1 against -2 is larger only by sign); NaN
// never does.
func TestBounds(t *testing.T) {
	for _, c := range []struct {
		y0, x0, y1, x1 float64
		want           bool
	}{
		{1, 0.5, 2, 1.9, true},
		{1, 0, 1, 0, true},
		{1, 1 - 1.0/(1<<19), 1, 0.5, true},
		{1, 1 - 1.0/(1<<21), 1, 0.5, false},
		{1, 0.5, 1, 1 - 1.0/(1<<21), false},
		{-1, -2, 1, 0.5, false},
		{1, 0.5, -1, -2, false},
		{0, -1, 1, 0.5, false},
		{math.NaN(), 0.5, 1, 0.5, false},
		{1, math.NaN(), 1, 0.5, false},
	} {
		if got := bounds(c.y0, c.x0, c.y1, c.x1); got != c.want {
			t.Errorf("bounds(%g, %g, %g, %g) = %v, want %v", c.y0, c.x0, c.y1, c.x1, got, c.want)
		}
	}
}
