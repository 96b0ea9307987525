package sim

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kvsim/kvsim/des"
)

// MaxSampleRows is the most time-series rows (timeseries.parquet: one a
// present worker a report.sample_interval) a run may write. Measured on 2
// cores, a run writes about 2.5 million rows a second of wall time (the
// default scenario on 100,000 workers: 16.9 million rows, 6.8 s more than
// with two samples), 0.5 to 5.3 bytes a row on disk (zstd), and a reader
// that loads the table (Arrow, pandas, Polars) holds 40 bytes a row: 50
// million rows are about 20 s of writing, at most 270 MB of file and 2 GB
// to load, what a laptop holds. docs/cli.md ("Output") gives the reasoning.
const MaxSampleRows = 50_000_000

// MaxRunSampleRows is the most time-series rows a run writes before it is
// stopped as a runaway (Cluster.runaway): twice MaxSampleRows, the
// estimate's bound, so a run that passes its estimate by a tail of a few
// samples, as most do, is not stopped after its work is done.
const MaxRunSampleRows = 2 * MaxSampleRows

// traceHorizon is the longest span a trace is taken to have unread: a week,
// the longest of the public serving traces (Azure's 2024 week; Mooncake's
// and Azure's 2023 traces are an hour). CheckOutput reads a trace for its
// last arrival only when a week of it would pass MaxSampleRows, so a run
// of fewer workers reads nothing more.
const traceHorizon = 7 * 24 * 60 * des.Minute

// horizon is when a trace's traceHorizon of source time plays under the
// plan's envelope: traceHorizon itself without one, MaxTime past virtual
// time.
func (p *Plan) horizon() des.Time {
	if t, ok := p.Envelope.Real(traceHorizon); ok {
		return t
	}
	return des.MaxTime
}

// SampleRows estimates the rows of the run's time series: the most workers
// the run ever has (Workers; an added worker is counted from the start, a
// removed one to the end) times the samples, one at 0 and one every
// report.sample_interval up to span, the later of the workload's last
// arrival and the last scripted event. The run goes on past its last
// arrival while requests finish, so the rows it writes are about these or
// more. SampleRows does not read a trace: span is the caller's.
func (p *Plan) SampleRows(span des.Time) int64 {
	samples := int64(span/des.Time(p.Scenario.Report.SampleInterval)) + 1
	if w := int64(p.Workers); w > 0 && samples > math.MaxInt64/w {
		return math.MaxInt64
	}
	return int64(p.Workers) * samples
}

// eventSpan is the time of the scenario's last scripted event, 0 without
// events: the run samples its workers up to it at least.
func (p *Plan) eventSpan() des.Time {
	var last des.Time
	for _, ev := range p.Scenario.Events {
		last = max(last, des.Time(ev.At))
	}
	return last
}

// syntheticSpan estimates the last arrival of the plan's synthetic
// workload (workload.Synthetic): its sessions start over requests / rate
// seconds (each of turns requests, at rate / turns a second), and each
// later turn comes an exponential think time after the one before, so a
// session's last turn trails its start by the sum of turns - 1 of them, a
// Gamma(turns - 1, think_time) time; the latest of the sessions' trails is
// about that distribution's 1 - 1/sessions quantile (and at least its
// mean). The default scenario: 3,000 / 40 = 75 s, and 1,000 sessions
// trailing by Gamma(2, 10 s)'s 0.999 quantile, 92.3 s: 167.3 s, where the
// seed's last request arrives at 166 s. Under an envelope, the estimate
// is the simulated time at which that time of the generator's plays; ok is
// false when it would play past virtual time (the span is then MaxTime).
func (p *Plan) syntheticSpan() (span des.Time, ok bool) {
	s := p.Scenario.Workload.Synthetic
	ns := float64(s.Requests) / s.Rate * float64(des.Second)
	if think := float64(s.ThinkTime); s.Turns > 1 && think > 0 {
		sessions := float64((s.Requests + s.Turns - 1) / s.Turns)
		trail := distuv.Gamma{Alpha: float64(s.Turns - 1), Beta: 1 / think}
		ns += max(trail.Mean(), trail.Quantile(1-1/sessions))
	}
	t, ok := des.FromNanos(ns)
	if !ok {
		return des.MaxTime, true
	}
	if span, ok = p.Envelope.Real(t); !ok {
		return des.MaxTime, false
	}
	return span, true
}

// CheckOutput refuses a plan whose planner would decide more than
// MaxPlannerRows times (checkPlannerRows), or whose time series
// (SampleRows) would pass MaxSampleRows, naming the scenario key that adds
// the most workers (as CheckMemory does), the estimate and the way out: the
// report.sample_interval that fits, or fewer workers. For a trace it reads
// the trace (once a plan: ReadWorkload keeps what it found) only when a
// week of it would pass a bound; its error is then the trace's.
func (p *Plan) CheckOutput() error {
	span, until := p.eventSpan(), "the scenario's last event"
	if p.Scenario.Workload.Synthetic != nil {
		s, ok := p.syntheticSpan()
		if !ok {
			return p.Scenario.ErrAt("workload.envelope", "the workload's last arrival, as estimated, would arrive past the end of virtual time (about 292 years)")
		}
		if s >= span {
			span, until = s, "the workload's last arrival, as estimated"
		}
	} else if !p.pastBounds(span) && p.pastBounds(max(span, p.horizon())) {
		t, err := p.readTrace()
		if err != nil {
			return err
		}
		if t.last >= span {
			span, until = t.last, "the trace's last arrival"
		}
	}
	if err := p.checkPlannerRows(span, until); err != nil {
		return err
	}
	rows := p.SampleRows(span)
	if rows <= MaxSampleRows {
		return nil
	}
	_, key := p.Memory()
	return p.Scenario.ErrAt(key, "the run would write about %s time-series rows (%d workers, a row each every %v up to %v, %s), more than the %s a run may write; %s",
		millions(rows), p.Workers, des.Time(p.Scenario.Report.SampleInterval), span/des.Millisecond*des.Millisecond, until, millions(MaxSampleRows), fitInterval(span, p.Workers, MaxSampleRows))
}

// fitInterval says how a time series of workers' rows up to span fits in
// limit rows: the shortest report.sample_interval that does, or fewer
// workers.
func fitInterval(span des.Time, workers int, limit int64) string {
	if workers > 0 {
		if iv, ok := fitting(span, limit/int64(workers)); ok {
			return fmt.Sprintf("set report.sample_interval to %v or more, or run fewer workers", iv)
		}
	}
	return "run fewer workers"
}

// fitting is the shortest interval at which the instants 0, interval,
// 2 x interval, ... up to span are at most n (span / interval + 1 <= n),
// rounded up to a whole second (or millisecond, below a second); false
// when none is (n < 2, or too long for a time).
func fitting(span des.Time, n int64) (des.Time, bool) {
	if n < 2 {
		return 0, false
	}
	fit := ceilDiv(int64(span), n-1)
	unit := int64(des.Millisecond)
	if fit > int64(des.Second) {
		unit = int64(des.Second)
	}
	q := ceilDiv(fit, unit)
	return des.Time(q * unit), q <= math.MaxInt64/unit
}

// pastBounds reports whether a run sampled, and its planner deciding, up
// to span would pass MaxSampleRows or MaxPlannerRows.
func (p *Plan) pastBounds(span des.Time) bool {
	return p.SampleRows(span) > MaxSampleRows || p.plannerRows(span) > MaxPlannerRows
}

// plannerRows is the decisions of the plan's planner up to span, one every
// planner.interval; 0 without a planner.
func (p *Plan) plannerRows(span des.Time) int64 {
	if !p.Scenario.HasPlanner() {
		return 0
	}
	return int64(span / des.Time(p.Scenario.Planner.Interval))
}

// MaxPlannerRows is the most decisions a planner may be estimated to take
// (planner.parquet: a row each, held in memory until the run ends, about
// 300 bytes: 300 MB at the bound). A day of decisions every 100 ms is
// 864,000; the default intervals (5 s to 180 s) take far fewer.
const MaxPlannerRows = 1_000_000

// checkPlannerRows refuses a plan whose planner would decide more than
// MaxPlannerRows times: once every planner.interval up to span, the later
// of the workload's last arrival and the last scripted event (until says
// which), as CheckOutput estimates it; the run goes on deciding while its
// last requests finish, up to planner.tail more.
func (p *Plan) checkPlannerRows(span des.Time, until string) error {
	sc := p.Scenario
	if n := p.plannerRows(span); n > MaxPlannerRows {
		iv := des.Time(sc.Planner.Interval)
		way := "shorten the workload"
		if fit, ok := fitting(span, MaxPlannerRows+1); ok {
			way = fmt.Sprintf("set planner.interval to %v or more", fit)
		}
		return sc.ErrAt("planner.interval", "the planner would decide about %s times (every %v up to %v, %s), more than the %s decisions a run may keep (planner.parquet, a row each, held in memory until the run ends); %s",
			millions(n), iv, span/des.Millisecond*des.Millisecond, until, millions(MaxPlannerRows), way)
	}
	return nil
}

// ceilDiv is a / b rounded up, for a >= 0 and b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// millions is n in millions to one decimal: "96.0 million".
func millions(n int64) string {
	return fmt.Sprintf("%.1f million", float64(n)/1e6)
}
