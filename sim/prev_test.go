package sim

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// prevIDs is every row's prev_request_id, in request_id order.
func prevIDs(rows []report.RequestRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.PrevRequestID
	}
	return out
}

// TestPrevRequestIDTrace: requests.parquet's prev_request_id comes from the
// trace's hashes in the order the run reads it, sorted and skipped. In
// file order (16-token trace blocks): A at 20 ms [1 2 3 4] (a follow-up),
// B at 10 ms [1 2 3] (its first turn), C at 0 ms [9 10], D at 30 ms
// [1 2 3 4 5]. Sorted, C is 0, B 1, A 2 (previous turn B, 1) and D 3 (A,
// 2); with skip 1, B is 0, A 1 (0) and D 2 (1).
func TestPrevRequestIDTrace(t *testing.T) {
	lines := []traceLine{{20, 64, 1, []int{1, 2, 3, 4}}, {10, 48, 1, []int{1, 2, 3}}, {0, 32, 1, []int{9, 10}}, {30, 80, 1, []int{1, 2, 3, 4, 5}}}
	for _, c := range []struct {
		sets []string
		want []int64
	}{
		{[]string{"workload.trace.sort=true"}, []int64{-1, -1, 1, 2}},
		{[]string{"workload.trace.sort=true", "workload.trace.skip=1"}, []int64{-1, 0, 1}},
	} {
		rows, _ := runTrace(t, fixed10x5, lines, c.sets...)
		if got := prevIDs(rows); !slices.Equal(got, c.want) {
			t.Errorf("%v: prev_request_id %v, want %v", c.sets, got, c.want)
		}
	}
}

// TestPrevRequestIDSynthetic: constant arrivals, 3 turns a session, no
// think time: each session's turns arrive together, 1 s before the next
// session's (3 requests a second), so rows 0-2 are session 0's turns and
// 3-5 session 1's: prev_request_id -1, 0, 1, -1, 3, 4.
func TestPrevRequestIDSynthetic(t *testing.T) {
	y := "name: s\nworkload: {synthetic: {requests: 6, rate: 3, arrival: constant, turns: 3, input: {mean: 100}, output: {mean: 2}}}\n" +
		fixed10x5 + "kvcr: {enabled: false}\n"
	sc, err := scenarios.Parse("s.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := run(t, sc)
	if got, want := prevIDs(rows), []int64{-1, 0, 1, -1, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("prev_request_id %v, want %v", got, want)
	}
}
