package engine

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

// hostKV is a test HostKV: host[id] leading blocks of request id's chain are
// in G2; a load lands loadTime after it starts; a hinted request's pull is in
// flight from its first staging until pulls[id], and then puts pulled[id]
// blocks into G2.
type hostKV struct {
	host     map[int64]int
	loadTime des.Time
	pulls    map[int64]des.Time
	pulled   map[int64]int
	lands    []land // loads and pulls in flight, in the order they started
}

type land struct {
	at   des.Time
	s    *Seq
	pull bool
}

func (h *hostKV) Stage(now des.Time, s *Seq, _, _ int) Staging {
	h.lands = append(h.lands, land{at: h.pulls[s.Req.ID], s: s, pull: true})
	return StageWait
}

func (h *hostKV) HostPrefix(s *Seq, from, limit int) int {
	return max(0, min(h.host[s.Req.ID], limit)-from)
}

func (h *hostKV) Load(now des.Time, s *Seq, _, _ int) bool {
	h.lands = append(h.lands, land{at: now + h.loadTime, s: s})
	return false
}

func (h *hostKV) AsyncLoads() bool { return true }

// runKV drives one worker with h as its KVCR (unused by a worker without
// one), as the simulator would: arrivals in time order; at each instant,
// loads and pulls landing first (in the order they started), then the pass
// ending, then a pass starting. It checks the worker's
// invariants after every step and returns when nothing is left to happen:
// every request finished, or the worker stalled.
func runKV(t *testing.T, w *Worker, h *hostKV, reqs []*workload.Request, hinted ...int64) []*Seq {
	t.Helper()
	var seqs []*Seq
	now, next, busy, end := des.Time(0), 0, false, des.Time(0)
	for {
		for next < len(reqs) && reqs[next].Arrival <= now {
			seqs = append(seqs, w.Enqueue(reqs[next], slices.Contains(hinted, reqs[next].ID)))
			next++
		}
		if !busy {
			end, busy = w.StartPass(now)
		}
		if err := w.Check(); err != nil {
			t.Fatal(err)
		}
		at := des.Time(-1)
		for _, l := range h.lands {
			if at < 0 || l.at < at {
				at = l.at
			}
		}
		if busy && (at < 0 || end < at) {
			at = end
		}
		if next < len(reqs) && (at < 0 || reqs[next].Arrival < at) {
			at = reqs[next].Arrival
		}
		if at < 0 {
			return seqs
		}
		now = at
		kept := h.lands[:0]
		for _, l := range h.lands {
			switch {
			case l.at != now:
				kept = append(kept, l)
			case l.pull:
				h.host[l.s.Req.ID] = h.pulled[l.s.Req.ID]
				w.PullDone(l.s, 0, h.pulled[l.s.Req.ID])
			default:
				w.LoadDone(l.s)
			}
		}
		h.lands = kept
		if busy && end == now {
			w.FinishPass(now)
			busy = false
			if err := w.Check(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// chainReq is a request of in prompt tokens and out output tokens, arriving
// at 0, whose chain of in/4 blocks is its own.
func chainReq(id int64, in, out int) *workload.Request {
	return chainOf(id, 0, in, out, uint64(1000+id), 4)
}

// TestAdmissionStall: four queues that stall a worker under vLLM 0.11's
// admission and finish under the current one. Block size 4, fixed timing
// (10 ms a pass with prompt tokens, 5 ms a pass of decodes only), budget
// 8192, G2 loads of 10 or 40 ms. "hold" counts G1 blocks; a request's
// "need" is the blocks its first chunk adds to those it holds.
//
// Preempted head, G1 of 5 blocks: A (8 prompt tokens, 8 out, nothing in G2),
// B (12 prompt tokens, 2 out, its first 2 blocks in G2, a 40 ms load).
//   - 0 ms: A is admitted (2 blocks) and prefills; B's load starts, holding
//     2 blocks (need 1: 2+1 <= 5-2): 1 free.
//   - A's tokens at 10, 15, 20, 25, 30 ms; at 10 ms it takes the last block
//     (9 tokens in 3 blocks). At 30 ms its 13th token needs a 4th block and
//     none is free: A preempts itself, freeing its 3 blocks (its 2 prompt
//     blocks stay cached on the free list).
//   - 40 ms: B's load lands. vLLM 0.11 put A at the front: A would hit its 2
//     cached blocks and compute 5 tokens, needing 2 more blocks, but of the
//     3 free 2 are its hits: 1 is usable. Admission stops at A, B is never
//     reached, nothing runs: the worker stops with B holding 2 blocks.
//     The current rule put A behind B, a skipped request: B (need 1 of 3
//     free) prefills its 4 tokens, taking the block A freed last (private),
//     first token at 50 ms; its 13th token takes A's cached block 1 at
//     50 ms; it finishes at 55 ms. Then A hits only block 0 and recomputes
//     9 tokens in 3 new blocks (4 of 5 free less its hit): token 6 at 65 ms,
//     7 at 70, 8 at 75 ms.
//
// Preempted head, load landed: the same with a 20 ms load. B's load lands at
// 20 ms, but no block is free for B's 4 tokens until A preempts itself at
// 30 ms, and nothing else happens after that.
//   - vLLM 0.11 ends that pass with nothing scheduled (A preempted), and A,
//     at the front, does not fit when scanned again: the worker stops.
//   - The current rule admits at once when every running request was
//     preempted (vLLM's engine schedules its next step right away): B, ahead
//     of A, prefills at 30 ms (need 1 of 3 free), first token at 40 ms,
//     finishes at 45 ms; A recomputes 9 tokens from 45 ms: token 6 at 55 ms,
//     8 at 65 ms.
//
// Two loads, G1 of 8 blocks: L1 (24 tokens, 2 out, 2 blocks in G2), L2 (20
// tokens, 2 out, 4 blocks in G2), 10 ms loads.
//   - 0 ms: L1's load starts (2 blocks, need 4: 6 <= 8). L1 needs 6 blocks
//     for its 24 tokens and holds 2: it reserves 4.
//   - vLLM 0.11 starts L2's load too (4 blocks, need 1: 5 <= 6 free): 2 free.
//     At 10 ms both land; L1, at the head, needs 4 of the 2 free: admission
//     stops, L2 is never reached, nothing runs.
//     The current rule leaves L2 waiting, holding nothing: 5 > 6 free - 4
//     reserved, and admission stops. At 10 ms L1 prefills 16 tokens (6
//     blocks held), first token at 20 ms; its 25th token takes a 7th block
//     at 20 ms, and it finishes at 25 ms. L2's load starts at 25 ms (nothing
//     reserved, 8 free), lands at 35 ms; L2 prefills 4 tokens (5 blocks),
//     first token at 45 ms, and finishes at 50 ms.
//
// A load behind a pull, G1 of 8 blocks: P (24 tokens, 2 out, hinted: its
// pull puts 5 blocks into G2 at 10 ms), L (16 tokens, 2 out, 3 blocks in
// G2), 10 ms loads.
//   - 0 ms: P's pull starts; P holds nothing and is skipped.
//   - vLLM 0.11 starts L's load behind it (3 blocks, need 1: 4 <= 8): 5 free.
//     At 10 ms P's pull lands: P would load 5 blocks and need 1 (6 > 5
//     free): admission stops at P. L's load lands at 20 ms, P is still at
//     the head and does not fit, L is never reached, nothing runs.
//     The current rule starts no load behind a skipped request that holds
//     nothing: L waits, holding nothing. At 10 ms P's load starts (6 <= 8),
//     and L's does not (4 > 3 free - 1 that P reserves: 6 blocks for its 24
//     tokens, 5 held). At 20 ms P's load lands and P prefills 4 tokens (6
//     blocks), first token at 30 ms; its 25th token takes a 7th block at
//     30 ms, and it finishes at 35 ms. L's load starts at 35 ms, lands at
//     45 ms; L prefills 4 tokens, first token at 55 ms, and finishes at
//     60 ms.
func TestAdmissionStall(t *testing.T) {
	ms := des.Millisecond
	for _, c := range []struct {
		name     string
		g1       int
		reqs     []*workload.Request
		host     map[int64]int
		loadTime des.Time
		hinted   []int64
		pulls    map[int64]des.Time
		pulled   map[int64]int
		// 0.11: the requests' first tokens (-1 none) and the G1 blocks held
		// when the worker stops; current: first tokens and finishes.
		stallFirst []des.Time
		stallHeld  int
		first      []des.Time
		finish     []des.Time
	}{
		{name: "preempted head", g1: 5, reqs: []*workload.Request{chainReq(0, 8, 8), chainReq(1, 12, 2)},
			host: map[int64]int{1: 2}, loadTime: 40 * ms,
			stallFirst: []des.Time{10 * ms, -1}, stallHeld: 2,
			first: []des.Time{10 * ms, 50 * ms}, finish: []des.Time{75 * ms, 55 * ms}},
		{name: "preempted head, load landed", g1: 5, reqs: []*workload.Request{chainReq(0, 8, 8), chainReq(1, 12, 2)},
			host: map[int64]int{1: 2}, loadTime: 20 * ms,
			stallFirst: []des.Time{10 * ms, -1}, stallHeld: 2,
			first: []des.Time{10 * ms, 40 * ms}, finish: []des.Time{65 * ms, 45 * ms}},
		{name: "two loads", g1: 8, reqs: []*workload.Request{chainReq(0, 24, 2), chainReq(1, 20, 2)},
			host: map[int64]int{0: 2, 1: 4}, loadTime: 10 * ms,
			stallFirst: []des.Time{-1, -1}, stallHeld: 6,
			first: []des.Time{20 * ms, 45 * ms}, finish: []des.Time{25 * ms, 50 * ms}},
		{name: "load behind a pull", g1: 8, reqs: []*workload.Request{chainReq(0, 24, 2), chainReq(1, 16, 2)},
			host: map[int64]int{1: 3}, loadTime: 10 * ms, hinted: []int64{0},
			pulls: map[int64]des.Time{0: 10 * ms}, pulled: map[int64]int{0: 5},
			stallFirst: []des.Time{-1, -1}, stallHeld: 3,
			first: []des.Time{30 * ms, 55 * ms}, finish: []des.Time{35 * ms, 60 * ms}},
	} {
		for _, rule := range []Admission{AdmitV011, AdmitCurrent} {
			t.Run(fmt.Sprintf("%s/%s", c.name, rule), func(t *testing.T) {
				cf := cfg()
				cf.BlockSize, cf.GPUBlocks, cf.Admission = 4, c.g1, rule
				h := &hostKV{host: maps.Clone(c.host), loadTime: c.loadTime, pulls: c.pulls, pulled: c.pulled}
				w, err := New(cf, fixed, &log{}, h)
				if err != nil {
					t.Fatal(err)
				}
				seqs := runKV(t, w, h, c.reqs, c.hinted...)
				var first, finish []des.Time
				for _, s := range seqs {
					first, finish = append(first, s.FirstTokenAt), append(finish, s.FinishedAt)
				}
				if rule == AdmitV011 {
					unfinished := []des.Time{-1, -1}
					if !slices.Equal(first, c.stallFirst) || !slices.Equal(finish, unfinished) || w.Running() != 0 || w.G1Used() != c.stallHeld {
						t.Errorf("first tokens %v, finishes %v, %d running, %d blocks held; want a stall: first tokens %v, nothing finished or running, %d blocks held",
							first, finish, w.Running(), w.G1Used(), c.stallFirst, c.stallHeld)
					}
					return
				}
				if !slices.Equal(first, c.first) || !slices.Equal(finish, c.finish) || w.HasWork() || w.G1Used() != 0 {
					t.Errorf("first tokens %v, finishes %v, work left %v, %d blocks held; want first tokens %v, finishes %v, nothing left",
						first, finish, w.HasWork(), w.G1Used(), c.first, c.finish)
				}
			})
		}
	}
}
