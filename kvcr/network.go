package kvcr

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
)

// network carries pull transfers from a source's G2 to a target's.
type network interface {
	// start puts t on the network at now; done is called when its last
	// byte lands.
	start(now des.Time, t *Transfer, src, dst int32, done func(des.Time, *Transfer))
	// cancel takes t off the network; its bytes so far are lost. A
	// transfer not on the network is left alone.
	cancel(now des.Time, t *Transfer)
	// movedBy is the bytes of completed transfers worker w sent.
	movedBy(w int32) int64
	// setFactor runs worker w's egress (or ingress) at factor x of its
	// bandwidth from now on (a link fault; 1 without one, 0 down).
	setFactor(now des.Time, w int32, ingress bool, x float64)
}

// egressLinks is the network without an ingress limit: each worker's
// egress is a Link shared by processor sharing.
type egressLinks struct {
	q     *des.Queue
	gbps  float64
	links []*Link // by source worker, made on first use
}

func (e *egressLinks) link(w int32) *Link {
	for int(w) >= len(e.links) {
		e.links = append(e.links, NewLink(fmt.Sprintf("egress/%d", len(e.links)), e.gbps, e.q))
	}
	return e.links[w]
}

func (e *egressLinks) start(now des.Time, t *Transfer, src, _ int32, done func(des.Time, *Transfer)) {
	e.link(src).Start(now, t, done)
}

func (e *egressLinks) cancel(now des.Time, t *Transfer) {
	if t.Active() {
		t.link.Cancel(now, t)
	}
}

func (e *egressLinks) movedBy(w int32) int64 {
	if int(w) < len(e.links) {
		return e.links[w].Moved()
	}
	return 0
}

func (e *egressLinks) setFactor(now des.Time, w int32, ingress bool, x float64) {
	if ingress {
		panic("kvcr: an ingress link fault needs the fair network (Config.FairNet)")
	}
	e.link(w).SetFactor(now, x)
}
