package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kvsim/kvsim/block"
	"github.com/kvsim/kvsim/des"
	"github.com/kvsim/kvsim/lifecycle"
	"github.com/kvsim/kvsim/workload"
)

// Policy names a routing policy: the value of the scenario key
// router.policy.
type Policy string

// The routing policies.
const (
	RoundRobin  Policy = "round_robin"
	Random      Policy = "random"
	LeastLoaded Policy = "least_loaded"
	KVAware     Policy = "kv_aware"
)

// Policies lists the policies, in the order errors name them.
var Policies = []Policy{RoundRobin, Random, LeastLoaded, KVAware}

// Config holds the router's knobs.
type Config struct {
	Policy           Policy
	OverlapCredit    float64  // credit per G1 block already cached on a worker
	HostHitWeight    float64  // credit per G2 block (host pool) on a worker
	PrefillLoadScale float64  // weight of prefill blocks against decode blocks
	EventDelay       des.Time // KV events reach the router this much later
	BlockSize        int
	Hints            bool // attach kv.fetch hints
	HintMinBlocks    int  // a hint must fetch at least this many blocks (below 1: 1)
	// HintPolicy chooses among the candidate sources; "" is
	// HintsMinBlocks. HintCosts are what HintsCost prices them with.
	HintPolicy HintPolicy
	HintCosts  HintCosts
	// Temperature is kv_aware's: 0 picks the lowest cost, ties to the
	// lowest id; above 0 the worker is drawn from a softmax over the costs
	// (softmax), from the router's stream.
	Temperature float64
	// Chains is the run's chain store: requests come with their paths in
	// it and KV events name blocks by segment, as runs (block.Run).
	Chains *block.Chains
	// Workers is the workers' lifecycle (sim owns it): the router routes to
	// the ready ones and names only them as hint sources. Required.
	Workers lifecycle.View
}

// load is the router's own account of what it sent a worker. It never reads
// a request's output length.
type load struct {
	outstanding   int // routed, not finished
	prefillBlocks int // blocks the router expects the worker still to compute
	decodeBlocks  int // prompt blocks of requests past their first token
	decoding      int // requests past their first token, not finished
	// backlog is the bytes of the hints naming this worker as source whose
	// requests have not had their first token (nor ended): the pulls the
	// router expects still to queue on its egress.
	backlog int64
}

// Route is what the router remembers of a routed request.
type Route struct {
	Worker    int32
	G1Overlap int // leading blocks the worker held in G1 at routing time, as the router saw it
	// HostOverlap is how many blocks past the G1 overlap the worker's G1
	// and G2 together held: what a local G2 hit can add.
	HostOverlap int
	// HintSource is the worker named by the request's kv.fetch hint, -1
	// for none; HintBlocks the prefix the router saw there.
	HintSource int32
	HintBlocks int
	// HintBytes is the bytes the hint's pull can carry (the run past the
	// target's G1+G2 prefix, short of the block holding the prompt's last
	// token): what it adds to the source's backlog until the request's
	// first token.
	HintBytes     int64
	prefillBlocks int
	promptBlocks  int
}

type kvEvent struct {
	at     des.Time
	worker int32
	run    block.Run
	tier   Tier
	stored bool
}

// Router picks a worker for each request and keeps its view of the workers'
// inventories and load current.
type Router struct {
	cfg         Config
	rng         *rand.Rand
	index       *Index
	loads       []load  // by worker id
	schedulable []int32 // the ready workers' ids, sorted: an index of cfg.Workers kept by changed
	next        int32   // round robin: the id after the last worker it served; it takes the first schedulable id from there, wrapping
	pending     []kvEvent
	prefixes    []Prefix  // scratch: the request's prefixes on the workers holding its first block (kv_aware: those it scores)
	near        []int32   // scratch: the workers whose prefixes kv_aware needs, ascending
	skip        int       // picks left that walk every holder without trying nearPrefixes' bound
	backoff     int       // the picks the bound last waited after failing: 0 after a success, then 1, 2, 4, 8
	run         []Prefix  // scratch: the hint runs (Either)
	costs       []float64 // scratch: kv_aware's costs by schedulable worker at a positive temperature, then their softmax weights
	savings     []float64 // scratch: the cost policy's savings of the paying candidates
	withheld    int64     // requests the cost policy left without a hint (Withheld)
	// keyed says that tree holds every schedulable worker by its key:
	// outstanding requests (least_loaded) or uncredited cost (kv_aware, see
	// costKey). Otherwise (kv_aware with a prefill_load_scale whose products
	// could round, or loads too large for exact keys) the policy scans.
	keyed bool
	tree  minTree
}

// New returns a router with no workers. rng feeds the random policy and
// kv_aware at a positive temperature.
func New(cfg Config, rng *rand.Rand) (*Router, error) {
	if !slices.Contains(Policies, cfg.Policy) {
		return nil, fmt.Errorf("unknown router policy %q", cfg.Policy)
	}
	if cfg.HintPolicy == "" {
		cfg.HintPolicy = HintsMinBlocks
	}
	cfg.HintMinBlocks = max(cfg.HintMinBlocks, 1) // a hint that can fetch nothing is no hint
	if !slices.Contains(HintPolicies, cfg.HintPolicy) {
		return nil, fmt.Errorf("unknown hint policy %q", cfg.HintPolicy)
	}
	if c := cfg.HintCosts; cfg.Hints && cfg.HintPolicy == HintsCost && (c.PassTime == nil || c.RNG == nil || !(c.EgressRate > 0)) {
		return nil, fmt.Errorf("hint policy %s needs a pass timer, a random stream and a positive egress rate", HintsCost)
	}
	keyed := cfg.Policy == LeastLoaded || cfg.Policy == KVAware && exactScale(cfg.PrefillLoadScale)
	r := &Router{cfg: cfg, rng: rng, index: NewIndex(cfg.Chains), keyed: keyed}
	for w := range int32(cfg.Workers.Len()) {
		r.changed(w)
	}
	cfg.Workers.Watch(r.changed)
	return r, nil
}

// ready reports whether the router may use worker w.
func (r *Router) ready(w int32) bool { return r.cfg.Workers.Of(w) == lifecycle.Ready }

// source reports whether worker w may be named as a hint source: a ready
// worker, or one whose engine is down or restarting (DESIGN.md section
// 12: its KVCR agent may still serve its G2; with its G2 lost the router
// has seen every block of it removed, so it holds no run to name).
func (r *Router) source(w int32) bool {
	st := r.cfg.Workers.Of(w)
	return st == lifecycle.Ready || st == lifecycle.Down || st == lifecycle.Restarting
}

// changed follows a change of worker w in the lifecycle: a worker added,
// or its status set.
func (r *Router) changed(w int32) {
	for int(w) >= len(r.loads) {
		r.loads = append(r.loads, load{})
	}
	on := r.ready(w)
	r.rekey(w)
	i, found := slices.BinarySearch(r.schedulable, w)
	switch {
	case on && !found:
		r.schedulable = slices.Insert(r.schedulable, i, w)
	case !on && found:
		r.schedulable = slices.Delete(r.schedulable, i, i+1)
	}
}

// Stored is a batch of KV events: worker w's tier gained the blocks of
// runs.
func (r *Router) Stored(now des.Time, w int32, tier Tier, runs []block.Run) {
	r.events(now, w, tier, runs, true)
}

// Removed is a batch of KV events: worker w's tier lost the blocks of
// runs.
func (r *Router) Removed(now des.Time, w int32, tier Tier, runs []block.Run) {
	r.events(now, w, tier, runs, false)
}

// events applies a batch of KV events, or queues them for EventDelay, run
// by run. (The index is a set of facts, so a batch's order does not
// matter.) A queued run holds a reference on its segment until applied.
func (r *Router) events(now des.Time, w int32, tier Tier, runs []block.Run, stored bool) {
	for _, run := range runs {
		if r.cfg.EventDelay == 0 {
			r.apply(w, tier, run, stored)
			continue
		}
		r.cfg.Chains.Acquire(run.Seg)
		r.pending = append(r.pending, kvEvent{at: now, worker: w, tier: tier, run: run, stored: stored})
	}
}

func (r *Router) apply(w int32, tier Tier, run block.Run, stored bool) {
	if stored {
		r.index.Add(w, tier, run)
	} else {
		r.index.Remove(w, tier, run)
	}
}

// catchUp applies the delayed events that have reached the router by now:
// those sent at or before now - EventDelay (which no huge delay overflows).
func (r *Router) catchUp(now des.Time) {
	n := 0
	for n < len(r.pending) && r.pending[n].at <= now-r.cfg.EventDelay {
		n++
	}
	r.applyPending(n)
}

// applyPending applies the first n delayed events, in the order sent.
func (r *Router) applyPending(n int) {
	for _, e := range r.pending[:n] {
		r.apply(e.worker, e.tier, e.run, e.stored)
		r.cfg.Chains.Drop(e.run.Seg)
	}
	if n > 0 {
		r.pending = append(r.pending[:0], r.pending[n:]...)
	}
}

// Pick chooses a worker for req, attaches a hint when one applies, and
// accounts for the request. It reports false when no worker is
// schedulable.
func (r *Router) Pick(now des.Time, req *workload.Request) (Route, bool) {
	if len(r.schedulable) == 0 {
		return Route{}, false
	}
	r.catchUp(now)
	rt := Route{HintSource: -1, promptBlocks: (req.InputTokens + r.cfg.BlockSize - 1) / r.cfg.BlockSize}
	r.prefixes = r.prefixes[:0]
	switch r.cfg.Policy {
	case RoundRobin: // the next worker in id order: a worker id, not a position, so adds, drains, downs and restarts keep it
		i, _ := slices.BinarySearch(r.schedulable, r.next)
		if i == len(r.schedulable) {
			i = 0 // past the highest id: wrap
		}
		rt.Worker = r.schedulable[i]
		r.next = rt.Worker + 1
	case Random:
		rt.Worker = r.schedulable[r.rng.IntN(len(r.schedulable))]
	case LeastLoaded:
		rt.Worker, _ = r.tree.min()
	case KVAware:
		rt.Worker = r.kvAware(req.Path, rt.promptBlocks)
	}
	if r.cfg.Policy != KVAware && r.cfg.Hints { // the overlaps the hint starts from
		r.near = append(r.near[:0], rt.Worker)
		r.prefixes = r.index.PrefixesOf(req.Path, r.near, r.prefixes)
	}
	if i, ok := slices.BinarySearchFunc(r.prefixes, rt.Worker, func(p Prefix, w int32) int { return int(p.Worker - w) }); ok {
		rt.G1Overlap, rt.HostOverlap = r.prefixes[i].G1, r.prefixes[i].Either-r.prefixes[i].G1
	}
	if r.cfg.Hints {
		r.hint(&rt, req)
	}
	rt.prefillBlocks = max(0, rt.promptBlocks-rt.G1Overlap)
	l := &r.loads[rt.Worker]
	l.outstanding++
	l.prefillBlocks += rt.prefillBlocks
	r.rekey(rt.Worker)
	return rt, true
}

// hint names the source for rt's target. The target holds a prefix of T
// blocks in G1 and G2 together. Staging pulls at most the blocks before
// the one holding the prompt's last token (fetchable), so a worker whose
// visible G2 holds blocks T, T+1, ... in a run of n offers min(n,
// fetchable - T) of them; a candidate is a schedulable worker other than
// the target that offers at least HintMinBlocks: a hint must fetch that
// many. (Only the run must be in the candidate's G2: a prefix it keeps hot
// in G1 need not be in its G2 too.) HintsMinBlocks names the longest run,
// ties to the lowest id; HintsCost is costSource. The bytes the pull can
// carry (the blocks it offers) join the source's backlog.
func (r *Router) hint(rt *Route, req *workload.Request) {
	t := rt.G1Overlap + rt.HostOverlap
	fetch := fetchable(req.InputTokens, r.cfg.BlockSize) - t // the most a pull can carry
	if fetch < r.cfg.HintMinBlocks || t >= req.Blocks.Len() {
		return
	}
	r.run = r.index.runs(req.Path, t, InG2, 0, nil, r.run[:0])
	n := 0
	for _, o := range r.run {
		if o.Worker != rt.Worker && o.Either >= r.cfg.HintMinBlocks && r.source(o.Worker) { // (fetch >= HintMinBlocks: a run that long offers that many)
			r.run[n] = o
			n++
		}
	}
	r.run = r.run[:n]
	if n == 0 {
		return
	}
	var src Prefix
	if r.cfg.HintPolicy == HintsCost {
		var ok bool
		if src, ok = r.costSource(rt.Worker, t, fetch, req.InputTokens); !ok {
			return
		}
	} else {
		for _, o := range r.run {
			if o.Either > src.Either {
				src = o
			}
		}
	}
	rt.HintSource, rt.HintBlocks, rt.HintBytes = src.Worker, t+src.Either, int64(min(src.Either, fetch))*r.cfg.HintCosts.BlockBytes
	r.loads[src.Worker].backlog += rt.HintBytes
}

// kvAware picks the lowest cost = prefill_load_scale * max(0, pending
// prefill blocks + request blocks - credit) + active decode blocks, with
// credit = overlap_credit * G1 overlap + host_hit_weight * the blocks past
// it that G1 and G2 together hold; ties go to the lowest id.
//
// It scores every schedulable worker without credit, then the workers
// holding a prefix with theirs. Credit is never negative, so a worker's
// credited cost is at most its uncredited one, and the second scoring can
// only lower it: the winner is the same as scoring each worker once, and
// the loop over the whole cluster stays free of the prefix list.
//
// The uncredited winner comes from the tree when it is keyed: every key is
// that cost less the same prefill_load_scale * blocks, all exact, so the
// order is the scan's.
//
// With the tree, only the workers whose credit could beat the uncredited
// winner are walked for their prefixes (nearPrefixes), not every holder of
// the chain's first segment.
func (r *Router) kvAware(path []block.Piece, blocks int) int32 {
	if r.cfg.Temperature > 0 {
		r.prefixes = r.index.Prefixes(path, r.prefixes)
		return r.kvAwareSampled(blocks)
	}
	if r.keyed && blocks < exactLoad {
		best, key := r.tree.min()
		r.prefixes = r.nearPrefixes(path, best, key, blocks)
		return r.credited(best, r.cost(best, blocks, 0), blocks, nil)
	}
	r.prefixes = r.index.Prefixes(path, r.prefixes)
	return r.lowest(blocks, nil)
}

// nearPrefixes appends to r.prefixes the prefixes kvAware's second scoring
// needs, given the uncredited winner best (the lowest key, least): those of
// the schedulable workers that could cost less than best's cost with its
// own credit, c. Any worker's credited cost is at least its key +
// prefill_load_scale * (blocks - the most credit the chain can earn), so
// those whose key exceeds c - prefill_load_scale * (blocks - that credit)
// cost more than c (by a margin far past float64's rounding): they can
// neither win nor tie. Best itself is always among those kept. When they
// are more than an eighth of the holders of the chain's first segment,
// walking every holder costs less, and it does; the next 1, 2, 4 or 8
// picks (doubling while it keeps failing) then walk every holder without
// trying the bound (loads as even as an idle cluster's keep every worker
// near for long), so that trying it costs little where it fails. It is
// not tried for fewer than 16 holders.
func (r *Router) nearPrefixes(path []block.Piece, best int32, least float64, blocks int) []Prefix {
	holders := r.index.FirstHolders(path)
	if holders == 0 {
		return r.prefixes
	}
	if holders < 16 || r.skip > 0 || r.cfg.OverlapCredit < 0 || r.cfg.HostHitWeight < 0 { // (a negative credit adds cost: no bound)
		r.skip = max(0, r.skip-1)
		return r.index.Prefixes(path, r.prefixes)
	}
	c := r.cost(best, blocks, 0)
	r.near = append(r.near[:0], best)
	if own := r.index.PrefixesOf(path, r.near, r.prefixes); len(own) > len(r.prefixes) {
		c = r.cost(best, blocks, r.credit(own[len(own)-1]))
	}
	scale := r.cfg.PrefillLoadScale
	limit := c - scale*float64(blocks) + scale*max(r.cfg.OverlapCredit, r.cfg.HostHitWeight)*float64(r.index.Reach(path))
	limit += (max(limit, least) + c + 1) * 0x1p-30
	near, ok := r.tree.atMost(limit, holders/8, r.near[:0])
	r.near = near
	if !ok {
		r.backoff = min(max(1, 2*r.backoff), 8)
		r.skip = r.backoff
		return r.index.Prefixes(path, r.prefixes)
	}
	r.backoff = 0
	return r.index.PrefixesOf(path, near, r.prefixes)
}

// lowest is kvAware's choice by a scan of every schedulable worker (no
// tree), with extra[w] more prefill blocks on worker w (nil: none).
func (r *Router) lowest(blocks int, extra []int) int32 {
	best, bestCost := int32(-1), 0.0
	for _, w := range r.schedulable { // in id order
		if c := r.cost(w, blocks+extraOf(extra, w), 0); best < 0 || c < bestCost {
			best, bestCost = w, c
		}
	}
	return r.credited(best, bestCost, blocks, extra)
}

// credited is kvAware's second scoring: the uncredited winner best, of
// cost bestCost, against the ready workers holding a prefix, with their
// credit (and extra[w] more prefill blocks on worker w).
func (r *Router) credited(best int32, bestCost float64, blocks int, extra []int) int32 {
	for _, p := range r.prefixes {
		if !r.ready(p.Worker) {
			continue
		}
		if c := r.cost(p.Worker, blocks+extraOf(extra, p.Worker), r.credit(p)); c < bestCost || c == bestCost && p.Worker < best {
			best, bestCost = p.Worker, c
		}
	}
	return best
}

// extraOf is extra[w], 0 past its end.
func extraOf(extra []int, w int32) int {
	if int(w) < len(extra) {
		return extra[w]
	}
	return 0
}

// kvAwareSampled draws the worker at a positive temperature: every
// schedulable worker's cost with its credit, in id order, through softmax
// with one uniform draw from the router's stream.
func (r *Router) kvAwareSampled(blocks int) int32 {
	r.costs = r.costs[:0]
	j := 0 // r.prefixes is in worker id order, as r.schedulable
	for _, w := range r.schedulable {
		for j < len(r.prefixes) && r.prefixes[j].Worker < w {
			j++
		}
		credit := 0.0
		if j < len(r.prefixes) && r.prefixes[j].Worker == w {
			credit = r.credit(r.prefixes[j])
		}
		r.costs = append(r.costs, r.cost(w, blocks, credit))
	}
	return r.schedulable[softmax(r.costs, r.cfg.Temperature, r.rng.Float64())]
}

// softmax picks an index of costs with u, uniform in [0, 1), as Dynamo's
// router samples its workers' cost logits: when every cost is equal each
// has probability 1/n; else p_i is proportional to exp(-(c_i - c_min) /
// ((c_max - c_min) * t)), so the cheapest has weight 1 and the dearest
// exp(-1/t) whatever the costs' scale. A t so small that (c_max - c_min)
// * t underflows to 0 is the limit t -> 0: the cheapest have weight 1, the
// others 0. It returns the first i with p_i > 0 and u <= p_0 + ... + p_i,
// the last with p_i > 0 if rounding leaves u above the sum: a worker of
// weight 0 is never drawn. It overwrites costs with their weights.
func softmax(costs []float64, t, u float64) int {
	lo, hi := slices.Min(costs), slices.Max(costs)
	scale := float64((hi - lo) * t)
	sum := 0.0
	for i, c := range costs {
		w := 1.0 // every cost equal, or the cheapest at the limit t -> 0 (-(c - lo) / scale would be NaN)
		switch {
		case lo == hi, scale == 0 && c == lo:
		case scale == 0:
			w = 0
		default:
			w = math.Exp(-(c - lo) / scale)
		}
		costs[i] = w
		sum += w
	}
	cum, last := 0.0, 0
	for i, w := range costs {
		if w == 0 {
			continue // exp underflowed (t below about 1/745), or the limit t -> 0: never drawn
		}
		if cum += w / sum; u <= cum {
			return i
		}
		last = i
	}
	return last
}

// credit is a worker's kv_aware credit for holding prefix p of the
// request.
func (r *Router) credit(p Prefix) float64 {
	return float64(r.cfg.OverlapCredit*float64(p.G1)) + float64(r.cfg.HostHitWeight*float64(p.Either-p.G1))
}

// cost is worker w's kv_aware cost for a request of blocks with credit.
func (r *Router) cost(w int32, blocks int, credit float64) float64 {
	l := &r.loads[w]
	return float64(r.cfg.PrefillLoadScale*max(0, float64(l.prefillBlocks+blocks)-credit)) + float64(l.decodeBlocks)
}

// FirstToken moves a routed request's blocks from prefill to decode load
// and its hint's bytes out of its source's backlog.
func (r *Router) FirstToken(rt Route) {
	l := &r.loads[rt.Worker]
	l.prefillBlocks -= rt.prefillBlocks
	l.decodeBlocks += rt.promptBlocks
	l.decoding++
	r.unhint(rt)
	r.rekey(rt.Worker)
}

// unhint takes rt's hint's bytes out of its source's backlog.
func (r *Router) unhint(rt Route) {
	if rt.HintSource >= 0 {
		r.loads[rt.HintSource].backlog -= rt.HintBytes
	}
}

// Finished drops a request from its worker's load. firstToken says whether
// it got past its prompt (FirstToken was called).
func (r *Router) Finished(rt Route, firstToken bool) {
	l := &r.loads[rt.Worker]
	l.outstanding--
	if firstToken {
		l.decodeBlocks -= rt.promptBlocks
		l.decoding--
	} else {
		l.prefillBlocks -= rt.prefillBlocks
		r.unhint(rt)
	}
	r.rekey(rt.Worker)
}

// exactLoad bounds the loads and request sizes for which kv_aware's keys
// are exact (see costKey).
const exactLoad = 1 << 23

// exactScale reports whether s is a multiple of 2^-20 below 256: then, for
// integers x < 2^24 and d < 2^24, s*x and s*x + d are exact in float64
// (s*x = k*x * 2^-20 with k = s * 2^20 < 2^28, and k*x + d * 2^20 < 2^53).
func exactScale(s float64) bool {
	k := s * (1 << 20)
	return s >= 0 && s < 256 && k == math.Trunc(k)
}

// costKey is worker w's kv_aware key: prefill_load_scale * prefill blocks
// + decode blocks, exactly; cost(w, blocks, 0) is the key plus
// prefill_load_scale * blocks, exactly, while the prefill blocks and the
// request's are below exactLoad and the decode blocks below 2 * exactLoad.
// It reports false when they are not.
func (r *Router) costKey(w int32) (float64, bool) {
	l := r.loads[w]
	if l.prefillBlocks >= exactLoad || l.decodeBlocks >= 2*exactLoad {
		return 0, false
	}
	return r.cfg.PrefillLoadScale*float64(l.prefillBlocks) + float64(l.decodeBlocks), true
}

// rekey puts worker w's key in the tree, or takes w out when it is not
// schedulable. A load too large for an exact key makes kv_aware scan from
// then on.
func (r *Router) rekey(w int32) {
	if !r.keyed {
		return
	}
	k := math.Inf(1)
	switch {
	case !r.ready(w):
	case r.cfg.Policy == LeastLoaded:
		k = float64(r.loads[w].outstanding)
	default:
		var ok bool
		if k, ok = r.costKey(w); !ok {
			r.keyed = false
			return
		}
	}
	r.tree.set(w, k)
}

// Holds reports whether the router's view has worker w holding block r in
// tier t, once every KV event sent so far has reached it.
func (r *Router) Holds(w int32, t Tier, b block.Ref) bool {
	r.applyPending(len(r.pending))
	return r.index.Mask(w, b.Seg, b.Off)&(1<<t) != 0
}

// Facts is the number of (worker, tier, block) holdings in the router's
// view, once every KV event sent so far has reached it.
func (r *Router) Facts() int {
	r.applyPending(len(r.pending))
	return r.index.Facts()
}

// CheckLoads reports a worker whose load is not zero: at the end of a run
// every request has left its worker and every hint its source. Requests
// or blocks still counted are the error; a decoding count or hint backlog
// left with none of them is one of its own.
func (r *Router) CheckLoads() error {
	for w, l := range r.loads {
		switch {
		case l.outstanding != 0 || l.prefillBlocks != 0 || l.decodeBlocks != 0:
			return fmt.Errorf("worker %d: %d requests outstanding, %d prefill and %d decode blocks", w, l.outstanding, l.prefillBlocks, l.decodeBlocks)
		case l != (load{}):
			return fmt.Errorf("worker %d: no request outstanding, but %d decoding and %d hint bytes", w, l.decoding, l.backlog)
		}
	}
	return nil
}
