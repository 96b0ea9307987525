package sim

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
)

// The rescans of parked pulls. At every instant at which anything
// happened, the parked orders are staged again and every worker with a
// parked request pull is woken, so that its drive scan stages the pull
// again (docs/kvcr.md, "Drive scans"). A wake changes nothing at a worker
// that is busy (in a pass or a stretch), already has its drive scan
// pending or is removed, so only idle workers with a parked pull need
// waking, and there are few: at 2048 workers about 140 are parked targets
// at a time and, in that benchmark, none of them idle at any rescan.
//
// A worker is left idle with a parked pull only by a drive scan of its
// own that starts no pass: pulls park only in their target's drive scan,
// and a worker whose pass ends is scanned at once. (A worker whose engine
// goes down is left idle without one, but its drive scans do nothing
// while it is down, and it is scanned when it comes back.) That drive
// scan lists the worker in Cluster.rescan (noteIdleParked), so the list
// holds every idle worker with a parked pull, and perhaps some that have
// since started a pass, lost their parked pulls or been removed: those
// leave it at the next look (idleParked).

// One rescan an instant. Passes one by one rescan after the instant's
// first event after which a pull is parked, which may be a pass end a
// stretch stands for: a stretch runs while pulls are parked at busy
// workers. There that rescan finds nothing to do (while a stretch runs, no
// order is parked and no idle worker has a parked pull), but it is the
// instant's one: a later event of the instant that parks an order or
// leaves a worker idle with a parked pull gets no rescan before the next
// instant. The fast-forward, which has no event there, must skip that
// rescan too. Such a pass end is the rescan's place only when it comes
// before every event of the instant the fast-forward fires: after an event
// before it the rescan would have been asked first, with the same answer
// (a pass end a stretch stands for changes nothing a rescan reads). So it
// is a pass end of a stretch running at the instant's start, ordered
// before the instant's first event, with a pull parked at that start.
// noteInstant notes the start, settle notes a stretch settled during the
// instant, and scanParked, when its rescan would do something, asks
// (rescannedHidden).

// instantNote is what a rescan needs of the current instant's start.
type instantNote struct {
	at     des.Time
	parked bool      // a pull was parked at its start, while a stretch ran
	phase  des.Phase // the place of its first event
	key    uint64
	hidden bool // a stretch settled during it stood for a pass end before its first event
}

// noteInstant, before an event, starts the note of the instant when the
// event is the first of its instant. Without KVCR nothing parks: no note.
func (c *Cluster) noteInstant() {
	if c.kv == nil {
		return
	}
	at, phase, key, ok := c.q.Next()
	if !ok || at == c.instant.at {
		return
	}
	c.instant = instantNote{at: at, parked: c.stretches > 0 && c.parked(), phase: phase, key: key}
}

// passEndFirst reports whether n's stretch stands for a pass end at the
// current instant ordered before its first event.
func (c *Cluster) passEndFirst(n *node) bool {
	in := &c.instant
	return (des.PhasePass < in.phase || des.PhasePass == in.phase && uint64(n.id) < in.key) && n.w.PassEndsAt(in.at)
}

// noteSettle, as n's stretch is settled, notes whether it stood for a pass
// end that passes one by one would have rescanned at.
func (c *Cluster) noteSettle(n *node) {
	if c.instant.parked && !c.instant.hidden && c.passEndFirst(n) {
		c.instant.hidden = true
	}
}

// rescannedHidden reports whether passes one by one rescanned at this
// instant at a pass end a stretch stood for.
func (c *Cluster) rescannedHidden() bool {
	if !c.instant.parked {
		return false
	}
	if c.instant.hidden {
		return true
	}
	for _, n := range c.workers {
		if n.ff != nil && c.passEndFirst(n) {
			return true
		}
	}
	return false
}

// parked reports whether any pull is parked: a request's or an order's.
func (c *Cluster) parked() bool {
	return c.kv != nil && (c.kv.ParkedRequests() > 0 || c.kv.ParkedOrders() > 0)
}

// scanParked, once an instant at which anything happened, stages the
// parked orders again and wakes every idle worker with a parked pull: its
// drive scan stages the pull again. (Every other worker's scan would change
// nothing unless something it waits for happened to it, which wakes it.)
func (c *Cluster) scanParked(now des.Time) {
	if c.scanned == now || !c.parked() {
		return
	}
	c.scanned = now
	if (c.kv.ParkedOrders() > 0 || c.idleParked()) && c.rescannedHidden() {
		return // passes one by one rescanned at a pass end a stretch stands for, finding nothing to do
	}
	c.kv.RetryOrders(now)
	c.applyKV()
	if c.idleParked() {
		for _, w := range c.rescan {
			c.wake(w, now, false)
		}
	}
}

// noteIdleParked is called when n's drive scan starts no pass: when n has
// a parked pull, every later instant's rescan stages it again, so n is
// listed, and every stretch is settled, since each pass end it stands for
// would be such an instant.
func (c *Cluster) noteIdleParked(n *node) {
	if c.kv == nil || !c.kv.ParkedAt(n.id) {
		return
	}
	if !n.rescan {
		n.rescan = true
		c.rescan = append(c.rescan, n.id)
	}
	if c.stretches > 0 {
		c.met.idleSettles++
		c.settleAll()
	}
}

// idleParked reports whether a listed worker is idle with a parked pull,
// and unlists those that are not.
func (c *Cluster) idleParked() bool {
	kept := c.rescan[:0]
	for _, w := range c.rescan {
		if n := c.workers[w]; c.parkedIdle(n) {
			kept = append(kept, w)
		} else {
			n.rescan = false
		}
	}
	c.rescan = kept
	return len(kept) > 0
}

// parkedIdle reports whether n has a parked pull and is idle and not
// removed: whether it belongs in the list.
func (c *Cluster) parkedIdle(n *node) bool {
	return c.kv.ParkedAt(n.id) && !n.w.Busy() && c.status(n) != lifecycle.Removed
}

// checkRescans verifies, after n's drive scan, that no stretch stands for a
// rescan of parked pulls that could change anything: while one runs, no
// order is parked and every worker with a parked pull is busy, has its
// drive scan pending, is down or removed. It looks at n itself after every
// scan, and, when the scan started a stretch, at the orders and at every
// worker, the whole cluster once in max(1, workers/16) stretches (a few
// operations a stretch).
func (c *Cluster) checkRescans(n *node) {
	if !c.opt.Check || c.err != nil || c.kv == nil || c.stretches == 0 {
		return
	}
	if n.ff != nil && c.kv.ParkedOrders() > 0 {
		c.err = &InvariantError{Invariant: invRescansQuiet, At: c.q.Now(),
			Err: fmt.Errorf("worker %d started a stretch with %d orders parked", n.id, c.kv.ParkedOrders())}
		return
	}
	var idle *node
	switch {
	case c.idleWithParked(n):
		idle = n
	case n.ff != nil:
		if c.rescanChecks++; c.rescanChecks%max(1, len(c.workers)/16) == 0 {
			idle = c.firstIdleWithParked()
		}
	}
	if idle != nil {
		c.err = &InvariantError{Invariant: invRescansQuiet, At: c.q.Now(),
			Err: fmt.Errorf("worker %d is idle with a parked pull while %d workers are in a stretch", idle.id, c.stretches)}
	}
}

// idleWithParked reports whether a rescan of parked pulls would stage n's
// again: n has a parked pull and is idle, up and not removed, with no drive
// scan pending.
func (c *Cluster) idleWithParked(n *node) bool {
	return c.parkedIdle(n) && !n.drive && c.status(n) != lifecycle.Down
}

// firstIdleWithParked is the lowest worker idleWithParked holds of, or nil.
func (c *Cluster) firstIdleWithParked() *node {
	for _, m := range c.workers {
		if c.idleWithParked(m) {
			return m
		}
	}
	return nil
}
