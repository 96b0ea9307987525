package sim

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/report"
)

// migrateBody: 2 workers, round robin, no KVCR, fixed timing (10 ms
// prefill, 5 ms decode), migration up to once.
const migrateBody = `cluster:
  workers: 2
  migration_limit: 1
  engine: {block_size: 16, gpu_blocks: 1000, kv_bytes_per_token: 1000, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
router: {policy: round_robin}
`

// TestMigrationCarriesTokens: R0 (64 tokens, 100 output) runs on worker 0:
// prefill 0-10 ms (token 1), token k at 10 + 5(k-1) ms, so 40 tokens by
// 205 ms. Worker 0 goes down at 207 ms (for 50 ms) with on_remove:
// migrate: R0 is routed to worker 1 with a prompt of 64 + 40 = 104 tokens
// and 60 left: prefill 207-217 ms (token 41), then 59 decodes, the last at
// 217 + 5 x 59 = 512 ms. Its row: input 64, output 100, first token at 10
// ms (worker 0's), computed 64 + 104 = 168, 1 migration, 1 reroute.
// Worker 0 was down 50 ms.
func TestMigrationCarriesTokens(t *testing.T) {
	body := migrateBody + "events:\n  - {at: 207ms, for: 50ms, down: {workers: [0]}, on_remove: migrate}\n"
	sink, res := runTraceSink(t, body, []traceLine{{0, 64, 100, ids(1, 4)}})
	r := sink.rows[0]
	if r.Worker != 1 || r.InputTokens != 64 || r.OutputTokens != 100 || r.FirstTokenNs != 10*ms || r.ScheduledNs != 0 ||
		r.FinishNs != 512*ms || r.ComputedPromptTokens != 168 || r.Migrations != 1 || r.Reroutes != 1 || r.Outcome != report.OutcomeCompleted {
		t.Errorf("row %+v", r)
	}
	c := res.Summary.Counters
	if c["requests_migrated"] != 1 || c["migrations_exhausted"] != 0 || c["requests_rerouted"] != 1 {
		t.Errorf("counters %v", c)
	}
	if w := res.Workers[0]; w.Downs != 1 || w.DownNs != 50*ms || w.RemovedNs != -1 {
		t.Errorf("worker 0 %+v", w)
	}
	if e := res.Summary.EventRows[0]; e.Fault.Migrated != 1 || e.RequestsRerouted != 1 || e.RequestsFailed != 0 {
		t.Errorf("event %+v", e)
	}
	// Deterministic: the same digest again.
	_, again := runTraceSink(t, body, []traceLine{{0, 64, 100, ids(1, 4)}})
	if again.Summary.Digest != res.Summary.Digest {
		t.Errorf("digest %s, then %s", res.Summary.Digest, again.Summary.Digest)
	}
}

// TestMigrationExhausted: as TestMigrationCarriesTokens, and worker 1 goes
// down at 300 ms, when R0's second attempt has produced 17 tokens (217,
// 222, ..., 297 ms): past its one migration it fails at 300 ms, its first
// token still worker 0's. R1 (32 tokens, 1 output, at 0 ms on worker 1)
// ended at 10 ms and is the same in the run without the second down (its
// twin), as is everything before 300 ms.
func TestMigrationExhausted(t *testing.T) {
	lines := []traceLine{{0, 64, 100, ids(1, 4)}, {0, 32, 1, ids(10, 2)}}
	base := migrateBody + "events:\n  - {at: 207ms, for: 50ms, down: {workers: [0]}, on_remove: migrate}\n"
	sink, res := runTraceSink(t, base+"  - {at: 300ms, down: {workers: [1]}, on_remove: migrate}\n", lines)
	r := sink.rows[0]
	if r.Outcome != report.OutcomeFailed || r.FinishNs != 300*ms || r.FirstTokenNs != 10*ms || r.Migrations != 1 ||
		r.InputTokens != 64 || r.ComputedPromptTokens != 168 {
		t.Errorf("row %+v", r)
	}
	c := res.Summary.Counters
	if c["requests_migrated"] != 1 || c["migrations_exhausted"] != 1 || c["requests_failed"] != 1 {
		t.Errorf("counters %v", c)
	}
	if e := res.Summary.EventRows[1]; e.RequestsFailed != 1 || e.Fault.Migrated != 0 {
		t.Errorf("event %+v", e)
	}
	// Down to the run's end at 1 s (its last sample): 700 ms.
	if w := res.Workers[1]; w.Downs != 1 || w.DownNs != 700*ms {
		t.Errorf("worker 1 %+v", w)
	}
	twin, _ := runTraceSink(t, base, lines)
	if twin.rows[1] != sink.rows[1] {
		t.Errorf("R1 %+v, in the twin %+v", sink.rows[1], twin.rows[1])
	}
}

// TestDownG2KeptServes: kvBody (1 MB blocks at 1 GB/s, 1 ms latency).
// R0 (ids 1-4, 64 tokens) runs on worker 0, 0-10 ms; its 4 blocks reach
// its G2. Worker 0's engine goes down at 15 ms for 100 ms, its G2 kept.
// R1 (ids 1-8, 128 tokens) at 20 ms goes to worker 1 with a hint naming
// worker 0, down: of R1's 8 blocks it lacks 7 (the last is recomputed, so
// 7 are requested), and worker 0's KVCR agent serves the 4 it holds, a
// partial pull, first
// byte 21 ms, landing 25 ms, as TestPartialFollowUp with worker 0 up; R1
// computes 64 tokens, 25-35 ms. Worker 0 restarts at 115 ms with an empty
// G1 and its G2. Round robin goes on in id order: R2 (150 ms) to worker
// 2 and R3 (ids 1-4, 170 ms) to worker 0: 3 blocks hit its G2 (48 tokens;
// the last block is recomputed), none its G1; first token at 180 ms.
func TestDownG2KeptServes(t *testing.T) {
	body := kvBody + "events:\n  - {at: 15ms, for: 100ms, down: {workers: [0], g2: kept}}\n"
	sink, res := runTraceSink(t, body, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)},
		{150, 32, 1, ids(100, 2)}, {170, 64, 1, ids(1, 4)}})
	rows := sink.rows
	if r := rows[1]; r.Worker != 1 || r.HintSource != 0 || r.PulledTokens != 64 || r.FirstTokenNs != 35*ms {
		t.Errorf("R1 %+v", r)
	}
	want := report.PullRow{Kind: "request", PullID: 0, RequestID: 1, Source: 0, Target: 1, Mode: "copy", BlocksRequested: 7,
		BlocksLanded: 4, Bytes: 4_000_000, StagedNs: 20 * ms, FirstByteNs: 21 * ms, EndNs: 25 * ms, Outcome: "partial", WriteEndNs: 25 * ms}
	if len(sink.pulls) != 1 || sink.pulls[0] != want {
		t.Errorf("pulls %+v\nwant %+v", sink.pulls, want)
	}
	if r := rows[3]; r.Worker != 0 || r.G1HitTokens != 0 || r.G2HitTokens != 48 || r.ComputedPromptTokens != 16 ||
		r.HintSource != -1 || r.FirstTokenNs != 180*ms {
		t.Errorf("R3 %+v", r)
	}
	if w := res.Workers[0]; w.Downs != 1 || w.DownNs != 100*ms || w.ReadyNs != 0 {
		t.Errorf("worker 0 %+v", w)
	}
	if e := res.Summary.EventRows[0]; e.Fault != (report.EventFault{}) || e.RequestsRerouted != 0 {
		t.Errorf("event %+v", e)
	}
}

// TestDownG2KeptRestarting: as TestDownG2KeptServes, but worker 0's
// engine is down only 15-17 ms and takes 100 ms to start again: restarting
// 17-117 ms, not routed to, its G2 (kept) still a source. R1 at 20 ms is
// hinted to it and pulled from it exactly as while it was down (4 blocks,
// 21-25 ms, partial); worker 0 is ready at 117 ms, so R3 at 170 ms finds
// it as in TestDownG2KeptServes: 48 tokens from its G2, first token at 180
// ms. Its row keeps the first time it was ready, 0.
func TestDownG2KeptRestarting(t *testing.T) {
	body := kvBody + "events:\n  - {at: 15ms, for: 2ms, down: {workers: [0], g2: kept}, startup: 100ms}\n"
	sink, res := runTraceSink(t, body, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)},
		{150, 32, 1, ids(100, 2)}, {170, 64, 1, ids(1, 4)}})
	want := report.PullRow{Kind: "request", PullID: 0, RequestID: 1, Source: 0, Target: 1, Mode: "copy", BlocksRequested: 7,
		BlocksLanded: 4, Bytes: 4_000_000, StagedNs: 20 * ms, FirstByteNs: 21 * ms, EndNs: 25 * ms, Outcome: "partial", WriteEndNs: 25 * ms}
	if len(sink.pulls) != 1 || sink.pulls[0] != want {
		t.Errorf("pulls %+v\nwant %+v", sink.pulls, want)
	}
	if r := sink.rows[3]; r.Worker != 0 || r.G2HitTokens != 48 || r.FirstTokenNs != 180*ms {
		t.Errorf("R3 %+v", r)
	}
	if w := res.Workers[0]; w.Downs != 1 || w.DownNs != 2*ms || w.ReadyNs != 0 {
		t.Errorf("worker 0 %+v", w)
	}
}

// TestDownG2Lost: as TestDownG2KeptServes, but worker 0's whole process
// dies at 23 ms, mid-pull (for 50 ms): its G2's 4 blocks are lost and the
// pull it served fails; R1's worker learns it only at its deadline, staging
// + operation_timeout = 20 + 100 = 120 ms, and then computes its 128
// tokens, 120-130 ms. The write stopped at 23 ms. Worker 0 restarts empty
// at 73 ms: round robin sends R2 (150 ms) to worker 2 and R3 (ids 1-4,
// 170 ms) to worker 0, where it hits nothing, and the router, which saw
// worker 0's G2 removed, names worker 1 (whose G2 holds R1's 8 blocks) as
// its hint source: of R3's 4 blocks the last is recomputed, so 3 are
// pulled, 3 MB, staged 170 ms, first byte 171 ms, landing 174 ms, success;
// R3 computes its last 16 tokens, 174-184 ms. The event's fault_pulls is 0:
// a down counts the pulls its workers were the target of, and worker 0 was
// the source.
func TestDownG2Lost(t *testing.T) {
	body := kvBody + "events:\n  - {at: 23ms, for: 50ms, down: {workers: [0], g2: lost}}\n"
	sink, res := runTraceSink(t, body, []traceLine{{0, 64, 1, ids(1, 4)}, {20, 128, 1, ids(1, 8)},
		{150, 32, 1, ids(100, 2)}, {170, 64, 1, ids(1, 4)}})
	rows := sink.rows
	if r := rows[1]; r.Worker != 1 || r.HintSource != 0 || r.PulledTokens != 0 || r.ComputedPromptTokens != 128 || r.FirstTokenNs != 130*ms {
		t.Errorf("R1 %+v", r)
	}
	p := sink.pulls[0]
	if p.Source != 0 || p.Outcome != "failed" || p.BlocksLanded != 0 || p.EndNs != 120*ms || p.WriteEndNs != 23*ms {
		t.Errorf("pull %+v", p)
	}
	if r := rows[3]; r.Worker != 0 || r.G1HitTokens != 0 || r.G2HitTokens != 0 || r.HintSource != 1 || r.PulledTokens != 48 || r.FirstTokenNs != 184*ms {
		t.Errorf("R3 %+v", r)
	}
	if len(sink.pulls) != 2 {
		t.Fatalf("%d pulls, want 2", len(sink.pulls))
	}
	if p := sink.pulls[1]; p.Source != 1 || p.Target != 0 || p.BlocksLanded != 3 || p.Bytes != 3_000_000 || p.StagedNs != 170*ms ||
		p.FirstByteNs != 171*ms || p.EndNs != 174*ms || p.Outcome != "success" {
		t.Errorf("R3's pull %+v", p)
	}
	if e := res.Summary.EventRows[0]; e.Fault.BlocksLost != 4 || e.Fault.Pulls != 0 {
		t.Errorf("event %+v", e.Fault)
	}
	if w := res.Workers[0]; w.Downs != 1 || w.DownNs != 50*ms {
		t.Errorf("worker 0 %+v", w)
	}
}

// TestMigrationTooLong: as TestMigrationCarriesTokens without chunked
// prefill and a budget of 100 tokens a pass: R0's 64-token prompt fits,
// but with its 40 tokens carried it would be 104, more than a pass takes.
// No engine takes it: at 207 ms, when worker 0 goes down, it fails (its
// migration counted, its first token worker 0's), and worker 1 never
// sees it.
func TestMigrationTooLong(t *testing.T) {
	body := `cluster:
  workers: 2
  migration_limit: 1
  engine: {block_size: 16, gpu_blocks: 1000, kv_bytes_per_token: 1000, chunked_prefill: false, max_batched_tokens: 100,
           timing: {model: fixed, prefill: 10ms, decode: 5ms}}
router: {policy: round_robin}
events:
  - {at: 207ms, for: 50ms, down: {workers: [0]}, on_remove: migrate}
`
	sink, res := runTraceSink(t, body, []traceLine{{0, 64, 100, ids(1, 4)}})
	r := sink.rows[0]
	if r.Outcome != report.OutcomeFailed || r.FinishNs != 207*ms || r.FirstTokenNs != 10*ms || r.Migrations != 1 || r.InputTokens != 64 {
		t.Errorf("row %+v", r)
	}
	if c := res.Summary.Counters; c["requests_migrated"] != 1 || c["requests_failed"] != 1 {
		t.Errorf("counters %v", c)
	}
	if w := res.Workers[1]; w.Passes != 0 {
		t.Errorf("worker 1 ran %d passes", w.Passes)
	}
}

// TestDownNoWorkerIsNoMove: a request taken off a down worker that finds
// no worker ready fails where it is: it did not move, so no counter of
// moves counts it. One worker, fixed timing; R0 (16 tokens, one block,
// 10 output) at 0 ms: prefill 0-10 ms (token 1), decodes end at 15 and
// 20 ms (tokens 2, 3); the pass 20-25 ms is abandoned when worker 0 goes
// down at 22 ms for 10 ms. With reroute R0 is routed again and finds no
// ready worker; with migrate it has produced 3 tokens, is below its limit
// (0 migrations of 1) and is carried (19 tokens, 7 left), and finds none
// either. Both ways it fails at 22 ms on worker 0, and:
//   - counters: requests_failed 1, requests_rerouted 0, requests_migrated 0,
//     migrations_exhausted 0 (it is not past the limit);
//   - its row: worker 0, outcome failed, finish 22 ms, input 16, output 10
//     (its own, not the carried 19 and 7), reroutes 0, migrations 0,
//     computed_prompt_tokens 16;
//   - the event's row: requests_rerouted 0, requests_failed 1,
//     requests_migrated 0;
//   - worker 0: 1 down, 10 ms down (22-32 ms).
func TestDownNoWorkerIsNoMove(t *testing.T) {
	for _, action := range []string{"reroute", "migrate"} {
		body := `cluster:
  workers: 1
  migration_limit: 1
  engine: {block_size: 16, gpu_blocks: 1000, kv_bytes_per_token: 62500, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
events:
  - {at: 22ms, for: 10ms, down: {workers: [0]}, on_remove: ` + action + "}\n"
		sink, res := runTraceSink(t, body, []traceLine{{0, 16, 10, ids(1, 1)}})
		r := sink.rows[0]
		if r.Worker != 0 || r.Outcome != report.OutcomeFailed || r.FinishNs != 22*ms || r.InputTokens != 16 || r.OutputTokens != 10 ||
			r.Reroutes != 0 || r.Migrations != 0 || r.ComputedPromptTokens != 16 {
			t.Errorf("%s: row %+v", action, r)
		}
		c := res.Summary.Counters
		if c["requests_failed"] != 1 || c["requests_rerouted"] != 0 || c["requests_migrated"] != 0 || c["migrations_exhausted"] != 0 {
			t.Errorf("%s: counters %v", action, c)
		}
		if e := res.Summary.EventRows[0]; e.RequestsRerouted != 0 || e.RequestsFailed != 1 || e.Fault.Migrated != 0 {
			t.Errorf("%s: event %+v", action, e)
		}
		if w := res.Workers[0]; w.Downs != 1 || w.DownNs != 10*ms {
			t.Errorf("%s: worker 0 %+v", action, w)
		}
	}
}

// TestDownEndedKeepsAttempt: a request that ends failed when it is taken
// off a down worker keeps what its user saw of the attempt: its row is
// that attempt's (scheduled_ns, first_token_ns, hit columns, as a
// completed request's row is its last attempt's), with the first token
// and its scheduling of the attempt that gave it, as for a migrated
// request. migrateBody (2 workers, round robin, fixed timing: 10 ms
// prefill, 5 ms decode, migration_limit 1).
//
// "reproducer": R0 (16 tokens, 10 output) at 0 ms on worker 0: scheduled
// at 0, first token at 10 ms, then 15, 20 ms; worker 0 goes down at 22
// ms with on_remove: fail. Row: worker 0, failed at 22 ms, scheduled 0,
// first token 10 ms, computed 16, no hits.
//
// The others: R0 (ids 1-4, 64 tokens, 1 output) on worker 0 and R1 (ids
// 1-4 too) on worker 1, both 0-10 ms; each worker's G1 keeps blocks 1-4.
// R2 (ids 1-5, 80 tokens, 10 output) at 12 ms goes to worker 0 (round
// robin): 4 blocks hit its G1 (g1_hit_tokens 64), it computes 16,
// scheduled 12 ms, first token 22 ms, token 2 at 27 ms; the pass 27-32 ms
// is abandoned when worker 0 goes down at 30 ms. Its previous turn is R1
// (the latest holding blocks 1-4).
//   - "fail": it fails at 30 ms. Row: worker 0, scheduled 12 ms, first
//     token 22 ms, g1 64, computed 16, reroutes 0, migrations 0.
//   - "reroute, no worker": workers 0 and 1 both go down at 30 ms: no
//     worker is ready, it fails at 30 ms: the same row.
//   - "migrate, no worker": the same, carried (82 tokens) but unrouted:
//     the same row (input 80, output 10: its own).
//   - "migrate exhausted": only worker 0 goes down at 30 ms, for 10 ms:
//     R2 migrates with 2 tokens to worker 1, prompt 82 (5 full blocks,
//     ids 1-5), 8 left; worker 1's G1 has blocks 1-4: g1 hit 64, it
//     computes 18, 30-40 ms (token 3), token 4 at 45 ms; worker 0 is
//     ready again from 40 ms, empty. Worker 1 goes down at 47 ms: R2 could
//     move to worker 0, but past its one migration (migration_limit 1) it
//     fails at 47 ms (migrations_exhausted 1). Row: worker 1, scheduled
//     12 ms and first token 22 ms (worker 0's, the ones its user saw), g1
//     64 (worker 1's attempt), computed 16 + 18 = 34, reroutes 1,
//     migrations 1.
//
// Every case: one request failed, outcome failed, g2 and pulled 0 (no
// KVCR), no preemptions, no hint, no measurements.
func TestDownEndedKeepsAttempt(t *testing.T) {
	one := []traceLine{{0, 16, 10, ids(1, 1)}}
	three := []traceLine{{0, 64, 1, ids(1, 4)}, {0, 64, 1, ids(1, 4)}, {12, 80, 10, ids(1, 5)}}
	ev := func(at, workers, action string) string {
		return "  - {at: " + at + ", for: 100ms, down: {workers: [" + workers + "]}, on_remove: " + action + "}\n"
	}
	r2 := report.RequestRow{RequestID: 2, Worker: 0, ArrivalNs: 12 * ms, FirstTokenNs: 22 * ms, FinishNs: 30 * ms,
		InputTokens: 80, OutputTokens: 10, G1HitTokens: 64, ComputedPromptTokens: 16, HintSource: -1,
		Outcome: report.OutcomeFailed, ScheduledNs: 12 * ms, PrevRequestID: 1}
	exhausted := r2
	exhausted.Worker, exhausted.FinishNs, exhausted.ComputedPromptTokens, exhausted.Reroutes, exhausted.Migrations = 1, 47*ms, 34, 1, 1
	for _, c := range []struct {
		name   string
		events string
		lines  []traceLine
		want   report.RequestRow
	}{
		{"reproducer", ev("22ms", "0", "fail"), one, report.RequestRow{Worker: 0, FirstTokenNs: 10 * ms, FinishNs: 22 * ms,
			InputTokens: 16, OutputTokens: 10, ComputedPromptTokens: 16, HintSource: -1, Outcome: report.OutcomeFailed, PrevRequestID: -1}},
		{"fail", ev("30ms", "0", "fail"), three, r2},
		{"reroute, no worker", ev("30ms", "0, 1", "reroute"), three, r2},
		{"migrate, no worker", ev("30ms", "0, 1", "migrate"), three, r2},
		{"migrate exhausted", strings.Replace(ev("30ms", "0", "migrate"), "100ms", "10ms", 1) + ev("47ms", "1", "migrate"), three, exhausted},
	} {
		c.want.MeasuredTTFTNs, c.want.MeasuredE2ENs, c.want.MeasuredQueueNs = -1, -1, -1
		c.want.MeasuredPrefillNs, c.want.MeasuredDecodeNs = -1, -1
		sink, res := runTraceSink(t, migrateBody+"events:\n"+c.events, c.lines)
		if got := sink.rows[len(sink.rows)-1]; got != c.want {
			t.Errorf("%s: row\n%+v, want\n%+v", c.name, got, c.want)
		}
		if n := res.Summary.Counters["requests_failed"]; n != 1 {
			t.Errorf("%s: requests_failed %d, want 1", c.name, n)
		}
		if n, want := res.Summary.Counters["migrations_exhausted"], int64(strings.Count(c.name, "exhausted")); n != want {
			t.Errorf("%s: migrations_exhausted %d, want %d", c.name, n, want)
		}
	}
}

// TestDownRoundRobinByID: a worker's down and restart leave round robin
// on the next worker in id order. kvBody (3 workers, round robin, fixed
// timing: 10 ms prefill). R0-R2 (32 tokens, 1 output, blocks of their own:
// no hint) at 0 ms go to workers 0, 1 and 2, each done at 10 ms; the next
// id is 0 again. Worker 0, idle, is down 15-115 ms (ready at once after).
// R3-R5 at 200 ms go to workers 0, 1 and 2, first token at 210 ms, as in
// the twin (the run without the down). (Round robin's old position into
// the list of ready workers, shifted by worker 0's leaving but not by its
// return, sent R3 to worker 2, which had just served R2, R4 to worker 0
// and R5 to worker 1.)
func TestDownRoundRobinByID(t *testing.T) {
	var lines []traceLine
	for i, at := range []int{0, 0, 0, 200, 200, 200} {
		lines = append(lines, traceLine{at, 32, 1, ids(10*i, 2)})
	}
	down := kvBody + "events:\n  - {at: 15ms, for: 100ms, down: {workers: [0]}}\n"
	for _, body := range []string{down, kvBody} {
		sink, _ := runTraceSink(t, body, lines)
		for i, r := range sink.rows {
			if want := []int64{10, 10, 10, 210, 210, 210}[i]; r.Worker != int32(i%3) || r.FirstTokenNs != want*ms {
				t.Errorf("with events %t: R%d on worker %d, first token at %d ns; want worker %d, %d ms",
					body == down, i, r.Worker, r.FirstTokenNs, i%3, want)
			}
		}
	}
}

// TestDownBusyUntilDown: a pass the down cuts off is busy only up to the
// down. One worker, fixed timing (10 ms prefill, 5 ms decode). R0 (16
// tokens, 10 output) at 0 ms: prefill 0-10 ms, decodes 10-15 and 15-20 ms;
// the pass begun at 20 ms would end at 25 ms, but worker 0 goes down at
// 22 ms for 1 ms: 2 ms of it ran. R0 finds no worker ready and fails at
// 22 ms. R1 (16 tokens, 1 output) at 23 ms finds worker 0 ready again:
// prefill 23-33 ms, the run's end. Busy 10 + 5 + 5 + 2 + 10 = 32 ms over 5
// passes, down 1 ms: 33 ms, the whole run. (Counting the cut pass to its
// end made it 35 ms, more than the run.) The same pass by pass and with
// the decodes gone through as one stretch, which the down settles.
func TestDownBusyUntilDown(t *testing.T) {
	body := `cluster:
  workers: 1
  engine: {block_size: 16, gpu_blocks: 1000, kv_bytes_per_token: 62500, timing: {model: fixed, prefill: 10ms, decode: 5ms}}
events:
  - {at: 22ms, for: 1ms, down: {workers: [0]}}
`
	sc := traceScenario(t, body, []traceLine{{0, 16, 10, ids(1, 1)}, {23, 16, 1, ids(2, 1)}})
	for _, passByPass := range []bool{false, true} {
		sink, res := runOpts(t, sc, Options{PassByPass: passByPass})
		if r := sink.rows[1]; r.Outcome != report.OutcomeCompleted || r.FinishNs != 33*ms || sink.rows[0].FinishNs != 22*ms {
			t.Errorf("pass by pass %t: rows %+v", passByPass, sink.rows)
		}
		if w := res.Workers[0]; w.BusyNs != 32*ms || w.Passes != 5 || w.DownNs != 1*ms {
			t.Errorf("pass by pass %t: worker 0 busy %v over %d passes, down %v; want 32 ms over 5, 1 ms",
				passByPass, des.Time(w.BusyNs), w.Passes, des.Time(w.DownNs))
		}
	}
}
