package parquetio

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/report"
)

// TestFirstPullDiffConfig: a difference in pulls' mode, the scenario's
// hint mode, does not count as the first difference: the first row whose
// behaviour differs does, and mode is reported apart, from the row where
// it first differs. Tables differing only in mode have no behavioural row
// (-1); equal tables no diff.
func TestFirstPullDiffConfig(t *testing.T) {
	dir := t.TempDir()
	pull := func(id int64, mode string, bytes int64) report.PullRow {
		return report.PullRow{PullID: id, Mode: mode, Bytes: bytes, Outcome: "success", FirstByteNs: -1, WriteEndNs: -1, Kind: "request"}
	}
	write := func(name string, rows ...report.PullRow) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := writeAll(path, report.PullColumns([]string{"copy", "move"}, []string{"success"}, []string{"request"}), rows); err != nil {
			t.Fatal(err)
		}
		return path
	}
	copies := write("copy", pull(0, "copy", 10), pull(1, "copy", 20))
	moves := write("move", pull(0, "move", 10), pull(1, "move", 30))
	sameMoves := write("same", pull(0, "move", 10), pull(1, "move", 20))
	mode := []ConfigChange{{Row: 0, ColumnChange: ColumnChange{Column: "mode", A: "copy", B: "move"}}}
	for _, c := range []struct {
		b    string
		want *RowDiff
	}{
		{moves, &RowDiff{Row: 1, Changes: []ColumnChange{{Column: "bytes", A: "20", B: "30"}}, Config: mode}},
		{sameMoves, &RowDiff{Row: -1, Config: mode}},
		{copies, nil},
	} {
		got, err := FirstPullDiff(copies, c.b)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("copies vs %s: %+v, %v; want %+v", filepath.Base(c.b), got, err, c.want)
		}
	}
}

// TestConfigColumns: the columns compare lists apart as configuration are
// pulls' mode (the scenario's hint mode), requests' five measured_*
// columns (a measured trace's figures) and prev_request_id (the
// workload's previous turns), and no other.
func TestConfigColumns(t *testing.T) {
	var got []string
	for _, c := range report.RequestColumns {
		if c.Config {
			got = append(got, c.Name)
		}
	}
	for _, c := range report.PullColumns(nil, nil, nil) {
		if c.Config {
			got = append(got, c.Name)
		}
	}
	want := []string{"measured_ttft_ns", "measured_e2e_ns", "measured_queue_ns", "measured_prefill_ns", "measured_decode_ns", "prev_request_id", "mode"}
	if !slices.Equal(got, want) {
		t.Errorf("configuration columns %v, want %v", got, want)
	}
}
