package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
)

// TestCheckRescans plants the violation checkRescans looks for. In
// parkLines R3 parks at the idle worker 1 at 14 ms and stays parked until
// the store landing at 15 ms; worker 0 runs the filler R2 then. A probe at
// 14.5 ms (before that instant's rescan wakes worker 1) counts a stretch
// as running: the check after worker 1's drive scan names worker 1, and so
// does the whole-cluster look after worker 0's scan had it started one
// (its end handle set); with no stretch counted, or at worker 0 alone,
// neither fails. The run itself then goes on unharmed.
func TestCheckRescans(t *testing.T) {
	p, err := Prepare(traceScenario(t, kvBody, parkLines, parkSets...))
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(p, Options{Check: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	probed := false
	c.q.Schedule(des.Time(14500*us), des.PhaseLifecycle, 0, fireFunc(func(des.Time) {
		probed = true
		w0, w1 := c.workers[0], c.workers[1]
		if !c.idleWithParked(w1) || c.idleWithParked(w0) {
			t.Fatalf("at 14.5 ms: worker 1 idle with a parked pull %v, worker 0 %v", c.idleWithParked(w1), c.idleWithParked(w0))
		}
		for _, pl := range []struct {
			name      string
			stretches int
			n         *node
			started   bool
			fails     bool
		}{
			{"no stretch", 0, w1, false, false},
			{"worker 1 left idle", 1, w1, false, true},
			{"worker 0 scanned", 1, w0, false, false},
			{"worker 0 started a stretch", 1, w0, true, true},
		} {
			c.stretches, c.err = pl.stretches, nil
			if pl.started {
				pl.n.ff = &des.Handle{}
			}
			c.checkRescans(pl.n)
			pl.n.ff = nil
			var ie *InvariantError
			if got := errors.As(c.err, &ie) && ie.Invariant == invRescansQuiet; got != pl.fails {
				t.Errorf("%s: %v", pl.name, c.err)
			} else if got && ie.Err.Error() != "worker 1 is idle with a parked pull while 1 workers are in a stretch" {
				t.Errorf("%s: %v", pl.name, ie.Err)
			}
		}
		c.stretches, c.err = 0, nil
	}), 0)
	if _, err := c.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !probed {
		t.Fatal("the probe never fired")
	}
}

// TestOneRescanAnInstant (rule: parked pulls are rescanned once an instant
// at which anything happened, after its first event). Four round-robin
// workers, copy hints, 1 MB blocks (16 tokens of 62,500 bytes) at 0.1
// GB/s with no latency, one pull in flight a target, G2 pools of 4 blocks.
// Worker 1 decodes request 1 (300 tokens) in 5 ms passes from 10 ms, a
// stretch whose pass ends include 45 ms. R (request 11, blocks 1-4) reaches
// worker 3 at 24 ms with a hint naming worker 2; worker 3's one pull slot
// is request 7's, so R's pull parks there, at a busy worker, from 26 ms. At
// 45 ms worker 3 is removed: its pulls fail; request 3 goes to worker 1,
// settling its stretch; R goes to worker 0, whose slot request 4's pull
// holds until 94 ms, and parks again (pull 3, staged at 45 ms), leaving
// worker 0 idle with a parked pull; request 7 goes to worker 2 with a hint
// naming worker 1, and its pull's 4 blocks take worker 2's pool, R's
// blocks with it. Its first byte is an event at 45
// ms, after the drive scans. Passes one by one rescanned at 45 ms after
// worker 1's pass end (R's pull was parked then), so that event brings no
// second rescan: R's pull is staged again at the next instant at which
// anything happens, 46 ms, the end of the pass worker 3 was in when it
// went (request 3 ran its prompt 1-11 ms, then decoded in 5 ms passes:
// 16, 21, ..., 46 ms; the stale pass end changes nothing but is an
// instant), finds the blocks gone and is rejected: 3 blocks requested (64
// tokens, the last always computed: 63 / 16). R computes its 64 tokens
// in one 10 ms prompt pass, 46-56 ms. The fast-forward has no event at that pass end and must skip the
// second rescan too (it used to stage R's pull at 45 ms and give R its
// first token at 55 ms).
func TestOneRescanAnInstant(t *testing.T) {
	body := `cluster:
  workers: 4
  engine: {block_size: 16, gpu_blocks: 1000, kv_bytes_per_token: 62500, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
  g2: {capacity_blocks: 4, d2h_gbps: 0, h2d_gbps: 0}
router: {policy: round_robin, hints: {enabled: true, mode: copy}}
kvcr: {enabled: true, latency: 0ms, bandwidth_gbps: 0.1, operation_timeout: 1s, abandon_timeout: 2s, max_inflight_pulls: 1}
events: [{at: 45ms, remove: [3], on_remove: reroute}]
`
	lines := []traceLine{
		{0, 8, 1, ids(500, 1)}, {0, 64, 300, ids(200, 4)}, {0, 64, 1, ids(1, 4)}, {1, 64, 300, ids(300, 4)},
		{20, 128, 1, ids(200, 8)}, {21, 8, 1, ids(501, 1)}, {22, 8, 1, ids(502, 1)}, {23, 80, 1, ids(200, 5)},
		{24, 8, 1, ids(503, 1)}, {24, 8, 1, ids(504, 1)}, {24, 8, 1, ids(505, 1)}, {24, 64, 1, ids(1, 4)},
		{24, 8, 1, ids(506, 1)},
	}
	sc := traceScenario(t, body, lines)
	if _, _, met := runWays(t, sc); met.parkedStretches == 0 {
		t.Errorf("the fast-forward met %+v: want a stretch started with a pull parked", met)
	}
	sink, _ := runSink(t, sc)
	if r := sink.rows[11]; r.Worker != 0 || r.ScheduledNs != 46*ms || r.FirstTokenNs != 56*ms || r.Reroutes != 1 {
		t.Errorf("R %+v", r)
	}
	wantPullRow(t, sink.pulls[3], report.PullRow{Kind: "request", PullID: 3, RequestID: 11, Source: 2, Target: 0, Mode: "copy",
		BlocksRequested: 3, StagedNs: 45 * ms, FirstByteNs: -1, EndNs: 46 * ms, Outcome: "rejected", WriteEndNs: -1})
}

// TestRescannedHidden: one worker decodes a request of 16 prompt tokens
// and 40 output tokens in a stretch of 5 ms passes from 10 ms, its pass
// ends at 15, 20, ... ms. Probes at 30 ms (a pass end the stretch stands
// for) and 32 ms (none) set the instant's note and ask whether passes one
// by one rescanned before the instant's first event: only when a pull was
// parked at the start, the pass end is at the instant and the first event
// comes after it (a lifecycle event, or a pass end of a higher worker id;
// not a transfer, nor a pass end of its own id or lower).
func TestRescannedHidden(t *testing.T) {
	p, err := Prepare(traceScenario(t, fixed10x5, []traceLine{{0, 16, 40, []int{1}}}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(p, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, at := range []des.Time{30 * des.Millisecond, 32 * des.Millisecond} {
		c.q.Schedule(at, des.PhaseLifecycle, 0, fireFunc(func(now des.Time) {
			probes++
			if c.workers[0].ff == nil {
				t.Fatalf("at %v: no stretch", now)
			}
			for _, pl := range []struct {
				parked bool
				phase  des.Phase
				key    uint64
				want   bool
			}{
				{true, des.PhaseLifecycle, 0, now == 30*des.Millisecond},
				{true, des.PhasePass, 1, now == 30*des.Millisecond},
				{true, des.PhasePass, 0, false},
				{true, des.PhaseTransfer, 5, false},
				{false, des.PhaseLifecycle, 0, false},
			} {
				c.instant = instantNote{at: now, parked: pl.parked, phase: pl.phase, key: pl.key}
				if got := c.rescannedHidden(); got != pl.want {
					t.Errorf("at %v, parked %v, first event %v %d: %v, want %v", now, pl.parked, pl.phase, pl.key, got, pl.want)
				}
			}
			c.instant = instantNote{at: now}
		}), 0)
	}
	if _, err := c.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if probes != 2 {
		t.Fatalf("%d probes fired", probes)
	}
}
