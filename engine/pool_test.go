package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/block"
)

// poolSeq is one sequence of the differential test, as both pools see it.
type poolSeq struct {
	chain     int     // index of its chain
	ids       []int32 // the blocks it holds in the oracle
	h         holding // the blocks it holds in the run pool
	committed int
}

// diffChains makes n chains with shared prefixes (a few roots, chains that
// branch off another part-way, chains that extend another as a next turn
// does) interned in a fresh store.
func diffChains(rng *rand.Rand, n int) (*block.Chains, [][]uint64, [][]block.Piece) {
	var chains [][]uint64
	fresh := uint64(0)
	for range n {
		var c []uint64
		if len(chains) > 0 && rng.IntN(4) > 0 {
			o := chains[rng.IntN(len(chains))]
			c = slices.Clone(o[:rng.IntN(len(o)+1)])
		}
		for range 1 + rng.IntN(24) {
			fresh++
			prev := uint64(0)
			if len(c) > 0 {
				prev = c[len(c)-1]
			}
			c = append(c, block.Mix(prev*31+fresh))
		}
		chains = append(chains, c)
	}
	store := &block.Chains{}
	paths := make([][]block.Piece, n)
	for i, c := range chains {
		paths[i] = store.Intern(block.Hashed(c), nil)
	}
	return store, chains, paths
}

// oracleQueue lists the oracle's free queue: fresh blocks, then each
// released block's name, (-1, 0) for one without.
func oracleQueue(p *oraclePool) []string {
	out := []string{fmt.Sprintf("fresh %d", p.size-len(p.blocks))}
	for b := p.queue.Head(); b >= 0; b = p.blocks[b].Next() {
		if blk := p.blocks[b].V; blk.hash != 0 {
			out = append(out, fmt.Sprint(blk.seg, blk.off))
		} else {
			out = append(out, "-")
		}
	}
	return out
}

// runQueue lists the run pool's free queue as oracleQueue does.
func runQueue(p *blockPool) []string {
	out := []string{fmt.Sprintf("fresh %d", p.fresh)}
	for q := p.queue.Head(); q >= 0; q = p.runs[q].Next() {
		r := p.runs[q].V
		for off := r.Hi - 1; off >= r.Lo; off-- {
			if r.Seg >= 0 {
				out = append(out, fmt.Sprint(r.Seg, off))
			} else {
				out = append(out, "-")
			}
		}
	}
	return out
}

// TestPoolAgainstOracle applies random sequences of the worker's pool
// operations (admission with prefix hits, growth, commits, releases) to the
// run pool and to the per-block pool it replaced, on small pools where
// eviction and the splitting of runs happen all the time, and compares
// after every step what is observable: the names evicted, in order; the
// names stored; the free count; the hit prefix (and its free blocks) of
// every chain; and the free queue, block by block.
func TestPoolAgainstOracle(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		store, chains, paths := diffChains(rng, 2+rng.IntN(10))
		size := 4 + rng.IntN(60)
		op, rp := newOraclePool(size, store), newBlockPool(size, store)
		seqs := make([]poolSeq, 1+rng.IntN(6))
		for i := range seqs {
			seqs[i].chain = rng.IntN(len(chains))
		}
		var ostored []block.Ref
		var rstored []block.Run
		for step := range 300 {
			s := &seqs[rng.IntN(len(seqs))]
			chain, path := chains[s.chain], paths[s.chain]
			var did string
			switch {
			case len(s.ids) == 0: // admit: hits, then new blocks
				limit := rng.IntN(len(chain) + 1)
				hits := op.hitPrefix(path, limit, nil)
				n, free := rp.hitPrefix(path, limit)
				ofree := 0
				for _, b := range hits {
					if op.blocks[b].V.refs == 0 {
						ofree++
					}
				}
				if n != len(hits) || free != ofree {
					t.Fatalf("seed %d step %d: hit %d (%d free), oracle %d (%d free)", seed, step, n, free, len(hits), ofree)
				}
				need := rng.IntN(len(chain) + 4 - n)
				if n+need == 0 || need > op.free()-ofree {
					did = "no room"
					s.chain = rng.IntN(len(chains))
					break
				}
				for _, b := range hits {
					op.touch(b)
				}
				s.ids = append(s.ids, hits...)
				rp.touch(&s.h, path, n)
				for range need {
					s.ids = append(s.ids, op.alloc())
				}
				if need > 0 {
					rp.alloc(&s.h, need)
				}
				s.committed = n
				did = fmt.Sprintf("admit %d hits + %d", n, need)
			case rng.IntN(3) == 0 && op.free() > 0: // grow
				n := 1 + rng.IntN(min(op.free(), 4))
				for range n {
					s.ids = append(s.ids, op.alloc())
				}
				rp.alloc(&s.h, n)
				did = fmt.Sprintf("grow %d", n)
			case rng.IntN(2) == 0 && s.committed < min(len(chain), len(s.ids)): // commit
				full := min(len(chain), len(s.ids))
				to := s.committed + 1 + rng.IntN(full-s.committed)
				for k := s.committed; k < to; k++ {
					if r := block.RefAt(chain, path, k); op.commit(s.ids[k], r) {
						ostored = append(ostored, r)
					}
				}
				rstored = rp.commit(&s.h, path, s.committed, to, rstored)
				did = fmt.Sprintf("commit [%d, %d)", s.committed, to)
				s.committed = to
			default: // release, last block first
				for i := len(s.ids) - 1; i >= 0; i-- {
					op.release(s.ids[i])
				}
				s.ids, s.committed = s.ids[:0], 0
				rp.release(&s.h)
				s.chain = rng.IntN(len(chains))
				did = "release"
			}
			at := fmt.Sprintf("seed %d step %d (%s)", seed, step, did)
			if got, want := runNames(rp.evicted, true), refNames(op.evicted); !slices.Equal(got, want) {
				t.Fatalf("%s: evicted %v, oracle %v", at, got, want)
			}
			if got, want := runNames(rstored, false), refNames(ostored); !slices.Equal(got, want) {
				t.Fatalf("%s: stored %v, oracle %v", at, got, want)
			}
			op.evicted, rp.evicted, ostored, rstored = op.evicted[:0], rp.evicted[:0], ostored[:0], rstored[:0]
			if op.free() != rp.free() || op.refsum != rp.refsum {
				t.Fatalf("%s: %d free, %d references; oracle %d, %d", at, rp.free(), rp.refsum, op.free(), op.refsum)
			}
			for c, p := range paths {
				hits := op.hitPrefix(p, len(chains[c]), nil)
				n, _ := rp.hitPrefix(p, len(chains[c]))
				if n != len(hits) {
					t.Fatalf("%s: chain %d hits %d, oracle %d", at, c, n, len(hits))
				}
			}
			if oq, rq := oracleQueue(op), runQueue(rp); !slices.Equal(oq, rq) {
				t.Fatalf("%s: queue\n%v\noracle\n%v", at, rq, oq)
			}
			var held []*holding
			for i := range seqs {
				if seqs[i].h.n != len(seqs[i].ids) {
					t.Fatalf("%s: a sequence holds %d blocks, oracle %d", at, seqs[i].h.n, len(seqs[i].ids))
				}
				held = append(held, &seqs[i].h)
			}
			if errs := rp.check(held); len(errs) > 0 {
				t.Fatalf("%s: %v", at, errs)
			}
		}
		// A dropped worker reports every cached name (in an order of its
		// own: the router keeps a set).
		var cached []block.Ref
		for _, b := range op.blocks {
			if b.V.hash != 0 {
				cached = append(cached, b.V.ref())
			}
		}
		rp.evictAll()
		want, got := refNames(cached), runNames(rp.evicted, false)
		cmp := func(a, b [2]int32) int { return int(a[0]-b[0])*1<<20 + int(a[1]-b[1]) }
		slices.SortFunc(want, cmp)
		slices.SortFunc(got, cmp)
		if !slices.Equal(want, got) {
			t.Fatalf("seed %d: dropping evicts %v, oracle caches %v", seed, got, want)
		}
	}
}

// BenchmarkG1PoolOracle is BenchmarkG1Pool's work on the per-block pool,
// for reference.
func BenchmarkG1PoolOracle(b *testing.B) {
	p := newOraclePool(churnBlocks, testChains)
	reqs := churnRequests()
	hashes := make([][]uint64, len(reqs))
	for i, r := range reqs {
		hashes[i] = r.Blocks.AppendHashes(nil)
	}
	var ids, hits []int32
	churn(b, func(i int) {
		r := reqs[i%len(reqs)]
		hits = p.hitPrefix(r.Path, churnLength, hits[:0])
		for _, x := range hits {
			p.touch(x)
		}
		ids = append(ids[:0], hits...)
		for k := len(hits); k < churnLength; k++ {
			x := p.alloc()
			ids = append(ids, x)
			p.commit(x, block.RefAt(hashes[i%len(reqs)], r.Path, k))
		}
		for k := len(ids) - 1; k >= 0; k-- {
			p.release(ids[k])
		}
		p.evicted = p.evicted[:0]
	})
}

// refNames is the names (segment, offset) of rs, in order.
func refNames(rs []block.Ref) [][2]int32 {
	var out [][2]int32
	for _, r := range rs {
		out = append(out, [2]int32{r.Seg, r.Off})
	}
	return out
}

// runNames is the names (segment, offset) of the blocks of runs, run by run,
// each run's in ascending order or, desc, highest offset first.
func runNames(runs []block.Run, desc bool) [][2]int32 {
	var out [][2]int32
	for _, r := range runs {
		for i := range r.Hi - r.Lo {
			off := r.Lo + i
			if desc {
				off = r.Hi - 1 - i
			}
			out = append(out, [2]int32{r.Seg, off})
		}
	}
	return out
}
