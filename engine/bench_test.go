package engine

import (
	"testing"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

// refill counts finished sequences, so the benchmark can replace them.
type refill struct{ done int }

func (*refill) BlocksStored(int32, []block.Run)  {}
func (*refill) BlocksRemoved(int32, []block.Run) {}
func (*refill) FirstToken(des.Time, *Seq)        {}
func (*refill) Token(des.Time, *Seq, des.Time)   {}
func (*refill) Tokens([]des.Time, int)           {}
func (r *refill) Finished(des.Time, *Seq)        { r.done++ }
func (r *refill) Ignored(des.Time, *Seq)         { r.done++ }

// BenchmarkPass measures one engine pass (StartPass and FinishPass) of a
// worker keeping 256 requests running: 1024-token prompts sharing a
// 512-token prefix, 256 output tokens each, the roofline h100 +
// llama-3.1-8b timing; each request that finishes is replaced, so the
// batch is mostly decode with a prefill chunk now and then, as on a busy
// worker.
func BenchmarkPass(b *testing.B) {
	gpu, _ := FindGPU("h100")
	model, _ := FindModel("llama-3.1-8b")
	tm := Roofline{GPU: gpu, Model: model, TP: 1, MFU: 0.5, MBU: 0.7}
	obs := &refill{}
	blocks, err := tm.GPUBlocks(16, model.KVBytesPerToken())
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Config{BlockSize: 16, GPUBlocks: blocks, MaxNumSeqs: 256, MaxBatchedTokens: 8192,
		ChunkedPrefill: true, PrefixCaching: true, Chains: testChains}, &tm, obs, nil)
	if err != nil {
		b.Fatal(err)
	}
	id := int64(0)
	add := func() {
		r := req(id, 0, 1024, 256, 0)
		hs := r.Blocks.AppendHashes(nil)
		for k := 32; k < len(hs); k++ { // the second half is the request's own
			hs[k] = block.ChainHash(hs[k-1], uint64(id), uint64(k))
		}
		testChains.Release(r.Path)
		r.Blocks = block.Hashed(hs)
		r.Path = testChains.Intern(r.Blocks, nil)
		w.Enqueue(r, false)
		id++
	}
	for range 256 {
		add()
	}
	now := des.Time(0)
	pass := func() {
		end, ok := w.StartPass(now)
		if !ok {
			b.Fatal("idle worker")
		}
		now = end
		w.FinishPass(now)
		for ; obs.done > 0; obs.done-- {
			add()
		}
	}
	for range 1000 { // past the first prefills, into the steady state
		pass()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pass()
	}
	b.StopTimer()
	if w.Requests() != 256 || w.Running() < 200 {
		b.Fatalf("%d requests, %d running; want 256, most running", w.Requests(), w.Running())
	}
}

// BenchmarkG1Pool measures the G1 pool's work per request: a pool of 2048
// blocks in steady churn over 128 chains of 32 blocks (twice what fits).
// Each step admits a request on the next chain, which hits what is left of
// it, allocates the rest (evicting from the queue head), commits it all and
// releases it, as a worker does with a prompt.
func BenchmarkG1Pool(b *testing.B) {
	p := newBlockPool(churnBlocks, testChains)
	reqs := churnRequests()
	var h holding
	var stored []block.Run
	churn(b, func(i int) {
		r := reqs[i%len(reqs)]
		hits, _ := p.hitPrefix(r.Path, churnLength)
		p.touch(&h, r.Path, hits)
		if hits < churnLength {
			p.alloc(&h, churnLength-hits)
			stored = p.commit(&h, r.Path, hits, churnLength, stored[:0])
		}
		p.release(&h)
		p.evicted = p.evicted[:0]
	})
	if p.free() != churnBlocks {
		b.Fatalf("%d free of %d blocks; want all", p.free(), churnBlocks)
	}
}

// The G1 pool benchmarks' churn: a pool of churnBlocks blocks and
// churnChains chains of churnLength blocks, twice what fits.
const churnBlocks, churnChains, churnLength = 2048, 128, 32

// churnRequests are the churn's requests, one a chain.
func churnRequests() []*workload.Request {
	var reqs []*workload.Request
	for c := range churnChains {
		reqs = append(reqs, req(int64(c), 0, 16*churnLength, 1, uint64(1000+c)))
	}
	return reqs
}

// churn runs step over the chains twice, to fill the pool, then b.N times
// timed.
func churn(b *testing.B, step func(i int)) {
	for i := range 2 * churnChains {
		step(i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step(i)
	}
	b.StopTimer()
}
