package sim

import (
	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// The down fault and request migration (DESIGN.md section 12,
// docs/faults.md "down" and "Request migration").
//
// At the window's start each named worker's engine goes down: its
// requests leave it (engine.Worker.Drop: its G1 with them, reported
// removed) and are handled as the event's on_remove says (requeue), a pass
// in progress is abandoned (its end, scheduled with the worker's count of
// downs before this one, is stale), and KVCR ends the pulls it is the target of and its
// loads and stores (kvcr.EngineDown). With g2: kept its KVCR agent stays
// up: status down, not routed to, a hint and pull source. With g2: lost
// its G2 is gone too and the pulls it serves fail as a removed source's.
// At the window's end the engine restarts with an empty G1: ready at once
// (startup 0), or restarting (g2: kept) or starting (g2: lost, or no
// KVCR), ready after startup.
//
// Rules this file decides:
//   - a down of a removed worker, or of one already down, does nothing; the
//     worker restarts when the fault that took it down ends;
//   - a draining worker that goes down loses its engine as any other but
//     stays draining: it never restarts, and is removed as soon as no pull
//     holds it (at once when none does);
//   - a down worker that is drained stays down in all but name: it becomes
//     draining (no longer a source of request pulls) and is removed when no
//     pull holds it; a remove takes it out at once;
//   - workers.parquet counts its downs and its time down (down_ns, up to
//     its removal or the run's end).

// downFault starts (on) or ends the down fault of scenario event key on workers ids.
func (c *Cluster) downFault(now des.Time, key int, ids []int32, on bool) {
	ev := &c.sc.Events[key]
	if !on {
		for _, id := range ids {
			if n := c.workers[id]; c.status(n) == lifecycle.Down && n.downBy == key {
				c.restart(now, key, n, ev.Startup)
			}
		}
		return
	}
	lost := ev.Down.G2 == scenarios.G2Lost
	var f report.EventFault
	var seqs []*engine.Seq // every worker goes down before any request is routed again
	for _, id := range ids {
		n := c.workers[id]
		st := c.status(n)
		if st == lifecycle.Removed || st == lifecycle.Down {
			continue
		}
		c.settle(n)
		if st != lifecycle.Draining { // a draining one stays draining
			c.life.Set(n.id, lifecycle.Down)
			n.downBy = key
		}
		n.downs++ // and the pass in progress ends with the engine
		n.downAt = now
		n.drive = false
		n.stored = n.stored[:0]
		seqs = append(seqs, n.w.Drop(now)...)
		n.w.Restart() // an empty G1, for when it restarts
		c.meter(n)
		if c.kv != nil {
			pulls, blocks := c.kv.EngineDown(now, n.id, lost)
			c.applyKV()
			f.Pulls += int64(pulls)
			f.BlocksLost += int64(blocks)
		}
	}
	q := c.requeue(now, seqs, ev.OnRemove)
	c.events.TookOff(key, q.rerouted, q.failed)
	f.Migrated = q.migrated
	c.events.Faulted(key, f)
	for _, id := range ids { // the draining ones: the others are down or removed
		c.maybeRetire(now, c.workers[id])
	}
}

// restart ends a worker's down: its engine, empty, is ready at once or
// after startup; its KVCR agent serves again. While the engine starts,
// a worker whose G2 was kept is restarting (its G2 a pull source, as while
// down); one whose whole process died is starting, as an added worker.
func (c *Cluster) restart(now des.Time, key int, n *node, startup scenarios.Duration) {
	n.up(now)
	if c.kv != nil {
		c.kv.EngineUp(n.id)
	}
	if startup == 0 {
		c.ready(now, n)
		return
	}
	st := lifecycle.Restarting // its KVCR agent was up all along: its G2 serves pulls while the engine starts
	if c.kv == nil || c.sc.Events[key].Down.G2 == scenarios.G2Lost {
		st = lifecycle.Starting // its whole process restarts, empty
	}
	c.life.Set(n.id, st)
	c.meter(n)
	n.readyDue = des.AddSat(now, des.Time(startup))
	c.q.Schedule(n.readyDue, des.PhaseLifecycle, uint64(key), (*lifeEvent)(c), lifeArg{kind: lifeReady, worker: n.id}.pack())
}

// up closes a down worker's time down (restarted or removed).
func (n *node) up(now des.Time) {
	if n.downAt >= 0 {
		n.downNs += now - n.downAt
		n.downAt = -1
	}
}

// requeued counts the requests requeue took: routed again (migrated ones
// included), or failed; and the migrations.
type requeued struct{ rerouted, failed, migrated int64 }

// requeue routes the requests that lost their worker again, in order, or
// fails them (also when no worker is left to route one to), as action
// (the event's on_remove) says. With migrate, a request that had produced
// tokens is routed again with them added to its prompt (carry), at most
// cluster.migration_limit times; past the limit it fails. One that had
// produced none is routed again as with reroute.
//
// r.seq stays the attempt taken off (s) until the request is routed
// again (route makes it an earlier attempt then): a request that ends
// here, whichever way, has that attempt's row, as a completed request has
// its last attempt's: its scheduling, first token and hit columns (with
// the first token its user saw, and its scheduling, when an earlier
// attempt gave it), every attempt's computed prompt and preemptions.
func (c *Cluster) requeue(now des.Time, seqs []*engine.Seq, action scenarios.RemoveAction) requeued {
	var q requeued
	for _, s := range seqs {
		r := c.active[s.Req.ID]
		c.router.Finished(r.route, s.FirstTokenAt >= 0)
		produced := s.Generated()
		migrate := action == scenarios.RemoveMigrate && produced > 0
		if migrate && r.firstTokenAt < 0 { // the first token its user saw
			r.firstSched, r.firstTokenAt = s.ScheduledAt, s.FirstTokenAt
		}
		if action == scenarios.RemoveFail {
			c.end(r, report.OutcomeFailed, now)
			q.failed++
			continue
		}
		if migrate {
			if int(r.migrations) >= c.sc.Cluster.MigrationLimit {
				c.counts.Migration.MigrationsExhausted++
				c.end(r, report.OutcomeFailed, now)
				q.failed++
				continue
			}
			c.carry(r, produced)
			if !c.workers[0].w.Fits(r.req) {
				// Without chunked prefill its grown prompt is more than
				// a pass takes: the engine refuses it, and it fails,
				// its migration counted (docs/faults.md: attempted).
				c.migrated(r, &q)
				c.end(r, report.OutcomeFailed, now)
				q.failed++
				continue
			}
		}
		w, ok := c.route(now, r)
		if !ok { // no worker ready: it failed where it was, and did not move
			q.failed++
			continue
		}
		// It moved: its row and the counters count the move once it is made.
		r.reroutes++
		c.counts.RequestsRerouted++
		q.rerouted++
		if migrate {
			c.migrated(r, &q)
		}
		c.wake(w, now, false)
	}
	return q
}

// migrated counts r's migration, in its row, the run's counters and q.
func (c *Cluster) migrated(r *request, q *requeued) {
	r.migrations++
	c.counts.Migration.RequestsMigrated++
	q.migrated++
}

// ownBlocksKey keys the content of the blocks a migration carries: a
// request's produced tokens, which no other request shares.
const ownBlocksKey = 0x3c6ef372fe94f82b

// carry makes r's next attempt: its prompt is its current prompt and the
// produced tokens, its output what is left. The produced tokens' full
// blocks extend its chain as its own blocks: block k of the chain past
// its prompt's full blocks gets the content Mix(id ^ ownBlocksKey) and the
// sub k, so a second migration extends the first's blocks with the same
// hashes, and no other request holds them.
func (c *Cluster) carry(r *request, produced int) {
	cur := r.req
	if r.orig == nil {
		r.orig = cur
	}
	next := *cur
	next.InputTokens += produced
	next.OutputTokens -= produced
	n := next.InputTokens / c.plan.Engine.BlockSize
	chain := cur.Blocks.Prefix(n)
	chain.AppendRule(block.Mix(uint64(next.ID)^ownBlocksKey), 0, 1, n-chain.Len())
	next.Blocks = chain
	c.chains.Release(cur.Path)
	cur.Path = nil
	next.Path = c.chains.Intern(next.Blocks, nil)
	r.req = &next
}
