package kvcr

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/sim/des"
)

// op is a load or a store in flight on a worker's H2D or D2H link.
type op struct {
	t      Transfer
	n      *node
	store  bool
	req    int64
	slots  []int32
	blocks []block.Ref // a store's blocks, reported when it lands
	at     int         // index in n.ops
	done   func(des.Time, *Transfer)
}

// Store writes the blocks a pass committed to w's G1 into its G2, as one
// D2H transfer; they become readable (and visible) when it completes.
// Blocks G2 already has are skipped; a block with no slot to take is
// dropped.
func (k *KVCR) Store(now des.Time, w int32, blocks []block.Ref) {
	n := k.nodes[w]
	if n.pool.Capacity() == 0 {
		return
	}
	o := k.newOp(n, true, 0)
	for _, b := range blocks {
		if n.pool.Has(b) {
			continue
		}
		if !n.pool.Room(1) {
			k.C.G2StoresDropped++
			continue
		}
		o.slots = append(o.slots, n.pool.Fill(b))
		o.blocks = append(o.blocks, b)
	}
	k.reportEvicted(now, n)
	if len(o.slots) == 0 {
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
		o.slots, o.blocks = o.slots[:0], o.blocks[:0]
	} else {
		o = &op{}
		o.done = func(now des.Time, _ *Transfer) { k.opDone(now, o) }
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

// Load copies blocks [from, from+count) of chain, whose path is given
// (readable in w's G2), to w's G1 for request req over the H2D link,
// pinning them meanwhile. It reports true when they landed at once
// (instant link); otherwise Loaded follows.
func (k *KVCR) Load(now des.Time, w int32, req int64, chain []uint64, path []block.Piece, from, count int) bool {
	n := k.nodes[w]
	o := k.newOp(n, false, req)
	for i := from; i < from+count; i++ {
		s := n.pool.slotAt(path, i)
		k.mustServe(now, n, s, block.RefAt(chain, path, i), "load for request", req)
		n.pool.Pin(s)
		o.slots = append(o.slots, s)
	}
	k.C.G2HitsBlocks += int64(count)
	if n.h2d.Instant() {
		k.finishLoad(now, o)
		k.spare = append(k.spare, o)
		return true
	}
	k.startOp(now, o, n.h2d)
	return false
}

func (k *KVCR) startOp(now des.Time, o *op, l *Link) {
	o.t = Transfer{ID: k.xferID(), Bytes: int64(len(o.slots)) * k.cfg.BlockBytes}
	o.at = len(o.n.ops)
	o.n.ops = append(o.n.ops, o)
	l.Start(now, &o.t, o.done)
}

func (k *KVCR) opDone(now des.Time, o *op) {
	n := o.n
	last := n.ops[len(n.ops)-1]
	n.ops[o.at], last.at = last, o.at
	n.ops = n.ops[:len(n.ops)-1]
	if o.store {
		for _, s := range o.slots {
			n.pool.MakeReady(s)
		}
		k.C.G2Stores += int64(len(o.slots))
		k.l.Inventory(now, n.id, o.blocks, true)
		k.spare = append(k.spare, o)
		return
	}
	k.finishLoad(now, o)
	k.l.Loaded(now, n.id, o.req)
	k.spare = append(k.spare, o)
}

// finishLoad releases a load's pins; a read makes its blocks the most
// recently used. A block a move left pending goes with its last pin.
func (k *KVCR) finishLoad(now des.Time, o *op) {
	for _, s := range o.slots {
		k.unpin(o.n, s, true)
	}
	k.reportRemoved(now, o.n)
}

// unpin drops one pin of slot s in n's pool; refresh makes a ready block
// the most recently used. A block pending removal that loses its last pin
// is removed: counted, and collected for reportRemoved.
func (k *KVCR) unpin(n *node, s int32, refresh bool) {
	b := n.pool.ref(s)
	if n.pool.Unpin(s, refresh) {
		k.C.MoveRemovedBlocks++
		k.removed = append(k.removed, b)
	}
}

// markMoved makes a ready source block absent to readers after a move: it
// is removed now when unpinned, else when its last pin drops.
func (k *KVCR) markMoved(n *node, s int32) {
	if n.pool.slots[s].V.st != ready {
		return
	}
	b := n.pool.ref(s)
	if n.pool.MarkPending(s) {
		k.C.MoveRemovedBlocks++
		k.removed = append(k.removed, b)
	}
}

// reportRemoved tells the router which of n's blocks moves removed: only
// blocks actually gone, not those still pending removal.
func (k *KVCR) reportRemoved(now des.Time, n *node) {
	if len(k.removed) > 0 {
		k.l.Inventory(now, n.id, k.removed, false)
		k.removed = k.removed[:0]
	}
}
