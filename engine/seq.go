package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/workload"
)

// Seq is a request inside a worker. The exported fields are its record.
// The fields every pass reads come first, so they share a cache line and a
// pass over a large batch need not touch the requests themselves.
type Seq struct {
	Req       *workload.Request
	input     int // Req.InputTokens
	output    int // Req.OutputTokens
	chain     int // Req.Blocks.Len()
	computed  int // tokens whose KV is in G1
	generated int // output tokens emitted
	committed int // leading prompt blocks in the prefix cache
	sched     int // tokens scheduled in the current pass
	lastToken des.Time
	blocks    holding // G1 blocks held, in token order

	Worker               int32
	ScheduledAt          des.Time // first scheduled into a pass (vLLM's scheduled_ts); -1 until then
	FirstTokenAt         des.Time // -1 until the first token
	FinishedAt           des.Time // -1 until the last token
	G1HitTokens          int      // prompt tokens hit in G1 at first admission
	G2HitTokens          int      // prompt tokens loaded from the worker's own G2 at first admission
	PulledTokens         int      // of those loaded, tokens a KVCR pull had landed
	ComputedPromptTokens int      // prompt tokens computed, recomputation included
	Preemptions          int

	state      seqState
	pullFrom   int // first block the pull fetched
	pullLanded int // blocks the pull landed
	loadFrom   int // first block of the H2D load in flight
	loadN      int
}

// Generated is the number of output tokens the request has emitted on
// this worker.
func (s *Seq) Generated() int { return s.generated }

// tokens is the request's current length: prompt plus generated tokens.
func (s *Seq) tokens() int { return s.input + s.generated }

// seqState is where a request is in its life inside a worker. It changes
// only through Worker.to, along the transitions seqNext allows
// (docs/model.md draws the table). Whether a running request computes its
// prompt or decodes is no state: a pass gives it what is left of its
// length, one token once only the next one is (a recomputation after a
// preemption is prompt work that may end in a token).
type seqState uint8

const (
	seqHinted    seqState = iota // waiting; its kv.fetch hint is staged when the scan first reaches it
	seqParked                    // waiting; staging parked its pull, so it is staged again at each scan
	seqPulling                   // waiting for its pull to end; skipped by the scan
	seqWaiting                   // waiting for budget and blocks, holding none; never admitted
	seqLoading                   // admitted: its G2 hits load to G1 blocks it holds; skipped until LoadDone
	seqLoaded                    // its load landed; waiting to run, holding the loaded blocks
	seqRunning                   // in the running queue, computing its prompt or decoding
	seqPreempted                 // back in the waiting queue, holding nothing; recomputes when admitted
	seqFinished                  // emitted its last token; its blocks are freed
	seqIgnored                   // could never run again (Worker.ignore); left unfinished
	seqDropped                   // its worker was removed
	numSeqStates
)

var seqStateNames = [numSeqStates]string{"hinted", "parked", "pulling", "waiting", "loading", "loaded",
	"running", "preempted", "finished", "ignored", "dropped"}

func (st seqState) String() string { return seqStateNames[st] }

// seqNext[from] holds bit to for each state a request may move to from
// state from: the worker's steps that make each change are named beside it.
// Drop takes a request of any state but the last three to dropped. A
// request never moves to the state it has, but a parked pull staged and
// parked again stays parked. Only a preempted request is ignored: one that
// fits (Enqueue) has at most its prompt to compute before a preemption,
// and a load leaves what it has to compute as admission found it.
var seqNext = [numSeqStates]uint16{
	seqHinted: 1<<seqParked | // staged: no room for the pull
		1<<seqPulling | // staged: a pull is in flight
		1<<seqWaiting | // staged: no pull (nothing to fetch, or rejected)
		1<<seqDropped,
	seqParked: 1<<seqParked | // staged again: still no room
		1<<seqPulling | // staged again: the pull starts
		1<<seqWaiting | // staged again with no pull, or the parked pull expired (PullDone)
		1<<seqDropped,
	seqPulling: 1<<seqWaiting | // PullDone
		1<<seqDropped,
	seqWaiting: 1<<seqLoading | // admitted with G2 hits that load over a link that takes time
		1<<seqRunning | // admitted (its G2 hits, if any, landed at once)
		1<<seqDropped,
	seqLoading: 1<<seqLoaded | // LoadDone
		1<<seqDropped,
	seqLoaded: 1<<seqRunning | // admitted with the blocks it holds
		1<<seqDropped,
	seqRunning: 1<<seqPreempted | // the pool ran short: the last admitted goes back
		1<<seqFinished | // its last token
		1<<seqDropped,
	seqPreempted: 1<<seqLoading | 1<<seqRunning | // admitted again, as from waiting
		1<<seqIgnored | // without chunked prefill, more to recompute than a pass takes
		1<<seqDropped,
}

// InvTransitions is the invariant a request's TransitionError breaks
// (docs/invariants.md).
const InvTransitions = "a request inside a worker changes state only along its transitions"

// TransitionError is a change of a request's state that its state does not
// allow: a model bug. The worker panics with it, as KVCR does with a pull's
// and the lifecycle with a worker's (the same shape: what changed, the
// state it was in, what it was asked; a value, as des.PastError), and the
// run reports it as the broken invariant InvTransitions, with or without
// --check.
type TransitionError struct {
	Worker  int32
	Request int64
	State   string // the request's state
	To      string // the state it was asked to change to
}

// Invariant is the invariant the error breaks, InvTransitions.
func (TransitionError) Invariant() string { return InvTransitions }

// Error names the worker, the request, what it was asked and the state it
// was in.
func (e TransitionError) Error() string {
	return fmt.Sprintf("worker %d: request %d: to %s while %s: no transition allows it", e.Worker, e.Request, e.To, e.State)
}

// to moves s to state st; a change seqNext does not allow panics with a
// TransitionError.
func (w *Worker) to(s *Seq, st seqState) {
	if seqNext[s.state]&(1<<st) == 0 {
		panic(TransitionError{Worker: w.cfg.ID, Request: s.Req.ID, State: s.state.String(), To: st.String()})
	}
	s.state = st
}
