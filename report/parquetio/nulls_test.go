package parquetio_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/report/parquetio"
	"github.com/kvsim/kvsim/sim"
	"github.com/kvsim/kvsim/study"
)

// small is the default scenario's workload cut to 200 requests.
const small = "workload.synthetic.requests=200"

// replay runs the default scenario with sets into dir, as kvsim replay
// does.
func replay(t *testing.T, dir string, sets ...string) {
	t.Helper()
	env := &study.Env{}
	plan, err := study.Prepare("", sets, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.Manifest("", sets, plan.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	out, err := report.Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Abort()
	if _, err := env.RunTo(context.Background(), out.Path, plan, sim.Options{}, m); err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
}

// sweep sweeps the default scenario's 200 requests over events, the
// scenario's events, into dir: all of it, or the shard ("I/N") given.
func sweep(t *testing.T, dir, shard string, events []string) {
	t.Helper()
	s := &study.Sweep{Dir: study.Dir{Path: dir, Jobs: 2}, Spec: &study.Spec{Scenario: "../../scenarios/default.yaml",
		Sets: []string{small}, Keys: []string{"events"}, Values: [][]string{events}, Replicates: 1, Shard: shard}}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// nullCells reads the Parquet file at path with Arrow's reader and returns,
// for each column named, whether its field is nullable and which of its
// cells are null, in row order.
func nullCells(t *testing.T, path string, columns ...string) (nullable map[string]bool, null map[string][]bool) {
	t.Helper()
	tbl, _ := parquetio.ArrowTable(t, path)
	defer tbl.Release()
	nullable, null = map[string]bool{}, map[string][]bool{}
	for _, name := range columns {
		i := tbl.Schema().FieldIndices(name)
		if len(i) != 1 {
			t.Fatalf("%s: no column %s", path, name)
		}
		nullable[name] = tbl.Schema().Field(i[0]).Nullable
		for _, chunk := range tbl.Column(i[0]).Data().Chunks() {
			for j := range chunk.Len() {
				null[name] = append(null[name], chunk.IsNull(j))
			}
		}
	}
	return nullable, null
}

// TestNullWhereNoValue: events.parquet, sweep.parquet and points.parquet
// hold null where a value does not exist, in nullable fields, and kvsim's
// readers give the rows' -1 and NaN back. Event 0 drains worker 6 at 3 s
// (it is removed: a value); event 1 adds a worker at 1 m, after the last of
// the 200 requests arrived (57.8 s): the worker it names is never removed
// (removed_after_ns, and as it is no drain g2_blocks_left and
// removal_delay_ns, none), it has no order (kv_done_after_ns none) and its
// window after is empty (its TTFT and rate after, none). Counts keep their
// values, in fields that are not nullable.
func TestNullWhereNoValue(t *testing.T) {
	two := "[{at: 3s, drain: [6]}, {at: 1m, add: 1}]"
	dir := filepath.Join(t.TempDir(), "run")
	replay(t, dir, small, "events="+two)
	path := filepath.Join(dir, report.EventsFile)
	none := []string{"removed_after_ns", "kv_done_after_ns", "g2_blocks_left", "removal_delay_ns", "ttft_p50_after_ms", "requests_per_s_after"}
	nullable, null := nullCells(t, path, append(none, "requests_rerouted", "requests_after", "window_after_ns")...)
	for _, c := range none {
		if !nullable[c] || len(null[c]) != 2 || !null[c][1] {
			t.Errorf("events.parquet %s: nullable %v, null %v; want event 1's null", c, nullable[c], null[c])
		}
	}
	if null["removed_after_ns"][0] || null["ttft_p50_after_ms"][0] {
		t.Errorf("event 0's removed_after_ns or ttft_p50_after_ms is null: %v %v", null["removed_after_ns"], null["ttft_p50_after_ms"])
	}
	for _, c := range []string{"requests_rerouted", "requests_after", "window_after_ns"} {
		if nullable[c] {
			t.Errorf("events.parquet %s is nullable: a count or a length always has a value", c)
		}
	}
	rows, err := parquetio.ReadEvents(path)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	r := rows[1]
	if r.RemovedAfterNs != -1 || r.OrdersDoneAfterNs != -1 || r.G2BlocksLeft != -1 || r.RemovalDelayNs != -1 ||
		!math.IsNaN(r.After.TTFTP50Ms) || !math.IsNaN(r.After.RequestsPerS) || r.WindowAfterNs != 0 || rows[0].RemovedAfterNs <= 0 {
		t.Errorf("read back %+v\nwant -1 and NaN where the file holds null", r)
	}

	// Run 1 lacks event 1: all its event1_ numbers are null, and so is
	// run 0's event1_removed_after_ns; the points' SD of one replicate is
	// null, their means are not.
	sw := filepath.Join(t.TempDir(), "s")
	events := []string{two, "[{at: 3s, drain: [6]}]"}
	sweep(t, sw, "", events)
	cols := []string{"event1_at_ns", "event1_event", "event1_removed_after_ns", "event1_requests_after", "event1_load_share", "event0_removed_after_ns"}
	nullable, null = nullCells(t, filepath.Join(sw, report.SweepFile), cols...)
	for _, c := range cols {
		want := []bool{c == "event1_removed_after_ns", c != "event0_removed_after_ns"}
		if !nullable[c] || len(null[c]) != 2 || null[c][0] != want[0] || null[c][1] != want[1] {
			t.Errorf("sweep.parquet %s: nullable %v, null %v; want null %v", c, nullable[c], null[c], want)
		}
	}
	_, srows, err := parquetio.ReadSweep(filepath.Join(sw, report.SweepFile))
	if err != nil || len(srows) != 2 || len(srows[0].Events) != 2 || len(srows[1].Events) != 1 || srows[0].Events[1].RemovedAfterNs != -1 {
		t.Errorf("sweep.parquet read back: %+v, %v", srows, err)
	}
	nullable, null = nullCells(t, filepath.Join(sw, report.PointsFile), "requests_completed_mean", "requests_completed_sd", "event1_at_ns_mean")
	if nullable["requests_completed_mean"] || !null["requests_completed_sd"][0] || null["event1_at_ns_mean"][0] || !null["event1_at_ns_mean"][1] {
		t.Errorf("points.parquet: nullable %v, null %v", nullable, null)
	}

	// sweep merge reads the parts' nulls as -1 and NaN and writes them as
	// null again: the same files as the whole sweep's.
	parts := t.TempDir()
	for _, shard := range []string{"1/2", "2/2"} {
		out := filepath.Join(parts, shard[:1])
		sweep(t, out, shard, events)
	}
	merged := filepath.Join(parts, "m")
	if _, _, err := (&study.Env{}).Merge([]string{filepath.Join(parts, "1"), filepath.Join(parts, "2")}, merged, false); err != nil {
		t.Fatalf("merge: %v", err)
	}
	for _, f := range []string{report.SweepFile, report.PointsFile} {
		want, _ := os.ReadFile(filepath.Join(sw, f))
		if got, err := os.ReadFile(filepath.Join(merged, f)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("merged %s differs from the whole sweep's: %v", f, err)
		}
	}
}
