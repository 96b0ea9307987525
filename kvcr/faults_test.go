package kvcr

import (
	"fmt"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// errorsFault is a pull_errors fault of key 3 in force for the whole run.
func errorsFault(rate float64, atStart bool) PullErrors {
	return PullErrors{Key: 3, End: des.MaxTime, Rate: rate, AtStart: atStart, RNG: des.NewRNG(1).Stream("faults/test")}
}

// wantFault checks the fault a pull's row names: event key and blocks lost
// (key -1: none).
func wantFault(t *testing.T, p *Pull, key, lost int) {
	t.Helper()
	k, l, ok := p.Fault()
	if !ok {
		k, l = -1, 0
	}
	if k != key || l != lost {
		t.Errorf("pull %d: fault %d, %d blocks lost; want %d, %d", p.ID, k, l, key, lost)
	}
}

// TestPullErrorAtStart (rule: a write that could not be posted: nothing
// moves, the source's pins go at once, the target hears one latency
// later). A pull of blocks 1-4 (2 MB) staged at 0 from worker 0 to worker
// 1, rate 1 at the start: its write was to be posted at 1 ms (staging +
// latency). It is not: no first byte, no write (first_byte_ns and
// write_end_ns -1), the source's 4 pins, held from staging (4 pinned at
// 0.5 ms), go at 1 ms (0 pinned at 1.5 ms),
// the target keeps its 4 reserved slots until it hears at 1 + 1 = 2 ms:
// failed, end_ns 2 ms, nothing landed, the link moved 0 bytes and the
// row's bytes are 0 (none was sent). A move keeps its source copy: the 4
// blocks stay ready at worker 0, none removed.
func TestPullErrorAtStart(t *testing.T) {
	for _, move := range []bool{false, true} {
		g := newRig(Config{})
		g.k.StartPullErrors(errorsFault(1, true))
		g.k.Store(0, 0, stores(chain(1, 4)))
		g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Move: move, Blocks: all})
		before, pinned, slots := -1, -1, -1
		g.q.Schedule(500*des.Microsecond, des.PhaseSample, 0, probe(func(des.Time) { before = g.k.Pool(0).Pinned() }), 0)
		g.q.Schedule(1500*des.Microsecond, des.PhaseSample, 0, probe(func(des.Time) {
			pinned, slots = g.k.Pool(0).Pinned(), g.k.Pool(1).Used()
		}), 0)
		g.run()
		p := g.r().pulls[1]
		wantPull(t, p, Failed, -1, 2*ms, 0)
		wantFault(t, p, 3, 0)
		if p.WriteEndNs != -1 || p.Bytes != 0 || g.r().ended[1] != "2ms 0" || before != 4 || pinned != 0 || slots != 4 || g.k.Moved(0) != 0 || g.k.Pool(1).Used() != 0 {
			t.Errorf("move %v: write ended %v, %d bytes, answered %q, %d pins at 0.5 ms, at 1.5 ms %d pins and %d slots, moved %d bytes, %d slots left",
				move, p.WriteEndNs, p.Bytes, g.r().ended[1], before, pinned, slots, g.k.Moved(0), g.k.Pool(1).Used())
		}
		for i := range 4 {
			if !g.k.Pool(0).Ready(at(chain(1, 4), i)) {
				t.Errorf("move %v: source lost block %d", move, i+1)
			}
		}
		if g.k.C.Faults.PullsFailedInjected != 1 || g.k.C.PullsFailed != 1 || g.k.C.MoveRemovedBlocks != 0 || g.k.C.BytesPulled != 0 {
			t.Errorf("move %v: counters %+v", move, g.k.C)
		}
		g.check(t)
	}
}

// TestPullErrorAtEnd (rule: the bytes crossed the link, the completion
// reports an error, nothing lands). A move of blocks 1-4 (2 MB) staged at
// 0: first byte 1 ms, 2 MB at 1 GB/s, last byte 3 ms. Rate 1 at the end:
// the link moved the 2 MB (the source's pins held until then: 4 at 2 ms),
// bytes_pulled stays 0, the pull fails at 3 ms (end_ns = write_end_ns = 3
// ms), the target's 4 slots are freed, the source's pins go without a
// refresh and the move keeps its copy: 4 blocks ready at worker 0, none
// removed, none lost.
func TestPullErrorAtEnd(t *testing.T) {
	g := newRig(Config{})
	g.k.StartPullErrors(errorsFault(1, false))
	g.k.Store(0, 0, stores(chain(1, 4)))
	g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Move: true, Blocks: all})
	pinned := -1
	g.q.Schedule(2*ms, des.PhaseSample, 0, probe(func(des.Time) { pinned = g.k.Pool(0).Pinned() }), 0)
	g.run()
	p := g.r().pulls[1]
	wantPull(t, p, Failed, ms, 3*ms, 0)
	wantFault(t, p, 3, 0)
	if p.WriteEndNs != 3*ms || pinned != 4 || g.k.Moved(0) != 2_000_000 || g.k.C.BytesPulled != 0 || g.k.Pool(1).Used() != 0 {
		t.Errorf("write ended %v, %d pins at 2 ms, link moved %d, bytes pulled %d, target slots %d",
			p.WriteEndNs, pinned, g.k.Moved(0), g.k.C.BytesPulled, g.k.Pool(1).Used())
	}
	for i := range 4 {
		if !g.k.Pool(0).Ready(at(chain(1, 4), i)) {
			t.Errorf("source lost block %d", i+1)
		}
	}
	if g.k.C.Faults.PullsFailedInjected != 1 || g.k.C.MoveRemovedBlocks != 0 || g.k.C.MoveLostBlocks != 0 {
		t.Errorf("counters %+v", g.k.C)
	}
	g.check(t)
}

// TestPullErrorsOverlap (rule: each pull_errors fault in force draws for
// every write, independently; an error at the start strikes first). Two
// faults at rate 1, key 3 at the end and key 5 at the start: the write of
// a 2-block copy staged at 0 is not posted (failed at 1 + 1 = 2 ms),
// credited to key 5; key 3 at the start and key 5 at the end, credited to
// key 3. Rate 0 strikes nothing: success at 2 ms (1 MB from 1 ms).
func TestPullErrorsOverlap(t *testing.T) {
	fault := func(key int, rate float64, atStart bool) PullErrors {
		f := errorsFault(rate, atStart)
		f.Key, f.RNG = key, des.NewRNG(1).Stream(fmt.Sprint("faults/", key))
		return f
	}
	for _, tc := range []struct {
		name   string
		faults []PullErrors
		out    Outcome
		first  des.Time
		landed int
		key    int
	}{
		{"end 3, start 5", []PullErrors{fault(3, 1, false), fault(5, 1, true)}, Failed, -1, 0, 5},
		// the other way round: the start still strikes first, whatever the keys' order
		{"start 3, end 5", []PullErrors{fault(3, 1, true), fault(5, 1, false)}, Failed, -1, 0, 3},
		{"rate 0", []PullErrors{fault(3, 0, false)}, Success, ms, 2, -1},
	} {
		g := newRig(Config{})
		for _, f := range tc.faults {
			g.k.StartPullErrors(f)
		}
		g.k.Store(0, 0, stores(chain(1, 2)))
		g.stage(0, 1, 1, chain(1, 2), Hint{Source: 0, Blocks: all})
		g.run()
		wantPull(t, g.r().pulls[1], tc.out, tc.first, 2*ms, tc.landed)
		wantFault(t, g.r().pulls[1], tc.key, 0)
		g.check(t)
	}
}

// TestPullErrorsWindowEnd (rule: a write posted at or after the window's
// end is not drawn). The 2-block copy of TestPullErrorsOverlap is posted
// at 1 ms. Rate 1 at the start with the window ending at 1 ms: posted at
// the end, not struck: success at 2 ms. Ending 1 ns later: struck, failed
// at 1 + 1 = 2 ms with nothing landed.
func TestPullErrorsWindowEnd(t *testing.T) {
	for _, tc := range []struct {
		end    des.Time
		out    Outcome
		first  des.Time
		landed int
	}{{ms, Success, ms, 2}, {ms + 1, Failed, -1, 0}} {
		g := newRig(Config{})
		f := errorsFault(1, true)
		f.End = tc.end
		g.k.StartPullErrors(f)
		g.k.Store(0, 0, stores(chain(1, 2)))
		g.stage(0, 1, 1, chain(1, 2), Hint{Source: 0, Blocks: all})
		g.run()
		wantPull(t, g.r().pulls[1], tc.out, tc.first, 2*ms, tc.landed)
		g.check(t)
	}
}

// TestPullErrorsHalf: rate 0.5 at the end over 400 one-block copies (0.5
// ms each, staged 10 ms apart, alternately to workers 1 and 2, so none
// overlaps): one draw each, in first-byte order, from one stream. Pull i
// fails exactly when the stream's i-th draw is below 0.5 (the draws are
// made here, from the same stream, to say which); the same run again fails
// the same pulls, and the count is within 4 standard deviations of the
// binomial mean (200 ± 40).
func TestPullErrorsHalf(t *testing.T) {
	run := func() (string, int64) {
		g := newRig(Config{G2Capacity: 1000})
		g.k.StartPullErrors(errorsFault(0.5, false))
		for i := range 400 {
			g.k.Store(0, 0, stores(chain(10_000+i, 1)))
		}
		for i := range 400 {
			g.stage(des.Time(i)*10*ms, int32(1+i%2), int64(i), chain(10_000+i, 1), Hint{Source: 0, Blocks: all})
		}
		g.run()
		g.check(t)
		outs := make([]byte, 400)
		for i := range outs {
			outs[i] = g.r().pulls[int64(i)].Outcome.String()[0]
		}
		if g.k.C.PullsFailed != g.k.C.Faults.PullsFailedInjected || g.k.C.PullsSuccess+g.k.C.PullsFailed != 400 {
			t.Errorf("counters %+v", g.k.C)
		}
		return string(outs), g.k.C.Faults.PullsFailedInjected
	}
	a, n := run()
	b, _ := run()
	if a != b {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
	r := errorsFault(0.5, false).RNG
	want := make([]byte, 400)
	for i := range want {
		want[i] = 's'
		if r.Float64() < 0.5 {
			want[i] = 'f'
		}
	}
	if a != string(want) {
		t.Errorf("outcomes\n%s\nwant, by the stream's draws,\n%s", a, want)
	}
	if n < 160 || n > 240 {
		t.Errorf("%d of 400 failed, want 200 ± 40", n)
	}
}

// noticesFault is a notices fault of key 3 on every target for the whole
// run.
func noticesFault(delay des.Time, lost bool) Notices {
	return Notices{Key: 3, End: des.MaxTime, All: true, Delay: delay, Lost: lost}
}

// TestLostNoticeMove (rule: a move's source removes its copy on a
// completed write; its target counts the data only if the notice arrives
// before its deadline). Rig timeouts: operation 4 ms, abandon 8 ms. A move
// of blocks 1-4 (2 MB) to worker 1 staged at 0: first byte 1 ms, last byte
// 3 ms. Its notice lost: the source removes its 4 blocks at 3 ms
// (move_removed_blocks 4, write_end_ns 3 ms), the target holds its 4
// slots (at 7 ms) and expires at 0 + 8 ms, freeing them: end_ns 8 ms,
// move_lost_blocks 4, the event's fault_blocks_lost 4. Delayed 2 ms: the
// notice comes at 5 ms < 8 ms: success at 5 ms, 4 landed, nothing lost.
// Delayed 5 ms it comes at 8 ms, the deadline itself, and 6 ms at 9 ms:
// expired at 8 ms, 4 lost.
func TestLostNoticeMove(t *testing.T) {
	for _, tc := range []struct {
		delay    des.Time
		lost     bool
		out      Outcome
		end      des.Time
		landed   int
		blocks   int
		answered string
	}{
		{0, true, Expired, 8 * ms, 0, 4, "8ms 0"},
		{2 * ms, false, Success, 5 * ms, 4, 0, "5ms 4"},
		{5 * ms, false, Expired, 8 * ms, 0, 4, "8ms 0"},
		{6 * ms, false, Expired, 8 * ms, 0, 4, "8ms 0"},
	} {
		name := fmt.Sprintf("delay %v lost %v", tc.delay, tc.lost)
		g := newRig(Config{})
		g.k.StartNotices(noticesFault(tc.delay, tc.lost))
		g.k.Store(0, 0, stores(chain(1, 4)))
		g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Move: true, Blocks: all})
		slots := -1
		g.q.Schedule(7*ms, des.PhaseSample, 0, probe(func(des.Time) { slots = g.k.Pool(1).Used() }), 0)
		g.run()
		p := g.r().pulls[1]
		wantPull(t, p, tc.out, ms, tc.end, tc.landed)
		wantFault(t, p, 3, tc.blocks)
		if p.WriteEndNs != 3*ms || g.r().ended[1] != tc.answered || g.k.C.MoveRemovedBlocks != 4 || g.k.C.MoveLostBlocks != int64(tc.blocks) || g.k.Pool(0).Used() != 0 {
			t.Errorf("%s: write ended %v, answered %q, removed %d, lost %d, source holds %d", name,
				p.WriteEndNs, g.r().ended[1], g.k.C.MoveRemovedBlocks, g.k.C.MoveLostBlocks, g.k.Pool(0).Used())
		}
		if wantSlots := 4; slots != wantSlots || g.k.Pool(1).Used() != tc.landed {
			t.Errorf("%s: target slots %d at 7 ms (want 4), %d at the end (want %d)", name, slots, g.k.Pool(1).Used(), tc.landed)
		}
		if g.r().visible["1/1"] != (tc.landed > 0) {
			t.Errorf("%s: block 1 visible at the target: %v", name, g.r().visible["1/1"])
		}
		if g.k.C.Faults.NoticesLost+g.k.C.Faults.NoticesDelayed != 1 || (g.k.C.Faults.NoticesLost == 1) != tc.lost {
			t.Errorf("%s: notices lost %d, delayed %d", name, g.k.C.Faults.NoticesLost, g.k.C.Faults.NoticesDelayed)
		}
		g.check(t)
	}
}

// TestLateNoticeCopy: the same pull as a copy, whose target waits the
// operation timeout, 4 ms. Delayed 0.5 ms: the notice comes at 3.5 ms:
// success then. Delayed 1 ms it comes at 4 ms, the deadline: expired at 4
// ms; lost: expired at 4 ms. The source keeps its copy every time, its
// pins released with a refresh at the last byte (3 ms), and nothing is
// lost.
func TestLateNoticeCopy(t *testing.T) {
	for _, tc := range []struct {
		delay  des.Time
		lost   bool
		out    Outcome
		end    des.Time
		landed int
	}{
		{500 * des.Microsecond, false, Success, 3500 * des.Microsecond, 4},
		{ms, false, Expired, 4 * ms, 0},
		{0, true, Expired, 4 * ms, 0},
	} {
		g := newRig(Config{})
		g.k.StartNotices(noticesFault(tc.delay, tc.lost))
		g.k.Store(0, 0, stores(chain(1, 4)))
		g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Blocks: all})
		g.run()
		p := g.r().pulls[1]
		wantPull(t, p, tc.out, ms, tc.end, tc.landed)
		wantFault(t, p, 3, 0)
		if p.WriteEndNs != 3*ms || g.k.Pool(0).Used() != 4 || g.k.C.MoveLostBlocks != 0 || g.k.Pool(1).Used() != tc.landed {
			t.Errorf("delay %v lost %v: write ended %v, source holds %d, lost %d, target holds %d",
				tc.delay, tc.lost, p.WriteEndNs, g.k.Pool(0).Used(), g.k.C.MoveLostBlocks, g.k.Pool(1).Used())
		}
		g.check(t)
	}
}

// TestNoticesOverlap (rule: where notices faults overlap on one target, a
// lost notice wins over a delayed one, otherwise the longest delay; the
// first such fault in key order is credited). A copy of blocks 1-4 (2 MB)
// staged at 0: last byte at 3 ms, its target's deadline 4 ms (operation
// timeout). Key 3 delays 0.5 ms (the notice would come at 3.5 ms, in time)
// and key 5 delays 2 ms (at 5 ms, too late): the longer wins, expired at 4
// ms, credited to key 5. Key 3 delays 0.5 ms and key 5 loses it: lost,
// expired at 4 ms, key 5. Key 3 loses it and key 5 delays 0.5 ms: lost,
// key 3. Key 3 and key 5 both delay 2 ms: key 3, the first.
func TestNoticesOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b Notices
		key  int
	}{
		{Notices{Delay: 500 * des.Microsecond}, Notices{Delay: 2 * ms}, 5},
		{Notices{Delay: 500 * des.Microsecond}, Notices{Lost: true}, 5},
		{Notices{Lost: true}, Notices{Delay: 500 * des.Microsecond}, 3},
		{Notices{Delay: 2 * ms}, Notices{Delay: 2 * ms}, 3},
	} {
		g := newRig(Config{})
		for i, f := range []Notices{tc.a, tc.b} {
			f.Key, f.End, f.All = 3+2*i, des.MaxTime, true
			g.k.StartNotices(f)
		}
		g.k.Store(0, 0, stores(chain(1, 4)))
		g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Blocks: all})
		g.run()
		wantPull(t, g.r().pulls[1], Expired, ms, 4*ms, 0)
		wantFault(t, g.r().pulls[1], tc.key, 0)
		g.check(t)
	}
}

// TestNoticeScope: a notices fault acts on writes into its targets whose
// last byte lands before its window's end. Targets [2]: a copy to worker
// 1 is on time (success at 3 ms). All targets, window ending at 3 ms: the
// last byte at 3 ms is past it, on time too. Ending at 3 ms + 1 ns: lost.
func TestNoticeScope(t *testing.T) {
	for _, tc := range []struct {
		f   Notices
		out Outcome
	}{
		{Notices{Key: 3, End: des.MaxTime, Targets: []int32{2}, Lost: true}, Success},
		{Notices{Key: 3, End: 3 * ms, All: true, Lost: true}, Success},
		{Notices{Key: 3, End: 3*ms + 1, All: true, Lost: true}, Expired},
	} {
		g := newRig(Config{})
		g.k.StartNotices(tc.f)
		g.k.Store(0, 0, stores(chain(1, 4)))
		g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Blocks: all})
		g.run()
		if p := g.r().pulls[1]; p.Outcome != tc.out {
			t.Errorf("%+v: %v, want %v", tc.f, p.Outcome, tc.out)
		}
		g.check(t)
	}
}

// TestAwaitingNoticeRemovals (the state awaiting its notice): the move of
// TestLostNoticeMove, its notice lost. Its source removed at 5 ms changes
// nothing (the write is over): expired at 8 ms, 4 lost. Its target
// removed, or its engine taken down (its G2 kept or lost), at 5 ms:
// failed at 5 ms, its slots freed; the 4 blocks its source removed at the
// last byte were never counted at the target, so they are lost too.
func TestAwaitingNoticeRemovals(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  Outcome
		end  des.Time
	}{
		{"source removed", Expired, 8 * ms},
		{"target removed", Failed, 5 * ms},
		{"target down, G2 kept", Failed, 5 * ms},
		{"target down, G2 lost", Failed, 5 * ms},
	} {
		g := newRig(Config{})
		g.k.StartNotices(noticesFault(0, true))
		g.k.Store(0, 0, stores(chain(1, 4)))
		g.stage(0, 1, 1, chain(1, 4), Hint{Source: 0, Move: true, Blocks: all})
		ev := map[string]des.Handler{"source removed": removeAt{g, 0}, "target removed": removeAt{g, 1},
			"target down, G2 kept": downAt{g, 1, false}, "target down, G2 lost": downAt{g, 1, true}}[tc.name]
		g.q.Schedule(5*ms, des.PhaseLifecycle, 0, ev, 0)
		g.run()
		wantPull(t, g.r().pulls[1], tc.out, ms, tc.end, 0)
		if g.k.C.MoveLostBlocks != 4 || g.k.C.MoveRemovedBlocks != 4 {
			t.Errorf("%s: %d removed, %d lost, want 4 and 4", tc.name, g.k.C.MoveRemovedBlocks, g.k.C.MoveLostBlocks)
		}
		g.check(t)
	}
}

// downAt takes worker w's engine down, its G2 lost or kept.
type downAt struct {
	g    *rig
	w    int32
	lost bool
}

func (d downAt) Fire(now des.Time, _, _ uint64) {
	d.g.life.Set(d.w, lifecycle.Down)
	d.g.k.EngineDown(now, d.w, d.lost)
}

// TestLostCopyWindow is the lost-copy window in numbers (docs/faults.md,
// "notices"), with the runtime's timeouts, operation 1 s and abandon 5 s:
// a pull of 10 blocks (5 MB) staged at 0, first byte 1 ms, last byte 6
// ms, its notice delayed or lost. A copy ends by 1 s: its notice counts
// when 6 ms + delay < 1 s; it never loses a block. A move waits 5 s: its
// notice counts when 6 ms + delay < 5 s; past that its source has removed
// the 10 blocks and the target drops them.
func TestLostCopyWindow(t *testing.T) {
	const s = des.Second
	for _, tc := range []struct {
		delay              des.Time // -1: lost
		copyOut, moveOut   Outcome
		copyEnd, moveEnd   des.Time
		copyLost, moveLost int64
	}{
		{500 * ms, Success, Success, 506 * ms, 506 * ms, 0, 0},
		{s, Expired, Success, s, s + 6*ms, 0, 0},
		{2 * s, Expired, Success, s, 2*s + 6*ms, 0, 0},
		{4900 * ms, Expired, Success, s, 4906 * ms, 0, 0},
		{5 * s, Expired, Expired, s, 5 * s, 0, 10},
		{10 * s, Expired, Expired, s, 5 * s, 0, 10},
		{-1, Expired, Expired, s, 5 * s, 0, 10},
	} {
		for _, move := range []bool{false, true} {
			g := newRig(Config{OperationTimeout: s, AbandonTimeout: 5 * s})
			g.k.StartNotices(noticesFault(max(tc.delay, 0), tc.delay < 0))
			g.k.Store(0, 0, stores(chain(1, 10)))
			g.stage(0, 1, 1, chain(1, 10), Hint{Source: 0, Move: move, Blocks: all})
			g.run()
			out, end, lost := tc.copyOut, tc.copyEnd, tc.copyLost
			if move {
				out, end, lost = tc.moveOut, tc.moveEnd, tc.moveLost
			}
			landed := 0
			if out == Success {
				landed = 10
			}
			wantPull(t, g.r().pulls[1], out, ms, end, landed)
			if g.k.C.MoveLostBlocks != lost {
				t.Errorf("delay %v move %v: %d blocks lost, want %d", tc.delay, move, g.k.C.MoveLostBlocks, lost)
			}
			g.check(t)
		}
	}
}
