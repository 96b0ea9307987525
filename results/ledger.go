package results

import (
	"fmt"

	"github.com/kvsim/kvsim/report"
)

// CheckLedger verifies an event row's KV ledger, the three identities
// docs/outputs.md states: the G2 blocks its orders' sources held = the
// blocks planned, each once, + those left out; the blocks planned =
// landed - landed past their plan + planned but not landed by the orders
// that landed + lost by the orders that landed nothing; and, for a drain
// whose workers were all removed, the blocks left then = those held at the
// event + what came in - what went out. It names the first that fails,
// with its terms.
func CheckLedger(r *report.EventRow) error {
	p, e, m := &r.Plan, &r.Ends, &r.Removal
	if once := r.BlocksPlanned - p.PlannedAgain; p.BlocksHeld != once+p.LeftOut() {
		return fmt.Errorf("event %d: %d G2 blocks held, but %d planned once (%d - %d counted again) + %d left out = %d",
			r.Event, p.BlocksHeld, once, r.BlocksPlanned, p.PlannedAgain, p.LeftOut(), once+p.LeftOut())
	}
	if ended := r.BlocksLanded - e.LandedExtra + e.LandedShort + e.Lost(); r.BlocksPlanned != ended {
		return fmt.Errorf("event %d: %d blocks planned, but %d landed - %d past their plan + %d short of it + %d lost = %d",
			r.Event, r.BlocksPlanned, r.BlocksLanded, e.LandedExtra, e.LandedShort, e.Lost(), ended)
	}
	if r.G2BlocksLeft >= 0 && r.G2BlocksLeft != r.G2BlocksAtEvent+m.Net() {
		return fmt.Errorf("event %d: %d G2 blocks left at removal, but %d held at the event + %d stored + %d pulled in "+
			"- %d evicted - %d moved away - %d dropped - %d lost = %d", r.Event, r.G2BlocksLeft, r.G2BlocksAtEvent, m.StoredAfter,
			m.PulledInAfter, m.EvictedAfter, m.MovedAwayAfter, m.DroppedAfter, m.LostAfter, r.G2BlocksAtEvent+m.Net())
	}
	return nil
}
