package sim

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
)

// ledgerCase is a run on kvBody whose last event's ledger is worked out
// by hand: its blocks planned and landed, its G2 blocks left at removal
// (-1: none) and the ledger's three parts.
type ledgerCase struct {
	name            string
	lines           []traceLine
	sets            []string
	planned, landed int64
	left            int64
	plan            report.KVPlan
	ends            report.KVEnds
	removal         report.KVRemoval
}

// check runs the case and compares its last event's row with the hand's
// figures; the run's --check has held the row's identities already, and
// results.CheckLedger holds them again.
func (c ledgerCase) check(t *testing.T) {
	t.Helper()
	_, _, res := runKV(t, c.lines, c.sets...)
	rows := res.Summary.EventRows
	r := rows[len(rows)-1]
	if r.BlocksPlanned != c.planned || r.BlocksLanded != c.landed || r.G2BlocksLeft != c.left {
		t.Errorf("%s: %d planned, %d landed, %d left; want %d, %d, %d", c.name, r.BlocksPlanned, r.BlocksLanded, r.G2BlocksLeft,
			c.planned, c.landed, c.left)
	}
	if r.Plan != c.plan || r.Ends != c.ends || r.Removal != c.removal {
		t.Errorf("%s: ledger\n%+v\n%+v\n%+v\nwant\n%+v\n%+v\n%+v", c.name, r.Plan, r.Ends, r.Removal, c.plan, c.ends, c.removal)
	}
	if err := results.CheckLedger(&r); err != nil {
		t.Errorf("%s: %v", c.name, err)
	}
}

// noRemoval is the removal part of an event that removed nothing.
var noRemoval = report.KVRemoval{StoredAfter: -1, PulledInAfter: -1, EvictedAfter: -1, MovedAwayAfter: -1, DroppedAfter: -1, LostAfter: -1}

// TestLedgerLeftOut: where an evacuation or a prewarm leaves the G2
// blocks of its sources that it does not plan, each reason in a case of
// its own: G2 blocks held = planned once + left out.
//
//   - picks (evacLines, TestEvacuationToRouterPicks): worker 0 holds A
//     (1-8) and B (40-43), 12 blocks. B goes to worker 1, whose G1 holds
//     40-41: at the destination 2, sends 42-43; A to worker 2, whose G1
//     holds 1-4: at the destination 4, sends 5-8. 12 = 6 planned + 6 at
//     the destination. Both moves land (6), and take 6 blocks away: 6 left.
//   - cut (budget 4, TestEvacuationBudget): B sends 2; A would send 4,
//     more than the 2 left: cut to 1-6, sending 5-6; 7-8, which its walk
//     sends, are left to the budget. 12 = 4 + 6 + 2; 4 moved, 8 left.
//   - spent (budget 2): B sends 2 and spends it; A is never reached, and
//     its 8 blocks are left to the budget, 1-4 too. 12 = 2 + 2 + 8; 10 left.
//   - no destination: worker 3 is added at 25 ms, starting for 1 s;
//     workers 1 and 2 drain at 26 ms (idle: removed at once). At 30 ms no
//     worker is ready to take worker 0's chains: 12 left with no
//     destination, 12 left at its removal, at once.
//   - busy: R0 and R1 (X, ids 1-4) run on workers 0 and 1 (0-10 and 1-11
//     ms; at 1 ms no G2 holds X, so no hint), R2 (id 90) on worker 2;
//     workers 0 and 1 drain at 30 ms, both holding X. Worker 0's move of
//     X to worker 2, the only one ready, is staged at once: worker 2
//     fills 1-4. Worker 1's plan then finds worker 2 filling block 1: its
//     4 blocks are left as the destination is busy, and no order. 8 = 4 +
//     4; worker 0's move lands at 35 ms and takes its 4 away: 4 left, all
//     worker 1's.
//   - filling: G2 stores take time (1 GB/s D2H): R0's 4 MB are stored
//     10-14 ms. Worker 0 drains at 12 ms holding 4 blocks still filling,
//     which no chain can list; it is idle and removed at once with them:
//     4 left filling, 4 left at removal.
//   - pending: move hints. R0 (1-4) stores on worker 0 at 10 ms. R1 and
//     R2 (ids 1-8) reach workers 1 and 2 at 20 and 21 ms hinted to worker
//     0: both pull 1-4 (4 MB); first bytes at 21 and 22 ms, sharing the
//     egress from 22: R1's lands at 28 ms, and worker 0 marks 1-4 moved,
//     but R2's pull pins them: pending. Worker 0 drains at 28.5 ms holding
//     4 blocks pending removal: no chain lists them. R2's lands at 29 ms,
//     its pins go and with them the 4 blocks (moved away); worker 0, idle,
//     goes then: 0 left.
//   - other source (a prewarm): R0 and R1 (X, 1-4) run on workers 0 and 1
//     (2 workers) and both store X. Worker 2 is added at 30 ms with a
//     prewarm: worker 0's X is dealt to it (4 blocks), worker 1's X is
//     the same chain: left as dealt from another worker. 8 = 4 + 4; the
//     prefetch lands 4. An add removes nothing: no removal part.
func TestLedgerLeftOut(t *testing.T) {
	drain := "events=[{at: 30ms, drain: [0], evacuate: {blocks: 100}}]"
	x := []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, ids(1, 4)}, {2, 16, 1, ids(90, 1)}}
	for _, c := range []ledgerCase{
		{name: "picks", lines: evacLines, sets: []string{drain}, planned: 6, landed: 6, left: 6,
			plan:    report.KVPlan{BlocksHeld: 12, LeftAtDestination: 6},
			removal: report.KVRemoval{MovedAwayAfter: 6}},
		{name: "cut", lines: evacLines, sets: []string{"events=[{at: 30ms, drain: [0], evacuate: {blocks: 4}}]"},
			planned: 4, landed: 4, left: 8,
			plan:    report.KVPlan{BlocksHeld: 12, LeftAtDestination: 6, LeftBudget: 2},
			removal: report.KVRemoval{MovedAwayAfter: 4}},
		{name: "spent", lines: evacLines, sets: []string{"events=[{at: 30ms, drain: [0], evacuate: {blocks: 2}}]"},
			planned: 2, landed: 2, left: 10,
			plan:    report.KVPlan{BlocksHeld: 12, LeftAtDestination: 2, LeftBudget: 8},
			removal: report.KVRemoval{MovedAwayAfter: 2}},
		{name: "no destination", lines: evacLines, sets: []string{"events=[{at: 25ms, add: 1, startup: 1s}, " +
			"{at: 26ms, drain: [1, 2]}, {at: 30ms, drain: [0], evacuate: {blocks: 100}}]"}, left: 12,
			plan: report.KVPlan{BlocksHeld: 12, LeftNoDestination: 12}},
		{name: "busy", lines: x, sets: []string{"events=[{at: 30ms, drain: [0, 1], evacuate: {blocks: 100}}]"},
			planned: 4, landed: 4, left: 4,
			plan:    report.KVPlan{BlocksHeld: 8, LeftDestinationBusy: 4},
			removal: report.KVRemoval{MovedAwayAfter: 4}},
		{name: "filling", lines: x[:1], sets: []string{"cluster.g2.d2h_gbps=1", "events=[{at: 12ms, drain: [0], evacuate: {blocks: 100}}]"},
			left: 4, plan: report.KVPlan{BlocksHeld: 4, LeftFilling: 4}},
		{name: "pending", lines: []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)}, {21, 128, 1, ids(1, 8)}},
			sets: []string{"router.hints.mode=move", "events=[{at: 28500us, drain: [0], evacuate: {blocks: 100}}]"},
			plan: report.KVPlan{BlocksHeld: 4, LeftPending: 4}, removal: report.KVRemoval{MovedAwayAfter: 4}},
		{name: "other source", lines: x[:2], sets: []string{"cluster.workers=2", "events=[{at: 30ms, add: 1, prewarm: {blocks: 100}}]"},
			planned: 4, landed: 4, left: -1,
			plan: report.KVPlan{BlocksHeld: 8, LeftOtherSource: 4}, removal: noRemoval},
	} {
		c.check(t)
	}
}

// TestLedgerEnds: how the blocks an evacuation planned end, each way in a
// case of its own: planned = landed - landed past the plan + planned but
// not landed by the orders that landed + lost by the orders that landed
// nothing; and the blocks left at removal.
//
//   - rejected: R0 (X, 1-4) and R3 (Y: ids 1, 2, 5, 6) run on worker 0
//     (R1 and R2, ids 90 and 91, on workers 1 and 2). R3 finds 1-2 in G1
//     and computes 5-6 (10-20 ms): worker 0's G2 holds 1-4 and 5-6, 6
//     blocks. Drained at 30 ms: Y first (its blocks 5-6 the most recent),
//     costing 4 everywhere: worker 1, sending 1, 2, 5, 6; then X, with Y's
//     4 blocks counted on worker 1 (8), to worker 2 (4), sending 1-4: 8
//     planned, 1-2 twice. Y's move lands at 35 ms and worker 0 removes 1,
//     2, 5, 6; X's, staged then, finds no block 1 at the source: rejected,
//     its 4 lost. 6 = (8 - 2) + 0; 8 = 4 + 4 rejected; 6 - 4 moved = 2 left.
//   - short: 2 workers; worker 0 runs 1-7, (1-6, 20) and (1-6, 30) (100 ms
//     apart), 9 blocks. Drained at 500 ms, each chain goes to worker 1
//     counting 7 blocks: 21 planned, 1-6 counted twice more (12). The
//     first lands 7 (508 ms); the next two find 1-6 there and send one
//     block each: 12 planned blocks short. 9 = 21 - 12; 21 = 9 + 12; all 9
//     moved away.
//   - extra: 2 workers with 5 G1 blocks and 8 G2 blocks each. R0 (A, 1-4)
//     runs on worker 0 0-10 ms, storing A; R1 (1-2) on worker 1 1-11 ms,
//     storing 1-2; R2 (B, 40-43) on worker 0 10-20 ms, storing B; R3
//     (60-63) on worker 1 11-21 ms, storing 60-63: its 4 prompt blocks take
//     worker 1's 3 fresh G1 blocks and its free queue's head, R1's block 2
//     (a request frees its blocks last first): worker 1's G1 keeps block
//     1, its G2 holds 1-2 and 60-63. Worker 0 drains at 30 ms: B to
//     worker 1 sends 4; A finds block 1 in its G1 and 2 in its G2 (2 at the
//     destination) and sends 3-4: 6 planned. B's move, staged at once,
//     reserves 4 of worker 1's 8 G2 slots, which holds 6: it evicts the
//     two least recent, 1-2. A's move, staged when B's lands (35 ms), sends
//     2-4: 3 landed against 2 planned, 1 extra. 8 = 6 + 2; 6 = 7 - 1; 7
//     moved, 1 left (block 1).
//   - expired, failed (fourChains, TestOrderWarnings): 16 blocks, 4 moves
//     all at once, ending late: all expire (10 ms background timeout) or
//     fail (source timeout): 16 lost each way. The write lands after the
//     source gave up, so the moves take nothing away: 16 left.
//   - nothing to fetch: R0 and R1 (X, 1-4) run on workers 0 and 1, R2 (id
//     90) on worker 2, R3 (P, ids 50-57) on worker 0 10-20 ms. Workers 0
//     and 1 drain at 30 ms; worker 2 is the only destination. Worker 0
//     plans P (8) and X (4), worker 1 X (4; worker 0's X is not staged
//     yet): 16 planned, 16 held. Worker 0's P (8 MB) lands at 39 ms,
//     worker 1's X at 35 ms; worker 0's X is staged at 39 ms and finds
//     worker 2 holding all of X: no pull, 4 lost with nothing to fetch,
//     and worker 0's X is invalidated (a move). 16 = 12 + 4; every block
//     moved away: 0 left.
//   - superseded: as above with P one block (id 50): it lands at 32 ms;
//     worker 0's X, staged then, finds worker 2 filling X (worker 1's,
//     landing at 35 ms) and parks; at 35 ms it finds it all there:
//     superseded, 4 lost. 9 = 5 + 4; 9 moved away.
//   - dropped: as nothing to fetch with a 5 ms drain timeout: at 35 ms
//     worker 1's X has landed (4) and the timeout removes worker 0 while P
//     writes (its target hears at its deadline, 230 ms: failed, 8 lost) and
//     X waits for its turn (dropped, 4 lost). 16 = 4 + 8 + 4; worker 0
//     leaves its 12 blocks, worker 1 none.
func TestLedgerEnds(t *testing.T) {
	drain := "events=[{at: 30ms, drain: [0], evacuate: {blocks: 100}}]"
	both := "events=[{at: 30ms, drain: [0, 1], evacuate: {blocks: 100}}]"
	twice := func(p int) []traceLine { // X on workers 0 and 1, P (p blocks) on worker 0
		return []traceLine{{0, 64, 1, ids(1, 4)}, {1, 64, 1, ids(1, 4)}, {2, 16, 1, ids(90, 1)}, {3, 16 * p, 1, ids(50, p)}}
	}
	shared := []traceLine{{0, 112, 1, ids(1, 7)}, {100, 16, 1, ids(90, 1)}, {200, 112, 1, append(ids(1, 6), 20)},
		{300, 16, 1, ids(91, 1)}, {400, 112, 1, append(ids(1, 6), 30)}}
	late := []string{"cluster.workers=2", "kvcr.background_inflight=0", "events=[{at: 750ms, drain: [0], evacuate: {blocks: 100}}]"}
	for _, c := range []ledgerCase{
		{name: "rejected", lines: []traceLine{{0, 64, 1, ids(1, 4)}, {1, 16, 1, ids(90, 1)}, {2, 16, 1, ids(91, 1)}, {3, 64, 1, []int{1, 2, 5, 6}}},
			sets: []string{drain}, planned: 8, landed: 4, left: 2,
			plan: report.KVPlan{BlocksHeld: 6, PlannedAgain: 2}, ends: report.KVEnds{LostRejected: 4},
			removal: report.KVRemoval{MovedAwayAfter: 4}},
		{name: "short", lines: shared, sets: []string{"cluster.workers=2", "events=[{at: 500ms, drain: [0], evacuate: {blocks: 100}}]"},
			planned: 21, landed: 9, left: 0,
			plan: report.KVPlan{BlocksHeld: 9, PlannedAgain: 12}, ends: report.KVEnds{LandedShort: 12},
			removal: report.KVRemoval{MovedAwayAfter: 9}},
		{name: "extra", lines: []traceLine{{0, 64, 1, ids(1, 4)}, {1, 32, 1, ids(1, 2)}, {2, 64, 1, ids(40, 4)}, {3, 64, 1, ids(60, 4)}},
			sets:    []string{"cluster.workers=2", "cluster.engine.gpu_blocks=5", "cluster.g2.capacity_blocks=8", drain},
			planned: 6, landed: 7, left: 1,
			plan: report.KVPlan{BlocksHeld: 8, LeftAtDestination: 2}, ends: report.KVEnds{LandedExtra: 1},
			removal: report.KVRemoval{MovedAwayAfter: 7}},
		{name: "expired", lines: fourChains(), sets: append([]string{"kvcr.background_timeout=10ms"}, late...),
			planned: 16, left: 16, plan: report.KVPlan{BlocksHeld: 16}, ends: report.KVEnds{LostExpired: 16}},
		{name: "failed", lines: fourChains(), sets: append([]string{"kvcr.operation_timeout=10ms", "kvcr.abandon_timeout=20ms"}, late...),
			planned: 16, left: 16, plan: report.KVPlan{BlocksHeld: 16}, ends: report.KVEnds{LostFailed: 16}},
		{name: "nothing to fetch", lines: twice(8), sets: []string{both}, planned: 16, landed: 12, left: 0,
			plan: report.KVPlan{BlocksHeld: 16}, ends: report.KVEnds{LostNothingToFetch: 4},
			removal: report.KVRemoval{MovedAwayAfter: 16}},
		{name: "superseded", lines: twice(1), sets: []string{both}, planned: 9, landed: 5, left: 0,
			plan: report.KVPlan{BlocksHeld: 9}, ends: report.KVEnds{LostSuperseded: 4},
			removal: report.KVRemoval{MovedAwayAfter: 9}},
		{name: "dropped", lines: twice(8), sets: []string{"events=[{at: 30ms, drain: [0, 1], drain_timeout: 5ms, evacuate: {blocks: 100}}]"},
			planned: 16, landed: 4, left: 12,
			plan: report.KVPlan{BlocksHeld: 16}, ends: report.KVEnds{LostFailed: 8, LostDropped: 4},
			removal: report.KVRemoval{MovedAwayAfter: 4}},
	} {
		c.check(t)
	}
}

// TestLedgerCheck: a ledger that does not balance fails the run as its
// invariant. In the picks case of TestLedgerLeftOut, an order of event 0
// planned to send 5 blocks, never issued, is recorded as dropped at 31 ms:
// 6 blocks planned against 6 landed + 5 lost, and the run stops with the
// ledger's invariant alone, at the run's end.
func TestLedgerCheck(t *testing.T) {
	c, err := build(prepared(t, traceScenario(t, kvBody, evacLines, "events=[{at: 30ms, drain: [0], evacuate: {blocks: 100}}]"), nil),
		Options{Check: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plant(c, 31*des.Millisecond, fireFunc(func(des.Time) {
		c.events.OrderUnstaged(&kvcr.Pull{Tag: 0, Planned: 5}, true)
	}))
	res, err := c.run(context.Background())
	var ie *InvariantError
	if !errors.As(err, &ie) || res != nil || !slices.Equal(broken(err), []string{invKVLedger}) {
		t.Fatalf("%v (result %v), want the invariant %q", err, res, invKVLedger)
	}
	want := "event 0: 6 blocks planned, but 6 landed - 0 past their plan + 0 short of it + 5 lost = 11"
	if ie.Err.Error() != want {
		t.Errorf("%v, want %q", ie.Err, want)
	}
}
