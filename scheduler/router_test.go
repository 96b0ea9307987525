package scheduler

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/workload"
)

// Overlap is the run of a chain's blocks one worker holds from a block on.
type Overlap struct {
	Worker int32
	Blocks int
}

// overlaps lists, in worker order, each worker holding block from of the
// chain whose path is given in one of the tiers, with the run of blocks
// from there it holds.
func overlaps(ix *Index, path []block.Piece, from int, tiers Tiers) []Overlap {
	var out []Overlap
	for _, p := range ix.runs(path, from, tiers, 0, nil, nil) {
		out = append(out, Overlap{p.Worker, p.Either})
	}
	return out
}

// at is block k of the chain whose path is given, as a run of one block.
func at(path []block.Piece, k int) block.Run {
	s, off := locate(path, k)
	return block.Run{Seg: s, Lo: off, Hi: off + 1}
}

// TestIndexOverlaps: worker 2 holds blocks 0-3 of a 4-block chain, worker 0
// holds 0-1, worker 5 holds 0 and 2 (a gap: its run is 1 block), worker 3
// holds only block 1 (no run from block 0), added twice (idempotent). From
// block 0 the runs are 2, 4 and 1 blocks; from block 1, where worker 3
// joins with 1, they are 1 (worker 0), 3 and 1, and worker 5 drops out.
// Worker 2 losing block 2 cuts its run from 0 to 2. The index then records
// 3 + 2 + 2 + 1 = 8 (worker, tier, block) facts.
func TestIndexOverlaps(t *testing.T) {
	var chains block.Chains
	ix := NewIndex(&chains)
	path := chains.Intern(block.Hashed([]uint64{10, 11, 12, 13}), nil)
	for k := range 4 {
		ix.Add(2, G1, at(path, k))
	}
	ix.Add(0, G1, at(path, 0))
	ix.Add(0, G1, at(path, 1))
	ix.Add(5, G1, at(path, 0))
	ix.Add(5, G1, at(path, 2))
	ix.Add(3, G1, at(path, 1))
	ix.Add(3, G1, at(path, 1)) // idempotent
	if got, want := overlaps(ix, path, 0, InG1), []Overlap{{0, 2}, {2, 4}, {5, 1}}; !slices.Equal(got, want) {
		t.Errorf("overlaps %v want %v", got, want)
	}
	if got, want := overlaps(ix, path, 1, InG1), []Overlap{{0, 1}, {2, 3}, {3, 1}}; !slices.Equal(got, want) {
		t.Errorf("overlaps from block 1 %v want %v", got, want)
	}
	if got := overlaps(ix, path, 0, InG2); len(got) != 0 {
		t.Errorf("overlaps in G2 %v, want none", got)
	}
	ix.Remove(2, G1, at(path, 2))
	ix.Remove(2, G1, block.Run{Seg: 99, Lo: 0, Hi: 1}) // a segment nobody holds: no-op
	ix.Remove(4, G1, at(path, 0))                      // a worker holding nothing: no-op
	if got := overlaps(ix, path, 0, InG1); !slices.Equal(got, []Overlap{{0, 2}, {2, 2}, {5, 1}}) {
		t.Errorf("after remove: %v", got)
	}
	if ix.Facts() != 8 {
		t.Errorf("%d facts, want 8", ix.Facts())
	}
}

// blocks is blocks [from, to) of chain as runs in r's chain store (the
// chain interned there, its references kept).
func blocks(r *Router, chain []uint64, from, to int) []block.Run {
	return runsOf(r.cfg.Chains.Intern(block.Hashed(chain), nil), from, to)
}

// in gives q its path in r's chain store, as the simulation does at
// arrival.
func in(r *Router, q *workload.Request) *workload.Request {
	q.Path = r.cfg.Chains.Intern(q.Blocks, nil)
	return q
}

// newWithLife is New with a lifecycle table of its own, which the test
// changes as sim would.
func newWithLife(cfg Config, rng *rand.Rand) (*Router, *lifecycle.Table, error) {
	tab := &lifecycle.Table{}
	cfg.Workers = tab.View()
	r, err := New(cfg, rng)
	return r, tab, err
}

// setReady makes worker w ready, or draining.
func setReady(tab *lifecycle.Table, w int32, on bool) {
	if on {
		tab.Set(w, lifecycle.Ready)
	} else {
		tab.Set(w, lifecycle.Draining)
	}
}

func newRouter(t *testing.T, policy Policy, n int) (*Router, *lifecycle.Table) {
	r, tab, err := newWithLife(Config{Policy: policy, OverlapCredit: 1, HostHitWeight: 0.75, PrefillLoadScale: 1, BlockSize: 16, Chains: &block.Chains{}},
		rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		tab.Add(lifecycle.Ready)
	}
	return r, tab
}

func rq(in int, blocks ...uint64) *workload.Request {
	return &workload.Request{InputTokens: in, OutputTokens: 1, Blocks: block.Hashed(blocks)}
}

func pick(t *testing.T, r *Router, q *workload.Request) Route {
	t.Helper()
	rt, ok := r.Pick(0, in(r, q))
	if !ok {
		t.Fatal("no worker")
	}
	return rt
}

func TestRoundRobinSkipsUnschedulable(t *testing.T) {
	r, tab := newRouter(t, RoundRobin, 4)
	var got []int32
	for i := range 6 {
		if i == 2 {
			setReady(tab, 2, false)
		}
		got = append(got, pick(t, r, rq(16)).Worker)
	}
	if want := []int32{0, 1, 3, 0, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
	for _, w := range []int32{0, 1, 3} { // 2 is draining already
		setReady(tab, w, false)
	}
	if _, ok := r.Pick(0, rq(16)); ok {
		t.Error("picked with no schedulable worker")
	}
}

// TestRoundRobinByID: round robin takes the next worker in id order after
// the last it served, whatever joined or left the schedulable workers in
// between. 4 workers, 0-3:
//
//   - 0, 1: the next id is 2;
//   - worker 0 goes down: 2 (the next id is 3);
//   - worker 0 restarts, ready: 3, not 2 again (the ids after 2 come
//     first; a position into the list of schedulable workers, [0 1 2 3]
//     now, was 2, at worker 2, as worker 0's restart shifted the list
//     under it);
//   - past 3, wrap: 0 (the next id is 1);
//   - worker 1 drains: 2, the first schedulable id from 1;
//   - a worker 4 is added, ready: 3, 4, then wrap to 0, and 2 (1 is
//     draining).
func TestRoundRobinByID(t *testing.T) {
	r, tab := newRouter(t, RoundRobin, 4)
	var got []int32
	next := func(n int) {
		for range n {
			got = append(got, pick(t, r, rq(16)).Worker)
		}
	}
	next(2)
	tab.Set(0, lifecycle.Down)
	next(1)
	tab.Set(0, lifecycle.Ready)
	next(2)
	setReady(tab, 1, false)
	next(1)
	tab.Add(lifecycle.Ready)
	next(4)
	if want := []int32{0, 1, 2, 3, 0, 2, 3, 4, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
}

func TestLeastLoaded(t *testing.T) {
	r, _ := newRouter(t, LeastLoaded, 3)
	a, b, c := pick(t, r, rq(16)), pick(t, r, rq(16)), pick(t, r, rq(16))
	if a.Worker != 0 || b.Worker != 1 || c.Worker != 2 {
		t.Fatalf("%d %d %d", a.Worker, b.Worker, c.Worker)
	}
	r.Finished(b, false)
	if w := pick(t, r, rq(16)).Worker; w != 1 {
		t.Errorf("after worker 1 finished: picked %d", w)
	}
}

func TestRandomIsSeeded(t *testing.T) {
	seq := func() []int32 {
		r, _ := newRouter(t, Random, 8)
		var s []int32
		for range 20 {
			s = append(s, pick(t, r, rq(16)).Worker)
		}
		return s
	}
	a, b := seq(), seq()
	if !slices.Equal(a, b) {
		t.Error("same seed, different picks")
	}
	if slices.Min(a) == slices.Max(a) {
		t.Error("random always picked one worker")
	}
}

// TestKVAware: 3 workers, a 4-block request (64 tokens). Worker 1 caches
// its first 3 blocks. Cost = max(0, pending + 4 - credit) + decode:
// worker 0: 4, worker 1: 4 - 3 = 1, worker 2: 4. Worker 1 wins and now has
// 1 pending prefill block. A second, unrelated 4-block request costs 4 on
// workers 0 and 2 and 1 + 4 = 5 on worker 1: worker 0 (lowest id of the
// tie). After worker 1's request gets its first token, its 4 prompt blocks
// count as decode load: the same cached request then costs 0 + 4 - 3 + 4 =
// 5 on worker 1 against 4 + 4 = 8 on worker 0 and 4 on worker 2: worker 2.
func TestKVAware(t *testing.T) {
	r, _ := newRouter(t, KVAware, 3)
	r.Stored(0, 1, G1, blocks(r, []uint64{1, 2, 3, 4}, 0, 3))
	first := pick(t, r, rq(64, 1, 2, 3, 4))
	if first.Worker != 1 || first.G1Overlap != 3 {
		t.Fatalf("first: %+v", first)
	}
	if second := pick(t, r, rq(64, 7, 8, 9, 10)); second.Worker != 0 {
		t.Fatalf("second: %+v", second)
	}
	r.FirstToken(first)
	if third := pick(t, r, rq(64, 1, 2, 3, 4)); third.Worker != 2 {
		t.Errorf("third: %+v", third)
	}
}

// TestKVAwareAgainstReference checks kvAware (the uncredited winner, then
// the holders near enough to beat it with their credit) against scoring
// every schedulable worker once with its own credit, ties to the lowest
// id, over random loads, holdings, weights and unschedulable workers. The
// holdings are in the router's index (G1 from block 0, G2 past it), up to
// 40 workers, so that both the bounded walk and its fallback to every
// holder run. Loads and prefixes are small integers so that ties are
// common, and some weights make credit exceed the prompt (the max(0, ...)
// clamp).
func TestKVAwareAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	weights := []float64{0, 0.5, 0.75, 1, 2, 0.1, 1e300}
	chain := []uint64{11, 12, 13, 14, 15, 16}
	bounded := 0 // trials whose walk skipped a holder
	for trial := range 20000 {
		n := 1 + rng.IntN(40)
		r, tab, err := newWithLife(Config{Policy: KVAware, OverlapCredit: weights[rng.IntN(len(weights))],
			HostHitWeight: weights[rng.IntN(len(weights))], PrefillLoadScale: weights[rng.IntN(len(weights)-1)], BlockSize: 16, Chains: &block.Chains{}},
			rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		spread := []int{4, 40}[rng.IntN(2)]
		for w := range int32(n) {
			tab.Add(lifecycle.Ready)
			r.loads[w] = load{prefillBlocks: rng.IntN(spread), decodeBlocks: rng.IntN(spread)}
			r.rekey(w)
		}
		for w := range int32(n) {
			if rng.IntN(4) == 0 && r.Schedulable() > 1 {
				setReady(tab, w, false)
			}
		}
		var held []Prefix
		for w := range int32(n) {
			if rng.IntN(4) != 0 {
				g1 := rng.IntN(len(chain) + 1)
				p := Prefix{Worker: w, G1: g1, Either: g1 + rng.IntN(len(chain)+1-g1)} // up to the whole chain
				for _, run := range blocks(r, chain, 0, p.G1) {
					r.index.Add(w, G1, run)
				}
				for _, run := range blocks(r, chain, p.G1, p.Either) {
					r.index.Add(w, G2, run)
				}
				if p.Either > 0 {
					held = append(held, p)
				}
			}
		}
		path := r.cfg.Chains.Intern(block.Hashed(chain), nil)
		blocks := rng.IntN(5)
		// The reference: one pass over the schedulable workers, each with
		// its credit from its holding (0 when it holds none).
		want, wantCost := int32(-1), 0.0
		for _, w := range r.schedulable {
			credit := 0.0
			for _, p := range held {
				if p.Worker == w {
					credit = float64(r.cfg.OverlapCredit*float64(p.G1)) + float64(r.cfg.HostHitWeight*float64(p.Either-p.G1))
				}
			}
			l := r.loads[w]
			c := float64(r.cfg.PrefillLoadScale*max(0, float64(l.prefillBlocks+blocks)-credit)) + float64(l.decodeBlocks)
			if want < 0 || c < wantCost {
				want, wantCost = w, c
			}
		}
		r.prefixes = r.prefixes[:0]
		if got := r.kvAware(path, blocks); got != want {
			t.Fatalf("trial %d: picked %d, want %d (config %+v, loads %+v, schedulable %v, holdings %+v, scored %+v, blocks %d)",
				trial, got, want, r.cfg, r.loads, r.schedulable, held, r.prefixes, blocks)
		}
		if len(r.prefixes) < len(held) {
			bounded++
		}
	}
	if bounded < 1000 {
		t.Errorf("only %d trials walked fewer than every holder: the bound went untested", bounded)
	}
}

// TestKeyedAgainstScan drives two routers through the same random picks,
// first tokens, finishes and schedulability changes, one choosing from its
// tree of keys (and walking only the holders near enough to win) and one
// scanning every worker (kv_aware with keyed off; for least_loaded the
// test scans the loads itself), and requires the same route every time: least_loaded, and kv_aware at every exact
// prefill_load_scale tried, with loads from small (ties everywhere) to
// near the exactness bound. Prompts are 1 to 40 blocks; with large loads,
// some exceed the bound and switch the keyed router to scanning.
func TestKeyedAgainstScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	unkeyed := 0             // kv_aware trials whose loads passed the bound
	bounded, skipped := 0, 0 // kv_aware picks that walked fewer than every holder; that walked every holder, skipping the bound after it failed
	for trial := range 400 {
		cfg := Config{Policy: KVAware, OverlapCredit: 1, HostHitWeight: 0.75, PrefillLoadScale: []float64{0, 0.25, 0.75, 1, 1.5, 3}[rng.IntN(6)], BlockSize: 1,
			Chains: &block.Chains{}} // both routers' chains
		if trial%4 == 0 {
			cfg.Policy = LeastLoaded
		}
		var rs [2]*Router
		tab := &lifecycle.Table{} // both routers watch it
		cfg.Workers = tab.View()
		for i := range rs {
			r, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			rs[i] = r
		}
		if !rs[0].keyed {
			t.Fatalf("scale %v: not keyed", cfg.PrefillLoadScale)
		}
		if cfg.Policy == KVAware {
			rs[1].keyed = false
		}
		n := 1 + rng.IntN(40)
		for range n {
			tab.Add(lifecycle.Starting)
		}
		for w := range int32(n) {
			if rng.IntN(4) != 0 { // one in four stays starting, made ready below
				tab.Set(w, lifecycle.Ready)
			}
		}
		// Three chains of 6 blocks, a prefix of one held by most workers
		// (G1 from block 0, G2 past it), in both routers: the requests
		// are for them, so kv_aware's bound, its fallback to every
		// holder and the picks it then skips the bound for all run.
		chains := [][]uint64{{1, 2, 3, 4, 5, 6}, {1, 2, 3, 7, 8, 9}, {10, 11, 12, 13, 14, 15}}
		for w := range int32(n) {
			if rng.IntN(4) == 0 {
				continue
			}
			c := chains[rng.IntN(len(chains))]
			g1 := rng.IntN(len(c) + 1)
			either := g1 + rng.IntN(len(c)+1-g1)
			for _, r := range rs {
				for _, run := range blocks(r, c, 0, g1) {
					r.index.Add(w, G1, run)
				}
				for _, run := range blocks(r, c, g1, either) {
					r.index.Add(w, G2, run)
				}
			}
		}
		size := 1 + rng.IntN(40)
		if trial%5 == 0 {
			size = exactLoad / 4 // a few of these push a load past the bound
		}
		var live []Route
		var started []bool
		for op := range 300 {
			switch k := rng.IntN(10); {
			case k < 5 || len(live) == 0:
				q := in(rs[0], rq(size*(1+rng.IntN(3)), chains[rng.IntN(len(chains))]...))
				least := int32(-1) // least_loaded's reference: the first schedulable worker with the fewest requests
				for _, w := range rs[0].schedulable {
					if least < 0 || rs[0].loads[w].outstanding < rs[0].loads[least].outstanding {
						least = w
					}
				}
				skip := rs[0].skip // the picks left that skip the bound, before this one
				a, okA := rs[0].Pick(0, q)
				b, okB := rs[1].Pick(0, q)
				if cfg.Policy == LeastLoaded && okA && a.Worker != least {
					t.Fatalf("trial %d op %d: least_loaded picked %d, want %d", trial, op, a.Worker, least)
				}
				if cfg.Policy == KVAware && (a != b || okA != okB) {
					t.Fatalf("trial %d op %d: keyed %+v %v, scan %+v %v", trial, op, a, okA, b, okB)
				}
				if cfg.Policy == KVAware && rs[0].keyed {
					switch h := rs[0].index.FirstHolders(q.Path); {
					case h < 16:
					case len(rs[0].prefixes) < h:
						bounded++
					case skip > 0 && rs[0].skip == skip-1:
						skipped++
					}
				}
				if okA {
					live, started = append(live, a), append(started, false)
				}
			case k < 7:
				i := rng.IntN(len(live))
				if !started[i] {
					started[i] = true
					for _, r := range rs {
						r.FirstToken(live[i])
					}
				}
			case k < 9:
				i := rng.IntN(len(live))
				for _, r := range rs {
					r.Finished(live[i], started[i])
				}
				live, started = slices.Delete(live, i, i+1), slices.Delete(started, i, i+1)
			default: // a worker takes the next step of its life, as sim's workers do
				switch w := int32(rng.IntN(n)); tab.Of(w) {
				case lifecycle.Starting:
					tab.Set(w, lifecycle.Ready)
				case lifecycle.Ready:
					tab.Set(w, lifecycle.Draining)
				}
			}
		}
		if !rs[0].keyed {
			unkeyed++
		}
	}
	if unkeyed == 0 {
		t.Error("no trial's loads passed the exactness bound: the switch to scanning went untested")
	}
	if bounded < 500 || skipped < 500 {
		t.Errorf("%d picks walked fewer than every holder, %d skipped the bound: want 500 each", bounded, skipped)
	}
}

// TestMinTree: the winner is the lowest key, ties to the lowest id; a
// worker at +Inf is out; growing keeps the keys.
func TestMinTree(t *testing.T) {
	var tr minTree
	if w, _ := tr.min(); w != -1 {
		t.Fatalf("empty tree: %d", w)
	}
	tr.set(2, 5) // grows to 4 leaves: 0, 1, 3 out
	tr.set(1, 5) // ties with 2: 1 wins
	if w, k := tr.min(); w != 1 || k != 5 {
		t.Fatalf("got %d %v, want 1 5", w, k)
	}
	tr.set(6, 4) // grows to 8 leaves: 6 has the lowest key
	if w, _ := tr.min(); w != 6 {
		t.Fatalf("got %d, want 6", w)
	}
	tr.set(6, math.Inf(1)) // out: 1 and 2 tie again
	if w, _ := tr.min(); w != 1 {
		t.Fatalf("got %d, want 1", w)
	}
	tr.set(2, 4.5)
	if w, k := tr.min(); w != 2 || k != 4.5 {
		t.Fatalf("got %d %v, want 2 4.5", w, k)
	}
	// atMost: keys 1: 5, 2: 4.5, 5: 3, 7: 6 (the rest out). Within 5 are
	// 1, 2 and 5, in id order, the limit included and 7 left out; with at
	// most 2 wanted it stops at the third and says so; 3 is enough.
	tr.set(5, 3)
	tr.set(7, 6)
	if got, ok := tr.atMost(5, 3, nil); !ok || !slices.Equal(got, []int32{1, 2, 5}) {
		t.Fatalf("atMost(5, 3): %v %v, want [1 2 5] true", got, ok)
	}
	if _, ok := tr.atMost(5, 2, nil); ok {
		t.Fatal("atMost(5, 2): true for 3 workers within 5")
	}
	if got, ok := tr.atMost(2.9, 0, nil); !ok || len(got) != 0 {
		t.Fatalf("atMost(2.9, 0): %v %v, want none, true", got, ok)
	}
}

func TestExactScale(t *testing.T) {
	for s, want := range map[float64]bool{0: true, 1: true, 0.75: true, 1.0 / (1 << 20): true, 255.5: true,
		0.1: false, 1.0 / 3: false, 256: false, -1: false, math.NaN(): false, math.Inf(1): false} {
		if got := exactScale(s); got != want {
			t.Errorf("exactScale(%v) = %v, want %v", s, got, want)
		}
	}
}

// TestEventDelay: with a 5 ms delay, a block stored at 0 is invisible to a
// request routed at 4 ms and visible at 5 ms.
func TestEventDelay(t *testing.T) {
	r, tab, _ := newWithLife(Config{Policy: KVAware, OverlapCredit: 1, PrefillLoadScale: 1, EventDelay: 5 * des.Millisecond, BlockSize: 16, Chains: &block.Chains{}}, nil)
	tab.Add(lifecycle.Ready)
	tab.Add(lifecycle.Ready)
	r.Stored(0, 1, G1, blocks(r, []uint64{42}, 0, 1))
	if rt, _ := r.Pick(4*des.Millisecond, in(r, rq(16, 42))); rt.Worker != 0 || rt.G1Overlap != 0 {
		t.Errorf("at 4ms: %+v", rt)
	}
	// Worker 0 now has 1 pending block; worker 1 costs max(0, 1 - 1) = 0.
	if rt, _ := r.Pick(5*des.Millisecond, in(r, rq(16, 42))); rt.Worker != 1 || rt.G1Overlap != 1 {
		t.Errorf("at 5ms: %+v", rt)
	}
}

// TestEventDelayHuge: with a delay of 2^62 ns (1,281,024 hours), a block
// stored at 0 reaches the router at 2^62 ns: not at 2^62 - 1, and once
// every event sent has reached it (Facts, the end of a run's view) it is
// there. Holds and Facts once asked for the events reached by MaxTime -
// delay, and catchUp took the delay off again: none at this delay.
func TestEventDelayHuge(t *testing.T) {
	delay := des.Time(1 << 62)
	r, tab, _ := newWithLife(Config{Policy: KVAware, OverlapCredit: 1, PrefillLoadScale: 1, EventDelay: delay, BlockSize: 16, Chains: &block.Chains{}}, nil)
	tab.Add(lifecycle.Ready)
	r.Stored(0, 0, G1, blocks(r, []uint64{42}, 0, 1))
	if r.catchUp(delay - 1); len(r.pending) != 1 {
		t.Errorf("at 2^62 - 1 ns: %d events pending, want 1", len(r.pending))
	}
	if n := r.Facts(); n != 1 || len(r.pending) != 0 {
		t.Errorf("Facts %d with %d pending, want 1 and 0", n, len(r.pending))
	}
}

// TestIndexAgainstReference applies random adds and removes in both tiers
// by 200 workers (the high ids showing up late, so holders join before,
// between and after those a segment has) to an Index and to a plain set,
// and compares every block's holders in each tier, and the facts counted,
// after each step. Each block is a one-block chain, its own segment, which
// goes from no holder to many and back, so its entry comes and goes.
func TestIndexAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var chains block.Chains
	ix := NewIndex(&chains)
	type key struct {
		h    int
		tier Tier
	}
	ref := map[key]map[int32]bool{}
	const workers, hashes = 200, 40
	paths := make([][]block.Piece, hashes)
	for h := range paths {
		paths[h] = chains.Intern(block.Hashed([]uint64{uint64(1 + h)}), nil)
	}
	emptied := 0 // removes that took a block's last holder in a tier
	var got []Prefix
	for step := range 30000 {
		w := int32(r.IntN(min(workers, 10+step/50)))
		k := key{r.IntN(hashes), Tier(r.IntN(2))}
		if ref[k] == nil {
			ref[k] = map[int32]bool{}
		}
		if r.IntN(5) < 2 {
			ix.Remove(w, k.tier, at(paths[k.h], 0))
			held := ref[k][w]
			delete(ref[k], w)
			if held && len(ref[k]) == 0 {
				emptied++
			}
		} else {
			ix.Add(w, k.tier, at(paths[k.h], 0))
			ref[k][w] = true
		}
		if step%7 != 0 {
			continue
		}
		facts := 0
		for h := range hashes {
			for _, tier := range []Tier{G1, G2} {
				var want []Overlap // the holders in id order, from the set's own (few) members
				for _, w := range slices.Sorted(maps.Keys(ref[key{h, tier}])) {
					want = append(want, Overlap{w, 1})
				}
				facts += len(want)
				got = ix.runs(paths[h], 0, Tiers(1)<<tier, 0, nil, got[:0]) // overlaps, without its allocations
				if !slices.EqualFunc(got, want, func(p Prefix, o Overlap) bool { return p.Worker == o.Worker && p.Either == o.Blocks }) {
					t.Fatalf("step %d block %d tier %d: %v want %v", step, h, tier, got, want)
				}
			}
		}
		if ix.Facts() != facts {
			t.Fatalf("step %d: %d facts, want %d", step, ix.Facts(), facts)
		}
	}
	if emptied == 0 {
		t.Error("no remove took a block's last holder in a tier: the test missed a holding's removal")
	}
}

// TestHintSelection: 4 workers, round robin, hints on with min_blocks 2.
// The request has 6 blocks. Worker 0 (the target) holds block 1 in G1 and
// 1-2 in G2: its G1+G2 prefix is 2. From block 3 on, worker 1's G2 holds 1
// block (below min_blocks), workers 2 and 3 hold 3 (blocks 3-5): the
// longest, ties to the lowest id: worker 2, a hint for a 5-block prefix.
// Once worker 2 stops being schedulable (draining), worker 3.
func TestHintSelection(t *testing.T) {
	r, tab, _ := newWithLife(Config{Policy: RoundRobin, BlockSize: 16, Hints: true, HintMinBlocks: 2, Chains: &block.Chains{}}, nil)
	for range 4 {
		tab.Add(lifecycle.Ready)
	}
	chain := []uint64{1, 2, 3, 4, 5, 6}
	r.Stored(0, 0, G1, blocks(r, chain, 0, 1))
	r.Stored(0, 0, G2, blocks(r, chain, 0, 2))
	r.Stored(0, 1, G2, blocks(r, chain, 0, 3))
	r.Stored(0, 2, G2, blocks(r, chain, 0, 5))
	r.Stored(0, 3, G2, blocks(r, chain, 0, 5))
	rt := pick(t, r, rq(96, chain...))
	if rt.Worker != 0 || rt.G1Overlap != 1 || rt.HostOverlap != 1 || rt.HintSource != 2 || rt.HintBlocks != 5 {
		t.Errorf("route %+v", rt)
	}
	setReady(tab, 2, false)
	r.next = 0
	if rt := pick(t, r, rq(96, chain...)); rt.HintSource != 3 {
		t.Errorf("with worker 2 draining: %+v", rt)
	}
	// Round robin goes on over workers 0, 1 and 3. Worker 1 holds 3 blocks:
	// worker 3's 5 are 2 more, a hint. Worker 3 itself holds the longest
	// prefix: a hint never names the target, and no other worker is 2
	// blocks longer: none.
	if rt := pick(t, r, rq(96, chain...)); rt.Worker != 1 || rt.HintSource != 3 {
		t.Errorf("third: %+v", rt)
	}
	if rt := pick(t, r, rq(96, chain...)); rt.Worker != 3 || rt.HintSource != -1 {
		t.Errorf("fourth: %+v", rt)
	}
}

// TestHintCountsFetchable: min_blocks counts the blocks a pull can carry,
// never the block holding the prompt's last token. 2 workers, round robin
// (each request to worker 0), min_blocks 2, 1,000-byte blocks. Worker 0's
// G2 holds block 1 (T = 1), worker 1's blocks 1-4.
//
//   - 48 tokens, blocks 1-3: staging can pull (48 - 1) / 16 = 2 blocks, 1
//     past T; worker 1's run past T is 2 (blocks 2-3) but offers min(2, 1)
//     = 1, below 2: no hint (the whole run, 2, made one).
//   - 49 tokens, blocks 1-4: (49 - 1) / 16 - 1 = 2 pullable past T; worker
//     1's run of 3 offers 2: a hint for T + 3 = 4 blocks, 2 x 1,000 bytes
//     on worker 1's backlog.
//
// A router given min_blocks 0 takes it as 1: a 16-token prompt (nothing
// pullable) held by worker 1 gets no hint.
func TestHintCountsFetchable(t *testing.T) {
	r, tab, _ := newWithLife(Config{Policy: RoundRobin, BlockSize: 16, Hints: true, HintMinBlocks: 2,
		HintCosts: HintCosts{BlockBytes: 1000}, Chains: &block.Chains{}}, nil)
	tab.Add(lifecycle.Ready)
	tab.Add(lifecycle.Ready)
	chain := []uint64{1, 2, 3, 4}
	r.Stored(0, 0, G2, blocks(r, chain, 0, 1))
	r.Stored(0, 1, G2, blocks(r, chain, 0, 4))
	if rt := pick(t, r, rq(48, 1, 2, 3)); rt.Worker != 0 || rt.HostOverlap != 1 || rt.HintSource != -1 {
		t.Errorf("48 tokens: route %+v", rt)
	}
	r.next = 0
	if rt := pick(t, r, rq(49, 1, 2, 3, 4)); rt.Worker != 0 || rt.HintSource != 1 || rt.HintBlocks != 4 || rt.HintBytes != 2000 {
		t.Errorf("49 tokens: route %+v", rt)
	}

	r, tab, _ = newWithLife(Config{Policy: RoundRobin, BlockSize: 16, Hints: true, Chains: &block.Chains{}}, nil)
	tab.Add(lifecycle.Ready)
	tab.Add(lifecycle.Ready)
	r.Stored(0, 1, G2, blocks(r, []uint64{1}, 0, 1))
	if rt := pick(t, r, rq(16, 1)); rt.Worker != 0 || rt.HintSource != -1 {
		t.Errorf("16 tokens, min_blocks 0: route %+v", rt)
	}
}

// TestG2Credit: kv_aware with host_hit_weight 0.75. A 4-block request;
// worker 0 holds 2 blocks in G1, worker 1 holds 4 in G2 only. Costs:
// worker 0: 4 - 2 = 2; worker 1: 4 - 0.75 x 4 = 1: worker 1.
func TestG2Credit(t *testing.T) {
	r, _ := newRouter(t, KVAware, 2)
	chain := []uint64{1, 2, 3, 4}
	r.Stored(0, 0, G1, blocks(r, chain, 0, 2))
	r.Stored(0, 1, G2, blocks(r, chain, 0, 4))
	if rt := pick(t, r, rq(64, 1, 2, 3, 4)); rt.Worker != 1 || rt.HostOverlap != 4 {
		t.Errorf("route %+v", rt)
	}
}

// TestG2CreditPastG1: host credit counts the blocks past the G1 prefix that
// G1 and G2 hold together, not a prefix of G2 alone. A 6-block request
// (96 tokens); worker 0 holds blocks 1-3 in G1: cost 6 - 3 = 3. Worker 1
// holds 1-2 in G1 and 3-6 in G2 only: credit 2 + 0.75 x 4 = 5, cost 1, so
// worker 1. (Counting its G2 prefix, which is empty, would give credit 2,
// cost 4, and worker 0.)
func TestG2CreditPastG1(t *testing.T) {
	r, _ := newRouter(t, KVAware, 2)
	chain := []uint64{1, 2, 3, 4, 5, 6}
	r.Stored(0, 0, G1, blocks(r, chain, 0, 3))
	r.Stored(0, 1, G1, blocks(r, chain, 0, 2))
	r.Stored(0, 1, G2, blocks(r, chain, 2, 6))
	if rt := pick(t, r, rq(96, chain...)); rt.Worker != 1 || rt.G1Overlap != 2 || rt.HostOverlap != 4 {
		t.Errorf("route %+v", rt)
	}
}

// TestHintFromG1Prefix: a source need not hold the shared prefix in G2.
// The target (worker 0) holds blocks 1-2 in G1; worker 1 keeps 1-2 hot in
// G1 only and holds 3-6 in G2: a run of 4 from the target's prefix, a hint
// for the whole 6-block prefix.
func TestHintFromG1Prefix(t *testing.T) {
	r, tab, _ := newWithLife(Config{Policy: RoundRobin, BlockSize: 16, Hints: true, HintMinBlocks: 1, Chains: &block.Chains{}}, nil)
	tab.Add(lifecycle.Ready)
	tab.Add(lifecycle.Ready)
	chain := []uint64{1, 2, 3, 4, 5, 6}
	r.Stored(0, 0, G1, blocks(r, chain, 0, 2))
	r.Stored(0, 1, G1, blocks(r, chain, 0, 2))
	r.Stored(0, 1, G2, blocks(r, chain, 2, 6))
	if rt := pick(t, r, rq(96, 1, 2, 3, 4, 5, 6)); rt.Worker != 0 || rt.HintSource != 1 || rt.HintBlocks != 6 {
		t.Errorf("route %+v", rt)
	}
}

// TestPrefixesAgainstReference: on random holdings of random chains by up
// to 300 workers, each chain cut into two segments by one interned before
// it (so runs cross from one piece of the path into the next), Prefixes
// and the runs from every block give what a brute-force walk of a plain
// set gives.
func TestPrefixesAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		var chains block.Chains
		ix := NewIndex(&chains)
		chain := make([]uint64, 1+r.IntN(12))
		for i := range chain {
			chain[i] = uint64(1 + r.IntN(1<<30))
		}
		// A chain interned first that leaves this one after a random
		// number of blocks cuts its path there into two segments.
		if k := r.IntN(len(chain)); k > 0 {
			chains.Intern(block.Hashed(append(slices.Clone(chain[:k]), 1<<31)), nil)
		}
		path := chains.Intern(block.Hashed(chain), nil)
		workers := 1 + r.IntN(300)
		type key struct {
			w    int32
			k    int
			tier Tier
		}
		held := map[key]bool{}
		for range r.IntN(40 * workers) {
			w, k := int32(r.IntN(workers)), r.IntN(len(chain))
			k = min(k, r.IntN(len(chain))) // favour leading blocks, as real holdings do
			ky := key{w, k, Tier(r.IntN(2))}
			if r.IntN(4) == 0 {
				ix.Remove(ky.w, ky.tier, at(path, k))
				delete(held, ky)
			} else {
				ix.Add(ky.w, ky.tier, at(path, k))
				held[ky] = true
			}
		}
		has := func(w int32, k int, tiers Tiers) bool {
			return tiers&InG1 != 0 && held[key{w, k, G1}] || tiers&InG2 != 0 && held[key{w, k, G2}]
		}
		run := func(w int32, from int, tiers Tiers) int {
			n := 0
			for from+n < len(chain) && has(w, from+n, tiers) {
				n++
			}
			return n
		}
		var want []Prefix
		for w := range int32(workers) {
			if e := run(w, 0, InEither); e > 0 {
				want = append(want, Prefix{Worker: w, G1: run(w, 0, InG1), Either: e})
			}
		}
		if got := ix.Prefixes(path, nil); !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d workers): prefixes %v want %v", trial, workers, got, want)
		}
		for from := range chain {
			for _, tiers := range []Tiers{InG1, InG2, InEither} {
				var want []Overlap
				for w := range int32(workers) {
					if n := run(w, from, tiers); n > 0 {
						want = append(want, Overlap{w, n})
					}
				}
				if got := overlaps(ix, path, from, tiers); !slices.Equal(got, want) {
					t.Fatalf("trial %d (%d workers) from %d tiers %d: %v want %v", trial, workers, from, tiers, got, want)
				}
			}
		}
	}
}
