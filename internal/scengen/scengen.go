// Package scengen generates small random scenarios that push the model into
// its corners: G1 of a few blocks so eviction and preemption never stop,
// chains that share prefixes and duplicate blocks, tiny G2 pools, slow or
// instant links, short pull deadlines, workers that drain, vanish and join
// mid-run (a drain evacuating its G2, an add prewarming its workers, in one
// in four of those that can), and vLLM 0.11's admission in one case in
// four. A case is a scenario file and a Mooncake trace, exactly what a
// user could write, drawn from seeded streams: the same seed gives the
// same bytes.
package scengen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvsim/kvsim/engine"
	"github.com/kvsim/kvsim/kvcr"
	"github.com/kvsim/kvsim/scenarios"
	"github.com/kvsim/kvsim/scheduler"
)

// Case is one generated scenario.
type Case struct {
	Seed     uint64
	Scenario []byte // YAML; its trace is TraceFile, beside it
	Trace    []byte // Mooncake JSONL
}

// The file names Write gives a case's scenario and trace.
const (
	ScenarioFile = "scenario.yaml"
	TraceFile    = "trace.jsonl"
)

// Write puts the case's scenario and trace into dir (created if missing)
// and returns the scenario's path.
func (c Case) Write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, TraceFile), c.Trace, 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, ScenarioFile)
	return path, os.WriteFile(path, c.Scenario, 0o644)
}

// gen is one case in the making.
type gen struct {
	r    *rand.Rand
	late *rand.Rand // the keys added after r's draws were fixed, so that they change none of r's draws
	// hints draws router.hints.policy: a stream of its own, as the key came
	// after late's draws were fixed too, so that a case that does not draw
	// cost is the case it was.
	hints *rand.Rand
	// orders draws the evacuations, prewarms and background pull settings:
	// a stream of its own for the same reason, so that a case that draws
	// no order is the case it was.
	orders *rand.Rand
	// faults draws GenerateChaos's faults and chaos: a stream of its own,
	// so that the cases of Generate are the cases they were.
	faults *rand.Rand
	// planner draws GeneratePlanner's planner: a stream of its own, so
	// that its case is Generate's with a planner.
	planner *rand.Rand
	ordered bool            // an event evacuates or prewarms
	kvcrOn  bool            // the case runs KVCR
	b       strings.Builder // the scenario
	large   bool            // GenerateLarge's sizes
	v011    bool            // the case runs vLLM 0.11's admission, which can stall (one case in four; from late)

	blockSize  int // engine tokens a block
	traceBlock int // trace tokens a hash id, a multiple of blockSize
	gpuBlocks  int
	workers    int
	g2         int // G2 blocks a worker; 0 without KVCR or G2
	lastMs     int // the last arrival, ms
}

// Generate returns the case of seed.
func Generate(seed uint64) Case { return generate(seed, false) }

// GenerateLarge returns a larger case of seed: blocks of 4 to 16 tokens,
// G1 of 40 to 240 blocks, up to 60 requests of up to 80 output tokens
// (every tenth seed up to 400 requests and 300 tokens, on up to 8
// workers), budgets up to 2048 tokens, and fixed timing in round
// milliseconds, so that requests decode for many passes in a row and pass
// ends of different workers fall on the same instants as each other and
// as arrivals (what the decode fast-forward must order exactly).
func GenerateLarge(seed uint64) Case { return generate(seed, true) }

// GenerateChaos returns the case of seed with faults (DESIGN.md section
// 12): Generate's case, its events interleaved with scripted faults of
// every kind (links down or degraded either way, stragglers, pull errors
// at either instant, notices delayed or lost, engines down with their G2
// kept or lost, requests migrated), each ending before the chaos window
// does, and a chaos block drawing many more over the trace's span, then
// settling a minute. A case without KVCR gets only the faults that need
// none (stragglers, engines down).
func GenerateChaos(seed uint64) Case { return generateWith(seed, false, true, false) }

// GeneratePlanner returns Generate's case of seed with a planner (DESIGN.md
// section 13): any policy, deciding every few milliseconds of the trace's
// span with thresholds that make it act, any scale-in pick, drain
// timeouts, evacuations and prewarms, and an SLO; a planner that flaps
// stops a second after the last arrival (planner.tail).
func GeneratePlanner(seed uint64) Case { return generateWith(seed, false, false, true) }

func generate(seed uint64, large bool) Case { return generateWith(seed, large, false, false) }

func generateWith(seed uint64, large, chaos, planner bool) Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5ce9_9e11)), late: rand.New(rand.NewPCG(seed, 0x1a7e_5eed)),
		hints: rand.New(rand.NewPCG(seed, 0x4119_7c05)), orders: rand.New(rand.NewPCG(seed, 0x0bde_4e55)), large: large}
	if chaos {
		g.faults = rand.New(rand.NewPCG(seed, 0xfa17_5eed))
	}
	if planner {
		g.planner = rand.New(rand.NewPCG(seed, 0x91a4_4e25))
	}
	g.v011 = g.late.IntN(4) == 0
	if large {
		g.blockSize = pick(g.r, 4, 8, 16)
		g.gpuBlocks = 40 + g.r.IntN(201)
		g.workers = 1 + g.r.IntN(4)
		if seed%10 == 9 {
			g.workers = 1 + g.r.IntN(8)
		}
	} else {
		g.blockSize = 1 + g.r.IntN(4)
	}
	g.traceBlock = g.blockSize * (1 + g.r.IntN(4))
	if !large {
		g.gpuBlocks = 4 + g.r.IntN(37)
		g.workers = 1 + g.r.IntN(4)
	}
	trace := g.trace()
	fmt.Fprintf(&g.b, "# scengen seed %d\nname: scengen-%d\nseed: %d\n", seed, seed, g.r.Uint64N(1<<32))
	fmt.Fprintf(&g.b, "workload: {trace: {path: %s, block_size: %d, time_scale: %s, arrival_jitter: %s}}\n",
		TraceFile, g.traceBlock, pick(g.r, "1", "1", "0.5", "2"), pick(g.late, "0s", "0s", "0s", "1ms", "20ms"))
	kvcr := g.r.IntN(10) < 7
	g.kvcrOn = kvcr
	g.cluster(kvcr)
	if g.faults != nil {
		fmt.Fprintf(&g.b, "  migration_limit: %d\n", 1+g.faults.IntN(3))
	}
	g.router(kvcr)
	g.kvcr(kvcr)
	events := g.events()
	if g.ordered { // inside the kvcr block, which g.kvcr wrote last
		fmt.Fprintf(&g.b, "  background_timeout: %s\n  background_inflight: %d\n",
			pick(g.orders, "0s", "1ms", "10ms", "100ms"), pick(g.orders, 0, 1, 2, 4))
	}
	g.b.WriteString(events)
	if g.faults != nil {
		g.chaos()
	}
	if g.planner != nil {
		g.plan()
	}
	fmt.Fprintf(&g.b, "report: {sample_interval: %dms}\n", 1+g.r.IntN(50))
	return Case{Seed: seed, Scenario: []byte(g.b.String()), Trace: trace}
}

// pick returns one of the values, uniformly.
func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

// node is one trace hash id of the prefix tree.
type node struct {
	parent int // -1 for a root
	depth  int // ids from the root, itself included
	kids   int
	fanout int // children it may have
}

// trace writes the workload: chains from a random forest of trace ids,
// some with private suffixes, some extending an earlier request (a session's
// next turn), some twins of the request before them at the same instant.
func (g *gen) trace() []byte {
	r := g.r
	// A request longer than G1 is rejected at arrival: a few are, most
	// are not.
	g1Tokens := g.gpuBlocks * g.blockSize
	maxDepth := min(12, max(1, g1Tokens/g.traceBlock))
	var tree []node
	for range 1 + r.IntN(24) {
		n := node{parent: -1, depth: 1, fanout: 1 + r.IntN(4)}
		var open []int // nodes that may take a child
		for i, p := range tree {
			if p.depth < maxDepth && p.kids < p.fanout {
				open = append(open, i)
			}
		}
		if len(open) > 0 && r.IntN(6) > 0 {
			p := open[r.IntN(len(open))]
			n.parent, n.depth = p, tree[p].depth+1
			tree[p].kids++
		}
		tree = append(tree, n)
	}
	nextID := uint64(len(tree)) + 1 // ids 1..len(tree) are the tree's
	fresh := func(chain []uint64, n int) []uint64 {
		for range n {
			chain = append(chain, nextID)
			nextID++
		}
		return chain
	}
	var b strings.Builder
	var chains [][]uint64
	ms := 0
	requests, maxOut := 3+r.IntN(28), 30
	if g.large {
		requests, maxOut = 10+r.IntN(51), 80
		if g.workers > 4 || r.IntN(10) == 0 {
			requests, maxOut = 100+r.IntN(301), 300
		}
	}
	for i := range requests {
		var chain []uint64
		twin := false
		switch k := r.IntN(10); {
		case i > 0 && k == 0: // twin: same chain, same instant
			chain, twin = chains[i-1], true
		case i > 0 && k <= 2: // the next turn of an earlier request
			chain = fresh(chains[r.IntN(i)], 1+r.IntN(3))
		default:
			for n := r.IntN(len(tree)); n >= 0; n = tree[n].parent {
				chain = append(chain, uint64(n)+1)
			}
			for l, h := 0, len(chain)-1; l < h; l, h = l+1, h-1 {
				chain[l], chain[h] = chain[h], chain[l]
			}
			if r.IntN(3) == 0 {
				chain = fresh(chain, 1+r.IntN(3)) // a private suffix
			}
		}
		out := 1 + r.IntN(min(maxOut, max(1, g1Tokens/2)))
		fit := max(1, (g1Tokens-out)/g.traceBlock)
		if r.IntN(8) == 0 {
			fit++ // may not fit
		}
		chain = chain[:min(len(chain), fit)]
		chains = append(chains, chain[:len(chain):len(chain)])
		if !twin && r.IntN(10) >= 3 {
			ms += r.IntN(30)
		}
		in := len(chain) * g.traceBlock
		if r.IntN(2) == 0 {
			in -= r.IntN(g.traceBlock) // a partial last block
		}
		ids := make([]string, len(chain))
		for j, id := range chain {
			ids[j] = fmt.Sprint(id)
		}
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
			ms, in, out, strings.Join(ids, ", "))
	}
	g.lastMs = ms
	return []byte(b.String())
}

// cluster writes the workers, the engine and G2.
func (g *gen) cluster(kvcr bool) {
	r := g.r
	fmt.Fprintf(&g.b, "cluster:\n  workers: %d\n", g.workers)
	seqs := 6
	if g.large {
		seqs = 8
	}
	fmt.Fprintf(&g.b, "  engine: {block_size: %d, gpu_blocks: %d, kv_bytes_per_token: %d, max_num_seqs: %d,\n",
		g.blockSize, g.gpuBlocks, pick(r, 1000, 32768, 131072), 1+r.IntN(seqs))
	if g.v011 {
		fmt.Fprintf(&g.b, "    admission: %s,\n", engine.AdmitV011)
	}
	budget, chunked := 4+r.IntN(61), r.IntN(4) > 0
	if g.large {
		budget = pick(r, 32, 64, 256, 2048)
	}
	fmt.Fprintf(&g.b, "    max_batched_tokens: %d, chunked_prefill: %t, prefix_caching: %t,\n", budget, chunked, r.IntN(4) > 0)
	// Timing models that name no hardware, and roofline, which is at the
	// hardware's bound by construction: the physics guard refuses none.
	switch k := r.IntN(20); {
	case k < 5 && g.large:
		fmt.Fprintf(&g.b, "    timing: {model: fixed, prefill: %s}}\n", pick(r, "10ms, decode: 5ms", "7ms, decode: 3ms"))
	case k < 5:
		fmt.Fprintf(&g.b, "    timing: {model: fixed, prefill: %dus, decode: %dus}}\n", 100+r.IntN(20000), 100+r.IntN(10000))
	case k < 7:
		fmt.Fprintf(&g.b, "    timing: {model: polynomial, speedup_ratio: %s}}\n", pick(r, "1", "4", "20"))
	case k < 10:
		fmt.Fprintf(&g.b, "    timing: {model: roofline, overhead: %dus}}\n", r.IntN(3000))
	default:
		fmt.Fprintf(&g.b, "    timing: {model: linear, base: %dus, per_prefill_token: %dus, per_decode_token: %dus, per_context_token: %dns}}\n",
			r.IntN(5000), r.IntN(500), r.IntN(500), r.IntN(200))
	}
	if kvcr {
		g.g2 = pick(r, 0, r.IntN(10), r.IntN(61), r.IntN(61), r.IntN(61))
		fmt.Fprintf(&g.b, "  g2: {capacity_blocks: %d, d2h_gbps: %s, h2d_gbps: %s}\n", g.g2, g.link(), g.link())
	}
}

// link is a G2 link's bandwidth, GB/s: instant (0) or slow.
func (g *gen) link() string {
	return pick(g.r, "0", "0.001", "0.01", "1")
}

// router writes the routing policy and hints.
func (g *gen) router(kvcrOn bool) {
	r := g.r
	policy := pick(r, scheduler.Policies...)
	fmt.Fprintf(&g.b, "router:\n  policy: %s\n  event_delay: %s\n", policy, pick(r, "0", "0", "100us", "2ms", "20ms"))
	if t := pick(g.late, "0", "0", "0", "0.1", "1"); policy == scheduler.KVAware && t != "0" {
		fmt.Fprintf(&g.b, "  temperature: %s\n", t)
	}
	if r.IntN(4) == 0 {
		fmt.Fprintf(&g.b, "  overlap_credit: %s\n  host_hit_weight: %s\n  prefill_load_scale: %s\n",
			pick(r, "0", "0.5", "2"), pick(r, "0", "0.25", "1.5"), pick(r, "0", "0.5", "3"))
	}
	on, mode, minBlocks := kvcrOn && r.IntN(8) > 0, pick(r, kvcr.Modes...), 1+r.IntN(2)
	hintPolicy := "" // min_blocks, the default; one case in three cost
	if g.hints.IntN(3) == 0 && on {
		hintPolicy = ", policy: " + string(scheduler.HintsCost)
	}
	fmt.Fprintf(&g.b, "  hints: {enabled: %t, mode: %s, min_blocks: %d%s}\n", on, mode, minBlocks, hintPolicy)
}

// kvcr writes the pull settings: short deadlines, slow or fast links.
func (g *gen) kvcr(on bool) {
	if !on {
		g.b.WriteString("kvcr: {enabled: false}\n")
		return
	}
	r := g.r
	op := pick(r, 1, 5, 20, 100) * (1 + r.IntN(3)) // ms
	fmt.Fprintf(&g.b, "kvcr:\n  latency: %dus\n  bandwidth_gbps: %s\n  ingress_gbps: %s\n",
		pick(r, 0, 100, 1000, 5000), pick(r, "0.001", "0.01", "1", "50"), pick(r, "0", "0", "0.005", "1"))
	fmt.Fprintf(&g.b, "  operation_timeout: %dms\n  abandon_timeout: %dms\n  max_inflight_pulls: %d\n  opportunistic_query: %t\n",
		op, op*(2+r.IntN(3)), r.IntN(3), r.IntN(2) == 0)
	fmt.Fprintf(&g.b, "  loss_notice: %s\n  descriptor_cost: %s\n  descriptors_per_block: %d\n  session_setup: %s\n",
		pick(g.late, "0s", "0s", "500us", "5ms"), pick(g.late, "0s", "2us", "50us"), pick(g.late, 1, 1, 8), pick(g.late, "0s", "0s", "2ms"))
}

// events returns the drains, removes and adds, each valid when it
// happens: ids that are live then, and never a drain of every live worker.
// With KVCR and G2, one drain in four (from orders) evacuates and one add
// in four prewarms.
func (g *gen) events() string {
	r := g.r
	n := pick(r, 0, 0, 1, 2, 3, 5)
	if n == 0 {
		return ""
	}
	var b strings.Builder
	live := make([]bool, g.workers)
	for i := range live {
		live[i] = true
	}
	b.WriteString("events:\n")
	at := 0
	for range n {
		at += r.IntN(g.lastMs/2 + 10) // most before the last arrival
		if g.faults != nil {
			g.fault(&b, at, len(live))
		}
		var ids []int
		for id, ok := range live {
			if ok {
				ids = append(ids, id)
			}
		}
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		switch k := r.IntN(3); {
		case k == 0 && len(ids) > 1: // drain some, never all
			ids = ids[:1+r.IntN(len(ids)-1)]
			fmt.Fprintf(&b, "  - {at: %dms, drain: %s", at, g.selection(ids))
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, ", drain_timeout: %dms", pick(r, 1, 10, 50))
			}
			if g.order() {
				fmt.Fprintf(&b, ", evacuate: {blocks: %d%s}", g.orderBlocks(),
					pick(g.orders, "", ", mode: "+string(kvcr.ModeMove), ", mode: "+string(kvcr.ModeCopy)))
			}
			b.WriteString("}\n")
		case k == 1 && len(ids) > 0: // remove, rarely every live worker
			ids = ids[:1+r.IntN(max(1, len(ids)-1+r.IntN(2)))]
			fmt.Fprintf(&b, "  - {at: %dms, remove: %s, on_remove: %s}\n", at, g.selection(ids), pick(r, scenarios.RemoveReroute, scenarios.RemoveReroute, scenarios.RemoveFail))
		default:
			add := 1 + r.IntN(2)
			fmt.Fprintf(&b, "  - {at: %dms, add: %d, startup: %dms", at, add, pick(r, 0, 0, 5, 40))
			if g.order() {
				fmt.Fprintf(&b, ", prewarm: {blocks: %d}", g.orderBlocks())
			}
			b.WriteString("}\n")
			for range add {
				live = append(live, true)
			}
			continue
		}
		for _, id := range ids {
			live[id] = false
		}
	}
	return b.String()
}

// fault writes, in one case in two, a scripted fault at at on the workers
// made so far: one or two of them listed, or in one case in four a pick.
// A link or a down ends by the chaos window's end (chaosTo), so that the
// run settles; a straggler, pull errors or notices last to the end of the
// run in one case in four. Notices name no worker (every target) in one
// case in three.
func (g *gen) fault(b *strings.Builder, at, workers int) {
	f := g.faults
	if f.IntN(2) == 0 || at >= g.chaosTo() {
		return
	}
	sel := list([]int{f.IntN(workers)})
	switch {
	case f.IntN(4) == 0:
		sel = fmt.Sprintf("{count: %d, pick: %s}", 1+f.IntN(min(2, workers)), pick(f, scenarios.Picks...))
	case workers > 1 && f.IntN(3) == 0:
		a := f.IntN(workers)
		sel = list([]int{a, (a + 1 + f.IntN(workers-1)) % workers})
	}
	kinds := []string{scenarios.KindSlow, scenarios.KindDown}
	if g.kvcrOn {
		kinds = append(kinds, scenarios.KindLink, scenarios.KindPullErrors, scenarios.KindNotices)
	}
	kind := pick(f, kinds...)
	span := fmt.Sprintf("for: %dms, ", 1+f.IntN(max(1, g.chaosTo()-at)))
	if kind != scenarios.KindLink && kind != scenarios.KindDown && f.IntN(4) == 0 {
		span = "" // to the end of the run
	}
	fmt.Fprintf(b, "  - {at: %dms, %s", at, span)
	switch kind {
	case scenarios.KindSlow:
		fmt.Fprintf(b, "slow: {workers: %s, factor: %s}}\n", sel, pick(f, "1", "1.5", "3", "20"))
	case scenarios.KindDown:
		onRemove := pick(f, scenarios.RemoveReroute, scenarios.RemoveFail, scenarios.RemoveMigrate, scenarios.RemoveMigrate)
		fmt.Fprintf(b, "down: {workers: %s, g2: %s}, startup: %dms, on_remove: %s}\n",
			sel, pick(f, scenarios.G2Fates...), pick(f, 0, 0, 3, 30), onRemove)
	case scenarios.KindLink:
		fmt.Fprintf(b, "link: {workers: %s, factor: %s, direction: %s}}\n", sel, pick(f, "0", "0", "0.1", "0.5"), pick(f, scenarios.Directions...))
	case scenarios.KindPullErrors:
		fmt.Fprintf(b, "pull_errors: {rate: %s, when: %s}}\n", pick(f, "0.1", "0.5", "1"), pick(f, scenarios.ErrorWhens...))
	default:
		notice := "lost: true"
		if f.IntN(2) == 0 {
			notice = fmt.Sprintf("delay: %dms", pick(f, 1, 10, 100, 1000))
		}
		if f.IntN(3) == 0 {
			fmt.Fprintf(b, "notices: {%s}}\n", notice)
		} else {
			fmt.Fprintf(b, "notices: {workers: %s, %s}}\n", sel, notice)
		}
	}
}

// chaosTo is the end of a chaos case's window, ms: past the last arrival.
func (g *gen) chaosTo() int { return g.lastMs + 50 }

// chaos writes the case's chaos block: faults over [0, chaosTo) at rates
// that give each worker a few in so short a window (those that need KVCR
// only when the case runs it), lasting 1 to 50 ms, and a minute to settle
// (longer than any deadline and any write here).
func (g *gen) chaos() {
	f := g.faults
	perHour := 3600_000 / g.chaosTo() // one fault a worker in the window, per kind, at rate 1
	rate := func(on bool) int {
		if !on {
			return 0
		}
		return perHour * pick(f, 0, 1, 2, 4)
	}
	pullErrors := "0"
	if g.kvcrOn {
		pullErrors = pick(f, "0", "0.05", "0.3")
	}
	fmt.Fprintf(&g.b, "chaos: {from: 0s, to: %dms, settle: 1m, rates: {link: %d, slow: %d, down: %d, notices: %d}, pull_errors: %s, for: {min: 1ms, max: 50ms}}\n",
		g.chaosTo(), rate(g.kvcrOn), rate(true), rate(true), rate(g.kvcrOn), pullErrors)
}

// plan writes the case's planner block.
func (g *gen) plan() {
	p := g.planner
	least := 1 + p.IntN(2)
	fmt.Fprintf(&g.b, "planner:\n  policy: %s\n  interval: %dms\n  tail: 1s\n  min_workers: %d\n  max_workers: %d\n  step: %d\n  startup: %s\n",
		pick(p, scenarios.PlannerLoad, scenarios.PlannerThroughput, scenarios.PlannerTarget), 1+p.IntN(max(1, g.lastMs/4)),
		least, least+p.IntN(5), 1+p.IntN(3), pick(p, "0s", "1ms", "10ms", "50ms"))
	fmt.Fprintf(&g.b, "  load: {queue_up: %s, queue_down: %s, kv_up: %s, kv_down: %s}\n",
		pick(p, "0.5", "1", "2", "5"), pick(p, "0", "0.2", "0.4"), pick(p, "0.3", "0.6", "0.9"), pick(p, "0", "0.1", "0.2"))
	fmt.Fprintf(&g.b, "  throughput: {requests_per_worker_s: %d}\n", pick(p, 10, 50, 200, 1000))
	fmt.Fprintf(&g.b, "  target: {metric: %s, value: %s, tolerance: %s, scale_down_window: %s, hold: %t}\n",
		pick(p, scenarios.TargetQueue, scenarios.TargetKV), pick(p, "0.2", "1", "3"), pick(p, "0", "0.1", "0.3"),
		pick(p, "0s", "5ms", "50ms"), p.IntN(2) == 0)
	fmt.Fprintf(&g.b, "  scale_in: {pick: %s, drain_timeout: %s", pick(p, scenarios.Picks...), pick(p, "0s", "0s", "5ms", "30ms"))
	if g.g2 > 0 && p.IntN(3) == 0 {
		fmt.Fprintf(&g.b, ", evacuate: {blocks: %d}", pick(p, 1, 16, 1000))
	}
	g.b.WriteString("}\n")
	if g.g2 > 0 && p.IntN(3) == 0 {
		fmt.Fprintf(&g.b, "  prewarm: {blocks: %d}\n", pick(p, 1, 16, 1000))
	}
	fmt.Fprintf(&g.b, "  slo: {ttft: %s, itl: %s}\n", pick(p, "5ms", "50ms", "500ms"), pick(p, "1ms", "5ms", "50ms"))
}

// order draws whether a drain or add issues orders: one in four, when KVCR
// and G2 are on.
func (g *gen) order() bool {
	if g.g2 == 0 || g.orders.IntN(4) != 0 {
		return false
	}
	g.ordered = true
	return true
}

// orderBlocks is an order's block budget, from a block to more than any
// G2 here holds.
func (g *gen) orderBlocks() int { return pick(g.orders, 1, 4, 16, 64, 1000) }

// selection writes the workers of a drain or remove: ids, or in one case in
// four (from late) a pick of as many. The pick may take other workers than
// ids; ids stay out of the live workers later events list, so those events
// still leave a worker ready: the workers taken are at most those listed
// plus those picked, as validation counts them.
func (g *gen) selection(ids []int) string {
	if g.late.IntN(4) != 0 {
		return list(ids)
	}
	return fmt.Sprintf("{count: %d, pick: %s}", len(ids), pick(g.late, scenarios.Picks...))
}

// list writes ids as a YAML flow list.
func list(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(s, ", ") + "]"
}
