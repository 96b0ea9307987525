package study

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// TestMeetSLOs: replicates' TTFT p99 of 100, 250 and 300 ms against
// "ttft_p99_ms < 260": 2 of 3 meet it (all 3 meet "requests_completed ==
// 4" beside it), and the mean is 650 / 3 = 216.667 ms (metrics are the
// SLOs' metrics, each once, as Search.check lists them). A second SLO on a
// time of never (a makespan of -1 ns, as a time that never came is
// written) fails in every replicate, and the time's mean is never (+Inf):
// of each SLO 2 and 0 replicates meet it.
func TestMeetSLOs(t *testing.T) {
	var sums []*results.Summary
	for _, p99 := range []float64{100, 250, 300} {
		s := &results.Summary{Counters: map[string]int64{"requests_completed": 4}}
		s.Requests.Completed = 4
		s.TTFT.P99 = p99
		s.MakespanNs = -1
		sums = append(sums, s)
	}
	slo := func(s string) scenarios.Expectation {
		e, err := scenarios.ParseExpectation(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	n, _, means, err := meetSLOs([]scenarios.Expectation{slo("ttft_p99_ms < 260"), slo("requests_completed == 4")}, []string{"ttft_p99_ms", "requests_completed"}, sums)
	if err != nil || n != 2 || formatMean(means[0]) != "216.667" {
		t.Errorf("%d passing, means %v, %v; want 2, 216.667", n, means, err)
	}
	n, held, means, err := meetSLOs([]scenarios.Expectation{slo("ttft_p99_ms < 260"), slo("makespan_s < 30")}, []string{"ttft_p99_ms", "makespan_s"}, sums)
	if err != nil || n != 0 || !slices.Equal(held, []int{2, 0}) || !math.IsInf(means[1], 1) || formatMean(means[1]) != "never" {
		t.Errorf("%d passing, %v meeting each, means %v, %v; want 0, [2 0] and never", n, held, means, err)
	}
}

// TestTurn: the three points that show a sequence is not monotone, the
// middle one above or below both others; none for a monotone one, flat
// steps included. A NaN (a statistic of nothing) shows no direction: it
// is skipped, and the points around it are compared.
func TestTurn(t *testing.T) {
	for _, c := range []struct {
		ys   []float64
		want []int
	}{
		{[]float64{1, 2, 2, 3}, nil},
		{[]float64{3, 3, 1, 1}, nil},
		{[]float64{5}, nil},
		{[]float64{200, 200, 166.7, 175}, []int{1, 2, 3}},
		{[]float64{1, 2, 2, 3, 0}, []int{0, 3, 4}},
		{[]float64{1, 1, 2, 1}, []int{1, 2, 3}},
		{[]float64{1, math.Inf(1), 2}, []int{0, 1, 2}},
		{[]float64{1, math.NaN(), 2, 3}, nil},
		{[]float64{math.NaN(), 3, math.NaN(), 1}, nil},
		{[]float64{1, math.NaN(), 3, math.NaN(), 2}, []int{0, 2, 4}},
	} {
		if got := turn(c.ys); !slices.Equal(got, c.want) {
			t.Errorf("turn(%v) = %v, want %v", c.ys, got, c.want)
		}
	}
}

// TestSearchTwice: a Search run a second time (into its directory, with
// Resume) starts over: the same probes and answer, not the first run's
// SLOs and probes counted twice. The default scenario's 20 requests all
// complete on 1 worker and on 2, so "requests_completed == 20" holds at
// both ends of [1, 2]: To passes, the answer is 2, after two probes.
func TestSearchTwice(t *testing.T) {
	s := &Search{Sets: []string{"workload.synthetic.requests=20"}, Key: "cluster.workers", From: 1, To: 2,
		SLOs: []string{"requests_completed == 20"}, Replicates: 1, Quorum: 1, Dir: Dir{Path: filepath.Join(t.TempDir(), "s"), Jobs: 1}}
	for i := range 2 {
		res, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer == nil || *res.Answer != 2 || len(res.Probes) != 2 || len(s.slos) != 1 {
			t.Errorf("run %d: answer %v, %d probes, %d SLOs; want 2, 2, 1", i+1, res.Answer, len(res.Probes), len(s.slos))
		}
		s.Dir.Resume = true
	}
}

// TestRangeValues: a range's values, up to the largest integer: a search
// of --range 9223372036854775806:9223372036854775807 once looped for ever
// (v <= To holds for every int64), growing its list until memory ran out.
func TestRangeValues(t *testing.T) {
	if got := rangeValues(math.MaxInt64-1, math.MaxInt64); !slices.Equal(got, []string{"9223372036854775806", "9223372036854775807"}) {
		t.Errorf("to MaxInt64: %q", got)
	}
	if got := rangeValues(-1, 1); !slices.Equal(got, []string{"-1", "0", "1"}) {
		t.Errorf("-1 to 1: %q", got)
	}
}
