package kvcr

import (
	"cmp"
	"slices"

	"github.com/kvsim/kvsim/sim/des"
)

type firstByteEvent KVCR

// Fire puts a pull's transfer on the network one latency after staging.
func (f *firstByteEvent) Fire(now des.Time, _, id uint64) {
	k := (*KVCR)(f)
	if p := k.live[int64(id)]; p != nil {
		k.firstByte(now, p)
	}
}

// endTransfer closes a transfer that delivered its last byte. The source
// releases its pins, refreshing the blocks' recency: the write succeeded,
// whether or not the target still waited. accepted says the target takes
// the blocks (its reserved slots turn ready); otherwise it drops them. A
// move's source then removes the hinted blocks it sent; when the target
// did not accept them they are lost.
func (k *KVCR) endTransfer(now des.Time, p *Pull, accepted bool) {
	p.EndNs = now
	tn, sn := k.nodes[p.Target], k.nodes[p.Source]
	sn.sent += p.Bytes
	k.unpinSource(now, sn, p, true)
	if accepted {
		for _, s := range p.dstSlots {
			tn.pool.MakeReady(s)
		}
		k.l.Inventory(now, tn.id, p.send, true)
		p.Landed = len(p.send)
		k.C.BlocksPulled += int64(p.Landed)
		k.C.BytesPulled += p.Bytes
	} else {
		for _, s := range p.dstSlots {
			tn.pool.Drop(s)
		}
	}
	if sn.status != Removed {
		for _, s := range p.srcSlots[:p.moves] {
			if !accepted && sn.pool.slots[s].V.st == ready {
				k.C.MoveLostBlocks++ // gone at the source, not kept at the target
			}
			k.markMoved(sn, s)
		}
		k.reportRemoved(now, sn)
	}
	k.unpinHits(now, tn, p)
	k.transferOver(now, p)
}

// cancelTransfer stops a pull's transfer, running or not yet started: the
// source's pins are released without refresh, the target's slots freed.
func (k *KVCR) cancelTransfer(now des.Time, p *Pull) {
	k.net.cancel(now, &p.t)
	p.EndNs = now
	tn, sn := k.nodes[p.Target], k.nodes[p.Source]
	k.unpinSource(now, sn, p, false)
	if tn.status != Removed {
		for _, s := range p.dstSlots {
			tn.pool.Drop(s)
		}
		k.unpinHits(now, tn, p)
	}
	k.transferOver(now, p)
}

// transferOver: the target's inflight slot and the source's part in the
// pull end with its transfer.
func (k *KVCR) transferOver(now des.Time, p *Pull) {
	k.nodes[p.Target].inflight--
	k.release(now, k.nodes[p.Source])
}

// unpinSource drops the pull's pins at the source; with refresh their
// recency is refreshed, in ascending hash order. A block a move left
// pending goes with its last pin.
func (k *KVCR) unpinSource(now des.Time, sn *node, p *Pull, refresh bool) {
	k.C.PinsReleased += int64(len(p.srcSlots))
	if sn.status == Removed {
		return // the pins went with the worker's pool
	}
	if !refresh {
		for _, s := range p.srcSlots {
			k.unpin(sn, s, false)
		}
	} else {
		k.order = k.order[:0]
		for i := range p.srcSlots {
			k.order = append(k.order, i)
		}
		slices.SortFunc(k.order, func(a, b int) int { return cmp.Compare(p.send[a].Hash, p.send[b].Hash) })
		for _, i := range k.order {
			k.unpin(sn, p.srcSlots[i], true)
		}
	}
	k.reportRemoved(now, sn)
}

// unpinHits releases the target's hold on its destination hits.
func (k *KVCR) unpinHits(now des.Time, tn *node, p *Pull) {
	for _, s := range p.hits {
		k.unpin(tn, s, false)
	}
	k.reportRemoved(now, tn)
}
