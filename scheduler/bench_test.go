package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/workload"
)

// benchChain is the engine-block chain of a request whose first 32 blocks
// are prefix group g's and whose next 32 are its own (id).
func benchChain(g, id int) block.Chain {
	var c block.Chain
	c.AppendRule(uint64(g), 0, 1, 32)
	c.AppendRule(uint64(1<<32+id), 0, 1, 32)
	return c
}

// BenchmarkRoute measures one kv_aware pick with hint selection and its
// finish, at 8 to 2048 workers. Every worker holds in G1 and G2 the full
// chains of four earlier requests of its own prefix groups (of 64), so a
// request's first block is held by about workers/16 workers and the
// prefix walk, the cost scan and the hint scan all have work to do. The
// workers are idle (every load even: every holder may win), or, loaded,
// each decoding 0 to 2,000 blocks, as a busy cluster's are. Loaded, the
// bound keeps the workers within about a prompt's credit (64 blocks) of
// the least loaded: some 64 · 2048/2000 = 65 at 2048 workers, 16 at 512,
// fewer by the winner's own credit, against an eighth of the holders, 16
// and 4; so most tries fail (about 19 in 20 when this was written) and
// the variant times mostly the fallback and the picks that skip the bound.
func BenchmarkRoute(b *testing.B) {
	for _, c := range []struct {
		n      int
		loaded bool
	}{{8, false}, {32, false}, {128, false}, {512, false}, {2048, false}, {512, true}, {2048, true}} {
		name := fmt.Sprintf("workers=%d", c.n)
		if c.loaded {
			name += "/loaded"
		}
		n := c.n
		b.Run(name, func(b *testing.B) {
			r, tab, err := newWithLife(Config{Policy: KVAware, OverlapCredit: 1, HostHitWeight: 0.75, PrefillLoadScale: 1,
				BlockSize: 16, Hints: true, HintMinBlocks: 1, Chains: &block.Chains{}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			for w := range int32(n) {
				tab.Add(lifecycle.Ready)
				for i := range 4 {
					chain := benchChain(int(w+int32(i)*17)%64, int(w)*4+i)
					hs := chain.AppendHashes(nil)
					r.Stored(0, w, G1, blocks(r, hs, 0, len(hs)))
					r.Stored(0, w, G2, blocks(r, hs, 0, len(hs)))
				}
			}
			rng := rand.New(rand.NewPCG(1, 1))
			if c.loaded {
				for w := range int32(n) {
					r.loads[w].decodeBlocks = rng.IntN(2000)
					r.rekey(w)
				}
			}
			reqs := make([]*workload.Request, 1024)
			for i := range reqs {
				reqs[i] = in(r, &workload.Request{InputTokens: 1024, OutputTokens: 128, Blocks: benchChain(rng.IntN(64), 1<<20+i)})
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rt, _ := r.Pick(0, reqs[i&1023])
				r.Finished(rt, false)
			}
		})
	}
}
