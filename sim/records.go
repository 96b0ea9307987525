package sim

import (
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/report"
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
	if err := sink(&row); err != nil {
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
// next sample while anything else is pending.
func (s *sampler) Fire(now des.Time, _, _ uint64) {
	c := (*Cluster)(s)
	if c.opt.Sink != nil {
		for _, n := range c.workers {
			if c.status(n) == lifecycle.Removed {
				continue
			}
			row := report.SampleRow{TimeNs: int64(now), Worker: n.id, Running: int32(n.w.Running()),
				Waiting: int32(n.w.Waiting()), G1Blocks: int64(n.w.G1Used())}
			if c.kv != nil {
				row.G2Blocks = int64(c.kv.Pool(n.id).Used())
				row.ActivePulls = int32(c.kv.ActivePulls(n.id))
			}
			if err := c.opt.Sink.Sample(&row); err != nil && c.err == nil {
				c.err = err
			}
		}
	}
	if c.q.Len() > 0 {
		c.q.Schedule(des.AddSat(now, des.Time(c.sc.Report.SampleInterval)), des.PhaseSample, 0, s, 0)
	}
}

// PullColumns is pulls.parquet's schema with the model's names as its
// dictionaries: KVCR's modes, the outcomes a finished pull can have and
// the kinds, in KVCR's order. A Sink that writes pulls.parquet takes it.
var PullColumns = report.PullColumns(names(kvcr.Modes, func(m kvcr.Mode) string { return string(m) }),
	names(kvcr.Outcomes, kvcr.Outcome.String), names(kvcr.Kinds, kvcr.Kind.String))

// names is the name of each of vs.
func names[T any](vs []T, name func(T) string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = name(v)
	}
	return out
}

// pullRow is a finished pull's pulls.parquet row.
func pullRow(p *kvcr.Pull) report.PullRow {
	return report.PullRow{
		PullID: p.ID, RequestID: p.Req, Source: p.Source, Target: p.Target, Mode: string(p.Mode()),
		BlocksRequested: int64(p.Requested), BlocksLanded: int64(p.Landed), Bytes: p.Bytes,
		StagedNs: int64(p.StagedNs), FirstByteNs: int64(p.FirstByteNs), EndNs: int64(p.EndNs),
		Outcome: p.Outcome.String(), WriteEndNs: int64(p.WriteEndNs), Kind: p.Kind.String(),
	}
}

func (c *Cluster) workerRows() []report.WorkerRow {
	rows := make([]report.WorkerRow, len(c.workers))
	for i, n := range c.workers {
		rows[i] = report.WorkerRow{
			Worker: n.id, AddedNs: int64(n.addedNs), ReadyNs: int64(n.readyNs), DrainNs: int64(n.drainNs),
			RemovedNs: int64(n.removedNs), Passes: n.w.Passes(), BusyNs: int64(n.w.BusyTime()),
			RequestsCompleted: n.completed,
		}
		if c.kv != nil {
			rows[i].G2PeakBlocks = int64(c.kv.Pool(n.id).Peak())
		}
	}
	return rows
}

// counters are the run's counters: hints_attached and KVCR's, then the
// cluster's. KVCR's are zero when it is off.
func (c *Cluster) counters() Counters {
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
	s := &c.stats.s
	out.RequestsTotal = s.Requests.Total
	out.RequestsCompleted = s.Requests.Completed
	out.RequestsRejected = s.Requests.Rejected
	out.RequestsFailed = s.Requests.Failed
	out.RequestsUnfinished = s.Requests.Unfinished
	out.Preemptions = s.Preempted
	out.WorkersAdded = int64(len(c.workers) - c.sc.Cluster.Workers)
	out.Cost.HintsWithheld = c.router.Withheld()
	return out
}
