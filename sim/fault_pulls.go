package sim

import (
	"fmt"

	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/report"
	"github.com/kvsim/kvsim/scenarios"
)

// pullErrors starts (on) or ends the pull_errors fault of scenario event
// key: KVCR draws for every write posted in its window (docs/faults.md,
// "pull_errors").
func (c *Cluster) pullErrors(key int, on bool) {
	if c.kv == nil {
		return // validation requires KVCR; nothing to act on without it
	}
	if !on {
		c.kv.EndPullErrors(key)
		return
	}
	f := c.sc.Events[key].PullErrors
	c.kv.StartPullErrors(kvcr.PullErrors{Key: key, End: des.Time(c.sc.Events[key].End()), Rate: f.Rate,
		AtStart: f.When == scenarios.ErrorAtStart, RNG: des.NewRNG(c.sc.Seed).Stream(c.pullErrorsStream(key))})
}

// pullErrorsStream is the name of the stream pull_errors event key draws
// from, in the family "faults": faults/pull_errors/<at ns>/<for ns>/<when>/<rate>,
// then /<n> when n earlier events have all of these too. It depends on
// the event's keys, not on its index, so the twin of another event (the
// run without it, whose events are numbered anew) draws the same numbers
// for it. Events alike in every key draw from streams told apart by
// their order among themselves.
func (c *Cluster) pullErrorsStream(key int) string {
	name := func(ev *scenarios.Event) string {
		return fmt.Sprintf("faults/pull_errors/%d/%d/%s/%g", int64(ev.At), int64(ev.For), ev.PullErrors.When, ev.PullErrors.Rate)
	}
	own := name(&c.sc.Events[key])
	n := 0
	for i := range key {
		if ev := &c.sc.Events[i]; ev.PullErrors != nil && name(ev) == own {
			n++
		}
	}
	if n > 0 {
		own += fmt.Sprintf("/%d", n)
	}
	return own
}

// noticesFault starts (on) or ends the notices fault of scenario event key
// on the targets ids (every worker when the event names none): KVCR
// delays or loses the completion notice of every write into them whose
// last byte lands in the window (docs/faults.md, "notices").
func (c *Cluster) noticesFault(key int, ids []int32, on bool) {
	if c.kv == nil {
		return // validation requires KVCR; nothing to act on without it
	}
	if !on {
		c.kv.EndNotices(key)
		return
	}
	ev := &c.sc.Events[key]
	c.kv.StartNotices(kvcr.Notices{Key: key, End: des.Time(ev.End()), Targets: ids, All: ev.Notices.Workers == nil,
		Delay: des.Time(ev.Notices.Delay), Lost: ev.Notices.Lost})
}

// faultedPull credits finished pull p to the fault event that acted on it,
// if any: a pull it failed, or a notice it delayed or lost, with the
// blocks of a move it lost.
func (c *Cluster) faultedPull(p *kvcr.Pull) {
	if key, lost, ok := p.Fault(); ok {
		c.events.Faulted(key, report.EventFault{Pulls: 1, BlocksLost: int64(lost)})
	}
}
