package page

import (
	"fmt"
	"html/template"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/results"
	"github.com/kvsim/kvsim/scenarios"
)

// trusted marks an SVG from report/chart as HTML to inline: gonum's SVG
// canvas escapes every text it draws, so the user's names in a chart
// (keys, values, titles) arrive as text.
func trusted(svg []byte) template.HTML { return template.HTML(svg) } //nolint:gosec // escaped by vgsvg

// scenarioWords is a scenario in sentences: the workload, the cluster,
// the router and KVCR, then each event.
func scenarioWords(sc *scenarios.Scenario) []string {
	var load string
	switch w := sc.Workload; {
	case w.Trace != nil:
		t := w.Trace
		load = fmt.Sprintf("replays the %s trace %s", t.Format, filepath.Base(t.Path))
		if t.TimeScale != 1 && t.TimeScale != 0 {
			load += fmt.Sprintf(" with its arrival times scaled by %s", plain(t.TimeScale))
		}
		if t.Limit > 0 {
			load += fmt.Sprintf(", its first %d requests", t.Limit)
		}
	case w.Synthetic != nil:
		g := w.Synthetic
		load = fmt.Sprintf("replays %d synthetic requests arriving at %s a second (%s), %d turns each", g.Requests,
			plain(g.Rate), g.Arrival, max(g.Turns, 1))
	}
	if env := sc.Workload.Envelope; len(env) > 0 {
		segs := make([]string, len(env))
		for i, s := range env {
			segs[i] = fmt.Sprintf("%s× for %v", plain(s.Rate), time.Duration(s.For))
		}
		load += fmt.Sprintf(", its arrival rate multiplied by the envelope %s (the last rate holding after)", strings.Join(segs, ", "))
	}
	c := sc.Cluster
	hw := string(c.Engine.Timing.Model) + " timing"
	if t := c.Engine.Timing; t.GPU != "" || t.ModelPreset != "" {
		hw = fmt.Sprintf("%s on %s, %s timing", t.ModelPreset, t.GPU, t.Model)
	}
	kvcr := "KVCR off: no worker pulls from another's G2"
	if sc.KVCR.Enabled {
		kvcr = fmt.Sprintf("KVCR on: a worker pulls KV blocks from a peer's G2 over RDMA at %s GB/s with %v latency",
			plain(sc.KVCR.BandwidthGbps), time.Duration(sc.KVCR.Latency))
		if sc.Router.Hints.Enabled {
			kvcr += fmt.Sprintf(", the router hinting %s pulls", sc.Router.Hints.Mode)
		} else {
			kvcr += ", the router hinting none"
		}
	}
	lines := []string{fmt.Sprintf("Scenario %s (seed %d) %s on %s (%s) behind a %s router; %s.",
		sc.Name, sc.Seed, load, results.Count(c.Workers, "worker", "workers"), hw, sc.Router.Policy, kvcr)}
	drawn, n := map[string]int{}, 0 // the faults chaos drew, by kind and in all
	for i, ev := range sc.Events {
		if ev.Origin == scenarios.OriginChaos {
			drawn[ev.Kind()]++
			n++
			continue
		}
		lines = append(lines, fmt.Sprintf("Event %d: %s.", i, eventWords(ev)))
	}
	if ch := sc.Chaos; ch != nil || n > 0 {
		kinds := results.KindsText(drawn)
		s := fmt.Sprintf("Chaos: %s drawn from the seeded stream faults (%s), listed in events.parquet with origin chaos, sharing one twin: the run without them",
			results.Count(n, "fault", "faults"), kinds)
		if ch != nil {
			s = fmt.Sprintf("Chaos: %s drawn from the seeded stream faults in [%v, %v), settled %v after (%s), listed in events.parquet with origin chaos, sharing one twin: the run without them",
				results.Count(n, "fault", "faults"), time.Duration(ch.From), time.Duration(ch.To), time.Duration(ch.Settle), kinds)
		}
		lines = append(lines, s+".")
	}
	if p := sc.Planner; p != nil {
		lines = append(lines, plannerWords(sc)+".")
	}
	return lines
}

// plannerWords is the scenario's planner in words: its policy and what it
// reads, its bounds, how it scales in and out, and the SLO.
func plannerWords(sc *scenarios.Scenario) string {
	p := sc.Planner
	slo := "no SLO (goodput not measured)"
	if p.SLO != nil {
		slo = fmt.Sprintf("goodput measured against TTFT <= %v and mean ITL <= %v", time.Duration(p.SLO.TTFT), time.Duration(p.SLO.ITL))
	}
	if !sc.HasPlanner() {
		return "No planner: the fleet is fixed; " + slo
	}
	var rule string
	switch p.Policy {
	case scenarios.PlannerLoad:
		l := p.Load
		rule = fmt.Sprintf("adds %d when the waiting requests a ready worker pass %g or G1 usage %g, drains %d when both are below %g and %g",
			p.Step, l.QueueUp, l.KVUp, p.Step, l.QueueDown, l.KVDown)
	case scenarios.PlannerThroughput:
		rule = fmt.Sprintf("wants the last interval's arrival rate over %g requests a second a worker, %d at most a step",
			p.Throughput.RequestsPerWorkerS, p.Step)
	case scenarios.PlannerTarget:
		t := p.Target
		hold := ""
		if !t.Hold {
			hold = ", deciding while its workers start (no hold)"
		}
		rule = fmt.Sprintf("holds %s at %g a ready worker within %g, scaling in only to the most it wanted over %v, %d at most a step%s",
			t.Metric, t.Value, t.Tolerance, time.Duration(t.ScaleDownWindow), p.Step, hold)
	}
	in := fmt.Sprintf("drains by %s", p.ScaleIn.Pick)
	if p.ScaleIn.DrainTimeout > 0 {
		in += fmt.Sprintf(" with a %v drain timeout", time.Duration(p.ScaleIn.DrainTimeout))
	}
	if e := p.ScaleIn.Evacuate; e != nil {
		in += fmt.Sprintf(", evacuating up to %d G2 blocks a worker", e.Blocks)
	}
	if w := p.Prewarm; w != nil {
		in += fmt.Sprintf("; an added worker prewarms up to %d blocks", w.Blocks)
	}
	return fmt.Sprintf("Planner %s every %v: it %s, between %d and %d workers; an added worker starts in %v; it %s; %s",
		p.Policy, time.Duration(p.Interval), rule, p.MinWorkers, p.MaxWorkers, time.Duration(p.Startup), in, slo)
}

// eventWords is a scenario event in words: "drain the 8 busiest ready
// workers at 5m24.15s, evacuating their G2 by move (up to 4096 blocks a
// worker)".
func eventWords(ev scenarios.Event) string {
	at := time.Duration(ev.At)
	switch {
	case ev.Drain != nil:
		s := fmt.Sprintf("drain %s at %v", selectionWords(ev.Drain), at)
		if ev.DrainTimeout > 0 {
			s += fmt.Sprintf(", removing any still busy after %v (their requests %s)", time.Duration(ev.DrainTimeout), removeWords(ev.OnRemove))
		} else {
			s += ", each removed once idle"
		}
		if b := ev.Evacuate; b != nil {
			mode := "copy"
			if b.Moves() {
				mode = "move"
			}
			s += fmt.Sprintf(", evacuating their G2 by %s (up to %d blocks a worker)", mode, b.Blocks)
		}
		return s
	case ev.Remove != nil:
		return fmt.Sprintf("remove %s at %v at once (their requests %s)", selectionWords(ev.Remove), at, removeWords(ev.OnRemove))
	case ev.Fault():
		return faultWords(ev)
	}
	s := fmt.Sprintf("add %s at %v, ready %v later", results.Count(ev.Add, "worker", "workers"), at, time.Duration(ev.Startup))
	if b := ev.Prewarm; b != nil {
		s += fmt.Sprintf(", prewarming their G2 from the ready workers' hottest chains (up to %d blocks a worker)", b.Blocks)
	}
	return s
}

// selectionWords names a drain's or a remove's workers: "workers 0, 3",
// "the 8 busiest ready workers".
func selectionWords(s *scenarios.Selection) string {
	if !s.Picked() {
		ids := make([]string, len(s.IDs))
		for i, id := range s.IDs {
			ids[i] = strconv.Itoa(id)
		}
		if len(ids) == 1 {
			return "worker " + ids[0]
		}
		return "workers " + strings.Join(ids, ", ")
	}
	// A pick is an adjective ("the 8 busiest ready workers") or, for the
	// cache-aware ones, a clause after the workers.
	var pick, holding string
	switch s.Pick {
	case scenarios.PickMostCached:
		pick = "most cached (G2)"
	case scenarios.PickRandom:
		pick = "randomly picked"
	case scenarios.PickHighestID:
		pick = "highest-id"
	case scenarios.PickLeastCached:
		holding = "holding the fewest blocks in G1 and G2, as the router sees them"
	case scenarios.PickFewestUnique:
		holding = "holding the fewest blocks no other worker holds, as the router sees them"
	default: // busiest, idlest: their own words
		pick = string(s.Pick)
	}
	if holding != "" {
		if s.Count == 1 {
			return "the ready worker " + holding
		}
		return fmt.Sprintf("the %d ready workers %s", s.Count, holding)
	}
	if s.Count == 1 {
		return fmt.Sprintf("the %s ready worker", pick)
	}
	return fmt.Sprintf("the %d %s ready workers", s.Count, pick)
}

// removeWords is what becomes of a removed worker's requests.
func removeWords(a scenarios.RemoveAction) string {
	switch a {
	case scenarios.RemoveFail:
		return "failed"
	case scenarios.RemoveMigrate:
		return "migrated with the tokens they produced"
	}
	return "routed again"
}

// faultWords is a fault in words: "take worker 3's KVCR link down both
// ways at 20m0s for 10s".
func faultWords(ev scenarios.Event) string {
	at := time.Duration(ev.At)
	span := "to the end of the run"
	if ev.For > 0 {
		span = "for " + time.Duration(ev.For).String()
	}
	on := "every worker"
	if sel := ev.Workers(); sel != nil {
		on = selectionWords(sel)
	}
	switch {
	case ev.Link != nil:
		what := "down"
		if ev.Link.Factor > 0 {
			what = "at " + plain(ev.Link.Factor) + " of its bandwidth"
		}
		return fmt.Sprintf("run the KVCR links (%s) of %s %s at %v %s, the router not told", ev.Link.Direction, on, what, at, span)
	case ev.Slow != nil:
		return fmt.Sprintf("slow %s down %sx (every pass starting in the window) at %v %s", on, plain(ev.Slow.Factor), at, span)
	case ev.PullErrors != nil:
		when := "at its last byte, the bytes spent"
		if ev.PullErrors.When == scenarios.ErrorAtStart {
			when = "before its first byte, nothing sent"
		}
		return fmt.Sprintf("fail each pull whose transfer starts at %v %s with probability %s, %s", at, span, plain(ev.PullErrors.Rate), when)
	case ev.Notices != nil:
		what := "lose"
		if !ev.Notices.Lost {
			what = "delay by " + time.Duration(ev.Notices.Delay).String()
		}
		return fmt.Sprintf("%s the completion notices of transfers into %s ending at %v %s", what, on, at, span)
	}
	g2 := "their G2 kept up and serving pulls"
	if ev.Down.G2 == scenarios.G2Lost {
		g2 = "their G2 lost with the process"
	}
	return fmt.Sprintf("take the engines of %s down at %v %s, %s (their requests %s), restarting ready %v later",
		on, at, span, g2, removeWords(ev.OnRemove), time.Duration(ev.Startup))
}
