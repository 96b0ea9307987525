package sim

import (
	"errors"
	"fmt"

	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/sim/des"
)

// InvariantError is a broken model invariant found by Options.Check.
type InvariantError struct {
	At  des.Time
	Err error
}

func (e *InvariantError) Error() string {
	return fmt.Sprintf("invariant violated at %v: %v", e.At, e.Err)
}

func (e *InvariantError) Unwrap() error { return e.Err }

// check verifies a worker's invariants after a pass starts or ends. A full
// O(G1 + G2) check runs every max(128, blocks / 8) passes, keeping its
// amortised cost to a few operations a pass; the others get the
// O(running) check, and every worker gets a full one at the end.
func (c *Cluster) check(n *node) {
	if !c.opt.Check || c.err != nil {
		return
	}
	err := n.w.CheckQuick()
	if err == nil && n.w.Passes()%int64(max(128, n.w.G1Capacity()/8)) == 0 {
		err = c.checkWorker(n)
	}
	if err != nil {
		c.err = &InvariantError{At: c.q.Now(), Err: err}
	}
}

func (c *Cluster) checkWorker(n *node) error {
	err := n.w.Check()
	if c.kv != nil && err == nil {
		if e := c.kv.Pool(n.id).Check(); e != nil {
			err = fmt.Errorf("worker %d G2: %w", n.id, e)
		}
	}
	return err
}

// checkEnd verifies the run's end state: every worker empty with balanced
// blocks, every pin released, every pull ended, every link's bytes those of
// its completed transfers, every request ended once.
func (c *Cluster) checkEnd() error {
	var errs []error
	for _, n := range c.workers {
		if n.status == kvcr.Removed {
			continue
		}
		if err := c.checkWorker(n); err != nil {
			errs = append(errs, err)
		}
		if n.w.G1Used() != 0 || n.w.HasWork() {
			errs = append(errs, fmt.Errorf("worker %d ends with %d G1 blocks in use and %d requests",
				n.id, n.w.G1Used(), n.w.Requests()))
		}
	}
	if c.kv != nil {
		errs = append(errs, c.kv.CheckEnd())
	}
	if c.stats.ended != c.stats.arrivals {
		errs = append(errs, fmt.Errorf("%d requests arrived, %d ended", c.stats.arrivals, c.stats.ended))
	}
	return errors.Join(errs...)
}
