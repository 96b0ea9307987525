package results

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/report"
)

// TestCheckLedger: a row whose ledger balances passes; each identity
// broken by one block fails, naming its terms. The row: 12 G2 blocks held
// = 8 planned once (10 counted, 2 again) + 3 at the destination + 1 left to
// the budget; 10 planned = 7 landed - 1 past the plan + 2 short + 2
// rejected; 5 left = 12 at the event + 1 stored - 8 moved away.
func TestCheckLedger(t *testing.T) {
	balanced := report.EventRow{BlocksPlanned: 10, BlocksLanded: 7, G2BlocksAtEvent: 12, G2BlocksLeft: 5,
		Plan:    report.KVPlan{BlocksHeld: 12, PlannedAgain: 2, LeftAtDestination: 3, LeftBudget: 1},
		Ends:    report.KVEnds{LandedExtra: 1, LandedShort: 2, LostRejected: 2},
		Removal: report.KVRemoval{StoredAfter: 1, MovedAwayAfter: 8}}
	if err := CheckLedger(&balanced); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		breaks func(*report.EventRow)
		want   string
	}{
		{func(r *report.EventRow) { r.Plan.LeftBudget++ }, "12 G2 blocks held, but 8 planned once (10 - 2 counted again) + 5 left out = 13"},
		{func(r *report.EventRow) { r.Ends.LostExpired++ }, "10 blocks planned, but 7 landed - 1 past their plan + 2 short of it + 3 lost = 11"},
		{func(r *report.EventRow) { r.Removal.EvictedAfter++ },
			"5 G2 blocks left at removal, but 12 held at the event + 1 stored + 0 pulled in - 1 evicted - 8 moved away - 0 dropped - 0 lost = 4"},
	} {
		r := balanced
		c.breaks(&r)
		if err := CheckLedger(&r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	unremoved := balanced
	unremoved.G2BlocksLeft, unremoved.Removal = -1, report.KVRemoval{StoredAfter: -1, PulledInAfter: -1, EvictedAfter: -1,
		MovedAwayAfter: -1, DroppedAfter: -1, LostAfter: -1}
	if err := CheckLedger(&unremoved); err != nil {
		t.Errorf("a drain whose workers were not all removed: %v", err)
	}
}
