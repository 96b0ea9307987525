package kvcr

import (
	"fmt"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

// Outcome is how a pull ended.
type Outcome uint8

// The outcomes. Pending is a pull whose target has no answer yet.
const (
	Pending    Outcome = iota
	Success            // every missing prompt block landed
	Partial            // the pull landed a prefix of the missing blocks
	Failed             // the source cancelled or was removed: nothing landed
	Expired            // the target's deadline passed first
	Rejected           // refused at staging
	Superseded         // parked, then found nothing left to fetch: the blocks reached the target otherwise
)

// Outcomes are the outcomes a finished pull can have, in the order the
// report lists them (pulls.parquet's outcome dictionary).
var Outcomes = []Outcome{Success, Partial, Failed, Expired, Rejected, Superseded}

var outcomeNames = [...]string{Pending: "pending", Success: "success", Partial: "partial",
	Failed: "failed", Expired: "expired", Rejected: "rejected", Superseded: "superseded"}

// String is the outcome's name: the value of pulls.parquet's outcome
// column ("pending", which no row shows, for Pending).
func (o Outcome) String() string { return outcomeNames[o] }

// Rejection is why staging refused a pull: its source failed the staging
// guard, or holds none of the missing blocks.
type Rejection uint8

// The reasons. NotRejected is a pull staging did not refuse.
const (
	NotRejected      Rejection = iota
	RejectedDraining           // the source was draining
	RejectedRemoved            // the source was removed
	RejectedNotReady           // the source was starting
	RejectedMissing            // the source held none of the missing blocks
)

// Rejections are the reasons staging refuses a pull, in the order of their
// counters (pulls_rejected_<reason>).
var Rejections = []Rejection{RejectedDraining, RejectedRemoved, RejectedNotReady, RejectedMissing}

var rejectionNames = [...]string{NotRejected: "", RejectedDraining: "draining", RejectedRemoved: "removed",
	RejectedNotReady: "not_ready", RejectedMissing: "missing"}

// String is the reason's name, the end of its counter's name
// (pulls_rejected_draining); "" for NotRejected.
func (r Rejection) String() string { return rejectionNames[r] }

// Mode names what a pull does to its source's copy: the value of the
// scenario key router.hints.mode and of pulls.parquet's mode column.
type Mode string

// The modes.
const (
	ModeCopy Mode = "copy" // the source keeps its copy
	ModeMove Mode = "move" // the source drops its copy once the target has it
)

// Modes lists the modes, in the order errors and the report name them.
var Modes = []Mode{ModeCopy, ModeMove}

// Kind is what issued a pull: a request's kv.fetch hint, or a
// request-independent kv.move or kv.prefetch (an Order): the value of
// pulls.parquet's kind column.
type Kind uint8

// The kinds.
const (
	KindRequest  Kind = iota // a request's hint; the request waits for it
	KindMove                 // a request-independent move: nothing waits for it
	KindPrefetch             // a request-independent copy: nothing waits for it
)

// Kinds lists the kinds, in the order the report names them (pulls.parquet's
// kind dictionary).
var Kinds = []Kind{KindRequest, KindMove, KindPrefetch}

var kindNames = [...]string{KindRequest: "request", KindMove: "move", KindPrefetch: "prefetch"}

// String is the kind's name in pulls.parquet.
func (k Kind) String() string { return kindNames[k] }

// Pull is one peer pull, from its first staging to its end. The exported
// fields are its pulls.parquet row.
type Pull struct {
	ID          int64
	Req         int64 // the hinted request; -1 for an order's pull
	Kind        Kind
	Tag         int32 // the order's tag (Order.Tag); -1 for a request's pull
	Source      int32
	Target      int32
	Move        bool
	Requested   int   // blocks the target lacked at staging: the chain past its G1+G2 prefix
	Landed      int   // blocks that landed in the target's G2
	Bytes       int64 // bytes of the transfer, set at its first byte: 0 when no byte was sent
	StagedNs    des.Time
	FirstByteNs des.Time // -1: none
	EndNs       des.Time // when the outcome was decided (the target's deadline for expired)
	WriteEndNs  des.Time // when the source's write ended: its last byte, or stopped by a removal; -1: never started
	Outcome     Outcome
	Rejection   Rejection // why staging refused it (Outcome Rejected); not a pulls.parquet column
	Planned     int       // an order's blocks as its issuer planned them (Order.Planned); not a pulls.parquet column

	state          pullState
	opened         bool        // newPull has given it an id and deadline
	started        bool        // start has pinned its blocks and sent its request
	lost           bool        // its source was removed: the target fails when it learns it
	from           int         // first block the target lacked
	whole          bool        // the fetch reaches the end of the reusable chain: landing is success
	moves          int         // the first moves blocks of runs are moved (hinted); the rest are copies
	runs           []block.Run // the blocks the transfer carries, in chain order: pinned at the source, filling at the target
	given          bool        // its target gave up while holding its slots: they are discarded there (giveUp)
	slots          []block.Run // given up: its target's blocks still reserved for its write, those no store took over
	hits           []block.Run // the fetch's blocks the target held, pinned there
	targetDeadline des.Time
	sourceDeadline des.Time
	t              Transfer
	path           []block.Piece // an order's chain (a reference held on its last segment); nil for a request's pull
	first, limit   int           // an order's blocks: its fetch is the chain's blocks [first, limit), past the target's G1 prefix
	inject         injection     // the error a pull_errors fault drew for its write at its first byte
	injectBy       int           // the key of that fault
	fault          int32         // 1 + the key of the fault that acted on it (Fault); 0: none
	faultLost      int           // the blocks that fault lost: a move's copy its target never counted
	moved          int           // awaiting its notice: the blocks its move's source removed at the write's end
}

// Mode is the pull's mode: ModeMove when its hint asked for a move.
func (p *Pull) Mode() Mode {
	if p.Move {
		return ModeMove
	}
	return ModeCopy
}

// Staged says whether the pull's transfer was staged: its pins taken, its
// target's slots reserved and its request sent to the source, as
// pulls_staged counts it, whether or not a byte was then sent (Bytes).
func (p *Pull) Staged() bool { return p.started }

// pullState is where a pull is in its life. docs/kvcr.md draws the
// diagram; each event below is one function that takes the transitions
// its state allows and panics on any other. A write, once its first byte
// is on the network, cannot be recalled (an RDMA write has no abort): a
// cancel after it lets the write run to its last byte, holding its share of
// the link, the source's pins and the target's slots, and nothing lands.
//
//	staging            -staged->          parked | requested | done (rejected)
//	parked             -staged again->    parked | requested | done (rejected, superseded)
//	parked             -target deadline-> done (expired)
//	requested          -first byte->      flowing
//	requested          -first byte, injected error at the start-> cancelled (nothing was posted)
//	requested          -target deadline-> abandonedRequested
//	requested          -source deadline-> cancelled (nothing was sent)
//	flowing            -landed->          done (success, partial)
//	flowing            -landed, injected error at the end-> done (failed; nothing lands)
//	flowing            -landed, notice late or lost-> awaitingNotice (the source saw it succeed)
//	flowing            -target deadline-> abandonedFlowing
//	flowing            -source deadline-> cancelledFlowing
//	abandonedRequested -first byte->      abandonedFlowing
//	abandonedRequested -first byte, injected error at the start-> done (expired; nothing was posted)
//	abandonedRequested -source deadline-> done (expired; nothing was sent)
//	abandonedFlowing   -landed->          done (expired; a move loses its blocks)
//	abandonedFlowing   -landed, injected error at the end-> done (expired; a move keeps its copy)
//	abandonedFlowing   -source deadline-> discarding
//	cancelledFlowing   -landed->          cancelled (nothing lands)
//	cancelledFlowing   -notice->          discarding (failed)
//	cancelledFlowing   -target deadline-> discarding (expired)
//	discarding         -landed->          done
//	discarding         -notice or target deadline-> discarding (already answered)
//	requested, flowing -source removed-> cancelled (lost: the write stops with its source, no notice)
//	cancelledFlowing   -source removed->  cancelled (its notice is on the way)
//	abandoned*, discarding -source removed-> done
//	cancelled          -first byte, source deadline or removal-> cancelled (already over)
//	cancelled          -notice or loss notice-> done (failed)
//	cancelled          -target deadline-> done (expired; failed when lost)
//	awaitingNotice     -write done->      done (success, partial: before the target's deadline)
//	awaitingNotice     -target deadline-> done (expired; a move loses the blocks its source removed)
//	awaitingNotice     -source deadline or removal-> awaitingNotice (the write is over)
//	any                -target removed->  done (failed; as answered once answered)
type pullState uint8

const (
	staging            pullState = iota // its first staging is in progress
	parked                              // holds nothing; waits for room, an inflight slot or target blocks to settle
	requested                           // pins and target slots held; the request travels to the source
	flowing                             // the write is on the network
	abandonedRequested                  // the target gave up (expired) before the first byte; the write will still run
	abandonedFlowing                    // the target gave up; the write runs on and lands nothing
	cancelledFlowing                    // the source gave up after the first byte; the write runs on, the target hears one latency later
	discarding                          // answered, and the source gave up: the write runs to its last byte and lands nothing
	cancelled                           // no write runs (the source gave up before its first byte or was removed, or the write ended after the source gave up); the target waits for the news or its deadline
	awaitingNotice                      // the write completed and the source saw it succeed; the target waits for its late (or lost) completion notice, slots reserved
	done                                // outcome and row final
)

var stateNames = [...]string{"staging", "parked", "requested", "flowing", "abandoned before its first byte", "abandoned",
	"cancelled while writing", "discarding", "cancelled", "awaiting its notice", "done"}

func (s pullState) String() string { return stateNames[s] }

// TransitionError is the panic of an event its pull's state does not
// allow: a model bug, which a run reports as the broken invariant
// InvTransitions, with or without --check. It has the shape of engine's and
// lifecycle's TransitionError (a request's, a worker's): what changed, the
// state it was in, what it was asked; a value, as des.PastError. A pull is
// asked by an event, not for a state: its next state is the event's to
// choose.
type TransitionError struct {
	Pull  int64
	State string // the pull's state
	Event string // what happened to it
}

// Invariant is the invariant the error breaks, InvTransitions.
func (TransitionError) Invariant() string { return InvTransitions }

// Error names the pull, the event and the state it was in.
func (e TransitionError) Error() string {
	return fmt.Sprintf("pull %d: %s while %s: no transition allows it", e.Pull, e.Event, e.State)
}

func illegal(p *Pull, event string) {
	panic(TransitionError{Pull: p.ID, State: p.state.String(), Event: event})
}

// firstByte: the request reached the source and the write starts.
func (k *KVCR) firstByte(now des.Time, p *Pull) {
	switch p.state {
	case requested, abandonedRequested:
		if len(k.errFaults) > 0 {
			k.drawErrors(now, p)
		}
		if p.inject == injectStart {
			k.failPost(now, p) // nothing is posted: no first byte
			return
		}
		if p.state == requested {
			p.state = flowing
		} else {
			p.state = abandonedFlowing
		}
	case cancelled:
		return // the source gave up or was removed before the request reached it
	default:
		illegal(p, "first byte")
	}
	p.FirstByteNs, p.Bytes = now, p.t.Bytes
	k.linkStarted(now, p)
	k.net.start(now, &p.t, p.Source, p.Target, func(now des.Time, _ *Transfer) { k.landed(now, p) })
}

// landed: the write's last byte arrived at the target. A source that had
// not given up saw a successful write, so it refreshes (copy) or removes
// (move) its blocks whether or not the target still wanted them.
func (k *KVCR) landed(now des.Time, p *Pull) {
	if p.state == flowing && now >= p.targetDeadline {
		// Data landing at the target's deadline does not count: the
		// deadline comes first, though its event runs in a later phase.
		k.targetDeadline(now, p)
	}
	if p.inject == injectEnd && (p.state == flowing || p.state == abandonedFlowing) {
		k.failCompletion(now, p)
		return
	}
	switch p.state {
	case flowing:
		if len(k.noticeFaults) > 0 {
			if f := k.noticeFault(now, p); f != nil {
				k.lateNotice(now, p, f)
				return
			}
		}
		k.endTransfer(now, p, true)
		out := Partial
		if p.whole {
			out = Success
		}
		k.answer(now, p, out)
		k.finish(now, p)
	case abandonedFlowing:
		k.endTransfer(now, p, false)
		k.finish(now, p)
	case cancelledFlowing:
		k.writeLanded(now, p, false)
		p.state = cancelled // the target keeps its slots until it hears
	case discarding:
		k.writeLanded(now, p, false)
		k.releaseTarget(p)
		k.finish(now, p)
	default:
		illegal(p, "transfer landed")
	}
}

// targetDeadline: the target stops waiting; its request goes on without
// the pull. A write still running lands nothing.
func (k *KVCR) targetDeadline(now des.Time, p *Pull) {
	switch p.state {
	case parked:
		k.unpark(p)
		k.answer(now, p, Expired)
		k.finish(now, p)
	case requested:
		p.state = abandonedRequested
		k.answer(now, p, Expired)
		k.giveUp(p)
	case flowing:
		p.state = abandonedFlowing
		k.answer(now, p, Expired)
		k.giveUp(p)
	case cancelledFlowing:
		p.state = discarding
		k.answer(now, p, Expired)
		k.giveUp(p)
	case discarding:
		// answered already: the failure notice came first
	case cancelled:
		out := Expired
		if p.lost {
			out = Failed // its source is gone: the target learns it now
		}
		k.answer(now, p, out)
		k.releaseTarget(p)
		k.finish(now, p)
	case awaitingNotice:
		// its notice never came in time: the data does not count, and
		// a move's blocks its source removed are lost
		k.answer(now, p, Expired)
		k.releaseTarget(p)
		k.loseMoved(p)
		k.finish(now, p)
	default:
		illegal(p, "target deadline")
	}
}

// sourceDeadline: the source gives up. Before the write's first byte
// nothing moves and its pins go now; after it the write cannot be
// recalled and runs on. The target hears one latency later, unless it has
// given up already.
func (k *KVCR) sourceDeadline(now des.Time, p *Pull) {
	switch p.state {
	case requested:
		k.stopWrite(now, p)
		k.notify(now, p, cancelled, k.cfg.Latency)
	case abandonedRequested:
		k.stopWrite(now, p)
		k.releaseTarget(p)
		k.finish(now, p)
	case flowing:
		k.notify(now, p, cancelledFlowing, k.cfg.Latency)
	case abandonedFlowing:
		p.state = discarding
	case cancelled:
		// its source was removed
	case awaitingNotice:
		// the write is over: the source saw it succeed
	default:
		illegal(p, "source deadline")
	}
}

// sourceRemoved: the source is gone, and its write stops with it. A source
// that is gone sends no notice: the target learns it at its own deadline,
// or LossNotice later when the deployment detects a dead peer sooner. A
// parked pull holds nothing there and is rejected at its next retry.
func (k *KVCR) sourceRemoved(now des.Time, p *Pull) {
	switch p.state {
	case parked, cancelled, awaitingNotice:
	case requested, flowing:
		k.stopWrite(now, p)
		p.lost = true
		if k.cfg.LossNotice > 0 {
			k.notify(now, p, cancelled, k.cfg.LossNotice)
		} else {
			p.state = cancelled
		}
	case cancelledFlowing:
		k.stopWrite(now, p)
		p.state = cancelled // its notice is on the way
	case abandonedRequested, abandonedFlowing, discarding:
		k.cutOff(now, p)
	default:
		illegal(p, "source removed")
	}
}

// cutOff ends pull p, whose target has answered, by stopping its write
// now: its source's pins and its target's slots go, and it ends as
// answered.
func (k *KVCR) cutOff(now des.Time, p *Pull) {
	k.stopWrite(now, p)
	k.releaseTarget(p)
	k.finish(now, p)
}

// notice: the target hears that the source gave up. A write still running
// goes on to its last byte.
func (k *KVCR) notice(now des.Time, p *Pull) {
	switch p.state {
	case cancelled:
		k.answer(now, p, Failed)
		k.releaseTarget(p)
		k.finish(now, p)
	case cancelledFlowing:
		p.state = discarding
		k.answer(now, p, Failed)
		k.giveUp(p)
	case discarding:
		// the target's deadline came first
	default:
		illegal(p, "failure notice")
	}
}

// targetRemoved: the target is gone, and with it the request's wait; a
// write to it stops at once. The pull fails unless its target had
// already answered.
func (k *KVCR) targetRemoved(now des.Time, p *Pull) {
	switch p.state {
	case parked:
		k.unpark(p)
	case requested, flowing, abandonedRequested, abandonedFlowing, cancelledFlowing, discarding:
		k.stopWrite(now, p)
		k.releaseTarget(p)
	case cancelled:
		k.releaseTarget(p)
	case awaitingNotice:
		// a move's source removed its blocks when the write ended, and
		// its target never counted them: lost, whatever becomes of the
		// target's pool
		k.releaseTarget(p)
		k.loseMoved(p)
	default:
		illegal(p, "target removed")
	}
	if p.Outcome == Pending {
		p.Outcome = Failed // no answer: the request left with its worker
	}
	k.finish(now, p)
}
