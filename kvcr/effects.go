package kvcr

import "github.com/kvsim/kvsim/block"

// Effect is one thing KVCR did that the rest of the cluster acts on: a
// load or a pull that lets a request go on, blocks that became readable in
// a G2 pool or left it, a pull's final row, a worker KVCR no longer holds.
// KVCR never calls out while it works: it appends its effects to a batch,
// in the order they happen, and the caller takes the batch (TakeEffects)
// after each call into KVCR and after each event KVCR fires, and applies
// it, as raft's Ready hands its caller a batch to apply. Every effect
// happened at the time of the call or event that made it.
type Effect struct {
	Kind   EffectKind
	Worker int32 // the worker it is about
	// Req is the request of a LoadLanded or a PullAnswered.
	Req int64
	// From and Landed are a PullAnswered's landed blocks: Landed blocks
	// from block index From are readable in the target's G2 (0: none).
	From, Landed int
	// Runs are the blocks of a BlocksVisible or a BlocksRemoved, in order.
	Runs []block.Run
	// Pull is a PullFinished's pull, with its final outcome and times, or
	// the unstaged pull of an OrderNothingToFetch or an OrderDropped.
	Pull *Pull
}

// EffectKind is what an Effect reports.
type EffectKind uint8

// The kinds of effect.
const (
	LoadLanded          EffectKind = iota + 1 // the H2D load for request Req on Worker has landed in its G1
	PullAnswered                              // request Req on target Worker may be admitted: its pull ended
	BlocksVisible                             // Runs became readable in Worker's G2: a store or a pull landed
	BlocksRemoved                             // Runs left Worker's G2: evicted, moved away, or gone with the worker
	PullFinished                              // Pull has its final outcome and times: its row
	WorkerIdle                                // Worker takes part in no pull and is the source of no order not yet started
	OrderNothingToFetch                       // Pull's order ended at its first staging with no pull: its target Worker held every block
	OrderDropped                              // Pull's order ended unstaged, waiting for its turn: its source or target Worker was removed, or its target drained
)

// effects is one batch of effects, with the runs they name.
type effects struct {
	fx   []Effect
	runs []block.Run // the BlocksVisible and BlocksRemoved effects' runs, back to back
}

// TakeEffects returns what KVCR did since the last take, in the order it
// happened, and starts a new batch. The effects, and the runs they name,
// stay valid until the take after next: applying them may call into KVCR,
// whose new effects go to the new batch.
func (k *KVCR) TakeEffects() []Effect {
	b := &k.fx[k.cur]
	if len(b.fx) == 0 {
		return nil
	}
	k.cur ^= 1
	next := &k.fx[k.cur]
	clear(next.fx) // drop the pulls it still points to
	next.fx, next.runs = next.fx[:0], next.runs[:0]
	return b.fx
}

// emit appends an effect to the batch.
func (k *KVCR) emit(e Effect) {
	b := &k.fx[k.cur]
	b.fx = append(b.fx, e)
}

// emitRuns appends a BlocksVisible (visible) or BlocksRemoved effect for
// w's runs, copied: the caller may reuse its slice.
func (k *KVCR) emitRuns(w int32, runs []block.Run, visible bool) {
	b := &k.fx[k.cur]
	lo := len(b.runs)
	b.runs = append(b.runs, runs...)
	kind := BlocksRemoved
	if visible {
		kind = BlocksVisible
	}
	k.emit(Effect{Kind: kind, Worker: w, Runs: b.runs[lo:len(b.runs):len(b.runs)]})
}
