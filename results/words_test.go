package results

import (
	"math"
	"testing"

	"github.com/kvsim/kvsim/report"
)

// TestRemovalLine: the line after a drain's or a remove's says when its
// workers were gone, the pulls refused from them and the requests taken
// off them; a 0 that nothing was attempted for says so.
func TestRemovalLine(t *testing.T) {
	for _, c := range []struct {
		name string
		row  report.EventRow
		want string
	}{
		{"a drain that took nothing off", report.EventRow{Kind: "drain", RemovedAfterNs: 4e9},
			"removed after 4s (none by a drain timeout); 0 pulls refused as draining (none attempted: the router hints no " +
				"draining source, and no request hinted before the drain was staged from one); no request taken off " +
				"(a drain takes them off only when its timeout removes a busy worker)"},
		{"a drain timed out busy", report.EventRow{Kind: "drain", RemovedAfterNs: 1e9, RemovedByTimeout: 1, PullsRejectedDraining: 2,
			RequestsRerouted: 14}, "removed after 1s (1 by timeout); 2 pulls refused as draining; 14 requests rerouted, 0 failed"},
		{"a drain timed out idle", report.EventRow{Kind: "drain", RemovedAfterNs: 1e9, RemovedByTimeout: 1, PullsRejectedDraining: 2},
			"removed after 1s (1 by timeout); 2 pulls refused as draining; 0 requests rerouted, 0 failed"},
		{"a remove of idle workers", report.EventRow{Kind: "remove", RemovedAfterNs: -1},
			"not all removed by the end; 0 pulls refused as removed (none attempted: the router hints no removed source, " +
				"and no request hinted before the removal was staged from one); no request taken off (none was on them)"},
		{"a remove of busy workers", report.EventRow{Kind: "remove", RequestsAtEvent: 3, RequestsFailed: 3, PullsRejectedRemoved: 5},
			"removed after 0s; 5 pulls refused as removed; 0 requests rerouted, 3 failed"},
	} {
		if got := removalLine(&c.row); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}

// TestSigned: a difference has its sign, and none when it rounds to zero.
func TestSigned(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{352.84, "ms", "+352.8 ms"}, {-3, "", "-3"}, {0, "", "0"}, {-0.04, "ms", "0.0 ms"}, {0.04, "ms", "0.0 ms"},
		{-0.05, "ms", "-0.1 ms"}, {math.NaN(), "ms", "n/a"}} {
		if got := Signed(c.v, c.unit); got != c.want {
			t.Errorf("Signed(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
