package scheduler

import (
	"math/rand/v2"

	"github.com/kvsim/kvsim/des"
)

// HintPolicy names how the router chooses a hint's source among the
// candidates: the value of the scenario key router.hints.policy.
type HintPolicy string

// The hint policies.
const (
	// HintsMinBlocks names the candidate of the longest run, ties to the
	// lowest id.
	HintsMinBlocks HintPolicy = "min_blocks"
	// HintsCost hints only when a candidate's pull is predicted to end
	// before recomputing its run on the target would, and draws among those
	// candidates by how much each saves.
	HintsCost HintPolicy = "cost"
)

// HintPolicies lists the hint policies, in the order errors name them.
var HintPolicies = []HintPolicy{HintsMinBlocks, HintsCost}

// Pass is a pass as the cost policy prices it: DecodeSeqs requests
// decoding one token each, attending to DecodeContext tokens before their
// new ones in all, and, when Prefill > 0, one request's Prefill new prompt
// tokens after the Prior tokens of its prefix.
type Pass struct {
	DecodeSeqs    int
	DecodeContext int64
	Prefill       int
	Prior         int
}

// PassTimer is the workers' timing model as the router asks it (sim builds
// it from the engine's).
type PassTimer func(Pass) des.Time

// HintCosts is what the cost policy prices a candidate with: the run's
// constants and the router's own load, never KVCR's live state.
type HintCosts struct {
	Latency    des.Time   // kvcr.latency: a pull's wait for its first byte
	EgressRate float64    // bytes per ns a source's egress serves pull bytes (> 0 with HintsCost)
	BlockBytes int64      // a block's KV bytes
	PassTime   PassTimer  // the targets' pass time (required with HintsCost)
	RNG        *rand.Rand // the "hints" stream: the draw among paying candidates (required with HintsCost)
}

// costSource returns the candidate of r.run (in worker id order) the cost
// policy names for a target w holding a prefix of t blocks of a prompt of
// prompt tokens, and false when no candidate pays. Staging pulls at most
// the blocks before the one holding the prompt's last token (the target
// always computes that token), fetch = fetchable(prompt) - t of them past
// the target's prefix: a candidate s with a run of n blocks offers m =
// min(n, fetch) of them (at least min_blocks, so at least 1: hint's
// candidates), and pays when
//
//	pull = latency + (backlog(s) + m x block bytes) / egress rate
//
// is below recompute, what not computing the m blocks' tokens saves the
// target's pass: the pass of w's decode batch with the request's prompt
// past its prefix of t blocks, less the pass with the prompt past t + m
// blocks (the tokens the request computes after the pull). With one
// paying candidate it is named; with more, one is drawn, with probability
// proportional to its saving (recompute - pull), by one uniform draw from
// the hints stream.
func (r *Router) costSource(w int32, t, fetch, prompt int) (Prefix, bool) {
	c := &r.cfg.HintCosts
	bs := r.cfg.BlockSize
	l := &r.loads[w]
	pass := func(prefix int) des.Time { // the request's pass past prefix blocks, in w's decode batch
		return c.PassTime(Pass{DecodeSeqs: l.decoding, DecodeContext: int64(l.decodeBlocks) * int64(bs),
			Prefill: prompt - prefix*bs, Prior: prefix * bs})
	}
	full := pass(t)
	r.savings = r.savings[:0]
	n, lastM, recompute := 0, 0, 0.0
	for _, o := range r.run {
		m := min(o.Either, fetch)
		if m != lastM { // candidates often offer the same run: price it once
			lastM, recompute = m, float64(full-pass(t+m))
		}
		pull := float64(c.Latency) + float64(r.loads[o.Worker].backlog+int64(m)*c.BlockBytes)/c.EgressRate
		if pull < recompute {
			r.run[n] = o
			r.savings = append(r.savings, recompute-pull)
			n++
		}
	}
	switch n {
	case 0:
		r.withheld++
		return Prefix{}, false
	case 1:
		return r.run[0], true
	}
	return r.run[drawSaving(r.savings, c.RNG.Float64())], true
}

// fetchable is how many leading blocks of a prompt of prompt tokens a pull
// can carry: those before the block holding its last token, which the
// target always computes (engine's reusable).
func fetchable(prompt, bs int) int { return (prompt - 1) / bs }

// drawSaving picks an index of savings (each > 0) with u, uniform in
// [0, 1): the first i with u x sum < savings[0] + ... + savings[i], so
// that i has probability savings[i] / sum; the last if rounding leaves u x
// sum at or above the total.
func drawSaving(savings []float64, u float64) int {
	sum := 0.0
	for _, s := range savings {
		sum += s
	}
	x := u * sum
	cum := 0.0
	for i, s := range savings {
		if cum += s; x < cum {
			return i
		}
	}
	return len(savings) - 1
}

// Withheld is the number of requests the cost policy routed without a
// hint although a candidate offered at least min_blocks blocks a pull
// could carry: no candidate's pull paid.
func (r *Router) Withheld() int64 { return r.withheld }
