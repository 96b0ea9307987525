package kvcr

// Counters are KVCR's run counters. Their names, as List gives them, are
// part of the report (counters.parquet, summary.json).
type Counters struct {
	PullsStaged           int64 // pulls started: pins taken, slots reserved
	PullsParked           int64 // pulls that waited for room or an inflight slot
	PullsSuccess          int64
	PullsPartial          int64
	PullsFailed           int64
	PullsExpired          int64
	PullsSuperseded       int64 // parked, then nothing left to fetch at a retry
	PullsRejectedDraining int64 // source draining at staging
	PullsRejectedRemoved  int64 // source removed at staging
	PullsRejectedNotReady int64 // source not ready (starting) at staging
	PullsRejectedMissing  int64 // source holds none of the missing blocks
	HintsNothingToFetch   int64 // at first staging the target already held every block of the fetch
	BlocksPulled          int64 // blocks landed by pulls
	BytesPulled           int64
	PinsAcquired          int64
	PinsReleased          int64
	MoveRemovedBlocks     int64 // source blocks removed by move pulls
	MoveLostBlocks        int64 // moved blocks whose target pull expired
	G2Stores              int64 // blocks written to G2 (D2H done)
	G2StoresDropped       int64 // stores with no slot to take
	G2Evictions           int64
	G2HitsBlocks          int64 // blocks loaded from a worker's own G2 (H2D)
}

// Counter is one named value.
type Counter struct {
	Name  string
	Value int64
}

// List returns the counters in their fixed report order.
func (c *Counters) List() []Counter {
	return []Counter{
		{"pulls_staged", c.PullsStaged},
		{"pulls_parked", c.PullsParked},
		{"pulls_success", c.PullsSuccess},
		{"pulls_partial", c.PullsPartial},
		{"pulls_failed", c.PullsFailed},
		{"pulls_expired", c.PullsExpired},
		{"pulls_superseded", c.PullsSuperseded},
		{"pulls_rejected_draining", c.PullsRejectedDraining},
		{"pulls_rejected_removed", c.PullsRejectedRemoved},
		{"pulls_rejected_not_ready", c.PullsRejectedNotReady},
		{"pulls_rejected_missing", c.PullsRejectedMissing},
		{"hints_nothing_to_fetch", c.HintsNothingToFetch},
		{"blocks_pulled", c.BlocksPulled},
		{"bytes_pulled", c.BytesPulled},
		{"pins_acquired", c.PinsAcquired},
		{"pins_released", c.PinsReleased},
		{"move_removed_blocks", c.MoveRemovedBlocks},
		{"move_lost_blocks", c.MoveLostBlocks},
		{"g2_stores", c.G2Stores},
		{"g2_stores_dropped", c.G2StoresDropped},
		{"g2_evictions", c.G2Evictions},
		{"g2_hits_blocks", c.G2HitsBlocks},
	}
}
