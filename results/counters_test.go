package results

import (
	"reflect"
	"slices"
	"testing"
)

// TestCounterNames: every counter has a name, no two share one, and the
// report order of the counters every run reports is the one
// counters.parquet has always had (docs/outputs.md), with the groups'
// counters, background, faults then cost, after g2_hits_blocks.
func TestCounterNames(t *testing.T) {
	want := []string{"hints_attached", "pulls_staged", "pulls_parked", "pulls_success", "pulls_partial",
		"pulls_failed", "pulls_expired", "pulls_superseded", "pulls_rejected_draining", "pulls_rejected_removed",
		"pulls_rejected_not_ready", "pulls_rejected_missing", "hints_nothing_to_fetch", "blocks_pulled",
		"bytes_pulled", "pins_acquired", "pins_released", "move_removed_blocks", "move_lost_blocks", "g2_stores",
		"g2_stores_dropped", "g2_evictions", "g2_hits_blocks", "requests_total", "requests_completed",
		"requests_rejected", "requests_failed", "requests_unfinished", "requests_rerouted", "preemptions",
		"workers_added", "workers_drained", "workers_removed"}
	var c Counters
	var got []string
	for _, r := range c.Rows() {
		got = append(got, r.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Rows() = %q\nwant %q", got, want)
	}
	var bg []string
	for _, kind := range []string{"kv_move_", "kv_prefetch_"} {
		for _, n := range []string{"issued", "nothing_to_fetch", "dropped", "success", "partial", "failed",
			"expired", "rejected", "superseded", "blocks_landed", "bytes"} {
			bg = append(bg, kind+n)
		}
	}
	bg = append(bg, "pulls_failed_injected", "notices_delayed", "notices_lost", "hints_withheld", "requests_migrated", "migrations_exhausted")
	all := CounterNames()
	if len(all) != len(want)+len(bg) {
		t.Fatalf("CounterNames() has %d names, want %d", len(all), len(want)+len(bg))
	}
	i := slices.Index(want, "g2_hits_blocks") + 1
	wantAll := slices.Concat(want[:i], bg, want[i:])
	var gotAll []string
	for _, r := range c.Rows(groupBackground, groupFaults, groupCost, groupMigration) {
		gotAll = append(gotAll, r.Name)
	}
	if !slices.Equal(gotAll, wantAll) || !slices.Equal(all, wantAll) {
		t.Errorf("Rows(background, faults, cost, migration) = %q\nCounterNames() = %q\nwant %q", gotAll, all, wantAll)
	}
	seen := map[string]bool{}
	for _, n := range all {
		if seen[n] {
			t.Errorf("counter %q twice", n)
		}
		seen[n] = true
	}
	for _, n := range append(slices.Clone(want), bg...) {
		if !seen[n] {
			t.Errorf("no counter %q", n)
		}
	}
}

// TestCountersRoundTrip: a distinct value in every field goes to rows, to a
// map by name (summary.json) and back to the same fields.
func TestCountersRoundTrip(t *testing.T) {
	var c Counters
	next := int64(0)
	eachCounter(reflect.ValueOf(&c).Elem(), func(_, _ string, f reflect.Value) {
		next++
		f.SetInt(next * 7)
	})
	byName := map[string]int64{"no_such_counter": 1}
	for _, r := range c.Rows(groupBackground, groupFaults, groupCost, groupMigration) {
		byName[r.Name] = r.Value
	}
	if got := CountersOf(byName); got != c {
		t.Errorf("CountersOf(rows of %+v) = %+v", c, got)
	}
}
