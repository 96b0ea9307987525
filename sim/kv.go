package sim

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
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
	return h.c.kv.Stage(now, h.w, s.Req.ID, s.Req.Path, limit, g1, hint)
}

func (h *hostKV) HostPrefix(s *engine.Seq, from, limit int) int {
	return h.c.kv.HostPrefix(h.w, s.Req.Path, from, limit)
}

func (h *hostKV) Load(now des.Time, s *engine.Seq, from, n int) bool {
	return h.c.kv.Load(now, h.w, s.Req.ID, s.Req.Path, from, n)
}

func (h *hostKV) AsyncLoads() bool { return h.c.kv.AsyncLoads(h.w) }

// kvListener receives KVCR's reports.
type kvListener Cluster

// seqOn returns request req's sequence when it is still on worker w.
func (l *kvListener) seqOn(w int32, req int64) *engine.Seq {
	r := l.active[req]
	if r == nil || r.seq == nil || r.seq.Worker != w {
		return nil // ended or rerouted meanwhile
	}
	return r.seq
}

func (l *kvListener) Loaded(now des.Time, w int32, req int64) {
	if s := l.seqOn(w, req); s != nil {
		(*Cluster)(l).settle(l.workers[w])
		l.workers[w].w.LoadDone(s)
		(*Cluster)(l).wake(w, now, false)
	}
}

func (l *kvListener) PullEnded(now des.Time, w int32, req int64, from, landed int) {
	if s := l.seqOn(w, req); s != nil {
		(*Cluster)(l).settle(l.workers[w])
		l.workers[w].w.PullDone(s, from, landed)
		(*Cluster)(l).wake(w, now, false)
	}
}

func (l *kvListener) Inventory(now des.Time, w int32, runs []block.Run, visible bool) {
	if visible {
		l.router.Stored(now, w, scheduler.G2, runs)
	} else {
		l.router.Removed(now, w, scheduler.G2, runs)
	}
}

func (l *kvListener) PullDone(p *kvcr.Pull) {
	c := (*Cluster)(l)
	c.events.pullDone(p)
	c.stats.pulled(p)
	if err := c.pulls.put(p.ID, pullRow(p), c.releasePull); err != nil && c.err == nil {
		c.err = err
	}
}

func (l *kvListener) G1Prefix(w int32, path []block.Piece, limit int) int {
	return l.workers[w].w.G1Prefix(path, limit)
}

// Idle checks, in an event of its own at the same instant, whether a
// draining w can go: removing it here, inside the KVCR transition that
// ended its last pull, would hand that pull a second transition (see
// kvcr.Listener).
func (l *kvListener) Idle(now des.Time, w int32) {
	if l.life.Of(w) == lifecycle.Draining {
		retire := lifeArg{kind: lifeRetire, worker: w}
		l.q.Schedule(now, des.PhaseLifecycle, uint64(len(l.sc.Events)), (*lifeEvent)(l), retire.pack())
	}
}
