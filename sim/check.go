package sim

import (
	"errors"
	"fmt"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scheduler"
)

// InvariantError is a broken model invariant found by Options.Check: which
// one, when, and what broke (naming the worker, request or pull).
type InvariantError struct {
	Invariant string
	At        des.Time
	Err       error
}

func (e *InvariantError) Error() string {
	return fmt.Sprintf("invariant %q violated at %v: %v", e.Invariant, e.At, e.Err)
}

// The invariants the simulation checks besides KVCR's. docs/invariants.md
// states every invariant, with its test.
const (
	invG1Blocks      = "G1 block references balance"
	invG2Blocks      = "G2 pool accounting balances"
	invWorkersEmpty  = "workers end empty"
	invRequestsOnce  = "every request ends exactly once"
	invTimeMonotonic = "virtual time never goes back"
	invCausal        = "a request arrives, then emits its first token, then finishes"
	invRouterLoads   = "every router load returns to zero"
	invRouterView    = "the router's view of each block's holders equals the pools"
	invKVLedger      = "an event's KVCR work reconciles"
	invChaosSettles  = "the cluster settles after chaos"
	invPlannerMeter  = "the planner counts every change it reads"
	invCrossingsSeen = "an event that looks sees every crossing before it"
	invRescansQuiet  = "a stretch stands for no rescan that could change anything"
)

func (e *InvariantError) Unwrap() error { return e.Err }

// check verifies a worker's invariants after a pass starts or ends. A full
// O(G1 + G2) check runs every max(128, (G1 + G2 blocks) / 8) passes, keeping its
// amortised cost to a few operations a pass; the others get the
// O(running) check, and every worker gets a full one at the end.
func (c *Cluster) check(n *node) {
	if !c.opt.Check || c.err != nil {
		return
	}
	if err := n.w.CheckQuick(); err != nil {
		c.err = &InvariantError{Invariant: invG1Blocks, At: c.q.Now(), Err: err}
		return
	}
	blocks := n.w.G1Capacity()
	if c.kv != nil {
		blocks += c.kv.Pool(n.id).Capacity()
	}
	if n.w.Passes()%int64(max(128, blocks/8)) == 0 {
		if err := c.checkWorker(n); err != nil {
			c.err = err
		}
	}
}

// checkWorker is the full check of one worker's requests, G1 and G2.
func (c *Cluster) checkWorker(n *node) error {
	if err := n.w.Check(); err != nil {
		return &InvariantError{Invariant: invG1Blocks, At: c.q.Now(), Err: err}
	}
	if c.kv != nil {
		if err := c.kv.Pool(n.id).Check(); err != nil {
			return &InvariantError{Invariant: invG2Blocks, At: c.q.Now(), Err: fmt.Errorf("worker %d: %w", n.id, err)}
		}
	}
	return nil
}

// checkEnd verifies the run's end state: every worker empty with balanced
// blocks, every pin released, every pull ended, every link's bytes those of
// its completed transfers, every request ended once.
func (c *Cluster) checkEnd() error {
	var errs []error
	now := c.q.Now()
	for _, n := range c.workers {
		if c.status(n) == lifecycle.Removed {
			continue
		}
		if err := c.checkWorker(n); err != nil {
			errs = append(errs, err)
		}
		if n.w.G1Used() != 0 || n.w.HasWork() {
			errs = append(errs, &InvariantError{Invariant: invWorkersEmpty, At: now, Err: fmt.Errorf(
				"worker %d ends with %d G1 blocks in use and %d requests", n.id, n.w.G1Used(), n.w.Requests())})
		}
	}
	if c.kv != nil {
		for _, v := range c.kv.CheckEnd() {
			errs = append(errs, &InvariantError{Invariant: v.Invariant, At: now, Err: v.Err})
		}
	}
	if ended := c.stats.Ended(); ended != c.stats.Arrivals() {
		errs = append(errs, &InvariantError{Invariant: invRequestsOnce, At: now,
			Err: fmt.Errorf("%d requests arrived, %d ended", c.stats.Arrivals(), ended)})
	}
	if err := c.router.CheckLoads(); err != nil {
		errs = append(errs, &InvariantError{Invariant: invRouterLoads, At: now, Err: err})
	}
	if err := c.checkRouterView(); err != nil {
		errs = append(errs, &InvariantError{Invariant: invRouterView, At: now, Err: err})
	}
	return errors.Join(errs...)
}

// checkLedgers verifies each scenario event's KV ledger, its row's
// identities (results.CheckLedger), at the end of the run.
func (c *Cluster) checkLedgers(rows []report.EventRow) error {
	var errs []error
	for i := range rows {
		if err := results.CheckLedger(&rows[i]); err != nil {
			errs = append(errs, &InvariantError{Invariant: invKVLedger, At: c.q.Now(), Err: err})
		}
	}
	return errors.Join(errs...)
}

// checkRouterView compares the router's view with the pools: every block a
// live worker caches in G1, or holds visible in G2, is recorded for it in
// that tier, and the view records nothing else.
func (c *Cluster) checkRouterView() error {
	facts := 0
	var missing error
	for _, n := range c.workers {
		if c.status(n) == lifecycle.Removed {
			continue
		}
		look := func(t scheduler.Tier) func(block.Ref) {
			return func(b block.Ref) {
				facts++
				if missing == nil && !c.router.Holds(n.id, t, b) {
					missing = fmt.Errorf("worker %d holds block %x in %s; the router does not know", n.id, b.Hash, tierName[t])
				}
			}
		}
		n.w.Cached(look(scheduler.G1))
		if c.kv != nil {
			c.kv.Pool(n.id).Visible(look(scheduler.G2))
		}
	}
	if missing != nil {
		return missing
	}
	if got := c.router.Facts(); got != facts {
		return fmt.Errorf("the router records %d block holdings, the pools hold %d", got, facts)
	}
	return nil
}

var tierName = [...]string{scheduler.G1: "G1", scheduler.G2: "G2"}

// checkCausal verifies a request row's times: arrival, first scheduling,
// first token and finish in that order, where they happened.
func checkCausal(r *report.RequestRow) error {
	first, finish, sched := r.FirstTokenNs, r.FinishNs, r.ScheduledNs
	switch {
	case sched >= 0 && (sched < r.ArrivalNs || (first >= 0 && first < sched)):
		return fmt.Errorf("request %d: first scheduled at %d, not between its arrival (%d) and first token (%d)", r.RequestID, sched, r.ArrivalNs, first)
	case first >= 0 && sched < 0:
		return fmt.Errorf("request %d: first token at %d without being scheduled", r.RequestID, first)
	case first >= 0 && first < r.ArrivalNs:
		return fmt.Errorf("request %d: first token at %d before its arrival at %d", r.RequestID, first, r.ArrivalNs)
	case finish >= 0 && finish < max(first, r.ArrivalNs):
		return fmt.Errorf("request %d: finished at %d before its arrival (%d) or first token (%d)", r.RequestID, finish, r.ArrivalNs, first)
	case r.Outcome == report.OutcomeCompleted && (first < 0 || finish < 0):
		return fmt.Errorf("request %d: completed without a first token (%d) or finish (%d)", r.RequestID, first, finish)
	}
	return nil
}
