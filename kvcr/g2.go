package kvcr

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
)

// op is a load or a store in flight on a worker's H2D or D2H link.
type op struct {
	t     Transfer
	n     *node
	store bool
	req   int64
	runs  []block.Run // its blocks, in order
	at    int         // index in n.ops
	done  func(des.Time, *Transfer)
}

// Store writes the blocks a pass committed to w's G1, runs in the order
// they were committed, into its G2 in that order, as one D2H transfer;
// they become readable (and visible) when it completes. Blocks G2 already
// has (ready, pending, or filling for a live write) are skipped; a block
// whose slot a pull's target gave up on is written into that slot (the
// dead write lands nothing); a block with no slot to take is dropped.
func (k *KVCR) Store(now des.Time, w int32, runs []block.Run) {
	n := k.nodes[w]
	if n.pool.Capacity() == 0 {
		return
	}
	o := k.newOp(n, true, 0)
	for _, r := range runs {
		var dropped int
		o.runs, dropped = n.pool.store(r, o.runs)
		k.C.G2StoresDropped += int64(dropped)
	}
	k.reportEvicted(n)
	if len(n.pool.taken) > 0 {
		k.takenOver(n)
	}
	if len(o.runs) == 0 {
		k.spare = append(k.spare, o)
		return
	}
	k.startOp(now, o, n.d2h)
}

// newOp returns a load or store to fill, reusing a finished one.
func (k *KVCR) newOp(n *node, store bool, req int64) *op {
	var o *op
	if len(k.spare) > 0 {
		o = k.spare[len(k.spare)-1]
		k.spare = k.spare[:len(k.spare)-1]
		o.runs = o.runs[:0]
	} else {
		o = &op{}
		o.done = func(des.Time, *Transfer) { k.opDone(o) }
	}
	o.n, o.store, o.req = n, store, req
	return o
}

// HostPrefix counts the blocks of the chain whose path is given from index
// from on that w's G2 holds readable, up to index limit or the first it
// does not.
func (k *KVCR) HostPrefix(w int32, path []block.Piece, from, limit int) int {
	return k.nodes[w].pool.Prefix(path, from, limit)
}

// AsyncLoads reports whether w's loads land later, by Loaded, rather than
// at once: whether its H2D link takes time (Load decides by the same).
func (k *KVCR) AsyncLoads(w int32) bool { return !k.nodes[w].h2d.Instant() }

// Load copies blocks [from, from+count) of the chain whose path is given
// (readable in w's G2) to w's G1 for request req over the H2D link,
// pinning them meanwhile. It reports true when they landed at once
// (instant link); otherwise Loaded follows.
func (k *KVCR) Load(now des.Time, w int32, req int64, path []block.Piece, from, count int) bool {
	n := k.nodes[w]
	o := k.newOp(n, false, req)
	o.runs = block.AppendPath(o.runs, path, from, from+count)
	for _, r := range o.runs {
		if off := n.pool.notReady(r); off >= 0 {
			k.served(now, n, k.cfg.Chains.Ref(r.Seg, off), "load for request", req)
		}
		n.pool.pin(r)
	}
	k.C.G2HitsBlocks += int64(count)
	if n.h2d.Instant() {
		k.finishLoad(o)
		k.spare = append(k.spare, o)
		return true
	}
	k.startOp(now, o, n.h2d)
	return false
}

func (k *KVCR) startOp(now des.Time, o *op, l *Link) {
	o.t = Transfer{ID: k.xferID(), Bytes: int64(block.Blocks(o.runs)) * k.cfg.BlockBytes}
	o.at = len(o.n.ops)
	o.n.ops = append(o.n.ops, o)
	l.Start(now, &o.t, o.done)
}

func (k *KVCR) opDone(o *op) {
	n := o.n
	last := n.ops[len(n.ops)-1]
	n.ops[o.at], last.at = last, o.at
	n.ops = n.ops[:len(n.ops)-1]
	if o.store {
		for _, r := range o.runs {
			n.pool.makeReady(r)
		}
		k.C.G2Stores += int64(block.Blocks(o.runs))
		k.emitRuns(n.id, o.runs, true)
		k.spare = append(k.spare, o)
		return
	}
	k.finishLoad(o)
	k.emit(Effect{Kind: LoadLanded, Worker: n.id, Req: o.req})
	k.spare = append(k.spare, o)
}

// finishLoad releases a load's pins; a read makes its blocks the most
// recently used. A block a move left pending goes with its last pin.
func (k *KVCR) finishLoad(o *op) {
	for _, r := range o.runs {
		k.unpin(o.n, r, true)
	}
	k.reportRemoved(o.n)
}

// unpin drops one pin of each of r's blocks in n's pool, in ascending
// order; refresh makes the ready ones the most recently used. A block
// pending removal that loses its last pin is removed: counted, and
// collected for reportRemoved.
func (k *KVCR) unpin(n *node, r block.Run, refresh bool) {
	var gone int
	k.removed, gone = n.pool.unpin(r, refresh, k.removed)
	k.C.MoveRemovedBlocks += int64(gone)
}

// markMoved makes r's ready source blocks absent to readers after a move:
// each is removed now when unpinned, else when its last pin drops. It
// returns how many of r's blocks were ready.
func (k *KVCR) markMoved(n *node, r block.Run) int {
	var gone, readyN int
	k.removed, gone, readyN = n.pool.markPending(r, k.removed)
	k.C.MoveRemovedBlocks += int64(gone)
	return readyN
}

// reportRemoved tells the router which of n's blocks moves removed: only
// blocks actually gone, not those still pending removal.
func (k *KVCR) reportRemoved(n *node) {
	if len(k.removed) > 0 {
		k.emitRuns(n.id, k.removed, false)
		k.removed = k.removed[:0]
	}
}
