package sim

import (
	"reflect"
	"slices"
	"testing"
)

// TestCounterNames: every counter has a name, no two share one, and the
// report order is the one counters.parquet has always had (docs/outputs.md).
func TestCounterNames(t *testing.T) {
	want := []string{"hints_attached", "pulls_staged", "pulls_parked", "pulls_success", "pulls_partial",
		"pulls_failed", "pulls_expired", "pulls_superseded", "pulls_rejected_draining", "pulls_rejected_removed",
		"pulls_rejected_not_ready", "pulls_rejected_missing", "hints_nothing_to_fetch", "blocks_pulled",
		"bytes_pulled", "pins_acquired", "pins_released", "move_removed_blocks", "move_lost_blocks", "g2_stores",
		"g2_stores_dropped", "g2_evictions", "g2_hits_blocks", "requests_total", "requests_completed",
		"requests_rejected", "requests_failed", "requests_unfinished", "requests_rerouted", "preemptions",
		"workers_added", "workers_drained", "workers_removed"}
	if got := CounterNames(); !slices.Equal(got, want) {
		t.Errorf("CounterNames() = %q\nwant %q", got, want)
	}
}

// TestCountersRoundTrip: a distinct value in every field goes to rows, to a
// map by name (summary.json) and back to the same fields.
func TestCountersRoundTrip(t *testing.T) {
	var c Counters
	next := int64(0)
	eachCounter(reflect.ValueOf(&c).Elem(), func(_ string, f reflect.Value) {
		next++
		f.SetInt(next * 7)
	})
	byName := map[string]int64{"no_such_counter": 1}
	for _, r := range c.Rows() {
		byName[r.Name] = r.Value
	}
	if got := CountersOf(byName); got != c {
		t.Errorf("CountersOf(rows of %+v) = %+v", c, got)
	}
	if got, want := c.PullsRejected(), c.PullsRejectedDraining+c.PullsRejectedRemoved+c.PullsRejectedNotReady+c.PullsRejectedMissing; got != want {
		t.Errorf("PullsRejected = %d, want %d", got, want)
	}
}
