package sim

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scheduler"
)

// hostKV is one worker's engine.HostKV: its slice of KVCR.
type hostKV struct {
	c *Cluster
	w int32
}

func (h *hostKV) Stage(now des.Time, s *engine.Seq, g1, limit int) engine.Staging {
	r := h.c.active[s.Req.ID]
	hint := kvcr.Hint{Source: r.route.HintSource, Move: h.c.moveHints, Blocks: r.route.HintBlocks}
	st := h.c.kv.Stage(now, h.w, s.Req.ID, s.Req.Path, limit, g1, hint)
	h.c.applyKV()
	return st
}

func (h *hostKV) HostPrefix(s *engine.Seq, from, limit int) int {
	return h.c.kv.HostPrefix(h.w, s.Req.Path, from, limit)
}

func (h *hostKV) Load(now des.Time, s *engine.Seq, from, n int) bool {
	landed := h.c.kv.Load(now, h.w, s.Req.ID, s.Req.Path, from, n)
	h.c.applyKV()
	return landed
}

func (h *hostKV) AsyncLoads() bool { return h.c.kv.AsyncLoads(h.w) }

// applyKV applies, in order, what KVCR did in the call into it or the
// event of its just made (kvcr.Effect): a load or pull that lets a request
// on its worker go on, blocks the router learns of, a pull's row, a
// draining worker KVCR no longer holds. It is called after every call that
// may change KVCR and after every event, so that the cluster sees each
// effect before anything else happens.
func (c *Cluster) applyKV() {
	if c.kv == nil {
		return
	}
	now := c.q.Now()
	for _, e := range c.kv.TakeEffects() {
		switch e.Kind {
		case kvcr.LoadLanded:
			if s := c.seqOn(e.Worker, e.Req); s != nil {
				c.settle(c.workers[e.Worker])
				c.workers[e.Worker].w.LoadDone(s)
				c.wake(e.Worker, now, false)
			}
		case kvcr.PullAnswered:
			if s := c.seqOn(e.Worker, e.Req); s != nil {
				c.settle(c.workers[e.Worker])
				c.workers[e.Worker].w.PullDone(s, e.From, e.Landed)
				c.wake(e.Worker, now, false)
			}
		case kvcr.BlocksVisible:
			c.router.Stored(now, e.Worker, scheduler.G2, e.Runs)
		case kvcr.BlocksRemoved:
			c.router.Removed(now, e.Worker, scheduler.G2, e.Runs)
		case kvcr.PullFinished:
			c.events.PullDone(e.Pull)
			c.faultedPull(e.Pull)
			c.stats.Pulled(e.Pull)
			if err := c.pulls.put(e.Pull.ID, results.PullRow(e.Pull), c.releasePull); err != nil && c.err == nil {
				c.err = err
			}
		case kvcr.WorkerIdle:
			c.idle(now, e.Worker)
		case kvcr.OrderNothingToFetch, kvcr.OrderDropped:
			c.events.OrderUnstaged(e.Pull, e.Kind == kvcr.OrderDropped)
		}
	}
}

// seqOn returns request req's sequence when it is still on worker w.
func (c *Cluster) seqOn(w int32, req int64) *engine.Seq {
	r := c.active[req]
	if r == nil || r.seq == nil || r.seq.Worker != w {
		return nil // ended or rerouted meanwhile
	}
	return r.seq
}

// idle retires draining worker w, which KVCR no longer holds, in the
// lifecycle phase of this instant: the deadlines and notices of its pulls
// due now (their target's answer may still wait when their write is over)
// come first, as they would with w alive.
func (c *Cluster) idle(now des.Time, w int32) {
	if c.life.Of(w) == lifecycle.Draining {
		retire := lifeArg{kind: lifeRetire, worker: w}
		c.q.Schedule(now, des.PhaseLifecycle, uint64(len(c.sc.Events)), (*lifeEvent)(c), retire.pack())
	}
}

// g1View is the workers' G1 prefixes, which KVCR reads (kvcr.G1View).
type g1View Cluster

func (v *g1View) G1Prefix(w int32, path []block.Piece, limit int) int {
	return v.workers[w].w.G1Prefix(path, limit)
}
