package kvcr

import "github.com/kvsim/kvsim/des"

// The kinds of a pull's deadline events, carried in the event's arg.
const (
	evTargetDeadline = iota
	evSourceDeadline
	evNotice    // the target hears that the source gave up, or was lost
	evWriteDone // the target hears, late, that the write completed (a notices fault)
)

type deadline KVCR

// Fire hands a pull its target deadline, its source deadline, the notice
// of its source's failure or the late notice of its write's completion. Events of pulls already done are stale.
func (d *deadline) Fire(now des.Time, id, kind uint64) {
	k := (*KVCR)(d)
	p := k.live[int64(id)]
	if p == nil {
		return
	}
	switch kind {
	case evTargetDeadline:
		k.targetDeadline(now, p)
	case evSourceDeadline:
		k.sourceDeadline(now, p)
	case evNotice:
		k.notice(now, p)
	case evWriteDone:
		k.writeDone(now, p)
	}
}

// notify: the source gave up (one latency for its message to arrive) or
// was lost (the loss notice); p goes to state st and its target hears it
// after.
func (k *KVCR) notify(now des.Time, p *Pull, st pullState, after des.Time) {
	p.state = st
	k.q.Schedule(des.AddSat(now, after), des.PhaseDeadline, uint64(p.ID), (*deadline)(k), evNotice)
}

// settle records the target's answer, once.
func (k *KVCR) settle(p *Pull, out Outcome) {
	if p.Outcome != Pending {
		panic(TransitionError{Pull: p.ID, State: p.state.String(), Event: "second outcome " + out.String()})
	}
	p.Outcome = out
}

// answer settles the pull at now, its end, and lets its request go on,
// with the landed blocks when the pull succeeded or was partial.
func (k *KVCR) answer(now des.Time, p *Pull, out Outcome) {
	k.settle(p, out)
	p.EndNs = now
	if p.Kind != KindRequest {
		return // nothing waits for an order
	}
	landed := 0
	if out == Success || out == Partial {
		landed = p.Landed
	}
	k.emit(Effect{Kind: PullAnswered, Worker: p.Target, Req: p.Req, From: p.from, Landed: landed})
}

// finish closes a pull whose answer, write and target's part are all over:
// it is counted by outcome (a rejected one by its reason), its row handed over and its target's count
// released.
func (k *KVCR) finish(now des.Time, p *Pull) {
	p.state = done
	if p.EndNs < 0 {
		p.EndNs = now
	}
	if p.Kind != KindRequest {
		k.C.kind(p.Kind).count(p)
	}
	switch p.Outcome {
	case Success:
		k.C.PullsSuccess++
	case Partial:
		k.C.PullsPartial++
	case Failed:
		k.C.PullsFailed++
	case Expired:
		k.C.PullsExpired++
	case Superseded:
		k.C.PullsSuperseded++
	case Rejected:
		*k.C.rejected(p.Rejection)++
	}
	delete(k.live, p.ID)
	k.emit(Effect{Kind: PullFinished, Worker: p.Target, Pull: p})
	tn := k.nodes[p.Target]
	if p.Kind != KindRequest {
		tn.orderPulls--
	}
	k.release(tn)
	if p.Kind != KindRequest {
		k.orderEnded(now, p)
	}
}

// releaseSource ends pull p's write from n: n serves one pull fewer.
func (k *KVCR) releaseSource(n *node, p *Pull) {
	n.serving--
	if p.Kind != KindRequest {
		n.orderPulls--
	}
	k.release(n)
}

// release drops one pull from w's count and says when it is idle.
func (k *KVCR) release(n *node) {
	n.pulls--
	if n.idle() {
		k.emit(Effect{Kind: WorkerIdle, Worker: n.id})
	}
}

// idle reports whether n takes part in no pull and is the source of no
// order whose transfer has not started (ActivePulls is 0): an order whose
// write from it is over holds it no longer.
func (n *node) idle() bool { return n.pulls == 0 && n.unstarted == 0 }
