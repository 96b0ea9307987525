package kvcr

import "fmt"

// Counters are KVCR's run counters. Each field's counter tag is its name in
// the report (counters.parquet, summary.json), where they follow the field
// order (results.Counters).
type Counters struct {
	PullsStaged           int64 `counter:"pulls_staged"` // pulls started: pins taken, slots reserved
	PullsParked           int64 `counter:"pulls_parked"` // pulls that waited for room or an inflight slot
	PullsSuccess          int64 `counter:"pulls_success"`
	PullsPartial          int64 `counter:"pulls_partial"`
	PullsFailed           int64 `counter:"pulls_failed"`
	PullsExpired          int64 `counter:"pulls_expired"`
	PullsSuperseded       int64 `counter:"pulls_superseded"`         // parked, then nothing left to fetch at a retry
	PullsRejectedDraining int64 `counter:"pulls_rejected_draining"`  // source draining at staging
	PullsRejectedRemoved  int64 `counter:"pulls_rejected_removed"`   // source removed at staging
	PullsRejectedNotReady int64 `counter:"pulls_rejected_not_ready"` // source not ready (starting) at staging
	PullsRejectedMissing  int64 `counter:"pulls_rejected_missing"`   // source holds none of the missing blocks
	HintsNothingToFetch   int64 `counter:"hints_nothing_to_fetch"`   // at first staging the target already held every block of the fetch
	BlocksPulled          int64 `counter:"blocks_pulled"`            // blocks landed by pulls
	BytesPulled           int64 `counter:"bytes_pulled"`
	PinsAcquired          int64 `counter:"pins_acquired"`
	PinsReleased          int64 `counter:"pins_released"`
	MoveRemovedBlocks     int64 `counter:"move_removed_blocks"` // source blocks removed by move pulls
	MoveLostBlocks        int64 `counter:"move_lost_blocks"`    // moved blocks whose target pull expired
	G2Stores              int64 `counter:"g2_stores"`           // blocks written to G2 (D2H done)
	G2StoresDropped       int64 `counter:"g2_stores_dropped"`   // stores with no slot to take
	G2Evictions           int64 `counter:"g2_evictions"`
	G2HitsBlocks          int64 `counter:"g2_hits_blocks"` // blocks loaded from a worker's own G2 (H2D)
	// Move and Prefetch break the request-independent orders out of the
	// totals above, which count every pull of every kind. They are the
	// "background" group: reported only by runs that can issue orders.
	Move     KindCounters `counter:"kv_move_" group:"background"`
	Prefetch KindCounters `counter:"kv_prefetch_" group:"background"`
	// Faults count what the faults of pull_errors and notices did: the
	// "faults" group, reported only by runs with fault events.
	Faults FaultCounters `counter:"" group:"faults"`
}

// FaultCounters count what injected pull errors and late or lost
// completion notices did (docs/faults.md).
type FaultCounters struct {
	PullsFailedInjected int64 `counter:"pulls_failed_injected"` // writes an injected error failed: at the post, or at the last byte
	NoticesDelayed      int64 `counter:"notices_delayed"`       // completion notices a notices fault delayed
	NoticesLost         int64 `counter:"notices_lost"`          // completion notices a notices fault lost
}

// KindCounters count one kind of order (Order): issued, then ended
// unstaged (nothing to fetch, or dropped when a worker was removed before
// its turn) or by its pull's outcome, and what its pulls landed.
type KindCounters struct {
	Issued         int64 `counter:"issued"`
	NothingToFetch int64 `counter:"nothing_to_fetch"` // the target held every block at the first staging: no pull
	Dropped        int64 `counter:"dropped"`          // still waiting for its source's turn when its source or target was removed, or its target drained: no pull
	Success        int64 `counter:"success"`
	Partial        int64 `counter:"partial"`
	Failed         int64 `counter:"failed"`
	Expired        int64 `counter:"expired"`
	Rejected       int64 `counter:"rejected"`
	Superseded     int64 `counter:"superseded"`
	BlocksLanded   int64 `counter:"blocks_landed"`
	Bytes          int64 `counter:"bytes"` // of the transfers that landed
}

// Ended is the orders that ended, staged or not: Issued when every order
// is over.
func (c *KindCounters) Ended() int64 {
	return c.NothingToFetch + c.Dropped + c.Success + c.Partial + c.Failed + c.Expired + c.Rejected + c.Superseded
}

// count adds a finished order's pull.
func (c *KindCounters) count(p *Pull) {
	switch p.Outcome {
	case Success:
		c.Success++
	case Partial:
		c.Partial++
	case Failed:
		c.Failed++
	case Expired:
		c.Expired++
	case Rejected:
		c.Rejected++
	case Superseded:
		c.Superseded++
	}
	if p.Landed > 0 {
		c.BlocksLanded += int64(p.Landed)
		c.Bytes += p.Bytes
	}
}

// kind is the counters of orders of kind k.
func (c *Counters) kind(k Kind) *KindCounters {
	if k == KindMove {
		return &c.Move
	}
	return &c.Prefetch
}

// PullsRejected is the pulls refused at staging, for any reason.
func (c *Counters) PullsRejected() int64 {
	return c.PullsRejectedDraining + c.PullsRejectedRemoved + c.PullsRejectedNotReady + c.PullsRejectedMissing
}

// rejected is the counter of the pulls staging refused for why.
func (c *Counters) rejected(why Rejection) *int64 {
	switch why {
	case RejectedDraining:
		return &c.PullsRejectedDraining
	case RejectedRemoved:
		return &c.PullsRejectedRemoved
	case RejectedNotReady:
		return &c.PullsRejectedNotReady
	case RejectedMissing:
		return &c.PullsRejectedMissing
	}
	panic(fmt.Sprintf("kvcr: a pull rejected for no reason (%d)", why))
}
