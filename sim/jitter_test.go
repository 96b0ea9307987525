package sim

import (
	"slices"
	"testing"
)

// TestArrivalJitter: a trace arriving at 0, 5, 5, 20 and 21 ms with
// arrival_jitter 10ms and seed 7. The "arrival-jitter" stream of seed 7
// draws, uniform in [0, 10 ms), 9,212,709, 1,538,453, 6,695,711,
// 2,547,064 and 4,492,783 ns. Arrivals: 0 + 9,212,709; 5 ms + 1,538,453 =
// 6,538,453 is before that, so the second request keeps the first's
// 9,212,709 (the order holds); then 11,695,711, 22,547,064 and
// 25,492,783. The rows keep their request ids. Seed 8 draws otherwise;
// without the key the arrivals are the trace's.
func TestArrivalJitter(t *testing.T) {
	lines := []traceLine{{0, 16, 1, []int{1}}, {5, 16, 1, []int{2}}, {5, 16, 1, []int{3}}, {20, 16, 1, []int{4}}, {21, 16, 1, []int{5}}}
	arrivals := func(sets ...string) []int64 {
		rows, _ := run(t, traceScenario(t, fixed10x5, lines, sets...))
		var out []int64
		for _, r := range rows {
			out = append(out, r.ArrivalNs)
		}
		return out
	}
	want := []int64{9_212_709, 9_212_709, 11_695_711, 22_547_064, 25_492_783}
	if got := arrivals("seed=7", "workload.trace.arrival_jitter=10ms"); !slices.Equal(got, want) {
		t.Errorf("seed 7: arrivals %v, want %v", got, want)
	}
	if got := arrivals("seed=8", "workload.trace.arrival_jitter=10ms"); slices.Equal(got, want) {
		t.Errorf("seed 8 draws as seed 7: %v", got)
	}
	if got, want := arrivals("seed=7"), []int64{0, 5e6, 5e6, 20e6, 21e6}; !slices.Equal(got, want) {
		t.Errorf("no jitter: arrivals %v, want %v", got, want)
	}
}
