package sim

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/results"
)

// reorder releases rows in id order: requests and pulls end out of order,
// the report and the digest read them in order. It holds only rows that
// end before an earlier one, in a ring indexed by id: slot (head+id-next)
// mod len(ring) holds id, for ids from next to next+len(ring)-1. Ids are
// dense (every id from 0 ends exactly once), so the ring spans the ids
// still open, and a row costs no allocation once it has grown to them.
type reorder[R any] struct {
	next int64
	head int
	ring []held[R]
	n    int // rows held
	out  R   // the row in order handed to the sink: a parameter's address would make every row a heap object
}

// held is a ring slot: a row, and whether one is there.
type held[R any] struct {
	row R
	ok  bool
}

// put holds row until every earlier id is out, then writes the run of rows
// it completes.
func (r *reorder[R]) put(id int64, row R, sink func(*R) error) error {
	if id != r.next {
		d := int(id - r.next)
		if d >= len(r.ring) {
			r.grow(d + 1)
		}
		r.ring[(r.head+d)%len(r.ring)] = held[R]{row: row, ok: true}
		r.n++
		return nil
	}
	r.out = row
	if err := sink(&r.out); err != nil {
		return err
	}
	r.next++
	if len(r.ring) == 0 {
		return nil
	}
	r.head = (r.head + 1) % len(r.ring) // the slot of id, never held
	for h := &r.ring[r.head]; h.ok; h = &r.ring[r.head] {
		if err := sink(&h.row); err != nil {
			return err
		}
		*h = held[R]{}
		r.n--
		r.next++
		r.head = (r.head + 1) % len(r.ring)
	}
	return nil
}

// grow makes the ring hold at least n ids from next on, keeping each held
// row at its id.
func (r *reorder[R]) grow(n int) {
	ring := make([]held[R], max(n, 2*len(r.ring), 64))
	for i := range r.ring {
		ring[i] = r.ring[(r.head+i)%len(r.ring)]
	}
	r.ring, r.head = ring, 0
}

func (r *reorder[R]) pending() int { return r.n }

type sampler Cluster

// Fire writes one time-series row a worker present now, and schedules the
// next sample while anything else is pending. A run whose rows would pass
// MaxRunSampleRows fails here instead (runaway), before it writes them.
func (s *sampler) Fire(now des.Time, _, _ uint64) {
	c := (*Cluster)(s)
	c.look()
	present := len(c.workers) - c.life.Count(lifecycle.Removed)
	if err := c.runaway(now, present); err != nil {
		if c.err == nil {
			c.err = err
		}
		return
	}
	c.sampleRows += int64(max(present, 1))
	if c.opt.Sink != nil {
		for _, n := range c.workers {
			if c.status(n) == lifecycle.Removed {
				continue
			}
			row := &c.sample // not a local: passed to the sink, a row a worker would be a heap object each
			*row = report.SampleRow{TimeNs: int64(now), Worker: n.id, Running: int32(n.w.Running()),
				Waiting: int32(n.w.Waiting()), G1Blocks: int64(n.w.G1Used())}
			if c.kv != nil {
				row.G2Blocks = int64(c.kv.Pool(n.id).Used())
				row.ActivePulls = int32(c.kv.ActivePulls(n.id))
			}
			if err := c.opt.Sink.Sample(row); err != nil && c.err == nil {
				c.err = err
			}
		}
	}
	if c.q.Len() > 0 {
		c.q.Schedule(des.AddSat(now, des.Time(c.sc.Report.SampleInterval)), des.PhaseSample, 0, s, 0)
	}
}

// RunawayError is a run stopped as a runaway (Cluster.runaway): Err is an
// input error at report.sample_interval, which it unwraps to.
type RunawayError struct{ Err error }

func (e *RunawayError) Error() string { return e.Err.Error() }

func (e *RunawayError) Unwrap() error { return e.Err }

// runaway is the error of a run whose time series would pass
// MaxRunSampleRows: the rows sampled so far, this sample's and those of
// every sample certain to come before the next pending event (the workers
// present change only at an event). A sample with no worker present counts
// as one row, so that a run of none cannot sample for ever either. A run
// is refused before it starts when its estimate, up to its last arrival,
// passes MaxSampleRows; this catches what the estimate cannot see: a
// duration of the scenario (a transfer's latency, a timeout, a slow
// model's pass) that keeps the run going long after that, or a trace
// longer than the estimate read. Without it such a run would sample for
// years of virtual time. The check costs a heap-top read a sample.
func (c *Cluster) runaway(now des.Time, present int) error {
	iv := des.Time(c.sc.Report.SampleInterval)
	next, _, _, ok := c.q.Next()
	end := now
	if ok && next > now {
		end = next
	}
	w := int64(max(present, 1))
	rows := c.sampleRows + w
	ahead := int64((end - now - 1) / iv) // the samples before the next event; -1/iv is 0
	if rows <= MaxRunSampleRows && ahead <= (MaxRunSampleRows-rows)/w {
		return nil
	}
	what := fmt.Sprintf("write more than %s time-series rows", millions(MaxRunSampleRows))
	if present == 0 {
		what = fmt.Sprintf("sample no worker for more than %s intervals", millions(MaxRunSampleRows))
	}
	why := "a duration of the scenario keeps it going long after its last arrival (a long kvcr.latency, timeout or drain_timeout, " +
		"a worker's startup (an add's or planner.startup), a fault's for or notices.delay, chaos.settle, a slow model)"
	if c.next != nil {
		why = "its requests go on arriving past what the check before the run estimated (it reads a trace ahead only when a week of it would pass the bound)"
	}
	return &RunawayError{c.sc.ErrAt("report.sample_interval", "the run would %s, twice what a run may be estimated at before it starts: "+
		"at %v (requests in flight %d, workers present %d, rows sampled %d) its next event is at %v; %s; to fit its rows up to then in %s, %s",
		what, now, len(c.active), present, c.sampleRows, end, why, millions(MaxSampleRows), fitInterval(end, int(w), MaxSampleRows))}
}

func (c *Cluster) workerRows() []report.WorkerRow {
	rows := make([]report.WorkerRow, len(c.workers))
	for i, n := range c.workers {
		rows[i] = report.WorkerRow{
			Worker: n.id, AddedNs: int64(n.addedNs), ReadyNs: int64(n.readyNs), DrainNs: int64(n.drainNs),
			RemovedNs: int64(n.removedNs), Passes: n.w.Passes(), BusyNs: int64(n.w.BusyTime()),
			RequestsCompleted: n.completed, Downs: int64(n.downs), DownNs: int64(n.downNs),
		}
		if n.downAt >= 0 { // down to the end of the run
			rows[i].DownNs += int64(c.q.Now() - n.downAt)
		}
		if c.kv != nil {
			rows[i].G2PeakBlocks = int64(c.kv.Pool(n.id).Peak())
		}
	}
	return rows
}

// counters are the run's counters: hints_attached and KVCR's, then the
// cluster's. KVCR's are zero when it is off.
func (c *Cluster) counters() results.Counters {
	out := c.counts
	if c.kv != nil {
		out.Counters = c.kv.C
	}
	for _, n := range c.workers {
		if n.drainNs >= 0 {
			out.WorkersDrained++
		}
		if n.removedNs >= 0 {
			out.WorkersRemoved++
		}
	}
	c.stats.CountRequests(&out)
	out.WorkersAdded = int64(len(c.workers) - c.sc.Cluster.Workers)
	out.Cost.HintsWithheld = c.router.Withheld()
	return out
}

// lifeTimes are each worker's add and removal times, by id; removal -1
// for one never removed.
func (c *Cluster) lifeTimes() (added, removed []des.Time) {
	added, removed = make([]des.Time, len(c.workers)), make([]des.Time, len(c.workers))
	for i, n := range c.workers {
		added[i], removed[i] = n.addedNs, n.removedNs
	}
	return added, removed
}

// unrouted counts the requests that found no ready worker to route them
// to, arriving or routed again, and when the first and the last did.
type unrouted struct {
	n           int64
	first, last des.Time
}

// add counts one at now.
func (u *unrouted) add(now des.Time) {
	if u.n == 0 {
		u.first = now
	}
	u.n++
	u.last = now
}

// endWarnings are the run's own warnings at its end: the picks that found
// too few ready workers, the requests that found none, and the block
// chains that met a hash collision.
func (c *Cluster) endWarnings() []string {
	out := c.warnings
	if u := c.unrouted; u.n > 0 {
		out = append(out, fmt.Sprintf("%s failed for want of a ready worker to route to, from %v to %v: every worker was starting, "+
			"draining, removed or down then (an event, a fault or the planner took the last one; look at events.parquet's and planner.parquet's rows)",
			results.Count(u.n, "request", "requests"), u.first, u.last))
	}
	out = append(out, c.plannerWarnings()...)
	if n := c.chains.Collisions(); n > 0 {
		out = append(out, fmt.Sprintf("%d block chains met a hash another chain has under a different prefix "+
			"(a 64-bit hash collision): each was kept apart, sharing no block from that point (docs/model.md, \"Hash collisions\")", n))
	}
	return out
}
